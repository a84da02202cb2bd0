// SPDX-License-Identifier: GPL-2.0
/*
 * Interface tests for kmmscand, the kernel thread that scans page table
 * Accessed bits to find hot slow-tier pages and promotes them to a top-tier
 * node.
 *
 * Covered here: the memory tier layout the promotion tests rely on, the
 * two kthreads, every knob under /sys/kernel/mm/kmmscand/ (defaults, valid
 * writes, each class of bad input, non-root writers), the tracepoint
 * formats and the throttle/drop events, the /proc/vmstat counters and the
 * PR_{SET,GET}_KMMSCAND prctl.
 * Scanning and promotion are in kmmscand_promote_test.c.
 *
 * Knobs are saved before and restored after every test from the parent
 * process, so a failed assertion cannot leave the system reconfigured.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "kmmscand_util.h"

#define TRACEFS_EVENTS		"/sys/kernel/tracing/events/kmmscand/"
#define TRACE_INSTANCE		"/sys/kernel/tracing/instances/kmmscand_test"
#define MB			(1024UL * 1024)
#define EXEC_CHILD_FLAG		"--kmmscand-exec-child"
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

/* ---- tracepoints ------------------------------------------------------ */

static const struct {
	const char *event;
	const char *fields[8];
} trace_events[] = {
	{ "kmmscand_mm_enter", { "mm" } },
	{ "kmmscand_mm_exit", { "mm" } },
	{ "kmmscand_scan_start", { "mm", "period_ms", "budget" } },
	{ "kmmscand_scan_end", { "mm", "scanned", "pmd_skipped", "young",
				 "candidates", "period_ms", "budget" } },
	{ "kmmscand_candidate_drop", { "pfn", "nid", "reason" } },
	{ "kmmscand_migrate_batch", { "nr", "succeeded", "failed",
				      "target_nid", "reason" } },
	{ "kmmscand_throttle", { "reason", "target_nid", "nr" } },
};

/* Does the "format" text declare a field called @field? */
static bool format_has_field(const char *fmt, const char *field)
{
	const char *p = fmt;
	size_t len = strlen(field);

	while ((p = strstr(p, "field:"))) {
		const char *semi = strchr(p, ';');
		const char *q;

		if (!semi)
			break;
		/* the name is the last word before ';', maybe with [N] */
		q = semi;
		while (q > p && (q[-1] == ']' || isdigit((unsigned char)q[-1]) ||
				 q[-1] == '['))
			q--;
		if ((size_t)(q - p) > len && !strncmp(q - len, field, len) &&
		    (q[-len - 1] == ' ' || q[-len - 1] == '*'))
			return true;
		p = semi;
	}
	return false;
}

TEST(tracepoint_formats)
{
	static char fmt[8192];
	char path[PATH_MAX];
	unsigned int i, j;
	int ret;

	if (access("/sys/kernel/tracing/events", F_OK))
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	if (!kmmscand_present())
		SKIP(return, "kernel built without CONFIG_KMMSCAND");
	ASSERT_EQ(0, access(TRACEFS_EVENTS, F_OK))
		TH_LOG("no %s", TRACEFS_EVENTS);

	for (i = 0; i < ARRAY_SIZE(trace_events); i++) {
		snprintf(path, sizeof(path), TRACEFS_EVENTS "%s/format",
			 trace_events[i].event);
		ret = read_file(path, fmt, sizeof(fmt));
		EXPECT_LT(0, ret) TH_LOG("cannot read %s", path);
		if (ret <= 0)
			continue;
		for (j = 0; j < ARRAY_SIZE(trace_events[i].fields); j++) {
			const char *f = trace_events[i].fields[j];

			if (!f)
				break;
			EXPECT_TRUE(format_has_field(fmt, f))
				TH_LOG("%s has no field \"%s\"",
				       trace_events[i].event, f);
		}
		/* Events carry numbers only, no task names. */
		EXPECT_FALSE(format_has_field(fmt, "comm"))
			TH_LOG("%s records comm", trace_events[i].event);
	}
}

static int instance_write(const char *rel, const char *val)
{
	return write_str_at(TRACE_INSTANCE, rel, val);
}

