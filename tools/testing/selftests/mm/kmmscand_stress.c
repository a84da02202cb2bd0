// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_stress: race everything the mm offers against the kmmscand
 * scanner and promotion thread, and check that no byte is lost.
 *
 *   kmmscand_stress [-t SECONDS] [-w WORKERS] [-T THREADS]   (stress)
 *   kmmscand_stress -F [-t SECONDS]                           (fault injection)
 *
 * Stress mode (default; duration from -t, else KMMSCAND_STRESS_SECONDS,
 * else 20 s): kmmscand at its most aggressive settings, then
 *  - WORKERS processes x THREADS threads, each thread owning regions
 *    (anonymous, shmem, THP-aligned with MADV_HUGEPAGE) placed on both
 *    nodes with mbind(), doing random writes/verifies, munmap (whole and
 *    partial, holes refilled later), mremap (move/grow/shrink), mprotect,
 *    madvise(DONTNEED, COLD, PAGEOUT, HUGEPAGE, NOHUGEPAGE, COLLAPSE),
 *    mbind(MPOL_MF_MOVE), move_pages() and fork()+COW checks; one thread
 *    per worker toggles PR_SET_KMMSCAND on its own process;
 *  - a forker process spawning short-lived children that allocate, write,
 *    verify and exit;
 *  - a migrator process calling migrate_pages() on the workers;
 *  - a balloon filling most of node 0 (demotion_enabled=1), re-touching it
 *    so that demotion and promotion run together;
 *  - the parent changing the sysfs knobs underneath (valid values only).
 * Every page written holds a pattern derived from (region id, page index,
 * generation); the owner tracks the generation of each page (0 = must read
 * as zeros, after MADV_DONTNEED or a fresh mapping).  Pages are verified
 * periodically and all of them at the end.
 *
 * Fault mode (-F): fail_page_alloc and failslab (debugfs, task-filter) are
 * aimed at the kmmscand_migrate thread (and briefly at the scanner) while a
 * hot set on node 1 is touched: the failures must show up in the
 * kmmscand_fail_* counters, data must stay intact, promotion must resume
 * once the injection stops, and the system must stay usable.
 *
 * Output is TAP ("ok N name" / "not ok N name"); exit status 0 on success,
 * 1 on failure, 4 when skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#ifndef PR_SET_KMMSCAND
#define PR_SET_KMMSCAND		74
#define PR_GET_KMMSCAND		75
#endif
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define SYSFS		"/sys/kernel/mm/kmmscand/"
#define DEMOTION	"/sys/kernel/mm/numa/demotion_enabled"
#define DBG		"/sys/kernel/debug/"
#define THP_SIZE	(2UL << 20)
#define MAX_REGIONS	6
#define MAX_WORKERS	16
#define MAX_MISMATCH_REPORTS 20
#define GEN_MAX		0x7fffffffU

static long page_size;
static int verbose;

/* ------------------------------------------------------------------ */
/* Shared statistics (MAP_SHARED, updated with atomics by every process) */

struct stats {
	long forks, fork_children_bad, cow_forks, cow_bad;
	long mmaps, munmaps, partial_munmaps, hole_refills;
	long mremaps, mremap_fail, mprotects;
	long madv_dontneed, madv_cold, madv_pageout, madv_hugepage;
	long madv_nohugepage, madv_collapse_ok, madv_collapse_fail;
	long mbind_move, move_pages_calls, move_pages_moved;
	long migrate_pages_calls, migrate_pages_pids;
	long prctl_toggles, prctl_errors;
	long knob_writes, knob_errors;
	long pages_written, pages_verified, mismatches;
	long balloon_pages, balloon_rounds;
	int stop;
	int mismatch_reports;
};

static struct stats *st;

#define STOPPED()	__atomic_load_n(&st->stop, __ATOMIC_RELAXED)

static void stat_add(long *p, long n)
{
	__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
}

static void msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "# ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	/* One write(): lines of concurrent processes do not interleave. */
	if (write(STDOUT_FILENO, buf, n) < 0)
		return;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned long rnd(uint64_t *s, unsigned long n)
{
	return n ? rnd_next(s) % n : 0;
}

/* ------------------------------------------------------------------ */
/* sysfs / procfs helpers */

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static int read_long(const char *path, long *val)
{
	char buf[64];
	int ret = read_file(path, buf, sizeof(buf));

	if (ret)
		return ret;
	*val = strtol(buf, NULL, 10);
	return 0;
}

static int write_long(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", val);
	return write_file(path, buf);
}

