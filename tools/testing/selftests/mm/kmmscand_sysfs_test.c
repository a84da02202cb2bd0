// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs interface tests for kmmscand, the kernel thread that scans page
 * table Accessed bits to find hot slow-tier pages and promotes them to a
 * top-tier node.
 *
 * Covered here: the memory tier layout the promotion tests rely on, the
 * two kthreads, and every knob under /sys/kernel/mm/kmmscand/: defaults,
 * valid writes, each class of bad input, non-root writers.
 *
 * Knobs are saved before and restored after every test from the parent
 * process, so a failed assertion cannot leave the system reconfigured.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <grp.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "kmmscand_util.h"

#define NOBODY			65534

static const char * const bad_common[] = {
	"abc", "abc\n", "\n", " ", "1x", "1x\n", "5 5\n", "100\n\n", " 1\n",
	"1.5\n", "99999999999999999999", "99999999999999999999\n",
	"-99999999999999999999\n", "18446744073709551616\n",
};

/* Quote @buf for a log line: escape newlines, cut long strings. */
static const char *shown(const char *buf, size_t len)
{
	static char out[64];
	size_t i, o = 0;

	for (i = 0; i < len && o < 40; i++) {
		if (buf[i] == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = isprint((unsigned char)buf[i]) ? buf[i] : '?';
		}
	}
	if (i < len)
		o += snprintf(out + o, sizeof(out) - o, "...(%zu bytes)", len);
	out[o] = '\0';
	return out;
}

/* A write of @len bytes must fail with EINVAL and leave the knob alone. */
static void reject(struct __test_metadata *_metadata, enum kmm_knob k,
		   const char *buf, size_t len)
{
	const char *name = kmm_knobs[k].name;
	long long before, after;
	ssize_t ret;

	ASSERT_EQ(0, knob_get(k, &before)) TH_LOG("cannot read %s", name);
	ret = knob_write_raw(name, buf, len);
	EXPECT_EQ(-EINVAL, ret)
		TH_LOG("%s <- \"%s\": got %zd (%s), want -EINVAL (was %lld)",
		       name, shown(buf, len), ret,
		       ret < 0 ? strerror(-ret) : "accepted", before);
	ASSERT_EQ(0, knob_get(k, &after)) TH_LOG("cannot read %s", name);
	EXPECT_EQ(before, after)
		TH_LOG("%s <- \"%s\" changed it from %lld to %lld",
		       name, shown(buf, len), before, after);
}

static void reject_str(struct __test_metadata *_metadata, enum kmm_knob k,
		       const char *str)
{
	reject(_metadata, k, str, strlen(str));
}

static void reject_num(struct __test_metadata *_metadata, enum kmm_knob k,
		       long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld\n", val);
	reject(_metadata, k, buf, strlen(buf));
}

/* Writing @val must succeed and read back as @val. */
static void accept(struct __test_metadata *_metadata, enum kmm_knob k,
		   long long val)
{
	const char *name = kmm_knobs[k].name;
	long long now;
	int ret;

	ret = knob_set(k, val);
	EXPECT_EQ(0, ret) TH_LOG("%s <- %lld failed: %s", name, val,
				 strerror(-ret));
	ASSERT_EQ(0, knob_get(k, &now)) TH_LOG("cannot read %s", name);
	EXPECT_EQ(val, now) TH_LOG("%s <- %lld reads back %lld", name, val, now);
}

/* Set a knob that a test depends on; failing here is fatal. */
static void must_set(struct __test_metadata *_metadata, enum kmm_knob k,
		     long long val)
{
	int ret = knob_set(k, val);

	ASSERT_EQ(0, ret) TH_LOG("cannot set %s to %lld: %s",
				 kmm_knobs[k].name, val, strerror(-ret));
}

TEST(memory_tiers)
{
	int t0, t1;

	if (!node_online(1))
		SKIP(return, "node 1 is not online: need a slow-tier node 1");
	if (access(MEMTIER_SYSFS, F_OK))
		SKIP(return, "%s missing (CONFIG_NUMA or memory tiering off)",
		     MEMTIER_SYSFS);

	t0 = memtier_of(0);
	t1 = memtier_of(1);
	ASSERT_LE(0, t0) TH_LOG("node 0 is in no memory tier (%d)", t0);
	ASSERT_LE(0, t1) TH_LOG("node 1 is in no memory tier (%d)", t1);
	TH_LOG("node 0 in memory_tier%d, node 1 in memory_tier%d", t0, t1);
	ASSERT_LT(t0, t1) {
		TH_LOG("node 1 must be in a lower (bigger id) tier than node 0");
		TH_LOG("without HMAT latency data QEMU puts both in one tier");
	}
}