/* Is the value of "reason=" in @line one of @names (NULL-terminated)? */
static bool reason_is_one_of(const char *line, const char * const *names)
{
	const char *p = strstr(line, " reason=");
	size_t len;

	if (!p)
		return false;
	p += strlen(" reason=");
	len = strcspn(p, "\n ");
	for (; *names; names++)
		if (strlen(*names) == len && !strncmp(p, *names, len))
			return true;
	return false;
}

struct provoked {
	unsigned long throttle, drop, bad;
};

/* Count the throttle and drop events in the instance's trace buffer. */
static int count_provoked(struct provoked *c)
{
	static const char * const throttle_reasons[] = {
		"ratelimit", "watermark", "demotion", NULL
	};
	static const char * const drop_reasons[] = {
		"queue_full", "exit", "opt_out", "off", "defer_full", NULL
	};
	char line[512];
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = fopen(TRACE_INSTANCE "/trace", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strstr(line, " kmmscand_throttle: ")) {
			c->throttle++;
			if (!reason_is_one_of(line, throttle_reasons) &&
			    !c->bad++)
				ksft_print_msg("bad event: %s", line);
		} else if (strstr(line, " kmmscand_candidate_drop: ")) {
			c->drop++;
			if (!reason_is_one_of(line, drop_reasons) && !c->bad++)
				ksft_print_msg("bad event: %s", line);
		}
	}
	fclose(f);
	return 0;
}

/*
 * Child: fault @len bytes in on node 1, drop the binding, report 0 (or
 * errno) on @fd, then keep every page hot until the parent goes away.
 */
static void hot_child(int fd, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char err = 0;
	size_t i;
	char *p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, len, MADV_NOHUGEPAGE) ||
	    bind_to_node(p, len, 1))
		err = errno ?: EINVAL;
	if (!err) {
		memset(p, 1, len);
		if (unbind(p, len))
			err = errno;
	}
	if (write(fd, &err, 1) != 1 || err)
		_exit(1);
	close(fd);
	for (;;) {
		for (i = 0; i < len; i += page)
			p[i]++;
		/* every pass really stores to every page */
		asm volatile("" ::: "memory");
	}
}

/*
 * kmmscand_throttle and kmmscand_candidate_drop only fire when promotion
 * is held back.  Provoke them: keep 16 MB of node 1 hot under a rate
 * limit of 1 MB/s, so that the token bucket runs dry (throttle, reason
 * ratelimit), then disable kmmscand with candidates still queued (drop,
 * reason off).
 */
TEST_F_TIMEOUT(knobs, tracepoints_provoked, 120)
{
	const size_t len = 16 * MB;
	struct provoked c = {};
	unsigned char err = 1;
	int fds[2], status;
	char why[160];
	long long t0;
	pid_t pid;

	if (access("/sys/kernel/tracing/instances", F_OK))
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	if (!two_tiers(why, sizeof(why)))
		SKIP(return, "%s", why);

	must_set(_metadata, KNOB_SCAN_PERIOD_MAX_MS, 60000);
	must_set(_metadata, KNOB_SCAN_PERIOD_MIN_MS, 100);
	must_set(_metadata, KNOB_SCAN_PERIOD_MAX_MS, 1000);
	must_set(_metadata, KNOB_HOT_HISTORY, 8);
	must_set(_metadata, KNOB_HOT_THRESHOLD, 2);
	must_set(_metadata, KNOB_HOT_HISTORY, 2);
	must_set(_metadata, KNOB_SCAN_SIZE, 65536);
	/* see kmmscand_promote_test.c: the TLB can hide a hot page */
	must_set(_metadata, KNOB_TLB_FLUSH, 1);
	must_set(_metadata, KNOB_MIGRATE_BATCH, 32);
	must_set(_metadata, KNOB_PROMOTE_RATE_LIMIT_MBPS, 1);
	must_set(_metadata, KNOB_TARGET_NODE, -1);
	must_set(_metadata, KNOB_ENABLED, 1);

	if (mkdir(TRACE_INSTANCE, 0700) && errno != EEXIST)
		SKIP(return, "cannot create a trace instance: %s",
		     strerror(errno));
	ASSERT_EQ(0, instance_write("buffer_size_kb", "1024"));
	ASSERT_EQ(0, instance_write("trace", ""));
	ASSERT_EQ(0, instance_write("events/kmmscand/kmmscand_throttle/enable",
				    "1"));
	ASSERT_EQ(0, instance_write("events/kmmscand/kmmscand_candidate_drop/enable",
				    "1"));

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fds[0]);
		hot_child(fds[1], len);	/* does not return */
	}
	close(fds[1]);
	if (read(fds[0], &err, 1) != 1)
		err = EPIPE;
	close(fds[0]);
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ASSERT_EQ(0, err) TH_LOG("placing %zu MB on node 1: %s",
					 len / MB, strerror(err));
	}

	t0 = now_ms();
	do {
		sleep_ms(500);
		ASSERT_EQ(0, count_provoked(&c));
	} while (!c.throttle && now_ms() - t0 < 60000);
	/* Whatever is still queued is dropped now. */
	must_set(_metadata, KNOB_ENABLED, 0);
	sleep_ms(500);

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, count_provoked(&c));
	instance_write("events/kmmscand/enable", "0");
	rmdir(TRACE_INSTANCE);

	ksft_print_msg("%lld ms: %lu throttle, %lu candidate_drop, %lu bad\n",
		       now_ms() - t0, c.throttle, c.drop, c.bad);
	EXPECT_LT(0UL, c.throttle + c.drop)
		TH_LOG("neither kmmscand_throttle nor kmmscand_candidate_drop fired at 1 MB/s");
	EXPECT_EQ(0UL, c.bad) TH_LOG("events with an unknown reason");
}