/* MemFree of a node in kB, or -1. */
static long node_free_kb(int nid)
{
	char path[128], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "MemFree:");

		if (p) {
			kb = strtol(p + 8, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* ------------------------------------------------------------------ */
/* /proc/vmstat */

static const char *const vmstat_names[] = {
	"kmmscand_mm_scan", "kmmscand_mm_skip_contended",
	"kmmscand_pte_scanned", "kmmscand_pmd_skipped", "kmmscand_young",
	"kmmscand_thp_young", "kmmscand_candidate", "kmmscand_candidate_drop",
	"kmmscand_promote_success", "kmmscand_promote_batch",
	"kmmscand_defer_ratelimit", "kmmscand_defer_watermark",
	"kmmscand_defer_demotion", "kmmscand_fail_isolate",
	"kmmscand_fail_stale", "kmmscand_fail_migrate", "kmmscand_fail_exit",
	"pgdemote_kswapd", "pgdemote_direct", "pgmigrate_success",
	"pgmigrate_fail", "thp_split_pmd", "thp_collapse_alloc",
	"nr_isolated_anon", "nr_isolated_file",
};

#define NR_VM ARRAY_SIZE(vmstat_names)

struct vmsnap {
	long long v[NR_VM];
	bool have[NR_VM];
};

static void vmstat_read(struct vmsnap *s)
{
	char name[128];
	long long val;
	unsigned int i;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return;
	while (fscanf(f, "%127s %lld", name, &val) == 2) {
		for (i = 0; i < NR_VM; i++) {
			if (!strcmp(name, vmstat_names[i])) {
				s->v[i] = val;
				s->have[i] = true;
			}
		}
	}
	fclose(f);
}

static int vm_idx(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_VM; i++)
		if (!strcmp(vmstat_names[i], name))
			return i;
	return -1;
}

static long long vm_delta(const struct vmsnap *a, const struct vmsnap *b,
			  const char *name)
{
	int i = vm_idx(name);

	return i < 0 ? 0 : b->v[i] - a->v[i];
}

static bool vm_have(const struct vmsnap *s, const char *name)
{
	int i = vm_idx(name);

	return i >= 0 && s->have[i];
}

static void vmstat_print_delta(const struct vmsnap *a, const struct vmsnap *b)
{
	unsigned int i;

	for (i = 0; i < NR_VM; i++) {
		if (!b->have[i] || !strncmp(vmstat_names[i], "nr_", 3))
			continue;
		printf("# vmstat %-28s +%lld\n", vmstat_names[i], b->v[i] - a->v[i]);
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Knobs */

struct knob {
	const char *name;
	long saved;
	bool required;
	bool present;
};

enum { K_ENABLED, K_PMIN, K_PMAX, K_SIZE, K_HIST, K_THR, K_PMD, K_TLB,
	K_BATCH, K_RATE, K_TARGET, NR_KNOBS };

static struct knob knobs[NR_KNOBS] = {
	[K_ENABLED] = { "enabled", 0, true, false },
	[K_PMIN] = { "scan_period_min_ms", 0, true, false },
	[K_PMAX] = { "scan_period_max_ms", 0, true, false },
	[K_SIZE] = { "scan_size", 0, true, false },
	[K_HIST] = { "hot_history", 0, false, false },
	[K_THR] = { "hot_threshold", 0, false, false },
	[K_PMD] = { "pmd_skip", 0, false, false },
	[K_TLB] = { "tlb_flush", 0, true, false },
	[K_BATCH] = { "migrate_batch", 0, false, false },
	[K_RATE] = { "promote_rate_limit_mbps", 0, false, false },
	[K_TARGET] = { "target_node", 0, false, false },
};

static long knob_cur[NR_KNOBS];
static long demotion_saved = -1;

static int knob_set(int k, long val)
{
	char path[256];
	int ret;

	if (!knobs[k].present)
		return 0;
	snprintf(path, sizeof(path), SYSFS "%s", knobs[k].name);
	ret = write_long(path, val);
	if (!ret)
		knob_cur[k] = val;
	return ret;
}

/* Returns NULL, or the name of a missing required knob. */
static const char *knobs_save(void)
{
	char path[256], buf[16];
	int k;

	for (k = 0; k < NR_KNOBS; k++) {
		snprintf(path, sizeof(path), SYSFS "%s", knobs[k].name);
		knobs[k].present = !read_long(path, &knobs[k].saved);
		if (!knobs[k].present && knobs[k].required)
			return knobs[k].name;
		knob_cur[k] = knobs[k].saved;
	}
	/* demotion_enabled reads "true" or "false". */
	if (read_file(DEMOTION, buf, sizeof(buf)))
		demotion_saved = -1;
	else
		demotion_saved = buf[0] == 't' || buf[0] == '1' ||
				 buf[0] == 'y' || buf[0] == 'Y';
	return NULL;
}

/* Values depend on each other (min <= max, threshold <= history): retry. */
static bool knobs_restore(void)
{
	char path[256];
	bool ok = true;
	int pass, k;
	long v = 0;

	for (pass = 0; pass < 3; pass++)
		for (k = 0; k < NR_KNOBS; k++)
			if (knobs[k].present && knob_cur[k] != knobs[k].saved)
				knob_set(k, knobs[k].saved);
	for (k = 0; k < NR_KNOBS; k++) {
		if (!knobs[k].present)
			continue;
		snprintf(path, sizeof(path), SYSFS "%s", knobs[k].name);
		if (read_long(path, &v) || v != knobs[k].saved) {
			msg("knob %s not restored: %ld, want %ld\n", knobs[k].name, v,
			    knobs[k].saved);
			ok = false;
		}
	}
	if (demotion_saved >= 0)
		write_file(DEMOTION, demotion_saved ? "1" : "0");
	return ok;
}

static bool knobs_aggressive(void)
{
	bool ok = true;

	ok &= !knob_set(K_ENABLED, 1);
	ok &= !knob_set(K_PMIN, 100);
	ok &= !knob_set(K_PMAX, 100);
	ok &= !knob_set(K_SIZE, 4194304);
	ok &= !knob_set(K_THR, 1);
	ok &= !knob_set(K_HIST, 1);
	ok &= !knob_set(K_PMD, 1);
	ok &= !knob_set(K_TLB, 1);
	ok &= !knob_set(K_BATCH, 4096);
	ok &= !knob_set(K_RATE, 1048576);
	ok &= !knob_set(K_TARGET, -1);
	return ok;
}

/* One random valid change, mostly staying aggressive. */
static void knob_poke(uint64_t *rs)
{
	static const long sizes[] = { 512, 4096, 65536, 4194304, 4194304 };
	static const long batches[] = { 1, 32, 512, 4096, 4096 };
	static const long rates[] = { 0, 1, 64, 1048576, 1048576, 1048576 };
	int k = rnd(rs, NR_KNOBS);
	long v = 0;
	int ret;

	/* Undo the two "off" settings at the next poke. */
	if (knob_cur[K_ENABLED] == 0)
		k = K_ENABLED;
	else if (knobs[K_RATE].present && knob_cur[K_RATE] == 0)
		k = K_RATE;
	if (!knobs[k].present)
		return;
	switch (k) {
	case K_ENABLED:
		v = knob_cur[k] == 0 ? 1 : !!rnd(rs, 8);
		break;
	case K_PMIN:
		v = 100 + (rnd(rs, 4) ? 0 : (long)rnd(rs, knob_cur[K_PMAX] - 100 + 1));
		break;
	case K_PMAX:
		v = knob_cur[K_PMIN] + (rnd(rs, 3) ? 0 : (long)rnd(rs, 2000));
		break;
	case K_SIZE:
		v = sizes[rnd(rs, 5)];
		break;
	case K_HIST:
		v = knob_cur[K_THR] + rnd(rs, 8 - knob_cur[K_THR] + 1);
		break;
	case K_THR:
		v = 1 + rnd(rs, knob_cur[K_HIST]);
		break;
	case K_PMD:
		v = rnd(rs, 2);
		break;
	case K_TLB:
		v = rnd(rs, 4) != 0;
		break;
	case K_BATCH:
		v = batches[rnd(rs, 5)];
		break;
	case K_RATE:
		v = knob_cur[k] == 0 ? 1048576 : rates[rnd(rs, 6)];
		break;
	case K_TARGET:
		v = rnd(rs, 2) ? -1 : 0;
		break;
	}
	ret = knob_set(k, v);
	stat_add(&st->knob_writes, 1);
	if (ret) {
		stat_add(&st->knob_errors, 1);
		msg("knob %s=%ld rejected: %s\n", knobs[k].name, v, strerror(-ret));
	}
}

/* ------------------------------------------------------------------ */
/* Page patterns */

static uint64_t pattern(uint32_t id, unsigned long idx, uint32_t gen)
{
	uint64_t s = ((uint64_t)id << 32) ^ ((uint64_t)idx << 1) ^
		     ((uint64_t)gen * 0xd6e8feb86659fd93ULL);

	return rnd_next(&s) | 1;	/* never 0: zero pages are gen 0 */
}

static void page_fill(char *p, uint32_t id, unsigned long idx, uint32_t gen)
{
	uint64_t *w = (uint64_t *)p, v = pattern(id, idx, gen);
	long i, n = page_size / 8;

	for (i = 0; i < n; i++)
		w[i] = v + i;
	stat_add(&st->pages_written, 1);
}

static void report_mismatch(const char *who, uint32_t id, unsigned long idx,
			    const void *addr, long word, uint64_t want,
			    uint64_t got, uint32_t gen)
{
	stat_add(&st->mismatches, 1);
	if (__atomic_fetch_add(&st->mismatch_reports, 1, __ATOMIC_RELAXED) >=
	    MAX_MISMATCH_REPORTS)
		return;
	msg("MISMATCH %s pid %d region %#x page %lu addr %p word %ld gen %u: %s %#llx got %#llx\n",
	    who, getpid(), id, idx, addr, word, gen, "want",
	    (unsigned long long)want, (unsigned long long)got);
}

/* Returns true if the page holds what it should. */
static bool page_check(const char *who, const char *p, uint32_t id,
		       unsigned long idx, uint32_t gen)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t v = gen ? pattern(id, idx, gen) : 0;
	long i, n = page_size / 8;

	stat_add(&st->pages_verified, 1);
	for (i = 0; i < n; i++) {
		uint64_t want = gen ? v + i : 0;

		if (w[i] != want) {
			report_mismatch(who, id, idx, p + i * 8, i, want, w[i], gen);
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* NUMA system calls (raw: the test links statically, without libnuma) */

static long sys_mbind(void *addr, unsigned long len, int mode,
		      unsigned long mask, unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask ? &mask : NULL,
		       mask ? 64 : 0, flags);
}

static long sys_move_pages(pid_t pid, unsigned long n, void **pages,
			   const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, n, pages, nodes, status, flags);
}

static long sys_migrate_pages(pid_t pid, unsigned long from, unsigned long to)
{
	return syscall(SYS_migrate_pages, pid, 64, &from, &to);
}

/* ------------------------------------------------------------------ */
/* Regions owned by one thread */

enum { R_ANON, R_SHM, R_THP, NR_KINDS };

struct region {
	char *addr;			/* NULL: slot unused */
	unsigned long npages;		/* mapped length */
	unsigned long cap;		/* gen[]/hole[] capacity (pages) */
	uint32_t id;
	uint32_t next_gen;
	int kind;
	int memfd;			/* R_SHM: the backing file */
	uint32_t *gen;			/* per page; 0 = zeros */
	unsigned char *hole;		/* per page; 1 = unmapped */
};

struct worker_ctx {
	int wid, tid;
	uint64_t rs;
	struct region r[MAX_REGIONS];
	uint32_t seq;
	bool prctl_owner;
	int prctl_state;
	char who[32];
};

/*
 * Fault the range in on the slow node, then drop the VMA policy: kmmscand
 * (like NUMA balancing) leaves memory with an explicit policy where the
 * policy put it, so only default-policy memory on node 1 is promotable.
 * MADV_POPULATE_WRITE keeps what a shared mapping already holds.
 */
static int place_promotable(char *addr, unsigned long len)
{
	if (sys_mbind(addr, len, MPOL_PREFERRED, 1UL << 1, 0))
		return -1;
	madvise(addr, len, MADV_POPULATE_WRITE);
	return sys_mbind(addr, len, MPOL_DEFAULT, 0, 0);
}

static int region_policy(struct worker_ctx *c, char *addr, unsigned long len)
{
	/* Mostly slow tier but promotable (preferred 1), the rest mixed. */
	switch (rnd(&c->rs, 8)) {
	case 0:
		return sys_mbind(addr, len, MPOL_BIND, 1UL << 1, 0);	/* pinned to slow */
	case 1:
		return sys_mbind(addr, len, MPOL_BIND, 1UL << 0, 0);
	case 2:
		return sys_mbind(addr, len, MPOL_PREFERRED, 1UL << 0, 0);
	case 3:
		return 0;						/* local = node 0 */
	default:
		return place_promotable(addr, len);
	}
}

static bool region_create(struct worker_ctx *c, struct region *r)
{
	unsigned long np;
	char *p;
	int kind = rnd(&c->rs, NR_KINDS);

	memset(r, 0, sizeof(*r));
	r->memfd = -1;
	if (kind == R_THP)
		np = (THP_SIZE / page_size) * (1 + rnd(&c->rs, 2));
	else
		np = 16 + rnd(&c->rs, 512);
	r->cap = np * 2;
	r->gen = calloc(r->cap, sizeof(*r->gen));
	r->hole = calloc(r->cap, 1);
	if (!r->gen || !r->hole)
		goto fail;
	if (kind == R_SHM) {
		r->memfd = memfd_create("kmmscand_stress", 0);
		if (r->memfd < 0 || ftruncate(r->memfd, r->cap * page_size))
			goto fail;
		p = mmap(NULL, np * page_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->memfd, 0);
	} else if (kind == R_THP) {
		/* Over-allocate, then trim to a THP-aligned range. */
		char *raw = mmap(NULL, np * page_size + THP_SIZE,
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned long a;

		if (raw == MAP_FAILED)
			goto fail;
		a = ((unsigned long)raw + THP_SIZE - 1) & ~(THP_SIZE - 1);
		if (a > (unsigned long)raw)
			munmap(raw, a - (unsigned long)raw);
		munmap((char *)a + np * page_size,
		       (unsigned long)raw + THP_SIZE - a);
		p = (char *)a;
		if (!madvise(p, np * page_size, MADV_HUGEPAGE))
			stat_add(&st->madv_hugepage, 1);
	} else {
		p = mmap(NULL, np * page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED)
		goto fail;
	region_policy(c, p, np * page_size);
	r->addr = p;
	r->npages = np;
	r->kind = kind;
	r->id = ((uint32_t)c->wid << 24) | ((uint32_t)c->tid << 16) |
		(++c->seq & 0xffff);
	r->next_gen = 1;
	stat_add(&st->mmaps, 1);
	return true;
fail:
	if (r->memfd >= 0)
		close(r->memfd);
	free(r->gen);
	free(r->hole);
	memset(r, 0, sizeof(*r));
	return false;
}

static bool region_verify(struct worker_ctx *c, struct region *r,
			  unsigned long a, unsigned long b)
{
	bool ok = true;
	unsigned long i;

	for (i = a; i < b; i++)
		if (!r->hole[i] &&
		    !page_check(c->who, r->addr + i * page_size, r->id, i, r->gen[i]))
			ok = false;
	return ok;
}

static void region_destroy(struct worker_ctx *c, struct region *r)
{
	unsigned long i, j;

	if (!r->addr)
		return;
	region_verify(c, r, 0, r->npages);
	/*
	 * Unmap the mapped runs only: another thread's mapping may have
	 * landed in a hole left by a partial munmap.
	 */
	for (i = 0; i < r->npages; i = j) {
		for (j = i; j < r->npages && r->hole[j] == r->hole[i]; j++)
			;
		if (!r->hole[i])
			munmap(r->addr + i * page_size, (j - i) * page_size);
	}
	if (r->memfd >= 0)
		close(r->memfd);
	free(r->gen);
	free(r->hole);
	memset(r, 0, sizeof(*r));
	stat_add(&st->munmaps, 1);
}

static uint32_t gen_next(struct region *r)
{
	uint32_t g = r->next_gen++;

	if (r->next_gen > GEN_MAX)
		r->next_gen = 1;
	return g;
}

/* A random hole-free page range [*a, *b); false if none found. */
static bool pick_range(struct worker_ctx *c, struct region *r,
		       unsigned long maxlen, unsigned long *a, unsigned long *b)
{
	int tries;

	for (tries = 0; tries < 4; tries++) {
		unsigned long s = rnd(&c->rs, r->npages);
		unsigned long len = 1 + rnd(&c->rs, maxlen);
		unsigned long e = s + len > r->npages ? r->npages : s + len, i;

		for (i = s; i < e && !r->hole[i]; i++)
			;
		if (i > s) {
			*a = s;
			*b = i;
			return true;
		}
	}
	return false;
}

static bool region_has_holes(struct region *r)
{
	unsigned long i;

	for (i = 0; i < r->npages; i++)
		if (r->hole[i])
			return true;
	return false;
}

static void op_write(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b, i;

	if (!pick_range(c, r, 64, &a, &b))
		return;
	for (i = a; i < b; i++) {
		uint32_t g = gen_next(r);

		r->gen[i] = g;
		page_fill(r->addr + i * page_size, r->id, i, g);
	}
}

static void op_munmap_partial(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b, i;

	if (r->npages < 4 || !pick_range(c, r, r->kind == R_THP ? 8 : 32, &a, &b))
		return;
	if (a == 0)
		a = 1;		/* keep the start: the region is found by it */
	if (a >= b)
		return;
	if (!region_verify(c, r, a, b))
		return;
	if (munmap(r->addr + a * page_size, (b - a) * page_size))
		return;
	for (i = a; i < b; i++)
		r->hole[i] = 1;
	stat_add(&st->partial_munmaps, 1);
}

static void op_refill_holes(struct worker_ctx *c, struct region *r)
{
	unsigned long i, j;

	for (i = 0; i < r->npages; i = j) {
		char *p;

		for (j = i; j < r->npages && r->hole[j] == r->hole[i]; j++)
			;
		if (!r->hole[i])
			continue;
		if (r->kind == R_SHM)
			p = mmap(r->addr + i * page_size, (j - i) * page_size,
				 PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED_NOREPLACE, r->memfd,
				 i * page_size);
		else
			p = mmap(r->addr + i * page_size, (j - i) * page_size,
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				 -1, 0);
		if (p == MAP_FAILED)
			continue;
		if (p != r->addr + i * page_size) {	/* old kernel: hint only */
			munmap(p, (j - i) * page_size);
			continue;
		}
		region_policy(c, p, (j - i) * page_size);
		memset(r->hole + i, 0, j - i);
		/* shmem keeps its contents, fresh anonymous memory is zero. */
		if (r->kind != R_SHM)
			memset(r->gen + i, 0, (j - i) * sizeof(*r->gen));
		stat_add(&st->hole_refills, 1);
	}
}

/* True if [addr, addr + len) is one VMA (mremap() cannot span VMAs). */
static bool single_vma(const char *addr, unsigned long len)
{
	unsigned long a = (unsigned long)addr, start, end;
	char line[512];
	bool ok = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (start <= a && a < end) {
			ok = a + len <= end;
			break;
		}
	}
	fclose(f);
	return ok;
}

/*
 * Shrink, grow or move the region.  Careful with mremap()'s side effects
 * on failure: a MREMAP_FIXED call unmaps the destination and the shrunk
 * tail before it checks the source VMA, so a failed call may already have
 * unmapped both (and another thread may map something there right after).
 * So: shrink in place first (always succeeds), only move a range that is
 * one VMA, and never munmap() the destination after a failure.
 */
static void op_mremap(struct worker_ctx *c, struct region *r)
{
	unsigned long np = r->npages, i;
	char *p, *dst;

	if (region_has_holes(r))
		return;
	switch (rnd(&c->rs, 3)) {
	case 0:		/* grow */
		np = r->npages + 1 + rnd(&c->rs, r->cap - r->npages);
		if (np > r->cap)
			np = r->cap;
		break;
	case 1:		/* shrink */
		if (r->npages > 2)
			np = r->npages - 1 - rnd(&c->rs, r->npages / 2);
		break;
	default:	/* move */
		break;
	}
	if (np < r->npages) {
		p = mremap(r->addr, r->npages * page_size, np * page_size, 0);
		if (p == MAP_FAILED) {
			stat_add(&st->mremap_fail, 1);
			return;
		}
		/* The tail is gone: anonymous pages come back as zeros. */
		if (r->kind != R_SHM)
			for (i = np; i < r->npages; i++)
				r->gen[i] = 0;
		r->npages = np;
		stat_add(&st->mremaps, 1);
	}
	if (!single_vma(r->addr, r->npages * page_size)) {
		stat_add(&st->mremap_fail, 1);
		return;
	}
	/* Move (even at the same size) to a range reserved for it. */
	dst = mmap(NULL, np * page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (dst == MAP_FAILED)
		return;
	p = mremap(r->addr, r->npages * page_size, np * page_size,
		   MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (p == MAP_FAILED) {
		msg("mremap of one VMA failed: %s\n", strerror(errno));
		stat_add(&st->mremap_fail, 1);
		return;
	}
	/* Anonymous growth is zero; shmem shows the file's contents. */
	for (i = r->npages; i < np; i++)
		r->hole[i] = 0;
	r->addr = p;
	r->npages = np;
	stat_add(&st->mremaps, 1);
	region_verify(c, r, 0, r->npages);
}

static void op_mprotect(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b;
	int prot = rnd(&c->rs, 2) ? PROT_READ : PROT_NONE;

	if (!pick_range(c, r, 32, &a, &b))
		return;
	if (mprotect(r->addr + a * page_size, (b - a) * page_size, prot))
		return;
	stat_add(&st->mprotects, 1);
	if (prot == PROT_READ)
		region_verify(c, r, a, b);
	else
		sched_yield();
	if (mprotect(r->addr + a * page_size, (b - a) * page_size,
		     PROT_READ | PROT_WRITE)) {
		msg("mprotect restore failed: %s\n", strerror(errno));
		stat_add(&st->mismatches, 1);
	}
}

static void op_madvise(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b, i;
	int what = rnd(&c->rs, 6);

	if (!pick_range(c, r, r->kind == R_THP ? 1024 : 64, &a, &b))
		return;
	switch (what) {
	case 0:
		if (madvise(r->addr + a * page_size, (b - a) * page_size, MADV_DONTNEED))
			return;
		stat_add(&st->madv_dontneed, 1);
		/* Private anonymous memory reads back as zeros afterwards. */
		if (r->kind != R_SHM)
			for (i = a; i < b; i++)
				r->gen[i] = 0;
		break;
	case 1:
		if (!madvise(r->addr + a * page_size, (b - a) * page_size, MADV_COLD))
			stat_add(&st->madv_cold, 1);
		break;
	case 2:
		if (!madvise(r->addr + a * page_size, (b - a) * page_size, MADV_PAGEOUT))
			stat_add(&st->madv_pageout, 1);
		break;
	case 3:
		if (r->kind == R_SHM)
			break;
		if (!madvise(r->addr + a * page_size, (b - a) * page_size,
			     rnd(&c->rs, 2) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
			stat_add(&st->madv_nohugepage, 1);
		}
		break;
	default:
		/* Collapse a whole THP-aligned region (after splits). */
		if (r->kind != R_THP || region_has_holes(r) ||
		    ((unsigned long)r->addr & (THP_SIZE - 1)))
			break;
		madvise(r->addr, r->npages * page_size, MADV_HUGEPAGE);
		if (!madvise(r->addr, r->npages * page_size & ~(THP_SIZE - 1),
			     MADV_COLLAPSE))
			stat_add(&st->madv_collapse_ok, 1);
		else
			stat_add(&st->madv_collapse_fail, 1);
		break;
	}
	region_verify(c, r, a, b);
}

static void op_move_pages(struct worker_ctx *c, struct region *r)
{
	void *pages[64];
	int nodes[64], status[64];
	unsigned long a, b, i, n;
	int target = rnd(&c->rs, 2);

	if (!pick_range(c, r, 64, &a, &b))
		return;
	n = b - a;
	for (i = 0; i < n; i++) {
		pages[i] = r->addr + (a + i) * page_size;
		nodes[i] = target;
		status[i] = INT_MIN;
	}
	stat_add(&st->move_pages_calls, 1);
	if (sys_move_pages(0, n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		return;
	for (i = 0; i < n; i++)
		if (status[i] == target)
			stat_add(&st->move_pages_moved, 1);
	region_verify(c, r, a, b);
}

static void op_mbind_move(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b;
	int node = rnd(&c->rs, 2);

	if (!pick_range(c, r, 128, &a, &b))
		return;
	if (!sys_mbind(r->addr + a * page_size, (b - a) * page_size,
		       MPOL_PREFERRED, 1UL << node, MPOL_MF_MOVE))
		stat_add(&st->mbind_move, 1);
	region_verify(c, r, a, b);
}

static void op_prctl(struct worker_ctx *c)
{
	int want = !c->prctl_state, got;

	if (prctl(PR_SET_KMMSCAND, want, 0, 0, 0)) {
		stat_add(&st->prctl_errors, 1);
		msg("PR_SET_KMMSCAND %d: %s\n", want, strerror(errno));
		return;
	}
	got = prctl(PR_GET_KMMSCAND, 0, 0, 0, 0);
	if (got != want) {
		stat_add(&st->prctl_errors, 1);
		msg("PR_GET_KMMSCAND = %d after setting %d\n", got, want);
	}
	c->prctl_state = want;
	stat_add(&st->prctl_toggles, 1);
}

/*
 * fork() from a busy multi-threaded process: the child checks this
 * thread's regions (no other thread writes them), overwrites some (COW),
 * and exits; the parent then checks that the child's writes did not leak.
 */
static void op_cow_fork(struct worker_ctx *c)
{
	int status, k;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		bool ok = true;
		int j;

		snprintf(c->who, sizeof(c->who), "cow-child");
		for (j = 0; j < MAX_REGIONS; j++) {
			struct region *r = &c->r[j];
			unsigned long i;

			if (!r->addr)
				continue;
			ok &= region_verify(c, r, 0, r->npages);
			if (r->kind == R_SHM)	/* shared: the parent would see it */
				continue;
			for (i = 0; i < r->npages; i += 7)
				if (!r->hole[i])
					page_fill(r->addr + i * page_size, r->id, i,
						  GEN_MAX);
			for (i = 0; i < r->npages; i += 7)
				if (!r->hole[i])
					ok &= page_check(c->who, r->addr + i * page_size,
							 r->id, i, GEN_MAX);
		}
		_exit(ok ? 0 : 1);
	}
	stat_add(&st->cow_forks, 1);
	if (waitpid(pid, &status, 0) == pid &&
	    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		stat_add(&st->cow_bad, 1);
		msg("COW child %d failed: status %#x\n", pid, status);
	}
	for (k = 0; k < MAX_REGIONS; k++)
		if (c->r[k].addr && c->r[k].kind != R_SHM)
			region_verify(c, &c->r[k], 0, c->r[k].npages);
}

/* What the thread was doing, for the SIGSEGV/SIGBUS report. */
static __thread const char *cur_op = "idle";
static __thread struct region *cur_r;

/* The mappings around @addr, from /proc/self/maps (read(2) only). */
static void dump_maps_near(unsigned long addr)
{
	static char maps[1 << 16];
	char *line, *save;
	ssize_t n, len = 0;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return;
	while (len < (ssize_t)sizeof(maps) - 1 &&
	       (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += n;
	close(fd);
	maps[len] = 0;
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long start = strtoul(line, NULL, 16);
		char *dash = strchr(line, '-');
		unsigned long end = dash ? strtoul(dash + 1, NULL, 16) : 0;

		if (end + (4UL << 20) > addr && start < addr + (4UL << 20)) {
			if (write(STDOUT_FILENO, "#   ", 4) < 0 ||
			    write(STDOUT_FILENO, line, strlen(line)) < 0 ||
			    write(STDOUT_FILENO, "\n", 1) < 0)
				return;
		}
	}
}

static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	char buf[256];
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf),
		     "# pid %d: signal %d at %p during %s, region %p +%lu pages (kind %d)\n",
		     getpid(), sig, si->si_addr, cur_op,
		     cur_r ? (void *)cur_r->addr : NULL, cur_r ? cur_r->npages : 0,
		     cur_r ? cur_r->kind : -1);
	if (write(STDOUT_FILENO, buf, n) < 0)
		n = 0;
	dump_maps_near((unsigned long)si->si_addr);
	signal(sig, SIG_DFL);	/* the access faults again and kills us */
}

static void install_fault_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

#define OP(name, call) do { cur_op = name; call; } while (0)

static void worker_sleepless_step(struct worker_ctx *c)
{
	int k = rnd(&c->rs, MAX_REGIONS);
	struct region *r = &c->r[k];
	int op;

	cur_r = r;
	if (!r->addr) {
		cur_op = "create";
		if (region_create(c, r))
			op_write(c, r);
		cur_op = "idle";
		return;
	}
	cur_r = r;
	op = rnd(&c->rs, 100);
	if (op < 30) {
		OP("write", op_write(c, r));
	} else if (op < 40) {
		OP("verify", region_verify(c, r, 0, r->npages));
	} else if (op < 44) {
		OP("destroy", region_destroy(c, r));
	} else if (op < 50) {
		OP("munmap_partial", op_munmap_partial(c, r));
	} else if (op < 55) {
		OP("refill_holes", op_refill_holes(c, r));
	} else if (op < 62) {
		OP("mremap", op_mremap(c, r));
	} else if (op < 68) {
		OP("mprotect", op_mprotect(c, r));
	} else if (op < 82) {
		OP("madvise", op_madvise(c, r));
	} else if (op < 88) {
		OP("move_pages", op_move_pages(c, r));
	} else if (op < 92) {
		OP("mbind_move", op_mbind_move(c, r));
	} else if (op < 97) {
		if (c->prctl_owner)
			OP("prctl", op_prctl(c));
	} else if (c->prctl_owner && !rnd(&c->rs, 3)) {
		cur_r = NULL;
		OP("cow_fork", op_cow_fork(c));
	}
	cur_op = "idle";
}

static void *worker_thread(void *arg)
{
	struct worker_ctx *c = arg;
	int k;

	snprintf(c->who, sizeof(c->who), "w%d.t%d", c->wid, c->tid);
	while (!STOPPED()) {
		double t0 = now_s();

		worker_sleepless_step(c);
		/* About 50% duty: leave the CPUs some idle time for the kthreads. */
		usleep((useconds_t)((now_s() - t0) * 1e6) + 100);
	}
	/* Final check of everything this thread owns. */
	for (k = 0; k < MAX_REGIONS; k++) {
		if (!c->r[k].addr)
			continue;
		cur_r = &c->r[k];
		OP("final_refill", op_refill_holes(c, &c->r[k]));
		OP("final_verify", region_destroy(c, &c->r[k]));
	}
	return NULL;
}

static int worker_main(int wid, int nthreads)
{
	struct worker_ctx *ctx = calloc(nthreads, sizeof(*ctx));
	pthread_t *th = calloc(nthreads, sizeof(*th));
	long before = st->mismatches;
	int i;

	if (!ctx || !th)
		return 2;
	for (i = 0; i < nthreads; i++) {
		ctx[i].wid = wid;
		ctx[i].tid = i;
		ctx[i].rs = (uint64_t)getpid() * 1000003 + i * 7919 + time(NULL);
		ctx[i].prctl_owner = i == 0;
		ctx[i].prctl_state = 1;
		if (pthread_create(&th[i], NULL, worker_thread, &ctx[i]))
			return 2;
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	/* Leave the process opted in: exit with either state must be fine. */
	return st->mismatches != before ? 1 : 0;
}

/* Short-lived children that allocate, write, verify and exit. */
static int forker_main(void)
{
	uint64_t rs = getpid() * 2654435761ULL;
	int running = 0, status;
	long bad = 0;

	while (!STOPPED()) {
		pid_t pid;

		while (running >= 4) {
			if (wait(&status) > 0) {
				running--;
				if (!WIFEXITED(status) || WEXITSTATUS(status)) {
					bad++;
					msg("forked child failed: status %#x\n", status);
				}
			}
		}
		pid = fork();
		if (pid < 0) {
			usleep(10000);
			continue;
		}
		if (pid == 0) {
			unsigned long np = 16 + rnd(&rs, 256), i;
			uint32_t id = 0xf0000000U | (getpid() & 0xffffff);
			char *p = mmap(NULL, np * page_size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			bool ok = true;
			int round;

			rs ^= getpid();
			if (p == MAP_FAILED)
				_exit(3);
			sys_mbind(p, np * page_size, MPOL_PREFERRED,
				  1UL << rnd(&rs, 2), 0);
			if (!rnd(&rs, 4))
				prctl(PR_SET_KMMSCAND, 0, 0, 0, 0);
			for (round = 1; round <= 3 && ok; round++) {
				for (i = 0; i < np; i++)
					page_fill(p + i * page_size, id, i, round);
				if (!rnd(&rs, 3))
					usleep(rnd(&rs, 200000));
				if (!rnd(&rs, 4))
					prctl(PR_SET_KMMSCAND, rnd(&rs, 2), 0, 0, 0);
				for (i = 0; i < np; i++)
					ok &= page_check("forked", p + i * page_size,
							 id, i, round);
			}
			_exit(ok ? 0 : 1);
		}
		stat_add(&st->forks, 1);
		running++;
	}
	while (running > 0 && wait(&status) > 0) {
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			bad++;
			msg("forked child failed: status %#x\n", status);
		}
	}
	stat_add(&st->fork_children_bad, bad);
	return bad ? 1 : 0;
}

/* migrate_pages(2) on the workers, both directions. */
static int migrator_main(const pid_t *pids, int n)
{
	uint64_t rs = getpid() * 11400714819323198485ULL;

	while (!STOPPED()) {
		pid_t pid = pids[rnd(&rs, n)];
		int from = rnd(&rs, 2);

		if (sys_migrate_pages(pid, 1UL << from, 1UL << !from) >= 0)
			stat_add(&st->migrate_pages_pids, 1);
		stat_add(&st->migrate_pages_calls, 1);
		usleep(20000 + rnd(&rs, 80000));
	}
	return 0;
}

/* Fill node 0 (preferred, so it spills to node 1 instead of OOM) and keep it warm. */
static int balloon_main(double fraction)
{
	long free_kb = node_free_kb(0);
	unsigned long np, i, chunk = THP_SIZE / page_size;
	uint64_t rs = getpid();
	uint32_t *gen, id = 0xbbbb0000U;
	long bad = 0;
	char *p;

	if (free_kb <= 0)
		return 0;
	np = (unsigned long)(free_kb * fraction) * 1024 / page_size;
	np &= ~(chunk - 1);
	if (np < chunk)
		return 0;
	gen = calloc(np, sizeof(*gen));
	p = mmap(NULL, np * page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!gen || p == MAP_FAILED)
		return 2;
	sys_mbind(p, np * page_size, MPOL_PREFERRED, 1UL << 0, 0);
	/* Fill at full speed (nice 0), then keep it warm at nice 19. */
	if (setpriority(PRIO_PROCESS, 0, 0))
		msg("balloon: setpriority: %s\n", strerror(errno));
	for (i = 0; i < np && !STOPPED(); i++) {
		gen[i] = 1;
		page_fill(p + i * page_size, id, i, 1);
	}
	if (setpriority(PRIO_PROCESS, 0, 19))
		msg("balloon: setpriority: %s\n", strerror(errno));
	stat_add(&st->balloon_pages, i);
	while (!STOPPED()) {
		unsigned long c0 = rnd(&rs, np / chunk) * chunk;

		for (i = c0; i < c0 + chunk; i++) {
			if (!gen[i])
				continue;
			if (!page_check("balloon", p + i * page_size, id, i, gen[i]))
				bad++;
			gen[i] = gen[i] % 1000 + 1;
			page_fill(p + i * page_size, id, i, gen[i]);
		}
		stat_add(&st->balloon_rounds, 1);
		usleep(5000);
	}
	for (i = 0; i < np; i++)
		if (gen[i] && !page_check("balloon", p + i * page_size, id, i, gen[i]))
			bad++;
	munmap(p, np * page_size);
	return bad ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* TAP */

static int tap_n, tap_failed;

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
}

static void tap_skip(const char *name, const char *why)
{
	printf("ok %d %s # SKIP %s\n", ++tap_n, name, why);
	fflush(stdout);
}

static pid_t spawn(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/*
		 * Same nice level as the kmmscand threads (19): at nice 0 the
		 * load would starve them on the 2 vCPUs and nothing would race.
		 */
		if (nice(19) < 0)
			msg("nice: %s\n", strerror(errno));
		install_fault_handler();
		_exit(fn(arg));
	}
	return pid;
}

struct spawn_arg {
	int wid, threads;
	const pid_t *pids;
	int npids;
	double fraction;
};

static int spawn_worker(void *a)
{
	struct spawn_arg *s = a;

	return worker_main(s->wid, s->threads);
}

static int spawn_forker(void *a)
{
	(void)a;
	return forker_main();
}

static int spawn_migrator(void *a)
{
	struct spawn_arg *s = a;

	return migrator_main(s->pids, s->npids);
}

static int spawn_balloon(void *a)
{
	struct spawn_arg *s = a;

	return balloon_main(s->fraction);
}

static bool two_nodes(void)
{
	return node_free_kb(0) > 0 && node_free_kb(1) > 0;
}

static bool isolated_drained(void)
{
	struct vmsnap s;
	int tries;

	for (tries = 0; tries < 50; tries++) {
		vmstat_read(&s);
		if (s.v[vm_idx("nr_isolated_anon")] == 0 &&
		    s.v[vm_idx("nr_isolated_file")] == 0)
			return true;
		usleep(200000);
	}
	msg("nr_isolated_anon %lld nr_isolated_file %lld\n",
	    s.v[vm_idx("nr_isolated_anon")], s.v[vm_idx("nr_isolated_file")]);
	return false;
}

static void print_ops(void)
{
	printf("# ops: forks %ld (failed %ld), cow_forks %ld (failed %ld)\n",
	       st->forks, st->fork_children_bad, st->cow_forks, st->cow_bad);
	printf("# ops: mmaps %ld, munmaps %ld, partial_munmaps %ld, hole_refills %ld\n",
	       st->mmaps, st->munmaps, st->partial_munmaps, st->hole_refills);
	printf("# ops: mremaps %ld (failed %ld), mprotects %ld, mbind_move %ld\n",
	       st->mremaps, st->mremap_fail, st->mprotects, st->mbind_move);
	printf("# ops: madvise dontneed %ld, cold %ld, pageout %ld, (no)hugepage %ld\n",
	       st->madv_dontneed, st->madv_cold, st->madv_pageout,
	       st->madv_hugepage + st->madv_nohugepage);
	printf("# ops: madvise collapse ok %ld, failed %ld\n",
	       st->madv_collapse_ok, st->madv_collapse_fail);
	printf("# ops: move_pages %ld (pages moved %ld), migrate_pages %ld (ok %ld)\n",
	       st->move_pages_calls, st->move_pages_moved,
	       st->migrate_pages_calls, st->migrate_pages_pids);
	printf("# ops: prctl toggles %ld (errors %ld), knob writes %ld (rejected %ld)\n",
	       st->prctl_toggles, st->prctl_errors, st->knob_writes,
	       st->knob_errors);
	printf("# ops: pages written %ld, verified %ld, mismatches %ld\n",
	       st->pages_written, st->pages_verified, st->mismatches);
	printf("# ops: balloon pages %ld (rounds %ld)\n",
	       st->balloon_pages, st->balloon_rounds);
	fflush(stdout);
}

static const char *proc_name(pid_t pid, const pid_t *workers, int nw,
			     pid_t forker, pid_t migrator, pid_t balloon)
{
	int i;

	for (i = 0; i < nw; i++)
		if (workers[i] == pid)
			return "worker";
	if (pid == forker)
		return "forker";
	if (pid == migrator)
		return "migrator";
	if (pid == balloon)
		return "balloon";
	return "?";
}

static int run_stress(int seconds, int nworkers, int nthreads)
{
	struct spawn_arg wa[MAX_WORKERS], ma, ba;
	pid_t workers[MAX_WORKERS], forker, migrator, balloon, pid;
	struct vmsnap v0, v1;
	uint64_t rs = getpid();
	int i, status, crashed = 0, failed_procs = 0, alive;
	double end;
	bool scanned, off = !!getenv("KMMSCAND_STRESS_OFF");

	printf("# %d s, %d workers x %d threads, forker, migrator, balloon, knobs\n",
	       seconds, nworkers, nthreads);
	tap(knobs_aggressive(), "aggressive knobs (period 100 ms, scan_size max, tlb_flush 1)");
	/* Reference run without kmmscand, to tell its bugs from others. */
	if (off) {
		printf("# KMMSCAND_STRESS_OFF: kmmscand disabled for the run\n");
		knob_set(K_ENABLED, 0);
	}
	if (demotion_saved >= 0)
		write_file(DEMOTION, "1");
	vmstat_read(&v0);

	/* Past the free memory of node 0: kswapd must demote to make room. */
	ba.fraction = 1.2;
	balloon = spawn(spawn_balloon, &ba);
	for (i = 0; i < nworkers; i++) {
		wa[i].wid = i + 1;
		wa[i].threads = nthreads;
		workers[i] = spawn(spawn_worker, &wa[i]);
	}
	forker = spawn(spawn_forker, NULL);
	ma.pids = workers;
	ma.npids = nworkers;
	migrator = spawn(spawn_migrator, &ma);

	end = now_s() + seconds;
	while (now_s() < end) {
		usleep(100000 + rnd(&rs, 200000));
		if (!off)
			knob_poke(&rs);
	}
	/* Give back the most aggressive settings for the final checks. */
	if (!off)
		knobs_aggressive();
	__atomic_store_n(&st->stop, 1, __ATOMIC_RELAXED);

	alive = nworkers + 3;
	while (alive > 0 && (pid = wait(&status)) > 0) {
		const char *what = proc_name(pid, workers, nworkers, forker,
					     migrator, balloon);

		alive--;
		if (WIFSIGNALED(status)) {
			crashed++;
			printf("# %s %d killed by signal %d%s\n", what, pid,
			       WTERMSIG(status),
			       WTERMSIG(status) == SIGKILL ? " (OOM killer?)" : "");
		} else if (WEXITSTATUS(status)) {
			failed_procs++;
			printf("# %s %d exited with %d\n", what, pid,
			       WEXITSTATUS(status));
		}
	}
	vmstat_read(&v1);
	print_ops();
	vmstat_print_delta(&v0, &v1);

	tap(!crashed, "no process crashed (%d killed by a signal)", crashed);
	tap(!st->mismatches && !failed_procs,
	    "data intact: %ld pages verified, %ld mismatches", st->pages_verified,
	    st->mismatches);
	tap(!st->cow_bad && !st->fork_children_bad,
	    "fork children intact: %ld forks, %ld COW forks", st->forks,
	    st->cow_forks);
	tap(!st->prctl_errors, "PR_SET/GET_KMMSCAND consistent over %ld toggles",
	    st->prctl_toggles);
	tap(!st->knob_errors, "%ld valid knob writes accepted", st->knob_writes);
	tap(isolated_drained(), "no folio left isolated (nr_isolated_* back to 0)");
	if (off) {
		tap_skip("kmmscand scanned under load", "KMMSCAND_STRESS_OFF");
	} else if (!vm_have(&v1, "kmmscand_pte_scanned")) {
		tap_skip("kmmscand scanned during the stress", "no kmmscand vmstat counters");
	} else {
		scanned = vm_delta(&v0, &v1, "kmmscand_pte_scanned") > 0;
		tap(scanned, "kmmscand scanned under load (+%lld PTEs)",
		    vm_delta(&v0, &v1, "kmmscand_pte_scanned"));
		if (vm_delta(&v0, &v1, "kmmscand_promote_success") > 0)
			tap(true, "promotion ran under load (+%lld pages)",
			    vm_delta(&v0, &v1, "kmmscand_promote_success"));
		else
			tap_skip("promotion ran during the stress",
				 "no page promoted (throttled?)");
	}
	tap(knobs_restore(), "knobs restored");
	return tap_failed ? KSFT_FAIL : KSFT_PASS;
}

/* ------------------------------------------------------------------ */
/* Fault injection */

static pid_t find_kthread(const char *comm)
{
	char path[300], buf[64];
	struct dirent *d;
	pid_t found = -1;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (!read_file(path, buf, sizeof(buf)) && !strcmp(buf, comm)) {
			found = atoi(d->d_name);
			break;
		}
	}
	closedir(dir);
	return found;
}

static int fi_set(const char *dir, const char *attr, const char *val)
{
	char path[256];
	int ret;

	snprintf(path, sizeof(path), DBG "%s/%s", dir, attr);
	ret = write_file(path, val);
	if (ret)
		msg("write %s=%s: %s\n", path, val, strerror(-ret));
	return ret;
}

#define FI_TIMES 1000000L

static int fi_setup(const char *dir)
{
	char times[32];
	int ret = 0;

	snprintf(times, sizeof(times), "%ld", FI_TIMES);
	ret |= fi_set(dir, "probability", "0");
	ret |= fi_set(dir, "interval", "1");
	ret |= fi_set(dir, "times", times);
	ret |= fi_set(dir, "space", "0");
	ret |= fi_set(dir, "verbose", "0");
	ret |= fi_set(dir, "task-filter", "Y");
	ret |= fi_set(dir, "ignore-gfp-wait", "N");
	if (!strcmp(dir, "fail_page_alloc")) {
		ret |= fi_set(dir, "ignore-gfp-highmem", "N");
		ret |= fi_set(dir, "min-order", "0");
	}
	return ret;
}

static long fi_injected(const char *dir)
{
	char path[256];
	long v;

	snprintf(path, sizeof(path), DBG "%s/times", dir);
	if (read_long(path, &v))
		return -1;
	return FI_TIMES - v;
}

static int make_it_fail(pid_t pid, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/make-it-fail", pid);
	return write_file(path, on ? "1" : "0");
}

struct hotset {
	char *p;
	unsigned long np;
	uint32_t gen;
};

/* Read and rewrite the hot set for @secs seconds. */
static bool hot_touch(struct hotset *h, double secs)
{
	double end = now_s() + secs;
	bool ok = true;
	unsigned long i;

	do {
		for (i = 0; i < h->np; i++)
			ok &= page_check("hot", h->p + i * page_size, 0x40000000, i,
					 h->gen);
		h->gen++;
		for (i = 0; i < h->np; i++)
			page_fill(h->p + i * page_size, 0x40000000, i, h->gen);
		usleep(50000);
	} while (now_s() < end);
	return ok;
}

static unsigned long pages_on_node(struct hotset *h, int nid)
{
	unsigned long i, n = 0, chunk = 512;
	void **pages = malloc(chunk * sizeof(*pages));
	int *status = malloc(chunk * sizeof(*status));

	if (!pages || !status)
		return 0;
	for (i = 0; i < h->np; i += chunk) {
		unsigned long k, cnt = h->np - i < chunk ? h->np - i : chunk;

		for (k = 0; k < cnt; k++)
			pages[k] = h->p + (i + k) * page_size;
		if (sys_move_pages(0, cnt, pages, NULL, status, 0))
			continue;
		for (k = 0; k < cnt; k++)
			n += status[k] == nid;
	}
	free(pages);
	free(status);
	return n;
}

static void push_to_node(struct hotset *h, int nid)
{
	sys_mbind(h->p, h->np * page_size, MPOL_PREFERRED, 1UL << nid,
		  MPOL_MF_MOVE);
	/* Default policy again, or kmmscand leaves the pages where they are. */
	sys_mbind(h->p, h->np * page_size, MPOL_DEFAULT, 0, 0);
}

static int fault_mode(int seconds)
{
	struct vmsnap v0, v1, v2, v3;
	struct hotset h;
	pid_t mig, scan;
	long inj_pa, inj_slab, inj_pa2, inj_slab2;
	bool data_ok = true, usable = true;
	double t_inj = seconds * 0.5;
	char *q;
	int status;
	pid_t pid;

	if (access(DBG "fail_page_alloc/probability", W_OK) ||
	    access(DBG "failslab/probability", W_OK)) {
		printf("ok 1 fault_injection # SKIP %s\n",
		       "no fail_page_alloc/failslab in debugfs");
		return KSFT_SKIP;
	}
	mig = find_kthread("kmmscand_migrate");
	scan = find_kthread("kmmscand");
	if (mig < 0 || scan < 0 || access("/proc/self/make-it-fail", W_OK)) {
		printf("ok 1 fault_injection # SKIP %s\n",
		       "no kmmscand_migrate thread or no make-it-fail");
		return KSFT_SKIP;
	}
	vmstat_read(&v0);
	if (!vm_have(&v0, "kmmscand_fail_migrate")) {
		printf("ok 1 kmmscand_stress # SKIP no kmmscand vmstat counters\n");
		return KSFT_SKIP;
	}
	printf("# fault injection: %d s, kmmscand_migrate pid %d, kmmscand pid %d\n",
	       seconds, mig, scan);
	tap(knobs_aggressive(), "aggressive knobs set");
	tap(!fi_setup("fail_page_alloc") && !fi_setup("failslab"),
	    "fault injection configured (task-filter, gfp-wait and highmem included)");

	h.np = (64UL << 20) / page_size;
	h.gen = 1;
	h.p = mmap(NULL, h.np * page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h.p == MAP_FAILED) {
		tap(false, "hot set mapped");
		return KSFT_FAIL;
	}
	sys_mbind(h.p, h.np * page_size, MPOL_PREFERRED, 1UL << 1, 0);
	for (unsigned long i = 0; i < h.np; i++)
		page_fill(h.p + i * page_size, 0x40000000, i, h.gen);
	sys_mbind(h.p, h.np * page_size, MPOL_DEFAULT, 0, 0);
	printf("# hot set: %lu pages, %lu on node 1\n", h.np, pages_on_node(&h, 1));

	/* Phase 1: every allocation of the migrator fails. */
	make_it_fail(mig, 1);
	fi_set("fail_page_alloc", "probability", "100");
	fi_set("failslab", "probability", "100");
	vmstat_read(&v1);
	data_ok &= hot_touch(&h, t_inj * 0.6);
	/* Phase 2: some fail. */
	fi_set("fail_page_alloc", "probability", "30");
	fi_set("failslab", "probability", "30");
	data_ok &= hot_touch(&h, t_inj * 0.4);
	/* Phase 3: the scanner's own (GFP_NOWAIT xarray) allocations fail. */
	make_it_fail(mig, 0);
	make_it_fail(scan, 1);
	fi_set("failslab", "probability", "50");
	fi_set("fail_page_alloc", "probability", "50");
	push_to_node(&h, 1);
	data_ok &= hot_touch(&h, seconds * 0.15);
	make_it_fail(scan, 0);
	fi_set("fail_page_alloc", "probability", "0");
	fi_set("failslab", "probability", "0");
	vmstat_read(&v2);
	inj_pa = fi_injected("fail_page_alloc");
	inj_slab = fi_injected("failslab");

	/* Phase 4: no injection; promotion must resume. */
	push_to_node(&h, 1);
	{
		double end = now_s() + seconds * 0.35 + 30;
		unsigned long on0 = 0;

		do {
			data_ok &= hot_touch(&h, 2);
			vmstat_read(&v3);
			on0 = pages_on_node(&h, 0);
		} while (now_s() < end &&
			 (vm_delta(&v2, &v3, "kmmscand_promote_success") <= 0 ||
			  on0 < h.np / 2));
		printf("# after the injection: %lu of %lu hot pages on node 0\n",
		       on0, h.np);
	}
	inj_pa2 = fi_injected("fail_page_alloc");
	inj_slab2 = fi_injected("failslab");

	/* The system is still usable: fork, exec, allocate on both nodes. */
	pid = fork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	usable &= pid > 0 && waitpid(pid, &status, 0) == pid &&
		  WIFEXITED(status) && !WEXITSTATUS(status);
	q = mmap(NULL, 32 << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	usable &= q != MAP_FAILED;
	if (q != MAP_FAILED)
		munmap(q, 32 << 20);

	printf("# injected failures: fail_page_alloc %ld, failslab %ld\n",
	       inj_pa, inj_slab);
	printf("# injected after the injection stopped: +%ld, +%ld\n",
	       inj_pa2 - inj_pa, inj_slab2 - inj_slab);
	printf("# during injection:\n");
	vmstat_print_delta(&v1, &v2);
	printf("# after injection:\n");
	vmstat_print_delta(&v2, &v3);

	tap(inj_pa > 0, "failures injected into the migrator (%ld page allocations, %ld slab)",
	    inj_pa, inj_slab);
	tap(vm_delta(&v1, &v2, "kmmscand_fail_migrate") +
	    vm_delta(&v1, &v2, "kmmscand_fail_isolate") > 0,
	    "kmmscand_fail_migrate counted the failures (+%lld)",
	    vm_delta(&v1, &v2, "kmmscand_fail_migrate"));
	tap(inj_pa2 == inj_pa && inj_slab2 == inj_slab,
	    "no injection after make-it-fail/probability were reset");
	tap(vm_delta(&v2, &v3, "kmmscand_promote_success") > 0,
	    "promotion resumed after the injection (+%lld pages)",
	    vm_delta(&v2, &v3, "kmmscand_promote_success"));
	data_ok &= hot_touch(&h, 0);
	tap(data_ok, "hot set intact (%ld pages verified, %ld mismatches)",
	    st->pages_verified, st->mismatches);
	tap(usable, "system usable (fork+exec, 32 MB allocation)");
	tap(isolated_drained(), "no folio left isolated (nr_isolated_* back to 0)");
	munmap(h.p, h.np * page_size);
	tap(knobs_restore(), "knobs restored");
	return tap_failed ? KSFT_FAIL : KSFT_PASS;
}

int main(int argc, char **argv)
{
	int seconds = 20, nworkers = 3, nthreads = 3, opt, ret;
	bool fault = false;
	const char *missing, *env = getenv("KMMSCAND_STRESS_SECONDS");

	page_size = sysconf(_SC_PAGESIZE);
	if (env && atoi(env) > 0)
		seconds = atoi(env);
	while ((opt = getopt(argc, argv, "t:w:T:Fv")) != -1) {
		switch (opt) {
		case 't':
			seconds = atoi(optarg);
			break;
		case 'w':
			nworkers = atoi(optarg);
			break;
		case 'T':
			nthreads = atoi(optarg);
			break;
		case 'F':
			fault = true;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-t seconds] [-w workers] [-T threads] [-F]\n",
				argv[0]);
			return 2;
		}
	}
	if (seconds < 1)
		seconds = 1;
	if (nworkers < 1)
		nworkers = 1;
	if (nworkers > MAX_WORKERS)
		nworkers = MAX_WORKERS;
	if (nthreads < 1)
		nthreads = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");

	if (getuid()) {
		printf("ok 1 kmmscand_stress # SKIP must run as root\n");
		return KSFT_SKIP;
	}
	missing = knobs_save();
	if (missing) {
		printf("ok 1 kmmscand_stress # SKIP no " SYSFS "%s\n", missing);
		return KSFT_SKIP;
	}
	if (!two_nodes()) {
		printf("ok 1 kmmscand_stress # SKIP needs memory on nodes 0 and 1\n");
		return KSFT_SKIP;
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return KSFT_FAIL;
	memset(st, 0, sizeof(*st));
	if (fault)
		ret = fault_mode(seconds);
	else
		ret = run_stress(seconds, nworkers, nthreads);
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d checks failed\n", tap_failed, tap_n);
	return ret;
}
