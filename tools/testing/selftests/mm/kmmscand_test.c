// SPDX-License-Identifier: GPL-2.0
/*
 * Interface tests for kmmscand, the kernel thread that scans page table
 * Accessed bits to find hot slow-tier pages and promotes them to a top-tier
 * node.
 *
 * These tests check the fixed user interface: the memory tier layout the
 * other tests depend on, the kthread, and the sysfs knobs under
 * /sys/kernel/mm/kmmscand/. Every knob that a test changes is restored
 * from the parent process after the test, even when the test fails.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define KMMSCAND_SYSFS		"/sys/kernel/mm/kmmscand/"
#define MEMTIER_SYSFS		"/sys/devices/virtual/memory_tiering/"
#define NODE_SYSFS		"/sys/devices/system/node/"
#define PF_KTHREAD_FLAG		0x00200000UL

/* Read a sysfs knob as a signed number. Returns 0 or -errno. */
static int knob_read(const char *name, long long *val)
{
	char path[PATH_MAX], buf[64], *end;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), KMMSCAND_SYSFS "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[len] = '\0';
	errno = 0;
	*val = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end != '\n' && *end != '\0'))
		return -EBADMSG;
	return 0;
}

/*
 * Write @len bytes of @buf to a knob with a single write(2).
 * Returns the write(2) result, or -errno on failure.
 */
static ssize_t knob_write_raw(const char *name, const char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t ret;
	int fd;

	snprintf(path, sizeof(path), KMMSCAND_SYSFS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, buf, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static ssize_t knob_write_str(const char *name, const char *str)
{
	return knob_write_raw(name, str, strlen(str));
}

static int knob_write_num(const char *name, long long val)
{
	char buf[32];
	ssize_t ret;

	snprintf(buf, sizeof(buf), "%lld\n", val);
	ret = knob_write_str(name, buf);
	if (ret < 0)
		return ret;
	return ret == (ssize_t)strlen(buf) ? 0 : -EIO;
}

static bool kmmscand_present(void)
{
	struct stat st;

	return !stat(KMMSCAND_SYSFS, &st) && S_ISDIR(st.st_mode);
}

static bool node_online(int nid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), NODE_SYSFS "node%d", nid);
	return !access(path, F_OK);
}

/* Does a nodelist such as "0", "0-1" or "0,2-3" contain @nid? */
static bool nodelist_has(const char *list, int nid)
{
	const char *p = list;

	while (*p && *p != '\n') {
		char *end;
		long lo, hi;

		lo = strtol(p, &end, 10);
		if (end == p)
			return false;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1)
				return false;
			p = end;
		}
		if (nid >= lo && nid <= hi)
			return true;
		if (*p == ',')
			p++;
	}
	return false;
}

/*
 * Return the id of the memory tier that holds @nid (a bigger id is a slower
 * tier), -ENOENT if no tier lists it, or another -errno.
 */
static int memtier_of(int nid)
{
	struct dirent *de;
	int tier = -ENOENT;
	DIR *dir;

	dir = opendir(MEMTIER_SYSFS);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char path[PATH_MAX], buf[256];
		ssize_t len;
		int id, fd;

		if (sscanf(de->d_name, "memory_tier%d", &id) != 1)
			continue;
		snprintf(path, sizeof(path), MEMTIER_SYSFS "%s/nodelist",
			 de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		if (nodelist_has(buf, nid)) {
			tier = id;
			break;
		}
	}
	closedir(dir);
	return tier;
}

/*
 * Find the kthread called @comm. Returns its pid, or 0 if there is none.
 * *@kthread tells whether PF_KTHREAD is set in /proc/<pid>/stat.
 */
static pid_t find_kthread(const char *comm, bool *kthread)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		char path[PATH_MAX], buf[512], *p;
		unsigned long flags = 0;
		ssize_t len;
		int fd, i;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, comm))
			continue;
		found = atoi(de->d_name);

		/* Field 9 of stat, counted after the ")" that ends comm. */
		*kthread = false;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		p = strrchr(buf, ')');
		for (i = 0; p && i < 7; i++)
			p = strchr(p + 1, ' ');
		if (p && sscanf(p, " %lu", &flags) == 1)
			*kthread = flags & PF_KTHREAD_FLAG;
	}
	closedir(proc);
	return found;
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

	pid = find_kthread("kmmscand", &kthread);
	ASSERT_NE(0, pid) TH_LOG("no task with comm \"kmmscand\" in /proc");
	EXPECT_TRUE(kthread) TH_LOG("pid %d is not a kernel thread", pid);
}