/* ---- /proc/vmstat ----------------------------------------------------- */

TEST(vmstat_counters)
{
	struct kmm_stats s;
	char buf[64];
	int i, n;
	FILE *f;
	bool events = false;

	if (!kmmscand_present())
		SKIP(return, "kernel built without CONFIG_KMMSCAND");
	f = fopen("/proc/vmstat", "r");
	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "pgfault ", 8))
			events = true;
	fclose(f);
	if (!events)
		SKIP(return, "no event counters in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS=n)");

	n = kmm_stats_read(&s);
	EXPECT_EQ(NR_KMM_STATS, n) TH_LOG("found %d of %d kmmscand_* counters",
					  n, NR_KMM_STATS);
	for (i = 0; i < NR_KMM_STATS; i++) {
		const char *name = kmm_stat_names[i] ?: "?";

		EXPECT_TRUE(s.found[i]) TH_LOG("/proc/vmstat has no %s", name);
	}
}

/* ---- prctl ------------------------------------------------------------ */

static int kmm_get(void)
{
	return prctl(PR_GET_KMMSCAND, 0, 0, 0, 0);
}

static int kmm_set(unsigned long on)
{
	return prctl(PR_SET_KMMSCAND, on, 0, 0, 0);
}

/* The value of the "Kmmscand:" line of /proc/<pid>/status, or -1. */
static int status_line(pid_t pid)
{
	char path[64], line[256];
	int val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Kmmscand:\t", 10)) {
			if (!strcmp(line + 10, "0\n"))
				val = 0;
			else if (!strcmp(line + 10, "1\n"))
				val = 1;
			else
				val = -2;
		}
	}
	fclose(f);
	return val;
}

FIXTURE(prctl) {
	int saved;
};

FIXTURE_SETUP(prctl)
{
	if (!kmmscand_present())
		SKIP(return, "kernel built without CONFIG_KMMSCAND");
	self->saved = kmm_get();
	ASSERT_LE(0, self->saved) TH_LOG("PR_GET_KMMSCAND: %s",
					 strerror(errno));
}

FIXTURE_TEARDOWN(prctl)
{
	/* The test runs in a child of the harness: nothing to restore. */
}

TEST_F(prctl, default_on)
{
	EXPECT_EQ(1, self->saved) TH_LOG("a new process should be scanned");
	EXPECT_EQ(1, status_line(getpid()))
		TH_LOG("/proc/self/status needs \"Kmmscand:\\t1\"");
}

