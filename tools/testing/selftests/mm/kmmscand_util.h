/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kmmscand selftests: sysfs knobs, /proc/vmstat
 * counters, memory tiers, and raw NUMA system calls (no libnuma, so the
 * tests link statically).
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

#define KMMSCAND_SYSFS		"/sys/kernel/mm/kmmscand/"
#define MEMTIER_SYSFS		"/sys/devices/virtual/memory_tiering/"
#define NODE_SYSFS		"/sys/devices/system/node/"
#define NUMA_BALANCING_SYSCTL	"/proc/sys/kernel/numa_balancing"
#define PF_KTHREAD_FLAG		0x00200000UL

#ifndef PR_SET_KMMSCAND
#define PR_SET_KMMSCAND		74
#define PR_GET_KMMSCAND		75
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

/* Write @val to @dir/@rel (truncating); 0 or -errno. */
static inline int write_str_at(const char *dir, const char *rel,
			       const char *val)
{
	char path[PATH_MAX];
	ssize_t ret;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val));
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : 0;
}

static inline int write_long(const char *path, long val)
{
	char buf[32];
	ssize_t ret;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%ld\n", val);
	ret = write(fd, buf, strlen(buf));
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : 0;
}

/* ---- /proc/vmstat ----------------------------------------------------- */

enum kmm_stat {
	S_MM_SCAN,
	S_MM_SKIP_CONTENDED,
	S_PTE_SCANNED,
	S_PMD_SKIPPED,
	S_YOUNG,
	S_THP_YOUNG,
	S_CANDIDATE,
	S_CANDIDATE_DROP,
	S_PROMOTE_SUCCESS,
	S_PROMOTE_BATCH,
	S_DEFER_RATELIMIT,
	S_DEFER_WATERMARK,
	S_DEFER_DEMOTION,
	S_FAIL_ISOLATE,
	S_FAIL_STALE,
	S_FAIL_MIGRATE,
	S_FAIL_EXIT,
	NR_KMM_STATS
};

static const char * const kmm_stat_names[NR_KMM_STATS] = {
	"kmmscand_mm_scan",
	"kmmscand_mm_skip_contended",
	"kmmscand_pte_scanned",
	"kmmscand_pmd_skipped",
	"kmmscand_young",
	"kmmscand_thp_young",
	"kmmscand_candidate",
	"kmmscand_candidate_drop",
	"kmmscand_promote_success",
	"kmmscand_promote_batch",
	"kmmscand_defer_ratelimit",
	"kmmscand_defer_watermark",
	"kmmscand_defer_demotion",
	"kmmscand_fail_isolate",
	"kmmscand_fail_stale",
	"kmmscand_fail_migrate",
	"kmmscand_fail_exit",
};

struct kmm_stats {
	unsigned long long v[NR_KMM_STATS];
	bool found[NR_KMM_STATS];
};

/* Snapshot the kmmscand_* lines of /proc/vmstat. Returns how many exist. */
static inline int kmm_stats_read(struct kmm_stats *s)
{
	char line[128], name[64];
	unsigned long long v;
	int i, n = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "kmmscand_", 9))
			continue;
		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		for (i = 0; i < NR_KMM_STATS; i++) {
			if (strcmp(name, kmm_stat_names[i]))
				continue;
			s->v[i] = v;
			s->found[i] = true;
			n++;
		}
	}
	fclose(f);
	return n;
}

static inline unsigned long long kmm_stat(enum kmm_stat i)
{
	struct kmm_stats s;

	kmm_stats_read(&s);
	return s.v[i];
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

/* ---- NUMA system calls ------------------------------------------------ */

static inline long sys_mbind(void *addr, unsigned long len, int mode,
			     const unsigned long *nodemask,
			     unsigned long maxnode, unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
}

static inline long sys_set_mempolicy(int mode, const unsigned long *nodemask,
				     unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, nodemask, maxnode);
}

static inline long sys_move_pages(pid_t pid, unsigned long count,
				  void **pages, const int *nodes, int *status,
				  int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

/* Bind [addr, addr + len) to node @nid only (MPOL_BIND). */
static inline long bind_to_node(void *addr, size_t len, int nid)
{
	unsigned long mask = 1UL << nid;

	return sys_mbind(addr, len, MPOL_BIND, &mask, sizeof(mask) * 8, 0);
}

/* Drop the VMA policy of [addr, addr + len), without moving pages. */
static inline long unbind(void *addr, size_t len)
{
	return sys_mbind(addr, len, MPOL_DEFAULT, NULL, 0, 0);
}

#define KMM_MAX_NODES	8

struct node_count {
	unsigned long n[KMM_MAX_NODES];
	unsigned long absent;	/* -ENOENT: not present */
	unsigned long unmapped;	/* -EFAULT: no VMA there */
	unsigned long other;	/* any other error */
	unsigned long total;
};

/*
 * Ask where each page of [base, base + npages * page) of @pid is (0 = self),
 * using move_pages(2) with nodes == NULL. Returns 0 or -errno.
 */
static inline int where_pages(pid_t pid, char *base, unsigned long npages,
			      struct node_count *nc)
{
	enum { CHUNK = 1024 };
	unsigned long page = sysconf(_SC_PAGESIZE), i, j, n;
	void *addrs[CHUNK];
	int status[CHUNK];

	memset(nc, 0, sizeof(*nc));
	for (i = 0; i < npages; i += n) {
		n = npages - i < CHUNK ? npages - i : CHUNK;
		for (j = 0; j < n; j++)
			addrs[j] = base + (i + j) * page;
		if (sys_move_pages(pid, n, addrs, NULL, status, 0))
			return -errno;
		for (j = 0; j < n; j++) {
			if (status[j] >= 0 && status[j] < KMM_MAX_NODES)
				nc->n[status[j]]++;
			else if (status[j] == -ENOENT)
				nc->absent++;
			else if (status[j] == -EFAULT)
				nc->unmapped++;
			else
				nc->other++;
		}
	}
	nc->total = npages;
	return 0;
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

#endif /* __KMMSCAND_UTIL_H */
