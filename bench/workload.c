// SPDX-License-Identifier: GPL-2.0
/*
 * bench/workload.c - tiering promotion workloads for the kmmscand bench.
 *
 * One static binary, several access patterns (--mode).  Memory is placed on
 * the slow node with mbind(MPOL_BIND), faulted in (the one "cold" touch), and
 * then the policy is reset with mbind(MPOL_DEFAULT) so that promotion is
 * allowed (a kept MPOL_BIND would rightly forbid it).
 *
 * Process layout: the parent is the sampler; it forks --procs worker
 * processes (and, for --balloon-leave-mb, one balloon process that fills the
 * top-tier node).  Every --sample-ms the sampler queries the placement of the
 * hot and cold page samples of every worker with move_pages(pid, .., NULL,
 * status) and prints a line
 *     T <sec> hot_on0=<f> cold_on0=<f> acc_on0=<f> [hotA_on0= hotB_on0=] ops=<n> q_ms=<ms>
 * stamped with the middle of the query (q_ms long).  acc_on0 is the share of
 * the interval's accesses (per-page counters) to pages on the fast node at
 * the sample, -1 when the interval counted none.
 * At the end it prints per-worker "W" lines and one "RESULT key=value ..."
 * line.  Workers time fixed-size access batches with clock_gettime and report
 * p50/p90/p99/max batch latency.  A worker runs --threads access threads
 * over its slice (0: one per online CPU), each with its own trace.
 *
 * Placement variants of the slice (the microbenchmarks of the bench):
 *   default           mbind(MPOL_BIND slow), touch every page, MPOL_DEFAULT
 *   --populate        mmap(MAP_POPULATE) under a slow-node task policy
 *   --file PATH       MAP_SHARED mapping of PATH (page cache), placed on the
 *                     slow node by reading it under a slow-node task policy
 *   --move-to-slow    faulted in on the fast node, then move_pages(2) to the
 *                     slow node (with --thp: THPs moved whole where possible)
 * Accesses are 64-byte read-modify-writes, or with --store-pct P single
 * 8-byte stores (P %) and loads (the rest).
 *
 * Everything is deterministic for a given --seed (page choice and traces).
 * Only libc and pthreads; mbind/set_mempolicy/move_pages are raw syscalls.
 */
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

/* ---------------------------------------------------------------- options */
static struct {
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
	unsigned int sample_ms;
	int verbose;
	const char *go_file;	/* after setup: create <go_file>.ready, wait for <go_file> */
} o = {
	.mode = "hotcold", .size_mb = 256, .hot_pct = 10, .hot_chunk_kb = 256,
	.procs = 1, .balloon_leave_mb = -1, .secs = 30, .seed = 42, .batch = 4096,
	.slow_node = 1, .fast_node = 0, .sample_ms = 100, .sparse_hot_mb = 64,
	.threads = 1, .store_pct = -1,
};

/* ------------------------------------------------------------- utilities */
static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "workload: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (%s)\n", strerror(errno));
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t rng_state;
static inline uint64_t rnd(void)	/* xorshift64* */
{
	uint64_t x = rng_state;

	x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}
static void rnd_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ULL + 0x1234567; if (!rng_state) rng_state = 1; for (int i = 0; i < 8; i++) rnd(); }
static inline uint64_t rnd_below(uint64_t n) { return rnd() % n; }

static long sys_mbind(void *addr, unsigned long len, int mode, int node)
{
	unsigned long mask[2] = { 0, 0 };

	if (mode == MPOL_DEFAULT_)
		return syscall(SYS_mbind, addr, len, mode, NULL, 0, 0);
	mask[node / 64] = 1UL << (node % 64);
	return syscall(SYS_mbind, addr, len, mode, mask, 128, 0);
}

static long sys_set_mempolicy(int mode, int node)
{
	unsigned long mask[2] = { 0, 0 };

	if (mode == MPOL_DEFAULT_)
		return syscall(SYS_set_mempolicy, mode, NULL, 0);
	mask[node / 64] = 1UL << (node % 64);
	return syscall(SYS_set_mempolicy, mode, mask, 128);
}

static long sys_move_pages(int pid, unsigned long n, void **pages, int *status)
{
	return syscall(SYS_move_pages, pid, n, pages, NULL, status, 0);
}

static long sys_move_pages_to(unsigned long n, void **pages, const int *nodes, int *status)
{
	return syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE_);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p)
		die("out of memory (%s)", "calloc");
	return p;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

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

static char *region;
static unsigned long region_pages;
static uint32_t *cnt;		/* shared, per page of the region */
static struct wres *wres;	/* shared, per worker */
static struct worker W[MAX_PROCS];
static volatile sig_atomic_t got_term;

static void on_term(int sig) { (void)sig; got_term = 1; }

/* choose k distinct items from [0,n) - partial Fisher-Yates on a temp array */
static uint32_t *choose(unsigned long n, unsigned long k)
{
	uint32_t *a = xcalloc(n, sizeof(*a)), *r;

	for (unsigned long i = 0; i < n; i++)
		a[i] = i;
	for (unsigned long i = 0; i < k; i++) {
		unsigned long j = i + rnd_below(n - i);
		uint32_t t = a[i]; a[i] = a[j]; a[j] = t;
	}
	r = xcalloc(k ? k : 1, sizeof(*r));
	memcpy(r, a, k * sizeof(*r));
	free(a);
	return r;
}

