/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kmmscand selftests: sysfs knobs, plain files,
 * memory tiers and kthreads, and time.  kmmscand_numa.h adds NUMA system
 * calls and the memory counters, kmmscand_promote.h what the tests that
 * watch promotion share.
 */
#ifndef __KMMSCAND_UTIL_H
#define __KMMSCAND_UTIL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#include "../kselftest.h"
#include "vm_util.h"

#define KMMSCAND_SYSFS		"/sys/kernel/mm/kmmscand/"
#define MEMTIER_SYSFS		"/sys/devices/virtual/memory_tiering/"
#define NODE_SYSFS		"/sys/devices/system/node/"
#define NUMA_BALANCING_SYSCTL	"/proc/sys/kernel/numa_balancing"
#define DEMOTION_SYSFS		"/sys/kernel/mm/numa/demotion_enabled"
#define BOOST_SYSCTL		"/proc/sys/vm/watermark_boost_factor"
#define SCALE_SYSCTL		"/proc/sys/vm/watermark_scale_factor"
#define MIN_ADDR_SYSCTL		"/proc/sys/vm/mmap_min_addr"
#define PF_KTHREAD_FLAG		0x00200000UL
#define MB			(1024UL * 1024)

#ifndef PR_SET_KMMSCAND
#define PR_SET_KMMSCAND		82
#define PR_GET_KMMSCAND		83
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

/* ---- sysfs knobs ------------------------------------------------------ */

enum kmm_knob {
	KNOB_ENABLED,
	KNOB_SCAN_PERIOD_MIN_MS,
	KNOB_SCAN_PERIOD_MAX_MS,
	KNOB_SCAN_SIZE,
	KNOB_HOT_HISTORY,
	KNOB_HOT_THRESHOLD,
	KNOB_PMD_SKIP,
	KNOB_TLB_FLUSH,
	KNOB_MIGRATE_BATCH,
	KNOB_PROMOTE_RATE_LIMIT_MBPS,
	KNOB_TARGET_NODE,
	NR_KNOBS
};

struct kmm_knob_desc {
	const char *name;
	long long def;
	long long min;		/* static bounds from the contract */
	long long max;
};

static const struct kmm_knob_desc kmm_knobs[NR_KNOBS] = {
	[KNOB_ENABLED]			= { "enabled", 1, 0, 1 },
	[KNOB_SCAN_PERIOD_MIN_MS]	= { "scan_period_min_ms", 500, 100, 60000 },
	[KNOB_SCAN_PERIOD_MAX_MS]	= { "scan_period_max_ms", 5000, 100, 60000 },
	[KNOB_SCAN_SIZE]		= { "scan_size", 65536, 512, 4194304 },
	[KNOB_HOT_HISTORY]		= { "hot_history", 2, 1, 8 },
	[KNOB_HOT_THRESHOLD]		= { "hot_threshold", 2, 1, 8 },
	[KNOB_PMD_SKIP]			= { "pmd_skip", 1, 0, 1 },
	[KNOB_TLB_FLUSH]		= { "tlb_flush", 0, 0, 1 },
	[KNOB_MIGRATE_BATCH]		= { "migrate_batch", 512, 1, 4096 },
	[KNOB_PROMOTE_RATE_LIMIT_MBPS]	= { "promote_rate_limit_mbps", 256, 0, 1048576 },
	[KNOB_TARGET_NODE]		= { "target_node", -1, -1, INT_MAX },
};

/* Read a knob as a signed number. Returns 0 or -errno. */
static inline int knob_read(const char *name, long long *val)
{
	char path[PATH_MAX], buf[64], *end;
	ssize_t len;
	int fd, err;

	snprintf(path, sizeof(path), KMMSCAND_SYSFS "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = errno;
	close(fd);
	if (len < 0)
		return -err;
	buf[len] = '\0';
	errno = 0;
	*val = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end != '\n' && *end != '\0'))
		return -EBADMSG;
	return 0;
}

/* One write(2) of @len bytes. Returns what write(2) returned, or -errno. */
static inline ssize_t knob_write_raw(const char *name, const char *buf,
				     size_t len)
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

static inline ssize_t knob_write_str(const char *name, const char *str)
{
	return knob_write_raw(name, str, strlen(str));
}

/* Write "@val\n". Returns 0 or -errno. */
static inline int knob_write_num(const char *name, long long val)
{
	char buf[32];
	ssize_t ret;

	snprintf(buf, sizeof(buf), "%lld\n", val);
	ret = knob_write_str(name, buf);
	if (ret < 0)
		return ret;
	return ret == (ssize_t)strlen(buf) ? 0 : -EIO;
}

static inline int knob_get(enum kmm_knob k, long long *val)
{
	return knob_read(kmm_knobs[k].name, val);
}

static inline int knob_set(enum kmm_knob k, long long val)
{
	return knob_write_num(kmm_knobs[k].name, val);
}

struct kmm_knob_state {
	long long val[NR_KNOBS];
	bool valid;
};

static inline int knobs_save(struct kmm_knob_state *st)
{
	int i, ret;

	st->valid = false;
	for (i = 0; i < NR_KNOBS; i++) {
		ret = knob_get(i, &st->val[i]);
		if (ret)
			return ret;
	}
	st->valid = true;
	return 0;
}

/*
 * Write back every saved knob, in an order that the cross-checks between
 * the knobs (min <= max, threshold <= history) always accept: open each
 * pair to its widest legal setting first. Returns 0 or the first error.
 */
