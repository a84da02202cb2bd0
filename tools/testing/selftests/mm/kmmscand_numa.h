/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NUMA helpers for the kmmscand selftests: raw NUMA system calls (no
 * libnuma, so the tests link statically), where the pages of a range are,
 * the counters of /proc/vmstat, the free memory and watermarks of a node,
 * and a balloon process that fills node 0.
 */
#ifndef __KMMSCAND_NUMA_H
#define __KMMSCAND_NUMA_H

#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kmmscand_util.h"

#define BALLOON_CHUNK		(2 * MB)

/* ---- NUMA system calls ------------------------------------------------ */

long sys_mbind(void *addr, unsigned long len, int mode,
	       const unsigned long *nodemask,
	       unsigned long maxnode, unsigned int flags);

long sys_set_mempolicy(int mode, const unsigned long *nodemask,
		       unsigned long maxnode);

long sys_move_pages(pid_t pid, unsigned long count,
		    void **pages, const int *nodes, int *status,
		    int flags);

/* Bind [addr, addr + len) to node @nid only (MPOL_BIND). */
long bind_to_node(void *addr, size_t len, int nid);

/* Drop the VMA policy of [addr, addr + len), without moving pages. */
long unbind(void *addr, size_t len);

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
int where_pages(pid_t pid, char *base, unsigned long npages,
		struct node_count *nc);

/* ---- /proc/vmstat ----------------------------------------------------- */

enum kmm_stat {
	S_MM_SCAN,
	S_MM_SKIP_CONTENDED,
	S_PTE_SCANNED,
	S_PMD_SKIPPED,
	S_TLB_FLUSH,
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
	S_ABIT_RECORDED,
	S_ABIT_PROMOTED,
	S_FAULT_RECORDED,
	S_FAULT_PROMOTED,
	S_FAULT_FALLBACK,
	S_RECORD_LOST,
	NR_KMM_STATS
};

extern const char * const kmm_stat_names[NR_KMM_STATS];

struct kmm_stats {
	unsigned long long v[NR_KMM_STATS];
	bool found[NR_KMM_STATS];
};

/* Snapshot the kmmscand_* lines of /proc/vmstat. Returns how many exist. */
int kmm_stats_read(struct kmm_stats *s);

unsigned long long kmm_stat(enum kmm_stat i);

enum x_stat {
	X_PGDEMOTE_KSWAPD,
	X_PGDEMOTE_DIRECT,
	X_PGDEMOTE_KHUGEPAGED,
	X_PGMIGRATE_SUCCESS,
	X_PGMIGRATE_FAIL,
	X_COMPACT_ISOLATED,
	X_PGPROMOTE_SUCCESS,
	X_THP_SPLIT_PAGE,
	X_THP_SPLIT_PMD,
	X_THP_COLLAPSE_ALLOC,
	X_NR_ISOLATED_ANON,
	X_NR_ISOLATED_FILE,
	NR_X_STATS
};

extern const char * const x_stat_names[NR_X_STATS];

struct x_stats {
	unsigned long long v[NR_X_STATS];
};

/* Snapshot the other /proc/vmstat lines above; a missing one reads 0. */
void x_stats_read(struct x_stats *x);

unsigned long long XD(const struct x_stats *a,
		      const struct x_stats *b, enum x_stat s);

/* Log the kmmscand_* counters that changed from @a to @b. */
void log_deltas(const struct kmm_stats *a, const struct kmm_stats *b);

unsigned long long D(const struct kmm_stats *a,
		     const struct kmm_stats *b, enum kmm_stat s);

/* ---- node memory and watermarks ----------------------------------------- */

/* The value of the "@key ... kB" line of node @nid's meminfo, or -1. */
long node_meminfo_kb(int nid, const char *key);

/* A populated zone of a node, from /proc/zoneinfo; all in pages. */
struct zone_info {
	char name[16];
	long free;
	long boost;		/* included in min, low, high and promo */
	long min, low, high, promo;
	long managed;
	long protection;	/* lowmem_reserve[] for a movable allocation */
};

#define MAX_ZONES	8

/* The largest entry of "protection: (a, b, ...)": the one for ZONE_MOVABLE. */
long zone_protection(const char *p);

/* The populated zones of node @nid. Returns how many, or -errno. */
int node_zones(int nid, struct zone_info *z, int max);

/*
 * Free pages of the zones of a node above a watermark, for a movable
 * allocation: the sum over the zones of free - mark - protection, where
 * positive. @high picks WMARK_HIGH without boost, where the migrator
 * defers every batch, else WMARK_MIN, the floor of the migration target
 * allocation of an offlining.
 */
long node_room(const struct zone_info *z, int n, bool high);

void log_zones(int nid, const struct zone_info *z, int n);

/* ---- a full node 0 --------------------------------------------------------- */

struct balloon_report {
	unsigned long pages;	/* populated */
	unsigned long on_node0;	/* of those, on node 0 */
	long long ms;		/* time it took */
	int err;		/* errno of the step that failed, or 0 */
};

struct balloon {
	pid_t pid;
	int go;			/* a byte written here frees the balloon */
	struct balloon_report br;
};

uint64_t balloon_stamp(unsigned long i);

/*
 * The balloon, a child process that is not scanned: fill node 0 with
 * anonymous memory, 2 MB at a time, until the page allocator puts pages
 * on node 1 instead. Then every zone of node 0 is at its low watermark,
 * below the high watermark under which the migrator defers. MPOL_PREFERRED
 * rather than MPOL_BIND: a bound allocation at the watermark would enter
 * direct reclaim, find nothing to reclaim (no swap, demotion off) and end
 * in the OOM killer. Stamp every page, send the report on @rep, hold the
 * memory until @go is written to or closed, check the stamps and exit 0
 * if they are intact.
 */
void balloon_child(int rep, int go, size_t len);

/*
 * Fork balloon_child() for at most @len bytes and wait up to @deadline_ms
 * for its report in b->br. b->pid is set as soon as there is a child.
 * Returns 0, -ETIMEDOUT or another -errno.
 */
int balloon_start(struct balloon *b, size_t len, int deadline_ms);

/* Free the balloon. Returns its wait status (0: every stamp intact), or -1. */
int balloon_free(struct balloon *b);

#endif /* __KMMSCAND_NUMA_H */
