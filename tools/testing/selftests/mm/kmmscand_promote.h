/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kmmscand selftests that watch promotion share: memory placed on
 * the slow-tier node 1 with a pattern that can be verified, threads and
 * children that keep it hot, waiting for it to reach node 0, and the test
 * environment (knobs and sysctls saved and restored).  What uses
 * kselftest_harness.h is in kmmscand_harness.h.
 *
 * Each test polls where its pages are with move_pages(2) every POLL_MS
 * until an outcome is reached or a deadline passes, and prints what it
 * observed either way.
 */
#ifndef __KMMSCAND_PROMOTE_H
#define __KMMSCAND_PROMOTE_H

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kmmscand_numa.h"

#define POLL_MS			200
#define DEADLINE_MS		60000
#define SHORT_DEADLINE_MS	30000	/* tests that must stay within a minute */
#define PERIOD_MIN_MS		100
#define PERIOD_MAX_MS		1000
#define HOT_PCT			90UL	/* hot pages that must reach node 0 */
#define COLD_PCT		5UL	/* cold pages that may reach node 0 */
/*
 * Cold pages of hot_and_cold that may reach node 0.  A page written once
 * is young in one pass at most, and hot_threshold=2 needs two (the ample
 * rule too), so the rule promotes none; only a page that the fill was
 * writing while a pass cleared its Accessed bit can be seen young twice.
 * An eighth of a PTE table: promoting one wrong table (512 pages) fails.
 */
#define COLD_MAX_PAGES		64UL

/* The PMD size: what a THP maps and how a THP region is aligned. */
size_t thp_size(void);

/* ---- memory with a verifiable pattern ----------------------------------- */

struct region {
	char *base;
	char *map;		/* what mmap returned, for munmap */
	size_t map_len;
	size_t len;
	unsigned long npages;
	uint64_t seed;
};

enum {
	REGION_THP	= 1 << 0,	/* THP-aligned, MADV_HUGEPAGE */
	REGION_BOUND	= 1 << 1,	/* keep the MPOL_BIND to node 1 */
	REGION_SHARED	= 1 << 2,	/* MAP_SHARED (shmem), not MAP_PRIVATE */
	REGION_DONTFORK	= 1 << 3,	/* not inherited by forked children */
};

/* Word @w (>= 1) of page @i; word 0 of every page is a touch counter. */
uint64_t pattern(const struct region *r, unsigned long i, unsigned long w);

/*
 * Fault r->len bytes at r->base in on node 1 with the pattern and, unless
 * REGION_BOUND, drop the MPOL_BIND again so that only placement, not
 * policy, keeps the pages on node 1. For MAP_SHARED the policy is the
 * shared policy of the shmem object, and MPOL_DEFAULT removes it again.
 */
int region_fill_node1(struct region *r, int flags);

/* Map @len bytes of anonymous memory and region_fill_node1() it. */
int region_on_node1(struct region *r, size_t len, int flags, uint64_t seed);

void region_unmap(struct region *r);

/*
 * Check every word of pages [first, first + n): the pattern must be
 * intact and the touch counter must be @count. Returns the number of bad
 * pages and logs the first one.
 */
unsigned long region_verify(const struct region *r,
			    unsigned long first, unsigned long n,
			    uint64_t count);

/*
 * Wait until @want percent of the @n pages at @base of process @pid (0:
 * this one) are on @node, polling every POLL_MS up to @deadline_ms.
 * Returns the time it took in ms, or -1; *@got is the last share observed.
 */
long long wait_on_node(pid_t pid, char *base, unsigned long n,
		       int node, unsigned long want,
		       long long deadline_ms, unsigned long *got);

/* wait_on_node() for the pages [first, first + n) of @r and node 0. */
long long wait_promoted(const struct region *r,
			unsigned long first, unsigned long n,
			unsigned long want, long long deadline_ms,
			unsigned long *got);

/* ---- keeping memory hot -------------------------------------------------- */

#define MAX_HOT_RANGES	4

struct hot_thread {
	pthread_t tid;
	struct {
		char *base;
		unsigned long npages;
	} range[MAX_HOT_RANGES];
	int nr;
	int stop;		/* __atomic accesses */
	unsigned long passes;
	bool running;
};

/* Bump the counter word of every page of every range, a full pass at a time. */
void *hot_loop(void *arg);

void hot_add(struct hot_thread *h, char *base, unsigned long npages);

int hot_start(struct hot_thread *h);

/* Stop the thread; returns how many full passes it made. */
unsigned long hot_stop(struct hot_thread *h);

/* Keep @npages at @base hot in this (child) process until killed. */
void hot_forever(char *base, unsigned long npages);

/*
 * Fork a child that faults @len bytes at @base (a mapping of its own when
 * @base is NULL) in on node 1 in base pages, drops the binding and keeps
 * every page hot until killed; with @opt_out it first opts out with
 * PR_SET_KMMSCAND. Returns its pid once the pages are in place, or -errno.
 */
pid_t hot_child(char *base, size_t len, bool opt_out);

/* ---- THP ------------------------------------------------------------------ */

/* AnonHugePages (kB) of the VMA that starts at @addr, or -1. */
long anon_huge_kb(void *addr);

bool thp_usable(char *why, size_t len);

/* ---- the test environment ---------------------------------------------------- */

#define KMM_ENV_FILES	8

/*
 * What a test changes, for the parent to put back whatever the test did:
 * the knobs, the files set with kmm_env_set() (@path must stay valid in
 * the parent: a string literal), and children to kill.
 */
struct kmm_env {
	struct kmm_knob_state knobs;
	struct {
		const char *path;
		char val[32];
	} file[KMM_ENV_FILES];
	int nr_files;
	pid_t kids[2];
};

/* Save what @path holds, once, for kmm_env_restore(). 0 or -errno. */
int kmm_env_save(struct kmm_env *env, const char *path);

/* kmm_env_save() @path, then write @str to it. 0 or -errno. */
int kmm_env_set(struct kmm_env *env, const char *path, const char *str);

int kmm_env_set_long(struct kmm_env *env, const char *path, long val);

/*
 * Kill the children, write back the saved files, newest first, and the
 * knobs. Returns the number of failures, each one logged.
 */
int kmm_env_restore(struct kmm_env *env);

#endif /* __KMMSCAND_PROMOTE_H */