static inline int knobs_restore(const struct kmm_knob_state *st)
{
	static const struct { enum kmm_knob k; bool widen; long long v; } steps[] = {
		{ KNOB_SCAN_PERIOD_MAX_MS, true, 60000 },
		{ KNOB_SCAN_PERIOD_MIN_MS, false, 0 },
		{ KNOB_SCAN_PERIOD_MAX_MS, false, 0 },
		{ KNOB_HOT_HISTORY, true, 8 },
		{ KNOB_HOT_THRESHOLD, false, 0 },
		{ KNOB_HOT_HISTORY, false, 0 },
		{ KNOB_SCAN_SIZE, false, 0 },
		{ KNOB_PMD_SKIP, false, 0 },
		{ KNOB_TLB_FLUSH, false, 0 },
		{ KNOB_MIGRATE_BATCH, false, 0 },
		{ KNOB_PROMOTE_RATE_LIMIT_MBPS, false, 0 },
		{ KNOB_TARGET_NODE, false, 0 },
		{ KNOB_ENABLED, false, 0 },
	};
	unsigned int i;
	int ret, err = 0;

	if (!st->valid)
		return 0;
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		long long v = steps[i].widen ? steps[i].v : st->val[steps[i].k];

		ret = knob_set(steps[i].k, v);
		if (ret && !err)
			err = ret;
	}
	return err;
}

static inline bool kmmscand_present(void)
{
	struct stat st;

	return !stat(KMMSCAND_SYSFS, &st) && S_ISDIR(st.st_mode);
}

/* ---- plain files ------------------------------------------------------ */

static inline int read_file(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd, err;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (len < 0)
		return -err;
	buf[len] = '\0';
	return len;
}

static inline int read_long(const char *path, long *val)
{
	char buf[64], *end;
	int ret;

	ret = read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EBADMSG;
	return 0;
}

/*
 * Write @str to @path in one write(2), truncating (which clears a trace
 * buffer). Returns 0 or -errno.
 */
static inline int write_str(const char *path, const char *str)
{
	ssize_t ret;
	int fd;

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ret = write(fd, str, strlen(str));
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : 0;
}

/* write_str() to @dir/@rel. */
static inline int write_str_at(const char *dir, const char *rel,
			       const char *str)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return write_str(path, str);
}

static inline int write_long(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", val);
	return write_str(path, buf);
}

/*
 * The value of the "Kmmscand:" line of /proc/<pid>/status: 1 registered
 * and not opted out, 0 not, -1 no such line or process, -2 another value.
 */
static inline int kmmscand_status(pid_t pid)
{
	char path[64], line[256];
	int val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Kmmscand:\t", 10))
			continue;
		if (!strcmp(line + 10, "0\n"))
			val = 0;
		else if (!strcmp(line + 10, "1\n"))
			val = 1;
		else
			val = -2;
	}
	fclose(f);
	return val;
}

/* ---- nodes, tiers, kthreads ------------------------------------------- */

static inline bool node_online(int nid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), NODE_SYSFS "node%d", nid);
	return !access(path, F_OK);
}

/* Does a nodelist such as "0", "0-1" or "0,2-3" contain @nid? */
static inline bool nodelist_has(const char *list, int nid)
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
 * The id of the memory tier that lists @nid (a bigger id is a slower
 * tier), -ENOENT when no tier lists it, or another -errno.
 */
static inline int memtier_of(int nid)
{
	struct dirent *de;
	int tier = -ENOENT;
	DIR *dir;

	dir = opendir(MEMTIER_SYSFS);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char path[PATH_MAX], buf[256];
		int id;

		if (sscanf(de->d_name, "memory_tier%d", &id) != 1)
			continue;
		snprintf(path, sizeof(path), MEMTIER_SYSFS "%s/nodelist",
			 de->d_name);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		if (nodelist_has(buf, nid)) {
			tier = id;
			break;
		}
	}
	closedir(dir);
	return tier;
}

/*
 * Is the machine laid out as the promotion tests need it: node 0 top tier,
 * node 1 online in a slower tier? Fills @why when it is not.
 */
static inline bool two_tiers(char *why, size_t len)
{
	int t0, t1;

	if (!node_online(1)) {
		snprintf(why, len, "node 1 is not online: need a slow-tier node 1");
		return false;
	}
	t0 = memtier_of(0);
	t1 = memtier_of(1);
	if (t0 < 0 || t1 < 0 || t0 >= t1) {
		snprintf(why, len,
			 "node 1 (memory_tier%d) is not below node 0 (memory_tier%d)",
			 t1, t0);
		return false;
	}
	return true;
}

/*
 * Find the task called @comm. Returns its pid, or 0 if there is none.
 * *@kthread tells whether PF_KTHREAD is set in /proc/<pid>/stat.
 */
static inline pid_t find_task(const char *comm, bool *kthread)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *proc;

	*kthread = false;
	proc = opendir("/proc");
	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		char path[PATH_MAX], buf[512], *p;
		unsigned long flags = 0;
		int i;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, comm))
			continue;
		found = atoi(de->d_name);

		/* flags is field 9 of stat: the 7th after the ')' of comm */
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		p = strrchr(buf, ')');
		for (i = 0; p && i < 7; i++)
			p = strchr(p + 1, ' ');
		if (p && sscanf(p, " %lu", &flags) == 1)
			*kthread = flags & PF_KTHREAD_FLAG;
	}
	closedir(proc);
	return found;
}

/* ---- time ------------------------------------------------------------- */

static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* @part as a percentage of @whole, rounded down; 0 when @whole is 0. */
static inline unsigned long pct(unsigned long part, unsigned long whole)
{
	return whole ? part * 100 / whole : 0;
}

#endif /* __KMMSCAND_UTIL_H */
