/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kmmscand race and fault-injection tests (kmmscand_stress,
 * kmmscand_fault_test) share: counters in shared memory that every
 * process of a run updates, page patterns that say whether a page holds
 * what its owner wrote, the knobs at their most aggressive settings and
 * back, /proc/vmstat snapshots, and TAP output ("ok N name" / "not ok N
 * name"; exit status 0 on success, 1 on failure, 4 when skipped).
 * Defined in kmmscand_stress_common.c.
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

/* ---- counters shared by every process of a run (MAP_SHARED, atomics) ---- */

struct stress_stats {
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

/* Mapped by stress_start(), shared with every process forked after it. */
extern struct stress_stats *stress;

#define STOPPED()	__atomic_load_n(&stress->stop, __ATOMIC_RELAXED)

static inline void stat_add(long *p, long n)
{
	__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
}

/* A line "# ..." on stdout in one write(2): processes do not interleave. */
void msg(const char *fmt, ...) __printf(1, 2);

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

/* The value of every knob as last set through stress_knob_set(). */
extern long long stress_knob_cur[NR_KNOBS];

/* Save the knobs and demotion_enabled. NULL, or the name of a missing knob. */
const char *stress_knobs_save(void);
int stress_knob_set(enum kmm_knob k, long long val);
/* Write back what stress_knobs_save() saved; true if every knob reads it. */
bool stress_knobs_restore(void);
/* Every knob at its most aggressive value; true if each write worked. */
bool knobs_aggressive(void);
/* Turn demotion on, where the machine has the switch (restored at the end). */
void stress_demotion_enable(void);

/* ---- page patterns -------------------------------------------------------- */

/* Fill the page at @p with the pattern of (@id, @idx, @gen). */
void page_fill(char *p, uint32_t id, unsigned long idx, uint32_t gen);
/* Returns true if the page holds what it should. */
bool page_check(const char *who, const char *p, uint32_t id,
		unsigned long idx, uint32_t gen);

/* ---- /proc/vmstat ----------------------------------------------------------- */

struct vmsnap {
	struct kmm_stats k;
	struct x_stats x;
};

void vmstat_read(struct vmsnap *s);
long long vm_delta(const struct vmsnap *a, const struct vmsnap *b,
		   enum kmm_stat i);
void vmstat_print_delta(const struct vmsnap *a, const struct vmsnap *b);
/* Wait up to 10 s for nr_isolated_anon and nr_isolated_file to reach 0. */
bool isolated_drained(void);

/* ---- TAP ---------------------------------------------------------------------- */

/* "ok N ..." or "not ok N ...", N counting from 1; a failure is remembered. */
void tap(bool ok, const char *fmt, ...) __printf(2, 3);
void tap_skip(const char *name, const char *why);
/*
 * The start of a run: TAP header, then skip unless root on a kernel with
 * kmmscand and memory on nodes 0 and 1; save the knobs and map the shared
 * counters. Returns 0, or the exit status when the run cannot start.
 */
int stress_start(const char *name);
/* The end of a run: the TAP plan and the exit status. */
int stress_end(int ret);
/* KSFT_FAIL when a check of tap() failed, else KSFT_PASS. */
int tap_status(void);

#endif /* __KMMSCAND_STRESS_H */
