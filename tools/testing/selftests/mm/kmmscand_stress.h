/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kmmscand race and fault-injection tests (kmmscand_stress,
 * kmmscand_fault_test) share: counters in shared memory that every
 * process of a run updates, page patterns that say whether a page holds
 * what its owner wrote, the knobs at their most aggressive settings and
 * back, /proc/vmstat snapshots, and TAP output ("ok N name" / "not ok N
 * name"; exit status 0 on success, 1 on failure, 4 when skipped).
 */
#ifndef __KMMSCAND_STRESS_H
#define __KMMSCAND_STRESS_H

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kmmscand_numa.h"

#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define DBG		"/sys/kernel/debug/"
#define THP_SIZE	(2UL << 20)
#define MAX_MISMATCH_REPORTS 20
#define GEN_MAX		0x7fffffffU

static long page_size;

/* ---- counters shared by every process of a run (MAP_SHARED, atomics) ---- */

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

static inline void stat_add(long *p, long n)
{
	__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
}

static inline void msg(const char *fmt, ...)
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

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline uint64_t rnd_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline unsigned long rnd(uint64_t *s, unsigned long n)
{
	return n ? rnd_next(s) % n : 0;
}

/* mbind(2) with a node mask of one word, NULL when @mask is 0. */
static inline long mbind_mask(void *addr, unsigned long len, int mode,
			      unsigned long mask, unsigned int flags)
{
	return sys_mbind(addr, len, mode, mask ? &mask : NULL, mask ? 64 : 0,
			 flags);
}

/* ---- knobs ---------------------------------------------------------------- */

static struct kmm_knob_state knobs_saved;
static long long knob_cur[NR_KNOBS];
static char demotion_saved[16];		/* "" when there is none */

/* Save the knobs and demotion_enabled. NULL, or the name of a missing knob. */
static inline const char *stress_knobs_save(void)
{
	int k;

	for (k = 0; k < NR_KNOBS; k++)
		if (knob_get(k, &knob_cur[k]))
			return kmm_knobs[k].name;
	if (knobs_save(&knobs_saved))
		return "(knobs)";
	if (kmm_read_file(DEMOTION_SYSFS, demotion_saved, sizeof(demotion_saved)) <= 0)
		demotion_saved[0] = '\0';
	return NULL;
}

static inline int stress_knob_set(enum kmm_knob k, long long val)
{
	int ret = knob_set(k, val);

	if (!ret)
		knob_cur[k] = val;
	return ret;
}

/* Write back what stress_knobs_save() saved; true if every knob reads it. */
static inline bool stress_knobs_restore(void)
{
	long long v = 0;
	bool ok = true;
	int k;

	knobs_restore(&knobs_saved);
	for (k = 0; k < NR_KNOBS; k++) {
		if (knob_get(k, &v) || v != knobs_saved.val[k]) {
			msg("knob %s not restored: %lld, want %lld\n",
			    kmm_knobs[k].name, v, knobs_saved.val[k]);
			ok = false;
		}
	}
	if (demotion_saved[0])
		write_str(DEMOTION_SYSFS, demotion_saved);
	return ok;
}

static inline bool knobs_aggressive(void)
{
	bool ok = true;

	ok &= !stress_knob_set(KNOB_ENABLED, 1);
	ok &= !stress_knob_set(KNOB_SCAN_PERIOD_MIN_MS, 100);
	ok &= !stress_knob_set(KNOB_SCAN_PERIOD_MAX_MS, 100);
	ok &= !stress_knob_set(KNOB_SCAN_SIZE, 4194304);
	ok &= !stress_knob_set(KNOB_HOT_THRESHOLD, 1);
	ok &= !stress_knob_set(KNOB_HOT_HISTORY, 1);
	ok &= !stress_knob_set(KNOB_PMD_SKIP, 1);
	ok &= !stress_knob_set(KNOB_TLB_FLUSH, 1);
	ok &= !stress_knob_set(KNOB_MIGRATE_BATCH, 4096);
	ok &= !stress_knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1048576);
	ok &= !stress_knob_set(KNOB_TARGET_NODE, -1);
	return ok;
}

/* ---- page patterns -------------------------------------------------------- */

