/* SPDX-License-Identifier: GPL-2.0 */
/*
 * workload/workload.h - what the parts of the bench workload share: the
 * options, the layout of the region and its worker slices, the counters
 * shared with the workers, and the helpers.
 *
 *   workload.c          options, setup, the placement sampler, the report
 *   workload_worker.c   one worker process: its slice, hot set, accesses
 *   workload_balloon.c  the balloon that fills the fast node
 *   workload_util.c     time, random numbers, NUMA system calls
 */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SZ 4096UL
#define PMD_SZ (2UL << 20)
#define PAGES_PER_PMD (PMD_SZ / PAGE_SZ)
#define MPOL_DEFAULT_ 0
#define MPOL_BIND_ 2
#define MPOL_MF_MOVE_ (1 << 1)
#define MAX_NODE 127		/* node masks of the syscalls below: 128 bits */
#define MAX_PROCS 128
#define MAX_THREADS 64
/* trace entries: page index, and the access kind in the top bit */
#define TRACE_STORE 0x80000000u
#define TRACE_PAGE 0x7fffffffu
#define TRACE_LEN (1u << 20)
#define HOT_SAMPLE_CAP 16384
#define COLD_SAMPLE_CAP 8192

/* The command line (workload.c). */
struct wl_opts {
	const char *mode;
	unsigned long size_mb;	/* touched region (all workers), or map size for sparse */
	double hot_pct;
	unsigned long hot_mb;	/* >0: hot set size in MB (overrides hot_pct) */
	unsigned long hot_chunk_kb;
	unsigned int hot_per_2m;	/* >0: scattered hot set, N hot pages per 2 MB */
	int thp;
	double zipf_s;		/* >0: zipf distribution over all pages */
	int phase;
	int flat;
	int sparse;		/* map size_mb, touch 1 page per 2 MB + hot set */
	unsigned long sparse_hot_mb;
	int procs;
	long balloon_leave_mb;	/* <0: no balloon */
	int balloon_lock;
	double secs;
	unsigned long seed;
	unsigned int batch;
	int slow_node, fast_node;
	int threads;		/* access threads per worker (0: one per online CPU) */
	int store_pct;		/* <0: read-modify-write; else % single stores, rest loads */
	int populate;		/* anonymous MAP_POPULATE under a slow-node task policy */
	const char *file;	/* MAP_SHARED mapping of this file instead of anonymous memory */
	int file_rw;		/* map the file PROT_READ|PROT_WRITE (else PROT_READ) */
	int move_to_slow;	/* fault in on the fast node, then move_pages() to the slow one */
	unsigned long split_kb;	/* every other split_kb KB of the region a VMA of its own */
	unsigned int sample_ms;
	int verbose;
	const char *go_file;	/* after setup: create <go_file>.ready, wait for <go_file> */
};
extern struct wl_opts o;

/* -------------------------------------------------------------- layout */
struct worker {
	unsigned long first_page;	/* index of the slice's first page in the region */
	unsigned long npages;		/* pages in the slice */
	uint32_t *hotA, *hotB;		/* page indices relative to slice */
	unsigned long nhotA, nhotB;
	uint32_t *cold;			/* touched non-hot pages */
	unsigned long ncold;
	uint32_t *touch;		/* pages to fault in (NULL: all pages) */
	unsigned long ntouch;
	double *cdf;			/* zipf */
	uint32_t *rank2page;
	/* sampler state */
	void **hs_addr, **cs_addr, **bs_addr;
	uint32_t *hs_idx, *cs_idx, *bs_idx;
	unsigned long nhs, ncs, nbs;
	double hs_scale, cs_scale, bs_scale;
	int *status;
	uint32_t *prev_cnt;
	pid_t pid;
};

/* Shared (MAP_SHARED) between sampler and workers. */
struct wres {
	volatile uint64_t ops;		/* accesses done so far */
	volatile int ready;
	uint64_t nbatch;
	uint64_t p50, p90, p99, max;	/* batch latency, ns */
	double utime, stime;
	int bad;
};

/* The region and its shared counters (workload.c). */
extern char *region;
extern unsigned long region_pages;
extern uint32_t *cnt;		/* shared, per page of the region */
extern struct wres *wres;	/* shared, per worker */
extern struct worker W[MAX_PROCS];
/* SIGTERM or SIGINT seen (workload_worker.c). */
extern volatile sig_atomic_t got_term;

/* workload_util.c */
void die(const char *fmt, const char *arg);
double now_s(void);
void rnd_seed(uint64_t s);
long sys_mbind(void *addr, unsigned long len, int mode, int node);
long sys_set_mempolicy(int mode, int node);
long sys_move_pages(int pid, unsigned long n, void **pages, int *status);
long sys_move_pages_to(unsigned long n, void **pages, const int *nodes, int *status);
void *xcalloc(size_t n, size_t sz);
int cmp_u32(const void *a, const void *b);
extern uint64_t rng_state;

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline uint64_t rnd(void)	/* xorshift64* */
{
	uint64_t x = rng_state;

	x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}
static inline uint64_t rnd_below(uint64_t n) { return rnd() % n; }

/* workload_worker.c */
void on_term(int sig);
void build_worker(struct worker *w);
void sample_list(struct worker *w, const uint32_t *list, unsigned long n,
			unsigned long cap, void ***addr, uint32_t **idx,
			unsigned long *ns, double *scale);
void run_worker(int id, int go_fd, int ready_fd, int rel_fd, double secs);

/* workload_balloon.c */
long node_free_mb(int node);
pid_t start_balloon(long *mb_out);

#endif /* BENCH_WORKLOAD_H */