/* hot set made of random chunks; returns 2*nchunk chunks when want_b */
static void pick_chunks(struct worker *w, unsigned long hot_pages, int want_b)
{
	unsigned long cp = o.hot_chunk_kb * 1024 / PAGE_SZ, nchunks, nsel;
	uint32_t *sel;

	if (cp < 1)
		cp = 1;
	nchunks = w->npages / cp;
	nsel = (hot_pages + cp - 1) / cp;
	if (nsel < 1)
		nsel = 1;
	if (nsel * (want_b ? 2 : 1) > nchunks)
		nsel = nchunks / (want_b ? 2 : 1);
	sel = choose(nchunks, nsel * (want_b ? 2 : 1));
	/* sort each half so the hot list is address-ordered */
	qsort(sel, nsel, sizeof(*sel), cmp_u32);
	if (want_b)
		qsort(sel + nsel, nsel, sizeof(*sel), cmp_u32);
	w->hotA = xcalloc(nsel * cp, sizeof(uint32_t));
	w->nhotA = 0;
	for (unsigned long i = 0; i < nsel; i++)
		for (unsigned long j = 0; j < cp; j++)
			w->hotA[w->nhotA++] = sel[i] * cp + j;
	if (want_b) {
		w->hotB = xcalloc(nsel * cp, sizeof(uint32_t));
		w->nhotB = 0;
		for (unsigned long i = 0; i < nsel; i++)
			for (unsigned long j = 0; j < cp; j++)
				w->hotB[w->nhotB++] = sel[nsel + i] * cp + j;
	}
	free(sel);
}

static void build_worker(struct worker *w)
{
	unsigned long hot_pages;
	unsigned char *ishot;

	if (o.sparse) {
		hot_pages = o.sparse_hot_mb * 256 / o.procs;
	} else {
		hot_pages = (unsigned long)(w->npages * o.hot_pct / 100.0);
	}
	if (hot_pages < 1)
		hot_pages = 1;

	if (o.flat) {
		/* every page is equally hot: "hot" = all pages */
		w->hotA = xcalloc(w->npages, sizeof(uint32_t));
		for (unsigned long i = 0; i < w->npages; i++)
			w->hotA[i] = i;
		w->nhotA = w->npages;
	} else if (o.zipf_s > 0) {
		double sum = 0;

		w->rank2page = choose(w->npages, w->npages);
		w->cdf = xcalloc(w->npages, sizeof(double));
		for (unsigned long r = 0; r < w->npages; r++) {
			sum += 1.0 / pow((double)(r + 1), o.zipf_s);
			w->cdf[r] = sum;
		}
		for (unsigned long r = 0; r < w->npages; r++)
			w->cdf[r] /= sum;
		w->hotA = xcalloc(hot_pages, sizeof(uint32_t));
		for (unsigned long r = 0; r < hot_pages; r++)
			w->hotA[r] = w->rank2page[r];
		w->nhotA = hot_pages;
		qsort(w->hotA, w->nhotA, sizeof(uint32_t), cmp_u32);
	} else if (o.hot_per_2m) {
		unsigned long nreg = w->npages / PAGES_PER_PMD, k = o.hot_per_2m;

		if (k > PAGES_PER_PMD)
			k = PAGES_PER_PMD;
		w->hotA = xcalloc(nreg * k + 1, sizeof(uint32_t));
		for (unsigned long r = 0; r < nreg; r++) {
			uint32_t *s = choose(PAGES_PER_PMD, k);

			qsort(s, k, sizeof(*s), cmp_u32);
			for (unsigned long j = 0; j < k; j++)
				w->hotA[w->nhotA++] = r * PAGES_PER_PMD + s[j];
			free(s);
		}
	} else {
		pick_chunks(w, hot_pages, o.phase);
	}

	ishot = xcalloc(w->npages, 1);
	for (unsigned long i = 0; i < w->nhotA; i++)
		ishot[w->hotA[i]] = 1;
	for (unsigned long i = 0; i < w->nhotB; i++)
		ishot[w->hotB[i]] = 2;

	if (o.sparse) {
		/* touch: hot pages + first page of every 2 MB region */
		unsigned long nreg = w->npages / PAGES_PER_PMD;

		w->touch = xcalloc(w->nhotA + nreg + 1, sizeof(uint32_t));
		w->cold = xcalloc(nreg + 1, sizeof(uint32_t));
		for (unsigned long i = 0; i < w->nhotA; i++)
			w->touch[w->ntouch++] = w->hotA[i];
		for (unsigned long r = 0; r < nreg; r++) {
			uint32_t p = r * PAGES_PER_PMD + (r * 7) % PAGES_PER_PMD;

			if (ishot[p])
				continue;
			w->touch[w->ntouch++] = p;
			w->cold[w->ncold++] = p;
		}
	} else if (!o.flat) {
		w->cold = xcalloc(w->npages, sizeof(uint32_t));
		for (unsigned long i = 0; i < w->npages; i++)
			if (!ishot[i])
				w->cold[w->ncold++] = i;
	}
	free(ishot);
}

/* strided sample of a page list -> addresses */
static void sample_list(struct worker *w, const uint32_t *list, unsigned long n,
			unsigned long cap, void ***addr, uint32_t **idx,
			unsigned long *ns, double *scale)
{
	unsigned long m = n < cap ? n : cap;

	*addr = xcalloc(m + 1, sizeof(void *));
	*idx = xcalloc(m + 1, sizeof(uint32_t));
	for (unsigned long i = 0; i < m; i++) {
		unsigned long k = (unsigned long)((double)i * n / m);
		unsigned long pg = w->first_page + list[k];

		(*idx)[i] = pg;
		(*addr)[i] = region + pg * PAGE_SZ;
	}
	*ns = m;
	*scale = m ? (double)n / m : 0;
}

/* ---------------------------------------------------------------- worker */
static void touch_pages(struct worker *w, char *base)
{
	if (w->touch) {
		for (unsigned long i = 0; i < w->ntouch; i++)
			base[w->touch[i] * PAGE_SZ] = 1;
	} else {
		for (unsigned long i = 0; i < w->npages; i++)
			base[i * PAGE_SZ] = 1;
	}
}