static inline uint64_t stress_pattern(uint32_t id, unsigned long idx,
				      uint32_t gen)
{
	uint64_t s = ((uint64_t)id << 32) ^ ((uint64_t)idx << 1) ^
		     ((uint64_t)gen * 0xd6e8feb86659fd93ULL);

	return rnd_next(&s) | 1;	/* never 0: zero pages are gen 0 */
}

static inline void page_fill(char *p, uint32_t id, unsigned long idx,
			     uint32_t gen)
{
	uint64_t *w = (uint64_t *)p, v = stress_pattern(id, idx, gen);
	long i, n = page_size / 8;

	for (i = 0; i < n; i++)
		w[i] = v + i;
	stat_add(&st->pages_written, 1);
}

static inline void report_mismatch(const char *who, uint32_t id,
				   unsigned long idx, const void *addr,
				   long word, uint64_t want, uint64_t got,
				   uint32_t gen)
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
static inline bool page_check(const char *who, const char *p, uint32_t id,
			      unsigned long idx, uint32_t gen)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t v = gen ? stress_pattern(id, idx, gen) : 0;
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

/* ---- /proc/vmstat ----------------------------------------------------------- */

struct vmsnap {
	struct kmm_stats k;
	struct x_stats x;
};

static inline void vmstat_read(struct vmsnap *s)
{
	kmm_stats_read(&s->k);
	x_stats_read(&s->x);
}

static inline long long vm_delta(const struct vmsnap *a,
				 const struct vmsnap *b, enum kmm_stat i)
{
	return b->k.v[i] - a->k.v[i];
}

static inline void vmstat_print_delta(const struct vmsnap *a,
				      const struct vmsnap *b)
{
	int i;

	for (i = 0; i < NR_KMM_STATS; i++)
		if (b->k.found[i])
			printf("# vmstat %-28s +%lld\n", kmm_stat_names[i],
			       vm_delta(a, b, i));
	for (i = 0; i < NR_X_STATS; i++)
		if (strncmp(x_stat_names[i], "nr_", 3))
			printf("# vmstat %-28s +%llu\n", x_stat_names[i],
			       XD(&a->x, &b->x, i));
	fflush(stdout);
}

/* Wait up to 10 s for nr_isolated_anon and nr_isolated_file to reach 0. */
static inline bool isolated_drained(void)
{
	struct x_stats s;
	int tries;

	for (tries = 0; tries < 50; tries++) {
		x_stats_read(&s);
		if (!s.v[X_NR_ISOLATED_ANON] && !s.v[X_NR_ISOLATED_FILE])
			return true;
		sleep_ms(200);
	}
	msg("nr_isolated_anon %llu nr_isolated_file %llu\n",
	    s.v[X_NR_ISOLATED_ANON], s.v[X_NR_ISOLATED_FILE]);
	return false;
}

/* ---- TAP ---------------------------------------------------------------------- */

static int tap_n, tap_failed;

static inline void tap(bool ok, const char *fmt, ...)
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

static inline void tap_skip(const char *name, const char *why)
{
	printf("ok %d %s # SKIP %s\n", ++tap_n, name, why);
	fflush(stdout);
}

/*
 * The start of a run: TAP header, then skip unless root on a kernel with
 * kmmscand and memory on nodes 0 and 1; save the knobs and map the shared
 * counters. Returns 0, or the exit status when the run cannot start.
 */
static inline int stress_start(const char *name)
{
	const char *missing;

	page_size = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (getuid()) {
		printf("ok 1 %s # SKIP must run as root\n", name);
		return KSFT_SKIP;
	}
	missing = stress_knobs_save();
	if (missing) {
		printf("ok 1 %s # SKIP no " KMMSCAND_SYSFS "%s\n", name, missing);
		return KSFT_SKIP;
	}
	if (node_meminfo_kb(0, "MemFree:") <= 0 ||
	    node_meminfo_kb(1, "MemFree:") <= 0) {
		printf("ok 1 %s # SKIP needs memory on nodes 0 and 1\n", name);
		return KSFT_SKIP;
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return KSFT_FAIL;
	memset(st, 0, sizeof(*st));
	return 0;
}

/* The end of a run: the TAP plan and the exit status. */
static inline int stress_end(int ret)
{
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d checks failed\n", tap_failed, tap_n);
	return ret;
}

#endif /* __KMMSCAND_STRESS_H */