TEST(kthread_exists)
{
	bool kthread = false;
	pid_t pid;

	if (!kmmscand_present())
		SKIP(return, "%s missing: kernel built without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);

	pid = find_task("kmmscand", &kthread);
	ASSERT_NE(0, pid) TH_LOG("no task with comm \"kmmscand\" in /proc");
	EXPECT_TRUE(kthread) TH_LOG("pid %d is not a kernel thread", pid);

	/*
	 * The promotion thread. /proc/<pid>/comm shows a kthread's full
	 * name; a kernel that cuts it to TASK_COMM_LEN - 1 shows 15 chars.
	 */
	pid = find_task("kmmscand_migrate", &kthread);
	if (!pid)
		pid = find_task("kmmscand_migrat", &kthread);
	ASSERT_NE(0, pid)
		TH_LOG("no task with comm \"kmmscand_migrate\" in /proc");
	EXPECT_TRUE(kthread) TH_LOG("pid %d is not a kernel thread", pid);
}

/*
 * Every knob is saved in setup and written back by the parent after the
 * test, whatever happened in the test child.
 */
FIXTURE(knobs) {
	struct kmm_knob_state saved;
};

FIXTURE_SETUP(knobs)
{
	int ret;

	self->saved.valid = false;
	if (!kmmscand_present())
		SKIP(return, "%s missing: kernel built without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);
	if (geteuid())
		SKIP(return, "writing %s needs root", KMMSCAND_SYSFS);
	ret = knobs_save(&self->saved);
	ASSERT_EQ(0, ret) TH_LOG("cannot read the knobs: %s", strerror(-ret));
}

FIXTURE_TEARDOWN_PARENT(knobs)
{
	struct kmm_knob_state now;
	int i, ret;

	if (!self->saved.valid)
		return;
	ret = knobs_restore(&self->saved);
	if (ret)
		TH_LOG("restoring the knobs failed: %s", strerror(-ret));
	if (knobs_save(&now))
		return;
	for (i = 0; i < NR_KNOBS; i++)
		if (now.val[i] != self->saved.val[i])
			TH_LOG("%s is %lld after restore, was %lld",
			       kmm_knobs[i].name, now.val[i],
			       self->saved.val[i]);
}

TEST_F(knobs, files)
{
	struct stat st;
	char path[PATH_MAX];
	long long val = 0;
	int i;

	for (i = 0; i < NR_KNOBS; i++) {
		snprintf(path, sizeof(path), KMMSCAND_SYSFS "%s",
			 kmm_knobs[i].name);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s: %s", path,
						     strerror(errno));
		EXPECT_EQ(0644, (int)(st.st_mode & 07777))
			TH_LOG("%s has mode %o, want 0644", path,
			       st.st_mode & 07777);
		EXPECT_EQ(0, (int)st.st_uid) TH_LOG("%s not owned by root", path);
		EXPECT_EQ(0, knob_read(kmm_knobs[i].name, &val))
			TH_LOG("%s does not read as one number", path);
	}
}

/*
 * Boot defaults. The harness boots a fresh kernel for each run; a failure
 * here on a used system can also mean someone changed the knob before.
 */
TEST_F(knobs, defaults)
{
	int i;

	for (i = 0; i < NR_KNOBS; i++) {
		EXPECT_EQ(kmm_knobs[i].def, self->saved.val[i])
			TH_LOG("%s is %lld, contract default %lld",
			       kmm_knobs[i].name, self->saved.val[i],
			       kmm_knobs[i].def);
	}
}

TEST_F(knobs, enabled_round_trip)
{
	bool kthread;
	long long val = 0;

	accept(_metadata, KNOB_ENABLED, 0);
	accept(_metadata, KNOB_ENABLED, 1);

	/* The trailing newline is optional. */
	ASSERT_EQ(1, knob_write_str("enabled", "0"));
	ASSERT_EQ(0, knob_read("enabled", &val));
	ASSERT_EQ(0, val) TH_LOG("enabled reads %lld after writing \"0\"", val);

	/* enabled=0 parks the kthread, it does not stop it. */
	EXPECT_NE(0, find_task("kmmscand", &kthread))
		TH_LOG("kmmscand thread gone with enabled=0");
	accept(_metadata, KNOB_ENABLED, 1);
}

/* Everything a boolean knob must refuse, tried while it is 0 and 1. */
static void check_bool_knob(struct __test_metadata *_metadata,
			    enum kmm_knob k)
{
	static char big[4096];
	unsigned int i;
	int v;

	for (v = 0; v <= 1; v++) {
		accept(_metadata, k, !v);
		accept(_metadata, k, v);
		reject_num(_metadata, k, 2);
		reject_str(_metadata, k, "2");
		reject_num(_metadata, k, -1);
		reject_str(_metadata, k, "-1");
		reject_str(_metadata, k, "yes\n");
		reject_str(_metadata, k, "on\n");
		for (i = 0; i < ARRAY_SIZE(bad_common); i++)
			reject_str(_metadata, k, bad_common[i]);
		memset(big, 'a', sizeof(big));
		reject(_metadata, k, big, sizeof(big));
		memset(big, '1', sizeof(big));
		reject(_metadata, k, big, sizeof(big));
	}
}

TEST_F(knobs, enabled_rejects_bad_input)
{
	check_bool_knob(_metadata, KNOB_ENABLED);
}

TEST_F(knobs, pmd_skip)
{
	check_bool_knob(_metadata, KNOB_PMD_SKIP);
}

TEST_F(knobs, tlb_flush)
{
	check_bool_knob(_metadata, KNOB_TLB_FLUSH);
}

/*
 * sysfs completes a zero-length write(2) without calling the store
 * method, so the empty string cannot fail with EINVAL; it must not change
 * anything either. "\n" (what `echo > knob` writes) is the empty input that
 * has to fail, and is in bad_common[].
 */
TEST_F(knobs, zero_length_write)
{
	long long val = 0;
	ssize_t ret;
	int i;

	for (i = 0; i < NR_KNOBS; i++) {
		ret = knob_write_raw(kmm_knobs[i].name, "", 0);
		EXPECT_EQ(0, ret) TH_LOG("%s: zero-length write gave %zd",
					 kmm_knobs[i].name, ret);
		ASSERT_EQ(0, knob_get(i, &val));
		EXPECT_EQ(self->saved.val[i], val)
			TH_LOG("%s: zero-length write changed it to %lld",
			       kmm_knobs[i].name, val);
	}
}

/* Non-numbers, garbage, overflow and 4 KB strings, for every knob. */
TEST_F(knobs, common_bad_input)
{
	static char big[4097];
	unsigned int i;
	int k;

	for (k = 0; k < NR_KNOBS; k++) {
		for (i = 0; i < ARRAY_SIZE(bad_common); i++)
			reject_str(_metadata, k, bad_common[i]);
		memset(big, 'x', sizeof(big));
		reject(_metadata, k, big, 4096);
		reject(_metadata, k, big, sizeof(big));
		memset(big, '9', sizeof(big));
		reject(_metadata, k, big, 4096);
		if (k != KNOB_TARGET_NODE) {
			/* negative where unsigned */
			reject_str(_metadata, k, "-1\n");
			reject_str(_metadata, k, "-0x1\n");
		}
	}
}

TEST_F(knobs, scan_period)
{
	const enum kmm_knob lo = KNOB_SCAN_PERIOD_MIN_MS;
	const enum kmm_knob hi = KNOB_SCAN_PERIOD_MAX_MS;

	/* Start from the defaults, then walk the edges. */
	must_set(_metadata, hi, 60000);
	must_set(_metadata, lo, 500);
	must_set(_metadata, hi, 5000);

	accept(_metadata, lo, 100);
	reject_num(_metadata, lo, 99);
	reject_num(_metadata, lo, 0);
	accept(_metadata, lo, 5000);		/* min == max is fine */
	reject_num(_metadata, lo, 5001);	/* min > max */
	reject_num(_metadata, hi, 4999);	/* max < min */
	accept(_metadata, hi, 60000);
	reject_num(_metadata, hi, 60001);
	reject_num(_metadata, hi, 4294967296LL);
	accept(_metadata, lo, 60000);
	reject_num(_metadata, lo, 60001);
	accept(_metadata, lo, 100);
	accept(_metadata, hi, 100);		/* max == min == 100 */
	reject_num(_metadata, hi, 99);
	reject_num(_metadata, lo, 101);
	accept(_metadata, hi, 1000);
	accept(_metadata, lo, 999);
}

TEST_F(knobs, scan_size)
{
	const enum kmm_knob k = KNOB_SCAN_SIZE;

	accept(_metadata, k, 512);
	accept(_metadata, k, 4194304);
	accept(_metadata, k, 65536);
	accept(_metadata, k, 1000);
	reject_num(_metadata, k, 511);
	reject_num(_metadata, k, 0);
	reject_num(_metadata, k, 4194305);
	reject_num(_metadata, k, 4294967296LL + 512);
}

TEST_F(knobs, hot_history_threshold)
{
	const enum kmm_knob n = KNOB_HOT_HISTORY;
	const enum kmm_knob t = KNOB_HOT_THRESHOLD;

	must_set(_metadata, n, 8);
	must_set(_metadata, t, 2);
	must_set(_metadata, n, 2);

	reject_num(_metadata, n, 1);	/* below threshold 2 */
	reject_num(_metadata, n, 0);
	reject_num(_metadata, n, 9);
	reject_num(_metadata, t, 3);	/* above history 2 */
	reject_num(_metadata, t, 0);
	accept(_metadata, n, 8);
	accept(_metadata, t, 8);
	reject_num(_metadata, t, 9);
	reject_num(_metadata, n, 7);	/* below threshold 8 */
	accept(_metadata, t, 1);
	accept(_metadata, n, 1);
	reject_num(_metadata, t, 2);	/* above history 1 */
	accept(_metadata, n, 4);
	accept(_metadata, t, 3);
}

TEST_F(knobs, migrate_batch)
{
	const enum kmm_knob k = KNOB_MIGRATE_BATCH;

	accept(_metadata, k, 1);
	accept(_metadata, k, 4096);
	accept(_metadata, k, 64);
	reject_num(_metadata, k, 0);
	reject_num(_metadata, k, 4097);
	reject_num(_metadata, k, 4294967296LL + 1);
}

TEST_F(knobs, promote_rate_limit_mbps)
{
	const enum kmm_knob k = KNOB_PROMOTE_RATE_LIMIT_MBPS;

	accept(_metadata, k, 0);
	accept(_metadata, k, 1048576);
	accept(_metadata, k, 1);
	reject_num(_metadata, k, 1048577);
	reject_num(_metadata, k, 4294967296LL);
}

TEST_F(knobs, target_node)
{
	const enum kmm_knob k = KNOB_TARGET_NODE;
	char why[128];

	accept(_metadata, k, -1);
	accept(_metadata, k, 0);		/* node 0 is top tier */
	accept(_metadata, k, -1);
	reject_num(_metadata, k, -2);
	reject_num(_metadata, k, 99);		/* not online */
	reject_num(_metadata, k, 1 << 20);
	reject_num(_metadata, k, 4294967296LL);
	reject_num(_metadata, k, -4294967296LL);
	reject_str(_metadata, k, "abc\n");
	accept(_metadata, k, 0);
	if (!two_tiers(why, sizeof(why)))
		SKIP(return, "%s", why);
	reject_num(_metadata, k, 1);		/* slow tier */
	reject_str(_metadata, k, "1");
}

/* Unprivileged users can read the knobs but not write them. */
TEST_F(knobs, non_root)
{
	int status, i;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char path[PATH_MAX];
		long long val = 0;
		int fd, ret, bad = 0;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		for (i = 0; i < NR_KNOBS; i++) {
			snprintf(path, sizeof(path), KMMSCAND_SYSFS "%s",
				 kmm_knobs[i].name);
			fd = open(path, O_WRONLY);
			if (fd >= 0) {
				ssize_t wr = write(fd, "1\n", 2);

				fprintf(stderr, "# uid %d opened %s for writing (write gave %zd)\n",
					NOBODY, path, wr);
				close(fd);
				bad++;
			} else if (errno != EACCES && errno != EPERM) {
				fprintf(stderr, "# %s: open for writing: %s, want EACCES\n",
					path, strerror(errno));
				bad++;
			}
			ret = knob_read(kmm_knobs[i].name, &val);
			if (ret) {
				fprintf(stderr, "# uid %d cannot read %s: %s\n",
					NOBODY, path, strerror(-ret));
				bad++;
			}
		}
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_NE(100, WEXITSTATUS(status)) TH_LOG("cannot become uid %d",
						   NOBODY);
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("%d knob checks failed as non-root", WEXITSTATUS(status));

	for (i = 0; i < NR_KNOBS; i++) {
		long long val = 0;

		ASSERT_EQ(0, knob_get(i, &val));
		EXPECT_EQ(self->saved.val[i], val)
			TH_LOG("%s changed by a non-root writer",
			       kmm_knobs[i].name);
	}
}

TEST_HARNESS_MAIN