TEST_F(prctl, set_get)
{
	ASSERT_EQ(0, kmm_set(0)) TH_LOG("opt out: %s", strerror(errno));
	EXPECT_EQ(0, kmm_get());
	EXPECT_EQ(0, status_line(getpid()))
		TH_LOG("/proc/self/status needs \"Kmmscand:\\t0\"");
	ASSERT_EQ(0, kmm_set(0)) TH_LOG("opting out twice must work");
	EXPECT_EQ(0, kmm_get());
	ASSERT_EQ(0, kmm_set(1)) TH_LOG("opt in: %s", strerror(errno));
	EXPECT_EQ(1, kmm_get());
	EXPECT_EQ(1, status_line(getpid()));
}

TEST_F(prctl, bad_args)
{
	static const unsigned long bad_arg2[] = { 2, 3, 0x100, -1UL };
	unsigned int i;
	int j, v;

	for (v = 0; v <= 1; v++) {
		ASSERT_EQ(0, kmm_set(v));
		for (i = 0; i < ARRAY_SIZE(bad_arg2); i++) {
			errno = 0;
			EXPECT_EQ(-1, prctl(PR_SET_KMMSCAND, bad_arg2[i], 0, 0, 0))
				TH_LOG("SET arg2=%#lx accepted", bad_arg2[i]);
			EXPECT_EQ(EINVAL, errno);
			EXPECT_EQ(v, kmm_get()) TH_LOG("bad SET changed state");
		}
		/* arg3, arg4, arg5 must be 0 for both SET and GET */
		for (j = 0; j < 3; j++) {
			unsigned long a[3] = { 0, 0, 0 };

			a[j] = 1;
			errno = 0;
			EXPECT_EQ(-1, prctl(PR_SET_KMMSCAND, !v, a[0], a[1], a[2]))
				TH_LOG("SET with arg%d=1 accepted", j + 3);
			EXPECT_EQ(EINVAL, errno);
			EXPECT_EQ(v, kmm_get()) TH_LOG("bad SET changed state");
			errno = 0;
			EXPECT_EQ(-1, prctl(PR_GET_KMMSCAND, 0, a[0], a[1], a[2]))
				TH_LOG("GET with arg%d=1 accepted", j + 3);
			EXPECT_EQ(EINVAL, errno);
		}
		errno = 0;
		EXPECT_EQ(-1, prctl(PR_GET_KMMSCAND, 1, 0, 0, 0))
			TH_LOG("GET with arg2=1 accepted");
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(prctl, fork_inherits)
{
	int status, v;
	pid_t pid;

	for (v = 0; v <= 1; v++) {
		ASSERT_EQ(0, kmm_set(v));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int got = kmm_get();

			/* the child's own change must not reach the parent */
			if (got == v && !kmm_set(!v) && kmm_get() == !v)
				_exit(status_line(getpid()) == !v ? 0 : 3);
			_exit(got < 0 ? 2 : 1);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("child of a parent with state %d: check %d failed",
			       v, WEXITSTATUS(status));
		EXPECT_EQ(v, kmm_get()) TH_LOG("child changed parent's state");
	}
}

/* Run in the exec()ed image: report the inherited state as exit code. */
static int exec_child(void)
{
	int got = kmm_get();

	if (got < 0)
		return 10;
	if (status_line(getpid()) != got)
		return 11;
	return got;
}

TEST_F(prctl, exec_keeps)
{
	int status, v;
	pid_t pid;

	for (v = 0; v <= 1; v++) {
		ASSERT_EQ(0, kmm_set(v));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			execl("/proc/self/exe", "kmmscand_test", EXEC_CHILD_FLAG,
			      (char *)NULL);
			_exit(20);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_NE(20, WEXITSTATUS(status)) TH_LOG("exec failed");
		EXPECT_NE(11, WEXITSTATUS(status))
			TH_LOG("status line disagrees with PR_GET after exec");
		EXPECT_EQ(v, WEXITSTATUS(status))
			TH_LOG("state %d before exec, %d after", v,
			       WEXITSTATUS(status));
	}
}

/* The prctl acts on the caller's own mm and needs no privilege. */
TEST_F(prctl, unprivileged)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to switch to uid %d", NOBODY);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		if (kmm_set(0) || kmm_get() != 0)
			_exit(1);
		if (kmm_set(1) || kmm_get() != 1)
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("uid %d could not use the prctl (step %d)", NOBODY,
		       WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], EXEC_CHILD_FLAG))
		return exec_child();
	return test_harness_run(argc, argv);
}