/*
 * The fixture saves "enabled" and restores it from the parent process, so a
 * failing ASSERT or a crash of the test child cannot leave it changed.
 */
FIXTURE(knobs) {
	long long saved_enabled;
	bool saved;
};

FIXTURE_SETUP(knobs)
{
	self->saved = false;
	if (!kmmscand_present())
		SKIP(return, "%s missing: kernel built without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);
	if (geteuid())
		SKIP(return, "writing %s needs root", KMMSCAND_SYSFS);
	ASSERT_EQ(0, knob_read("enabled", &self->saved_enabled))
		TH_LOG("cannot read %senabled", KMMSCAND_SYSFS);
	self->saved = true;
}

FIXTURE_TEARDOWN_PARENT(knobs)
{
	long long now;

	if (!self->saved)
		return;
	if (knob_write_num("enabled", self->saved_enabled) ||
	    knob_read("enabled", &now) || now != self->saved_enabled)
		TH_LOG("could not restore enabled=%lld", self->saved_enabled);
}

TEST_F(knobs, enabled_round_trip)
{
	long long val;

	ASSERT_EQ(0, knob_write_num("enabled", 0))
		TH_LOG("writing 0 to enabled failed");
	ASSERT_EQ(0, knob_read("enabled", &val));
	ASSERT_EQ(0, val) TH_LOG("enabled reads %lld after writing 0", val);

	ASSERT_EQ(0, knob_write_num("enabled", 1))
		TH_LOG("writing 1 to enabled failed");
	ASSERT_EQ(0, knob_read("enabled", &val));
	ASSERT_EQ(1, val) TH_LOG("enabled reads %lld after writing 1", val);

	/* A trailing newline is optional. */
	ASSERT_EQ(1, knob_write_str("enabled", "0"));
	ASSERT_EQ(0, knob_read("enabled", &val));
	ASSERT_EQ(0, val) TH_LOG("enabled reads %lld after writing \"0\"", val);
}

TEST_F(knobs, enabled_rejects_bad_input)
{
	static const char * const bad[] = {
		"2", "2\n", "-1", "-1\n", "abc", "abc\n", "\n", "1x", " 1x\n",
		"99999999999999999999",
	};
	static char big[4097];
	long long before, val;
	ssize_t ret;
	unsigned int i;
	int pass;

	/* Try every bad input once with enabled at 0 and once at 1. */
	for (pass = 0; pass < 2; pass++) {
		ASSERT_EQ(0, knob_write_num("enabled", pass));
		ASSERT_EQ(0, knob_read("enabled", &before));
		ASSERT_EQ(pass, before);

		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			ret = knob_write_str("enabled", bad[i]);
			EXPECT_EQ(-EINVAL, ret)
				TH_LOG("write \"%.*s\": got %zd, want -EINVAL",
				       (int)strcspn(bad[i], "\n"), bad[i], ret);
			ASSERT_EQ(0, knob_read("enabled", &val));
			EXPECT_EQ(before, val)
				TH_LOG("write \"%.*s\" changed enabled to %lld",
				       (int)strcspn(bad[i], "\n"), bad[i], val);
		}

		/* 4 KB of letters, then 4 KB of digits (overflow). */
		memset(big, 'a', sizeof(big) - 1);
		ret = knob_write_raw("enabled", big, 4096);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("4 KB of 'a': got %zd", ret);
		memset(big, '1', sizeof(big) - 1);
		ret = knob_write_raw("enabled", big, 4096);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("4 KB of '1': got %zd", ret);
		ASSERT_EQ(0, knob_read("enabled", &val));
		EXPECT_EQ(before, val) TH_LOG("4 KB write changed enabled");

		/*
		 * sysfs completes a zero-length write(2) without calling the
		 * store method, so "" cannot fail: it must not change anything.
		 */
		ret = knob_write_raw("enabled", "", 0);
		EXPECT_EQ(0, ret) TH_LOG("zero-length write returned %zd", ret);
		ASSERT_EQ(0, knob_read("enabled", &val));
		EXPECT_EQ(before, val) TH_LOG("empty write changed enabled");
	}
}

TEST_HARNESS_MAIN
