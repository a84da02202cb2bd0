/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kmmscand selftests that watch promotion share: memory placed on
 * the slow-tier node 1 with a pattern that can be verified, threads and
 * children that keep it hot, waiting for it to reach node 0, and the test
 * environment (knobs and sysctls saved, set for quick detection and
 * restored by the parent whatever the test did).
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

#include "../kselftest_harness.h"
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
static inline size_t thp_size(void)
{
	static size_t size;

	if (!size)
		size = read_pmd_pagesize() ?: 2 * MB;
	return size;
}

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
static inline uint64_t pattern(const struct region *r, unsigned long i,
			       unsigned long w)
{
	return r->seed ^ (i * 0x9e3779b97f4a7c15ULL) ^ (w * 0xc2b2ae3d27d4eb4fULL);
}

/*
 * Fault r->len bytes at r->base in on node 1 with the pattern and, unless
 * REGION_BOUND, drop the MPOL_BIND again so that only placement, not
 * policy, keeps the pages on node 1. For MAP_SHARED the policy is the
 * shared policy of the shmem object, and MPOL_DEFAULT removes it again.
 */
static inline int region_fill_node1(struct region *r, int flags)
{
	unsigned long words = psize() / sizeof(uint64_t), i, w;
	bool thp = flags & REGION_THP;
	struct node_count nc;

	if (madvise(r->base, r->len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	    thp)
		return -errno;
	if (bind_to_node(r->base, r->len, 1))
		return -errno;
	for (i = 0; i < r->npages; i++) {
		uint64_t *p = (uint64_t *)(r->base + i * psize());

		p[0] = 0;
		for (w = 1; w < words; w++)
			p[w] = pattern(r, i, w);
	}
	if (!(flags & REGION_BOUND) && unbind(r->base, r->len))
		return -errno;
	if (where_pages(0, r->base, r->npages, &nc))
		return -errno;
	if (nc.n[1] != r->npages)
		return -EXDEV;
	return 0;
}

/* Map @len bytes of anonymous memory and region_fill_node1() it. */
static inline int region_on_node1(struct region *r, size_t len, int flags,
				  uint64_t seed)
{
	int type = flags & REGION_SHARED ? MAP_SHARED : MAP_PRIVATE;
	uintptr_t start;

	memset(r, 0, sizeof(*r));
	r->map_len = len + (flags & REGION_THP ? thp_size() : 0);
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		      type | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return -errno;
	}
	start = (uintptr_t)r->map;
	if (flags & REGION_THP)
		start = (start + thp_size() - 1) & ~(thp_size() - 1);
	r->base = (char *)start;
	r->len = len;
	r->npages = len / psize();
	r->seed = seed;
	if ((flags & REGION_DONTFORK) &&
	    madvise(r->map, r->map_len, MADV_DONTFORK))
		return -errno;
	return region_fill_node1(r, flags);
}