/* mbind(MPOL_BIND node), fault the slice in, back to the default policy */
static void fault_in(struct worker *w, char *base, unsigned long len, int node)
{
	if (o.thp && madvise(base, len, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE) %s", "failed");
	if (sys_mbind(base, len, MPOL_BIND_, node))
		die("mbind(MPOL_BIND, node %s) failed", o.slow_node == node ? "slow" : "fast");
	touch_pages(w, base);
	/* reset to the default policy: promotion must be allowed */
	if (sys_mbind(base, len, MPOL_DEFAULT_, 0))
		die("mbind(MPOL_DEFAULT) %s", "failed");
}

/*
 * Anonymous memory populated by mmap(MAP_POPULATE): only the task policy can
 * place it (the VMA does not exist before the call), so bind the task to the
 * slow node around the mmap and go back to the default policy afterwards.
 */
static void populate_anon(char *base, unsigned long len)
{
	if (sys_set_mempolicy(MPOL_BIND_, o.slow_node))
		die("set_mempolicy(MPOL_BIND) %s", "failed");
	if (mmap(base, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1, 0) == MAP_FAILED)
		die("mmap(MAP_POPULATE) %s", "failed");
	if (sys_set_mempolicy(MPOL_DEFAULT_, 0))
		die("set_mempolicy(MPOL_DEFAULT) %s", "failed");
}

/* Write len bytes of a pattern and fsync: clean page cache where it was written. */
static void fill_file(int fd, unsigned long len)
{
	static char buf[1 << 20];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 131 + 7);
	for (unsigned long off = 0; off < len; off += sizeof(buf)) {
		size_t n = len - off < sizeof(buf) ? len - off : sizeof(buf);

		if (pwrite(fd, buf, n, off) != (ssize_t)n)
			die("writing %s", o.file);
	}
	if (fsync(fd))
		die("fsync %s", o.file);
}

/*
 * MAP_SHARED mapping of o.file.  An existing file is used as it is (never
 * written with a read-only mapping); a missing one is created, unlinked at
 * once (nothing is left behind) and filled.  Page cache is allocated under
 * the task policy (tmpfs follows the mapping's policy, hence the mbind too),
 * so the file is written or read in under a slow-node binding; cached pages
 * of an existing file are dropped first so that the reads allocate anew.
 */
static void map_file(char *base, unsigned long len)
{
	int prot = PROT_READ | (o.file_rw ? PROT_WRITE : 0), created = 0, fd;
	volatile char sink = 0;
	struct stat st;

	if (sys_set_mempolicy(MPOL_BIND_, o.slow_node))
		die("set_mempolicy(MPOL_BIND) %s", "failed");
	fd = open(o.file, o.file_rw ? O_RDWR : O_RDONLY);
	if (fd < 0 && errno == ENOENT) {
		fd = open(o.file, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0) {
			created = 1;
			unlink(o.file);
			fill_file(fd, len);
		}
	}
	if (fd < 0)
		die("open %s", o.file);
	if (!created) {
		if (fstat(fd, &st) || (unsigned long)st.st_size < len) {
			errno = EINVAL;
			die("%s is smaller than the region", o.file);
		}
		posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED);
	}
	if (mmap(base, len, prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		die("mmap(MAP_SHARED) %s", o.file);
	close(fd);
	if (sys_mbind(base, len, MPOL_BIND_, o.slow_node))
		die("mbind(MPOL_BIND) of the mapping of %s", o.file);
	for (unsigned long off = 0; off < len; off += PAGE_SZ)
		sink += base[off];
	(void)sink;
	if (sys_mbind(base, len, MPOL_DEFAULT_, 0) || sys_set_mempolicy(MPOL_DEFAULT_, 0))
		die("resetting the memory policy %s", "failed");
	printf("FILE path=%s created=%d prot=%s\n", o.file, created, o.file_rw ? "rw" : "r");
}

/*
 * Fault the slice in on the fast node (as THPs with --thp), then move it to
 * the slow node with move_pages(2), one 2 MB range per call.  The kernel
 * moves a THP whole when the slow node has a free huge page and splits it
 * otherwise.  The status move_pages() returns for the other pages of a THP
 * being moved is -EBUSY, so the MOVE line counts the placement afterwards.
 */
static void fault_and_move(struct worker *w, char *base, unsigned long len)
{
	static void *addr[PAGES_PER_PMD];
	static int nodes[PAGES_PER_PMD], status[PAGES_PER_PMD];
	unsigned long on_slow = 0, other = 0;
	double t0;

	fault_in(w, base, len, o.fast_node);
	t0 = now_s();
	for (int query = 0; query < 2; query++) {
		for (unsigned long off = 0; off < len; off += PMD_SZ) {
			unsigned long n = (len - off) / PAGE_SZ;

			if (n > PAGES_PER_PMD)
				n = PAGES_PER_PMD;
			for (unsigned long i = 0; i < n; i++) {
				addr[i] = base + off + i * PAGE_SZ;
				nodes[i] = o.slow_node;
			}
			if (!query) {
				if (sys_move_pages_to(n, addr, nodes, status) < 0)
					die("move_pages to the slow node %s", "failed");
				continue;
			}
			if (sys_move_pages(0, n, addr, status) < 0)
				die("move_pages (query) %s", "failed");
			for (unsigned long i = 0; i < n; i++) {
				if (status[i] == o.slow_node)
					on_slow++;
				else
					other++;
			}
		}
	}
	printf("MOVE pages=%lu on_slow=%lu elsewhere=%lu secs=%.2f\n", on_slow + other,
	       on_slow, other, now_s() - t0);
}

/* Place the worker's slice on the slow node: the one touch its cold pages get. */
static void place_slice(struct worker *w)
{
	char *base = region + w->first_page * PAGE_SZ;
	unsigned long len = w->npages * PAGE_SZ;

	if (o.file)
		map_file(base, len);
	else if (o.populate)
		populate_anon(base, len);
	else if (o.move_to_slow)
		fault_and_move(w, base, len);
	else
		fault_in(w, base, len, o.slow_node);
}

static uint32_t *make_trace(struct worker *w, const uint32_t *hot, unsigned long nhot)
{
	uint32_t *t = xcalloc(TRACE_LEN, sizeof(uint32_t));

	for (unsigned long i = 0; i < TRACE_LEN; i++) {
		if (w->cdf) {
			double u = (rnd() >> 11) * (1.0 / 9007199254740992.0);
			unsigned long lo = 0, hi = w->npages - 1;

			while (lo < hi) {
				unsigned long mid = (lo + hi) / 2;

				if (w->cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			t[i] = w->rank2page[lo];
		} else {
			t[i] = hot[rnd_below(nhot)];
		}
		if (o.store_pct > 0 && rnd_below(100) < (uint64_t)o.store_pct)
			t[i] |= TRACE_STORE;
	}
	return t;
}

/* One access thread of a worker. */
struct thr {
	struct worker *w;
	struct wres *r;
	uint32_t *tA, *tB;
	uint32_t *lat;
	unsigned long nlat;
	double t_start, secs;
	uint64_t sink;
	int failed;
};

/*
 * The access loop: batches of o.batch accesses along the trace, each batch
 * timed.  The per-page counters are shared by the threads of a worker and
 * updated without atomics: a lost increment only blurs the access weighting
 * of the placement samples a little.
 */
static void *access_loop(void *arg)
{
	struct thr *t = arg;
	struct worker *w = t->w;
	char *base = region + w->first_page * PAGE_SZ;
	uint32_t *mycnt = cnt + w->first_page, *cur = t->tA;
	double t_end = t->t_start + t->secs, t_mid = t->t_start + t->secs / 2;
	unsigned long cap = 1 << 20, pos = 0;
	uint64_t sink = 0;

	t->lat = malloc(cap * sizeof(uint32_t));
	if (!t->lat) {
		t->failed = 1;
		return NULL;
	}
	while (!got_term) {
		uint64_t t0 = now_ns(), t1;

		for (unsigned int b = 0; b < o.batch; b++) {
			uint32_t e = cur[pos], pg = e & TRACE_PAGE;
			volatile uint64_t *p = (volatile uint64_t *)
				(base + pg * PAGE_SZ + ((pos * 67) & 63) * 64);

			if (o.store_pct < 0)
				*p += 1;
			else if (e & TRACE_STORE)
				*p = pos;
			else
				sink += *p;
			mycnt[pg]++;
			pos = (pos + 1) & (TRACE_LEN - 1);
		}
		t1 = now_ns();
		if (t->nlat == cap) {
			uint32_t *l = realloc(t->lat, 2 * cap * sizeof(uint32_t));

			if (!l) {
				t->failed = 1;
				break;
			}
			t->lat = l;
			cap *= 2;
		}
		t->lat[t->nlat++] = (t1 - t0) > 0xffffffffull ? 0xffffffffu : (uint32_t)(t1 - t0);
		__atomic_fetch_add(&t->r->ops, o.batch, __ATOMIC_RELAXED);
		double tn = t1 * 1e-9;

		if (tn >= t_end)
			break;
		if (t->tB && cur == t->tA && tn >= t_mid)
			cur = t->tB;
	}
	t->sink = sink;
	return NULL;
}

static void run_worker(int id, int go_fd, int ready_fd, int rel_fd, double secs)
{
	struct worker *w = &W[id];
	struct wres *r = &wres[id];
	struct thr *th = xcalloc(o.threads, sizeof(*th));
	pthread_t *tid = xcalloc(o.threads, sizeof(*tid));
	unsigned long nlat = 0;
	uint32_t *lat;
	struct rusage ru, ru0;
	double t_start;
	char c = 'r';
	int failed = 0;

	for (int k = 0; k < o.threads; k++) {
		/* thread 0 gets the traces a single-threaded worker always had */
		rnd_seed(o.seed * 1000 + id + 1 + 7919ul * k);
		th[k].w = w;
		th[k].r = r;
		th[k].secs = secs;
		th[k].tA = make_trace(w, w->hotA, w->nhotA);
		if (o.phase)
			th[k].tB = make_trace(w, w->hotB, w->nhotB);
	}
	place_slice(w);

	if (write(ready_fd, &c, 1) != 1)
		_exit(3);
	/* wait for "go": the sampler closes the pipe */
	while (read(go_fd, &c, 1) > 0)
		;
	t_start = now_s();
	getrusage(RUSAGE_SELF, &ru0);	/* setup (fault-in) is not counted */
	for (int k = 0; k < o.threads; k++) {
		th[k].t_start = t_start;
		if (k && pthread_create(&tid[k], NULL, access_loop, &th[k]))
			_exit(4);
	}
	access_loop(&th[0]);
	for (int k = 0; k < o.threads; k++) {
		if (k)
			pthread_join(tid[k], NULL);
		nlat += th[k].nlat;
		failed |= th[k].failed;
	}
	if (failed)
		_exit(4);
	lat = xcalloc(nlat + 1, sizeof(uint32_t));
	nlat = 0;
	for (int k = 0; k < o.threads; k++) {
		memcpy(lat + nlat, th[k].lat, th[k].nlat * sizeof(uint32_t));
		nlat += th[k].nlat;
	}
	qsort(lat, nlat, sizeof(uint32_t), cmp_u32);
	r->nbatch = nlat;
	if (nlat) {
		r->p50 = lat[(nlat - 1) * 50 / 100];
		r->p90 = lat[(nlat - 1) * 90 / 100];
		r->p99 = lat[(nlat - 1) * 99 / 100];
		r->max = lat[nlat - 1];
	}
	getrusage(RUSAGE_SELF, &ru);
	r->utime = (ru.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		   (ru.ru_utime.tv_usec - ru0.ru_utime.tv_usec) * 1e-6;
	r->stime = (ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		   (ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e-6;
	r->ready = 2;
	/* stay alive (mapped) until the sampler took its final sample */
	while (read(rel_fd, &c, 1) > 0)
		;
	_exit(0);
}

/* --------------------------------------------------------------- balloon */
static long node_free_mb(int node)
{
	char path[96], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
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
	return kb < 0 ? -1 : kb / 1024;
}

static pid_t start_balloon(long *mb_out)
{
	int pfd[2];
	long free_mb = node_free_mb(o.fast_node), mb;
	pid_t pid;
	char c;

	mb = free_mb - o.balloon_leave_mb;
	*mb_out = mb > 0 ? mb : 0;
	if (mb <= 0)
		return 0;
	if (pipe(pfd))
		die("pipe %s", "");
	pid = fork();
	if (pid < 0)
		die("fork %s", "");
	if (pid == 0) {
		unsigned long len = (unsigned long)mb << 20;
		char *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		close(pfd[0]);
		if (b == MAP_FAILED)
			_exit(5);
		/* THP-backed: 512x fewer faults, fills fast even under TCG */
		madvise(b, len, MADV_HUGEPAGE);
		if (sys_mbind(b, len, MPOL_BIND_, o.fast_node))
			_exit(6);
		for (unsigned long i = 0; i < len; i += PAGE_SZ)
			b[i] = 1;
		sys_mbind(b, len, MPOL_DEFAULT_, 0);
		if (o.balloon_lock && mlock(b, len))
			fprintf(stderr, "workload: balloon mlock failed: %s\n", strerror(errno));
		c = 'b';
		if (write(pfd[1], &c, 1) != 1)
			_exit(7);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		fprintf(stderr, "workload: balloon failed to start\n");
	close(pfd[0]);
	return pid;
}

/* --------------------------------------------------------------- sampler */
struct frac { unsigned long on0, tot; };

static void query(struct worker *w, void **addr, unsigned long n, struct frac *f,
		  const uint32_t *idx, double scale, double *acc0, double *acc)
{
	const unsigned long chunk = 4096;

	for (unsigned long i = 0; i < n; i += chunk) {
		unsigned long m = n - i < chunk ? n - i : chunk;

		if (sys_move_pages(w->pid, m, addr + i, w->status) < 0)
			continue;
		for (unsigned long j = 0; j < m; j++) {
			int st = w->status[j];
			uint32_t pg = idx[i + j], c = cnt[pg], d;

			if (st >= 0) {
				f->tot++;
				if (st == o.fast_node)
					f->on0++;
			}
			if (!acc)
				continue;
			d = c - w->prev_cnt[pg - w->first_page];
			w->prev_cnt[pg - w->first_page] = c;
			*acc += d * scale;
			if (st == o.fast_node)
				*acc0 += d * scale;
		}
	}
}

static double fr(struct frac f) { return f.tot ? (double)f.on0 / f.tot : 0.0; }

/* AnonHugePages of the workers (smaps_rollup), MB; -1 when unavailable */
static double workers_thp_mb(void)
{
	double kb = 0;

	for (int i = 0; i < o.procs; i++) {
		char path[64], line[256];
		long v = -1;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)W[i].pid);
		f = fopen(path, "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
				break;
		fclose(f);
		if (v < 0)
			return -1;
		kb += v;
	}
	return kb / 1024;
}

static void usage(void)
{
	fprintf(stderr,
"usage: workload [--mode M] [options]\n"
" modes (presets): hotcold zipf phase flat multi thp thp-scatter scatter topfull\n"
"                  topfull-hard sparse uniform populate file-shared file-shared-rw\n"
"                  thp-move\n"
" --size-mb N       touched region (all workers together); map size for sparse [256]\n"
" --hot-pct P       hot fraction in %% [10]\n"
" --hot-mb M        hot set size in MB (instead of --hot-pct)\n"
" --hot-chunk-kb K  hot set built from random K KB chunks [256]\n"
" --hot-per-2m N    scattered hot set: N hot 4K pages per 2 MB region\n"
" --thp             MADV_HUGEPAGE the region\n"
" --zipf S          zipf(S) over all pages (hot = top hot-pct%% ranks)\n"
" --phase           hot set moves to a disjoint set at half time\n"
" --flat            uniform random over all pages\n"
" --sparse          map size-mb, touch one page per 2 MB plus the hot set\n"
" --sparse-hot-mb N hot set size in sparse mode [64]\n"
" --procs P         worker processes, each with its own slice and hot set [1]\n"
" --balloon-leave-mb M  fill the fast node until only M MB are free\n"
" --balloon-lock    mlock the balloon\n"
" --threads N       access threads per worker, 0 = one per online CPU [1]\n"
" --store-pct P     single stores (P %%) and loads instead of read-modify-writes\n"
" --populate        anonymous mmap(MAP_POPULATE) under a slow-node task policy\n"
" --file PATH       MAP_SHARED mapping of PATH (created, and unlinked, if missing)\n"
" --file-rw         map the file read-write (default read-only: loads only)\n"
" --move-to-slow    fault in on the fast node, then move_pages() to the slow node\n"
" --secs T          run time [30]   --seed S [42]   --batch B accesses [4096]\n"
" --slow-node N [1] --fast-node N [0]  --sample-ms MS [100]\n"
" --go-file F       after setup create F.ready and wait until F exists\n");
	exit(1);
}

/* numeric option values: the whole word must be a number in [lo, hi] */
static double arg_num(const char *opt, const char *v, double lo, double hi)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || x < lo || x > hi) {
		fprintf(stderr, "workload: --%s wants a number in [%g, %g], got '%s'\n",
			opt, lo, hi, v);
		usage();
	}
	return x;
}

static long arg_int(const char *opt, const char *v, long lo, long hi)
{
	double x = arg_num(opt, v, lo, hi);

	if (x != (long)x) {
		fprintf(stderr, "workload: --%s wants an integer, got '%s'\n", opt, v);
		usage();
	}
	return (long)x;
}

static void apply_mode(const char *m)
{
	o.mode = m;
	if (!strcmp(m, "hotcold")) {
	} else if (!strcmp(m, "zipf")) {
		o.zipf_s = 0.99;
	} else if (!strcmp(m, "phase")) {
		o.phase = 1;
	} else if (!strcmp(m, "flat")) {
		o.flat = 1;
	} else if (!strcmp(m, "multi")) {
		o.procs = 3;
	} else if (!strcmp(m, "thp")) {
		o.thp = 1; o.hot_chunk_kb = 2048;
	} else if (!strcmp(m, "thp-scatter")) {
		o.thp = 1; o.hot_per_2m = 8;
	} else if (!strcmp(m, "scatter")) {
		o.hot_per_2m = 8;
	} else if (!strcmp(m, "topfull")) {
		o.balloon_leave_mb = 32;
	} else if (!strcmp(m, "topfull-hard")) {
		/* hot set several times the free node-0 memory: set --hot-mb */
		o.balloon_leave_mb = 32; o.hot_mb = 112;
	} else if (!strcmp(m, "sparse")) {
		o.sparse = 1; o.size_mb = 4096;
	} else if (!strcmp(m, "uniform")) {
		/* abench-like: uniform 4 KB accesses, one thread per CPU, 50:50 */
		o.flat = 1; o.threads = 0; o.store_pct = 50;
	} else if (!strcmp(m, "populate")) {
		o.populate = 1; o.threads = 0; o.store_pct = 50;
	} else if (!strcmp(m, "file-shared")) {
		o.file = "/tmp/kmmscand-bench.file"; o.store_pct = 0;
	} else if (!strcmp(m, "file-shared-rw")) {
		o.file = "/tmp/kmmscand-bench-rw.file"; o.file_rw = 1; o.store_pct = 0;
	} else if (!strcmp(m, "thp-move")) {
		o.thp = 1; o.hot_chunk_kb = 2048; o.move_to_slow = 1;
	} else {
		fprintf(stderr, "workload: unknown mode %s\n", m);
		usage();
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "size-mb", 1, 0, 's' }, { "hot-pct", 1, 0, 'h' },
		{ "hot-chunk-kb", 1, 0, 'c' }, { "hot-per-2m", 1, 0, 'k' }, { "thp", 0, 0, 'T' },
		{ "zipf", 1, 0, 'z' }, { "phase", 0, 0, 'P' }, { "flat", 0, 0, 'F' },
		{ "sparse", 0, 0, 'S' }, { "sparse-hot-mb", 1, 0, 'H' }, { "procs", 1, 0, 'n' },
		{ "balloon-leave-mb", 1, 0, 'b' }, { "balloon-lock", 0, 0, 'L' },
		{ "secs", 1, 0, 't' }, { "seed", 1, 0, 'r' }, { "batch", 1, 0, 'B' },
		{ "slow-node", 1, 0, '1' }, { "fast-node", 1, 0, '0' },
		{ "sample-ms", 1, 0, 'i' }, { "verbose", 0, 0, 'v' }, { "help", 0, 0, '?' },
		{ "go-file", 1, 0, 'g' }, { "hot-mb", 1, 0, 'M' },
		{ "threads", 1, 0, 'j' }, { "store-pct", 1, 0, 'w' }, { "populate", 0, 0, 'p' },
		{ "file", 1, 0, 'f' }, { "file-rw", 0, 0, 'W' }, { "move-to-slow", 0, 0, 'x' },
		{ 0 }
	};
	int c, li = 0, go[2], rd[2], rel[2];
	unsigned long map_pages, slice, nhot_tot = 0, ncold_tot = 0;
	long balloon_mb = 0;
	pid_t balloon = 0;
	double t0, setup_s, t_start;
	char *raw;

	/* the mode preset first, so explicit options override it */
	for (int i = 1; i < argc - 1; i++)
		if (!strcmp(argv[i], "--mode"))
			apply_mode(argv[i + 1]);
	while ((c = getopt_long(argc, argv, "", lo, &li)) != -1) {
		const char *n = lo[li].name;
		const long big = 1L << 40;

		switch (c) {
		case 'm': break;
		case 's': o.size_mb = arg_int(n, optarg, 1, 1L << 30); break;
		case 'h': o.hot_pct = arg_num(n, optarg, 0, 100); break;
		case 'c': o.hot_chunk_kb = arg_int(n, optarg, 4, 1L << 30); break;
		case 'k': o.hot_per_2m = arg_int(n, optarg, 1, PAGES_PER_PMD); break;
		case 'T': o.thp = 1; break;
		case 'z': o.zipf_s = arg_num(n, optarg, 0, 10); break;
		case 'P': o.phase = 1; break;
		case 'F': o.flat = 1; break;
		case 'S': o.sparse = 1; break;
		case 'H': o.sparse_hot_mb = arg_int(n, optarg, 1, 1L << 30); break;
		case 'n': o.procs = arg_int(n, optarg, 1, MAX_PROCS); break;
		case 'b': o.balloon_leave_mb = arg_int(n, optarg, -1, big); break;
		case 'L': o.balloon_lock = 1; break;
		case 't': o.secs = arg_num(n, optarg, 0.1, 1e6); break;
		case 'r': o.seed = arg_int(n, optarg, 0, big); break;
		case 'B': o.batch = arg_int(n, optarg, 1, 1L << 24); break;
		case '1': o.slow_node = arg_int(n, optarg, 0, MAX_NODE); break;
		case '0': o.fast_node = arg_int(n, optarg, 0, MAX_NODE); break;
		case 'i': o.sample_ms = arg_int(n, optarg, 10, 1000000); break;
		case 'v': o.verbose = 1; break;
		case 'g': o.go_file = optarg; break;
		case 'M': o.hot_mb = arg_int(n, optarg, 1, 1L << 30); break;
		case 'j': o.threads = arg_int(n, optarg, 0, MAX_THREADS); break;
		case 'w': o.store_pct = arg_int(n, optarg, -1, 100); break;
		case 'p': o.populate = 1; break;
		case 'f': o.file = optarg; break;
		case 'W': o.file_rw = 1; break;
		case 'x': o.move_to_slow = 1; break;
		default: usage();
		}
	}
	if (optind < argc) {
		fprintf(stderr, "workload: unexpected argument '%s'\n", argv[optind]);
		usage();
	}
	if (o.procs < 1 || o.procs > MAX_PROCS || !o.size_mb || !o.batch || o.secs <= 0)
		usage();
	if (o.slow_node == o.fast_node) {
		fprintf(stderr, "workload: --slow-node and --fast-node must differ\n");
		usage();
	}
	if (o.populate + !!o.file + o.move_to_slow > 1 ||
	    ((o.populate || o.file || o.move_to_slow) && o.sparse)) {
		fprintf(stderr, "workload: --populate, --file, --move-to-slow and --sparse "
			"exclude each other\n");
		usage();
	}
	if (o.file && (o.procs != 1 || o.thp || o.balloon_leave_mb >= 0)) {
		fprintf(stderr, "workload: --file takes one worker process, no --thp, no balloon\n");
		usage();
	}
	if (o.file && !o.file_rw && o.store_pct != 0) {
		fprintf(stderr, "workload: a read-only file mapping takes loads only (--store-pct 0)\n");
		usage();
	}
	if (o.populate && o.thp) {
		fprintf(stderr, "workload: --populate maps without MADV_HUGEPAGE (no --thp)\n");
		usage();
	}
	if (o.threads == 0) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		o.threads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : ncpu;
	}
	if (o.hot_mb && !o.sparse)
		o.hot_pct = 100.0 * o.hot_mb / o.size_mb;
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = now_s();
	rnd_seed(o.seed);

	/* region: 2 MB aligned, procs slices of equal 2 MB-multiple size */
	slice = (o.size_mb << 20) / o.procs / PMD_SZ * PAGES_PER_PMD;
	if (!slice)
		slice = PAGES_PER_PMD;
	map_pages = slice * o.procs;
	if (map_pages > (unsigned long)TRACE_PAGE + 1) {
		fprintf(stderr, "workload: --size-mb too large\n");
		usage();
	}
	raw = mmap(NULL, map_pages * PAGE_SZ + PMD_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap %s", "region");
	region = (char *)(((uintptr_t)raw + PMD_SZ - 1) & ~(PMD_SZ - 1));
	region_pages = map_pages;
	cnt = mmap(NULL, map_pages * sizeof(uint32_t) + sizeof(struct wres) * MAX_PROCS,
		   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED)
		die("mmap %s", "counters");
	memset(cnt, 0, map_pages * sizeof(uint32_t));
	wres = (struct wres *)(cnt + map_pages);
	memset(wres, 0, sizeof(struct wres) * MAX_PROCS);

	for (int i = 0; i < o.procs; i++) {
		struct worker *w = &W[i];

		w->first_page = i * slice;
		w->npages = slice;
		build_worker(w);
		sample_list(w, w->hotA, w->nhotA, HOT_SAMPLE_CAP, &w->hs_addr, &w->hs_idx,
			    &w->nhs, &w->hs_scale);
		if (w->nhotB)
			sample_list(w, w->hotB, w->nhotB, HOT_SAMPLE_CAP, &w->bs_addr,
				    &w->bs_idx, &w->nbs, &w->bs_scale);
		sample_list(w, w->cold, w->ncold, COLD_SAMPLE_CAP, &w->cs_addr, &w->cs_idx,
			    &w->ncs, &w->cs_scale);
		w->status = xcalloc(4096, sizeof(int));
		w->prev_cnt = xcalloc(w->npages, sizeof(uint32_t));
		nhot_tot += w->nhotA;
		ncold_tot += w->ncold;
	}
	printf("CFG mode=%s size_mb=%lu procs=%d hot_pages=%lu cold_pages=%lu thp=%d zipf=%.2f "
	       "phase=%d flat=%d sparse=%d hot_per_2m=%u hot_chunk_kb=%lu secs=%.1f seed=%lu "
	       "batch=%u slow_node=%d fast_node=%d threads=%d store_pct=%d populate=%d "
	       "file=%s file_rw=%d move_to_slow=%d\n",
	       o.mode, o.size_mb, o.procs, nhot_tot, ncold_tot, o.thp, o.zipf_s, o.phase,
	       o.flat, o.sparse, o.hot_per_2m, o.hot_chunk_kb, o.secs, o.seed, o.batch,
	       o.slow_node, o.fast_node, o.threads, o.store_pct, o.populate,
	       o.file ? o.file : "-", o.file_rw, o.move_to_slow);

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (o.balloon_leave_mb >= 0) {
		balloon = start_balloon(&balloon_mb);
		printf("BALLOON mb=%ld node%d_free_mb_after=%ld\n", balloon_mb, o.fast_node,
		       node_free_mb(o.fast_node));
	}

	if (pipe(go) || pipe(rd) || pipe(rel))
		die("pipe %s", "");
	for (int i = 0; i < o.procs; i++) {
		pid_t p = fork();

		if (p < 0)
			die("fork %s", "");
		if (p == 0) {
			close(go[1]);
			close(rd[0]);
			close(rel[1]);
			run_worker(i, go[0], rd[1], rel[0], o.secs);
		}
		W[i].pid = p;
	}
	close(go[0]);
	close(rd[1]);
	close(rel[0]);
	for (int i = 0; i < o.procs; i++) {
		char ch;

		if (read(rd[0], &ch, 1) != 1) {
			fprintf(stderr, "workload: a worker died during setup\n");
			for (int j = 0; j < o.procs; j++)
				kill(W[j].pid, SIGKILL);
			if (balloon)
				kill(balloon, SIGKILL);
			return 2;
		}
	}
	setup_s = now_s() - t0;
	/* placement right after setup (should be all on the slow node) */
	{
		struct frac h = { 0 }, cf = { 0 };

		for (int i = 0; i < o.procs; i++) {
			query(&W[i], W[i].hs_addr, W[i].nhs, &h, W[i].hs_idx, 0, NULL, NULL);
			query(&W[i], W[i].cs_addr, W[i].ncs, &cf, W[i].cs_idx, 0, NULL, NULL);
		}
		printf("SETUP secs=%.2f hot_on0=%.4f cold_on0=%.4f hot_mapped=%lu cold_mapped=%lu "
		       "thp_mb=%.0f\n", setup_s, fr(h), fr(cf), h.tot, cf.tot, workers_thp_mb());
	}
	if (o.go_file) {
		/* let the driver switch the policy on between setup and run */
		char rp[4096];
		int fd;
		double give_up = now_s() + 600;

		snprintf(rp, sizeof(rp), "%s.ready", o.go_file);
		fd = open(rp, O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
		while (access(o.go_file, F_OK) && now_s() < give_up && !got_term)
			usleep(10000);
	}
	close(go[1]);	/* go */
	t_start = now_s();

	{
		double next = t_start, acc_all = 0, acc0_all = 0, hot_final = 0, cold_final = 0;
		double t50 = -1, t90 = -1, mid = t_start + o.secs / 2, thp_end;
		uint64_t prev_ops = 0;
		int phase_printed = 0, alive = o.procs;
		double last_t = -1e9;

		while (alive > 0) {
			struct frac hA = { 0 }, hB = { 0 }, cf = { 0 };
			double a0 = 0, a = 0, t, tq, qms, hot;
			uint64_t ops = 0;
			int st;

			alive = 0;
			for (int i = 0; i < o.procs; i++)
				if (wres[i].ready != 2 && waitpid(W[i].pid, &st, WNOHANG) == 0)
					alive++;
			t = now_s();
			if (t < next && alive) {
				usleep((useconds_t)((next - t) * 1e6 > 20000 ? 20000 : (next - t) * 1e6));
				continue;
			}
			if (!alive && t - last_t < o.sample_ms / 2000.0)
				break;	/* final sample would duplicate the last one */
			last_t = t;
			/* a query slower than the period skips samples, no burst */
			do
				next += o.sample_ms / 1000.0;
			while (next <= t);
			for (int i = 0; i < o.procs; i++) {
				struct worker *w = &W[i];

				query(w, w->hs_addr, w->nhs, &hA, w->hs_idx, w->hs_scale, &a0, &a);
				if (w->nbs)
					query(w, w->bs_addr, w->nbs, &hB, w->bs_idx, w->bs_scale, &a0, &a);
				query(w, w->cs_addr, w->ncs, &cf, w->cs_idx, w->cs_scale, &a0, &a);
				ops += wres[i].ops;
			}
			/*
			 * The placement was read over [t, tq]: stamp the sample
			 * with the middle of that window, not its start.
			 */
			tq = now_s();
			qms = (tq - t) * 1e3;
			t = (t + tq) / 2;
			if (o.phase && !phase_printed && t >= mid) {
				printf("PHASE t=%.2f\n", mid - t_start);
				phase_printed = 1;
			}
			hot = (o.phase && t >= mid) ? fr(hB) : fr(hA);
			acc_all += a;
			acc0_all += a0;
			/* acc_on0=-1: no access counted in the interval */
			printf("T %.3f hot_on0=%.4f cold_on0=%.4f acc_on0=%.4f", t - t_start, hot,
			       fr(cf), a > 0 ? a0 / a : -1.0);
			if (o.phase)
				printf(" hotA_on0=%.4f hotB_on0=%.4f", fr(hA), fr(hB));
			printf(" ops=%llu q_ms=%.1f\n", (unsigned long long)(ops - prev_ops), qms);
			prev_ops = ops;
			if (!o.phase || t >= mid) {
				double base = o.phase ? mid : t_start;

				if (t50 < 0 && hot >= 0.5)
					t50 = t - base;
				if (t90 < 0 && hot >= 0.9)
					t90 = t - base;
			}
			hot_final = hot;
			cold_final = fr(cf);
			if (got_term)
				for (int i = 0; i < o.procs; i++)
					kill(W[i].pid, SIGTERM);
		}

		thp_end = workers_thp_mb();
		close(rel[1]);	/* release the workers */
		/* reap and report */
		double p50 = 0, p90 = 0, p99 = 0, mx = 0, wut = 0, wst = 0;
		uint64_t nb = 0, tops = 0;
		int bad = 0;

		for (int i = 0; i < o.procs; i++) {
			int st = 0;
			struct rusage ru;

			if (wait4(W[i].pid, &st, 0, &ru) < 0 && errno != ECHILD)
				bad++;
			if (wres[i].ready != 2)
				bad++;
			printf("W %d nbatch=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f "
			       "utime=%.2f stime=%.2f ops=%llu\n", i,
			       (unsigned long long)wres[i].nbatch, wres[i].p50 / 1e3,
			       wres[i].p90 / 1e3, wres[i].p99 / 1e3, wres[i].max / 1e3,
			       wres[i].utime, wres[i].stime, (unsigned long long)wres[i].ops);
			p50 += wres[i].p50 / 1e3 / o.procs;
			p90 += wres[i].p90 / 1e3 / o.procs;
			if (wres[i].p99 / 1e3 > p99)
				p99 = wres[i].p99 / 1e3;
			if (wres[i].max / 1e3 > mx)
				mx = wres[i].max / 1e3;
			wut += wres[i].utime;
			wst += wres[i].stime;
			nb += wres[i].nbatch;
			tops += wres[i].ops;
		}
		if (balloon) {
			kill(balloon, SIGKILL);
			waitpid(balloon, NULL, 0);
		}
		struct rusage self;

		getrusage(RUSAGE_SELF, &self);
		printf("RESULT mode=%s secs=%.2f setup_s=%.2f hot_final=%.4f cold_final=%.4f "
		       "acc_on0=%.4f t50=%.3f t90=%.3f sample_ms=%u p50_us=%.1f p90_us=%.1f p99_us=%.1f "
		       "max_us=%.1f nbatch=%llu ops=%llu work_utime=%.2f work_stime=%.2f "
		       "sampler_stime=%.2f balloon_mb=%ld hot_pages=%lu cold_pages=%lu procs=%d "
		       "threads=%d thp_mb_end=%.0f failed=%d\n",
		       o.mode, now_s() - t_start, setup_s, hot_final, cold_final,
		       acc_all > 0 ? acc0_all / acc_all : 0.0, t50, t90, o.sample_ms, p50, p90, p99, mx,
		       (unsigned long long)nb, (unsigned long long)tops, wut, wst,
		       self.ru_stime.tv_sec + self.ru_stime.tv_usec * 1e-6, balloon_mb,
		       nhot_tot, ncold_tot, o.procs, o.threads, thp_end, bad);
		return bad ? 1 : 0;
	}
}