static inline void region_unmap(struct region *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

/*
 * Check every word of pages [first, first + n): the pattern must be
 * intact and the touch counter must be @count. Returns the number of bad
 * pages and logs the first one.
 */
static inline unsigned long region_verify(const struct region *r,
					  unsigned long first, unsigned long n,
					  uint64_t count)
{
	unsigned long words = psize() / sizeof(uint64_t), i, w, bad = 0;

	for (i = first; i < first + n; i++) {
		const uint64_t *p = (const uint64_t *)(r->base + i * psize());
		bool ok = p[0] == count;

		for (w = 1; ok && w < words; w++)
			ok = p[w] == pattern(r, i, w);
		if (!ok && !bad++)
			ksft_print_msg("page %lu corrupt: counter %llu want %llu, word %lu\n",
				       i, (unsigned long long)p[0],
				       (unsigned long long)count, w - 1);
	}
	return bad;
}

/*
 * Wait until @want percent of the @n pages at @base of process @pid (0:
 * this one) are on @node, polling every POLL_MS up to @deadline_ms.
 * Returns the time it took in ms, or -1; *@got is the last share observed.
 */
static inline long long wait_on_node(pid_t pid, char *base, unsigned long n,
				     int node, unsigned long want,
				     long long deadline_ms, unsigned long *got)
{
	long long t0 = now_ms();
	struct node_count nc;

	*got = 0;
	for (;;) {
		if (where_pages(pid, base, n, &nc))
			return -1;
		*got = pct(nc.n[node], n);
		if (*got >= want)
			return now_ms() - t0;
		if (now_ms() - t0 >= deadline_ms)
			return -1;
		sleep_ms(POLL_MS);
	}
}

/* wait_on_node() for the pages [first, first + n) of @r and node 0. */
static inline long long wait_promoted(const struct region *r,
				      unsigned long first, unsigned long n,
				      unsigned long want, long long deadline_ms,
				      unsigned long *got)
{
	return wait_on_node(0, r->base + first * psize(), n, 0, want,
			    deadline_ms, got);
}

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
static inline void *hot_loop(void *arg)
{
	struct hot_thread *h = arg;
	unsigned long i;
	int r;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		for (r = 0; r < h->nr; r++)
			for (i = 0; i < h->range[r].npages; i++)
				(*(uint64_t *)(h->range[r].base + i * psize()))++;
		/* every pass really stores to every page */
		asm volatile("" ::: "memory");
		__atomic_store_n(&h->passes, h->passes + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static inline void hot_add(struct hot_thread *h, char *base,
			   unsigned long npages)
{
	h->range[h->nr].base = base;
	h->range[h->nr].npages = npages;
	h->nr++;
}

static inline int hot_start(struct hot_thread *h)
{
	h->stop = 0;
	h->passes = 0;
	if (pthread_create(&h->tid, NULL, hot_loop, h))
		return -1;
	h->running = true;
	return 0;
}

/* Stop the thread; returns how many full passes it made. */
static inline unsigned long hot_stop(struct hot_thread *h)
{
	if (h->running) {
		__atomic_store_n(&h->stop, 1, __ATOMIC_RELEASE);
		pthread_join(h->tid, NULL);
		h->running = false;
	}
	return h->passes;
}

/* Keep @npages at @base hot in this (child) process until killed. */
static inline void hot_forever(char *base, unsigned long npages)
{
	unsigned long i;

	for (;;) {
		for (i = 0; i < npages; i++)
			(*(uint64_t *)(base + i * psize()))++;
		asm volatile("" ::: "memory");
	}
}

/*
 * Fork a child that faults @len bytes at @base (a mapping of its own when
 * @base is NULL) in on node 1 in base pages, drops the binding and keeps
 * every page hot until killed; with @opt_out it first opts out with
 * PR_SET_KMMSCAND. Returns its pid once the pages are in place, or -errno.
 */
static inline pid_t hot_child(char *base, size_t len, bool opt_out)
{
	unsigned char err = 0;
	unsigned long i;
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (!pid) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (opt_out && prctl(PR_SET_KMMSCAND, 0, 0, 0, 0))
			err = errno;
		if (!err && !base) {
			base = mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (base == MAP_FAILED)
				err = errno;
		}
		/* Base pages; a kernel without THP has them anyway. */
		madvise(base, len, MADV_NOHUGEPAGE);
		if (!err && bind_to_node(base, len, 1))
			err = errno ?: EINVAL;
		for (i = 0; !err && i < len / psize(); i++)
			base[i * psize()] = 1;
		if (!err && unbind(base, len))
			err = errno;
		if (write(fds[1], &err, 1) != 1 || err)
			_exit(1);
		close(fds[1]);
		hot_forever(base, len / psize());
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &err, 1) != 1)
		err = pid < 0 ? errno : EPIPE;
	close(fds[0]);
	if (err && pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return err ? -err : pid;
}

/* ---- THP ------------------------------------------------------------------ */

/* AnonHugePages (kB) of the VMA that starts at @addr, or -1. */
static inline long anon_huge_kb(void *addr)
{
	char line[256];
	bool in = false;
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start <= (unsigned long)addr &&
			     (unsigned long)addr < end;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static inline bool thp_usable(char *why, size_t len)
{
	char buf[128];

	if (read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf,
		      sizeof(buf)) <= 0) {
		snprintf(why, len, "no THP (CONFIG_TRANSPARENT_HUGEPAGE=n)");
		return false;
	}
	if (strstr(buf, "[never]")) {
		snprintf(why, len, "THP disabled: enabled is [never]");
		return false;
	}
	return true;
}

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
static inline int kmm_env_save(struct kmm_env *env, const char *path)
{
	int i, ret;

	for (i = 0; i < env->nr_files; i++)
		if (!strcmp(env->file[i].path, path))
			return 0;
	if (i == KMM_ENV_FILES)
		return -ENOSPC;
	ret = read_file(path, env->file[i].val, sizeof(env->file[i].val));
	if (ret <= 0)
		return ret ?: -ENODATA;
	env->file[i].path = path;
	env->nr_files++;
	return 0;
}

/* kmm_env_save() @path, then write @str to it. 0 or -errno. */
static inline int kmm_env_set(struct kmm_env *env, const char *path,
			      const char *str)
{
	int ret = kmm_env_save(env, path);

	return ret ?: write_str(path, str);
}

static inline int kmm_env_set_long(struct kmm_env *env, const char *path,
				   long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", val);
	return kmm_env_set(env, path, buf);
}

/*
 * Kill the children, write back the saved files, newest first, and the
 * knobs. Returns the number of failures, each one logged.
 */
static inline int kmm_env_restore(struct kmm_env *env)
{
	int i, ret, bad = 0;

	for (i = 0; i < (int)ARRAY_SIZE(env->kids); i++) {
		if (env->kids[i] > 0) {
			kill(env->kids[i], SIGKILL);
			waitpid(env->kids[i], NULL, 0);
		}
		env->kids[i] = 0;
	}
	for (i = env->nr_files - 1; i >= 0; i--) {
		ret = write_str(env->file[i].path, env->file[i].val);
		if (ret && ++bad)
			ksft_print_msg("restoring %s failed: %s\n",
				       env->file[i].path, strerror(-ret));
	}
	env->nr_files = 0;
	ret = knobs_restore(&env->knobs);
	if (ret && ++bad)
		ksft_print_msg("restoring the knobs failed: %s\n",
			       strerror(-ret));
	return bad;
}

/*
 * The fixture setup of every promotion test: skip unless this is a
 * two-tier machine with kmmscand and its counters, save the knobs, turn
 * NUMA balancing off so that only kmmscand moves pages, and set the
 * contract defaults with a short period so that detection is quick.
 *
 * tlb_flush=1: without a flush, a hot page whose translation stays cached
 * in the TLB is not seen young again until the entry is evicted, which
 * makes detection depend on the TLB (QEMU's software TLB keeps a
 * PMD-mapped THP cached indefinitely). The tests check what kmmscand does
 * with what it detects; hot_promoted_cold_stays checks detection with
 * tlb_flush=0 too.
 */
static inline void kmm_env_setup(struct __test_metadata *_metadata,
				 struct kmm_env *env)
{
	static const struct { enum kmm_knob k; long long v; } defaults[] = {
		{ KNOB_SCAN_PERIOD_MAX_MS, 60000 },
		{ KNOB_SCAN_PERIOD_MIN_MS, PERIOD_MIN_MS },
		{ KNOB_SCAN_PERIOD_MAX_MS, PERIOD_MAX_MS },
		{ KNOB_HOT_HISTORY, 8 },
		{ KNOB_HOT_THRESHOLD, 2 },
		{ KNOB_HOT_HISTORY, 2 },
		{ KNOB_SCAN_SIZE, 65536 },
		{ KNOB_PMD_SKIP, 1 },
		{ KNOB_TLB_FLUSH, 1 },
		{ KNOB_MIGRATE_BATCH, 512 },
		{ KNOB_PROMOTE_RATE_LIMIT_MBPS, 256 },
		{ KNOB_TARGET_NODE, -1 },
		{ KNOB_ENABLED, 1 },
	};
	unsigned int i;
	char why[160];
	bool kthread;
	int ret;

	memset(env, 0, sizeof(*env));
	if (!kmmscand_present())
		SKIP(return, "%s missing: kernel built without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);
	if (geteuid())
		SKIP(return, "needs root to set %s", KMMSCAND_SYSFS);
	if (!two_tiers(why, sizeof(why)))
		SKIP(return, "%s", why);
	if (kmm_stats_read(&(struct kmm_stats){}) <= 0)
		SKIP(return, "no kmmscand_* in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS=n?)");
	ASSERT_NE(0, find_task("kmmscand", &kthread))
		TH_LOG("no kmmscand thread");

	ret = knobs_save(&env->knobs);
	ASSERT_EQ(0, ret) TH_LOG("cannot read knobs: %s", strerror(-ret));
	if (!access(NUMA_BALANCING_SYSCTL, F_OK)) {
		ASSERT_EQ(0, kmm_env_set_long(env, NUMA_BALANCING_SYSCTL, 0))
			TH_LOG("cannot turn NUMA balancing off");
	}
	for (i = 0; i < ARRAY_SIZE(defaults); i++) {
		const char *name = kmm_knobs[defaults[i].k].name;

		ASSERT_EQ(0, knob_set(defaults[i].k, defaults[i].v))
			TH_LOG("cannot set %s to %lld", name, defaults[i].v);
	}
}

/*
 * main() of a promotion test: a test killed by its timeout cannot run its
 * teardown, so save the knobs and the sysctls the tests change before
 * the tests and restore them once more after.
 */
static inline int kmm_test_main(int argc, char **argv)
{
	static const char * const files[] = {
		NUMA_BALANCING_SYSCTL, DEMOTION_SYSFS, BOOST_SYSCTL,
		SCALE_SYSCTL, MIN_ADDR_SYSCTL,
	};
	struct kmm_env env = {};
	unsigned int i;
	int ret;

	if (!geteuid() && kmmscand_present()) {
		knobs_save(&env.knobs);
		for (i = 0; i < ARRAY_SIZE(files); i++)
			kmm_env_save(&env, files[i]);
	}
	ret = test_harness_run(argc, argv);
	kmm_env_restore(&env);
	return ret;
}

/*
 * Relations between the counters over [@a, @b] that wrong accounting
 * breaks (the counters themselves are event sums that never go down):
 *  - every promoted page is counted for exactly one source;
 *  - a page is promoted, fails isolation or fails migration only as a
 *    queued candidate, and each candidate was counted when it was
 *    offered (an offer of a folio already queued counts again, so this
 *    is an upper bound).  For base pages only: promote_success and
 *    fail_migrate count pages, candidates count folios.
 * A scanner visit counts its candidates when it ends, and the migrator
 * may promote them before that: the candidates are read again until
 * they cover @b's pages, for at most two seconds.
 */
static inline void expect_accounting(struct __test_metadata *_metadata,
				     const struct kmm_stats *a,
				     const struct kmm_stats *b)
{
	unsigned long long ok = D(a, b, S_PROMOTE_SUCCESS);
	unsigned long long tried = ok + D(a, b, S_FAIL_ISOLATE) +
				   D(a, b, S_FAIL_MIGRATE);
	long long t0 = now_ms();
	struct kmm_stats c = *b;

	EXPECT_EQ(ok, D(a, b, S_ABIT_PROMOTED) + D(a, b, S_FAULT_PROMOTED))
		TH_LOG("promote_success +%llu, abit_promoted +%llu + fault_promoted +%llu",
		       ok, D(a, b, S_ABIT_PROMOTED), D(a, b, S_FAULT_PROMOTED));
	while (D(a, &c, S_CANDIDATE) < tried && now_ms() - t0 < 2000) {
		sleep_ms(POLL_MS);
		kmm_stats_read(&c);
	}
	EXPECT_LE(tried, D(a, &c, S_CANDIDATE))
		TH_LOG("promoted +%llu, fail_isolate +%llu, fail_migrate +%llu: %s +%llu",
		       ok, D(a, b, S_FAIL_ISOLATE), D(a, b, S_FAIL_MIGRATE),
		       "more than the candidates", D(a, &c, S_CANDIDATE));
}

#endif /* __KMMSCAND_PROMOTE_H */
