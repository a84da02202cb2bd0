// SPDX-License-Identifier: GPL-2.0
/*
 * Scanning and promotion tests for kmmscand.
 *
 * Every test places memory on the slow-tier node 1, keeps part of it hot
 * from a thread (or a child), and polls where the pages are with
 * move_pages(2) every 200 ms until an outcome is reached or a deadline
 * passes; what was observed is printed either way. The fixture lowers the
 * scan period so that a hot page is seen young in two passes within a few
 * seconds, turns NUMA balancing off so that only kmmscand moves pages, and
 * restores everything from the parent process afterwards.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND. THP, tracefs and vm event counters are checked by the
 * tests that use them.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "kmmscand_util.h"

#define MB			(1024UL * 1024)
#define HPAGE			(2 * MB)
#define POLL_MS			200
#define DEADLINE_MS		60000
#define SHORT_DEADLINE_MS	30000	/* tests that must stay within a minute */
#define PERIOD_MIN_MS		100
#define PERIOD_MAX_MS		1000
#define HOT_PCT			90UL	/* hot pages that must reach node 0 */
#define COLD_PCT		5UL	/* cold pages that may reach node 0 */
#define TRACE_INSTANCE		"/sys/kernel/tracing/instances/kmmscand_selftest"
#define DEMOTION_SYSFS		"/sys/kernel/mm/numa/demotion_enabled"
#define BOOST_SYSCTL		"/proc/sys/vm/watermark_boost_factor"
#define MIN_ADDR_SYSCTL		"/proc/sys/vm/mmap_min_addr"
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

static unsigned long page_size;

/* ---- memory with a verifiable pattern ---------------------------------- */

struct region {
	char *base;
	char *map;		/* what mmap returned, for munmap */
	size_t map_len;
	size_t len;
	unsigned long npages;
	uint64_t seed;
};

/* Word @w (>= 1) of page @i; word 0 of every page is a touch counter. */
static inline uint64_t pattern(const struct region *r, unsigned long i,
			       unsigned long w)
{
	return r->seed ^ (i * 0x9e3779b97f4a7c15ULL) ^ (w * 0xc2b2ae3d27d4eb4fULL);
}

/*
 * Map @len bytes of anonymous memory, private or shared (@type is
 * MAP_PRIVATE or MAP_SHARED), 2 MB aligned if @thp, fault every page in
 * on node 1 with the pattern, and, unless @keep_bind, drop the MPOL_BIND
 * again so that only placement, not policy, keeps the pages on node 1.
 * For MAP_SHARED the policy is the shared policy of the shmem object, and
 * MPOL_DEFAULT removes it again.
 */
static int region_fill_node1(struct region *r, bool thp, bool keep_bind);

static int region_place_node1(struct region *r, size_t len, bool thp,
			      bool keep_bind, uint64_t seed, int type)
{
	uintptr_t start;

	memset(r, 0, sizeof(*r));
	r->map_len = len + (thp ? HPAGE : 0);
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		      type | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED)
		return -errno;
	start = (uintptr_t)r->map;
	if (thp)
		start = (start + HPAGE - 1) & ~(HPAGE - 1);
	r->base = (char *)start;
	r->len = len;
	r->npages = len / page_size;
	r->seed = seed;
	return region_fill_node1(r, thp, keep_bind);
}

/* Fault r->len bytes at r->base in on node 1 with the pattern. */
static int region_fill_node1(struct region *r, bool thp, bool keep_bind)
{
	unsigned long words = page_size / sizeof(uint64_t), i, w;
	size_t len = r->len;
	struct node_count nc;

	if (madvise(r->base, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	    thp)
		return -errno;
	if (bind_to_node(r->base, len, 1))
		return -errno;
	for (i = 0; i < r->npages; i++) {
		uint64_t *p = (uint64_t *)(r->base + i * page_size);

		p[0] = 0;
		for (w = 1; w < words; w++)
			p[w] = pattern(r, i, w);
	}
	if (!keep_bind && unbind(r->base, len))
		return -errno;
	if (where_pages(0, r->base, r->npages, &nc))
		return -errno;
	if (nc.n[1] != r->npages)
		return -EXDEV;
	return 0;
}

static int region_on_node1(struct region *r, size_t len, bool thp,
			   bool keep_bind, uint64_t seed)
{
	return region_place_node1(r, len, thp, keep_bind, seed, MAP_PRIVATE);
}

static void region_unmap(struct region *r)
{
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

/*
 * Check every word of pages [first, first + n): the pattern must be
 * intact and the touch counter must be @count. Returns the number of bad
 * pages and logs the first one.
 */
static unsigned long region_verify(const struct region *r, unsigned long first,
				   unsigned long n, uint64_t count)
{
	unsigned long words = page_size / sizeof(uint64_t), i, w, bad = 0;

	for (i = first; i < first + n; i++) {
		const uint64_t *p = (const uint64_t *)(r->base + i * page_size);
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

/* ---- a thread that keeps ranges hot ------------------------------------ */

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
static void *hot_loop(void *arg)
{
	struct hot_thread *h = arg;
	unsigned long i;
	int r;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		for (r = 0; r < h->nr; r++)
			for (i = 0; i < h->range[r].npages; i++)
				(*(uint64_t *)(h->range[r].base + i * page_size))++;
		/* every pass really stores to every page */
		asm volatile("" ::: "memory");
		__atomic_store_n(&h->passes, h->passes + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void hot_add(struct hot_thread *h, char *base, unsigned long npages)
{
	h->range[h->nr].base = base;
	h->range[h->nr].npages = npages;
	h->nr++;
}

static int hot_start(struct hot_thread *h)
{
	h->stop = 0;
	h->passes = 0;
	if (pthread_create(&h->tid, NULL, hot_loop, h))
		return -1;
	h->running = true;
	return 0;
}

static unsigned long hot_stop(struct hot_thread *h)
{
	if (h->running) {
		__atomic_store_n(&h->stop, 1, __ATOMIC_RELEASE);
		pthread_join(h->tid, NULL);
		h->running = false;
	}
	return h->passes;
}

/* Keep @npages at @base hot in this (child) process until killed. */
static void hot_forever(char *base, unsigned long npages)
{
	unsigned long i;

	for (;;) {
		for (i = 0; i < npages; i++)
			(*(uint64_t *)(base + i * page_size))++;
		asm volatile("" ::: "memory");
	}
}

static inline unsigned long pct(unsigned long part, unsigned long whole)
{
	return whole ? part * 100 / whole : 0;
}

/* ---- files, meminfo, zoneinfo, vmstat ------------------------------------ */

/* Write @str to @path in one write(2). Returns 0 or -errno. */
static int write_str(const char *path, const char *str)
{
	ssize_t ret;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, str, strlen(str));
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : 0;
}

/* The value of the "@key ... kB" line of node @nid's meminfo, or -1. */
static long node_meminfo_kb(int nid, const char *key)
{
	char path[PATH_MAX], line[256], *p;
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), NODE_SYSFS "node%d/meminfo", nid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (kb < 0 && fgets(line, sizeof(line), f)) {
		p = strstr(line, key);
		if (p)
			kb = strtol(p + strlen(key), NULL, 10);
	}
	fclose(f);
	return kb;
}

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
static long zone_protection(const char *p)
{
	long v, max = 0;
	char *end;

	for (;;) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > max)
			max = v;
		p = end;
		if (*p != ',')
			break;
		p++;
	}
	return max;
}

/* The populated zones of node @nid. Returns how many, or -errno. */
static int node_zones(int nid, struct zone_info *z, int max)
{
	struct zone_info *cur = NULL;
	char line[512], name[16], *p;
	int n = 0, node;
	long v;
	FILE *f;

	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone %15s", &node, name) == 2) {
			/* An empty zone gives its slot to the next one. */
			if (cur && !cur->managed)
				n--;
			cur = NULL;
			if (node == nid && n < max) {
				cur = &z[n++];
				memset(cur, 0, sizeof(*cur));
				snprintf(cur->name, sizeof(cur->name), "%s", name);
			}
			continue;
		}
		if (!cur)
			continue;
		p = strstr(line, "protection: (");
		if (p) {
			cur->protection = zone_protection(p + strlen("protection: ("));
			continue;
		}
		if (sscanf(line, " pages free %ld", &v) == 1)
			cur->free = v;
		else if (sscanf(line, " boost %ld", &v) == 1)
			cur->boost = v;
		else if (sscanf(line, " min %ld", &v) == 1)
			cur->min = v;
		else if (sscanf(line, " low %ld", &v) == 1)
			cur->low = v;
		else if (sscanf(line, " high %ld", &v) == 1)
			cur->high = v;
		else if (sscanf(line, " promo %ld", &v) == 1)
			cur->promo = v;
		else if (sscanf(line, " managed %ld", &v) == 1)
			cur->managed = v;
	}
	if (cur && !cur->managed)
		n--;
	fclose(f);
	return n;
}

/*
 * Pages the migrator may still promote to node @nid before every zone is
 * at or below its high watermark (without boost), which is where its
 * guard defers every batch: the sum over the zones of
 * free - (high - boost) - protection, where positive.
 */
static long node_room_above_high(const struct zone_info *z, int n)
{
	long room = 0, r;
	int i;

	for (i = 0; i < n; i++) {
		r = z[i].free - (z[i].high - z[i].boost) - z[i].protection;
		if (r > 0)
			room += r;
	}
	return room;
}

static void log_zones(int nid, const struct zone_info *z, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ksft_print_msg("node %d %s: free %ld, min %ld low %ld high %ld promo %ld\n",
			       nid, z[i].name, z[i].free, z[i].min, z[i].low,
			       z[i].high, z[i].promo);
		ksft_print_msg("node %d %s: boost %ld, protection %ld\n",
			       nid, z[i].name, z[i].boost, z[i].protection);
	}
}

enum x_stat {
	X_PGDEMOTE_KSWAPD,
	X_PGDEMOTE_DIRECT,
	X_PGDEMOTE_KHUGEPAGED,
	X_PGMIGRATE_SUCCESS,
	X_PGMIGRATE_FAIL,
	X_COMPACT_ISOLATED,
	X_PGPROMOTE_SUCCESS,
	X_THP_SPLIT_PAGE,
	NR_X_STATS
};

static const char * const x_stat_names[NR_X_STATS] = {
	"pgdemote_kswapd",
	"pgdemote_direct",
	"pgdemote_khugepaged",
	"pgmigrate_success",
	"pgmigrate_fail",
	"compact_isolated",
	"pgpromote_success",
	"thp_split_page",
};

struct x_stats {
	unsigned long long v[NR_X_STATS];
};

/* Snapshot the other /proc/vmstat lines above; a missing one reads 0. */
static void x_stats_read(struct x_stats *x)
{
	char line[128], name[64];
	unsigned long long v;
	FILE *f;
	int i;

	memset(x, 0, sizeof(*x));
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		for (i = 0; i < NR_X_STATS; i++)
			if (!strcmp(name, x_stat_names[i]))
				x->v[i] = v;
	}
	fclose(f);
}

static inline unsigned long long XD(const struct x_stats *a,
				    const struct x_stats *b, enum x_stat s)
{
	return b->v[s] - a->v[s];
}

/* ---- smaps -------------------------------------------------------------- */

/* AnonHugePages (kB) of the VMA that starts at @addr, or -1. */
static long anon_huge_kb(void *addr)
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

static bool thp_usable(char *why, size_t len)
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

/* ---- fixture ------------------------------------------------------------ */

FIXTURE(promote) {
	struct kmm_knob_state saved;
	long numa_balancing;
	bool nb_saved;
	pid_t kids[2];		/* killed in teardown if a test bails out */
	char demotion[16];	/* demotion_enabled to restore, "" if untouched */
	long boost_factor;	/* vm.watermark_boost_factor to restore */
	bool boost_saved;
	long min_addr;		/* vm.mmap_min_addr to restore */
	bool min_addr_saved;
};

FIXTURE_SETUP(promote)
{
	char why[160];
	bool kthread;
	int ret;

	page_size = sysconf(_SC_PAGESIZE);
	self->kids[0] = 0;
	self->kids[1] = 0;
	self->saved.valid = false;
	self->nb_saved = false;
	self->demotion[0] = '\0';
	self->boost_saved = false;
	self->min_addr_saved = false;
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

	ret = knobs_save(&self->saved);
	ASSERT_EQ(0, ret) TH_LOG("cannot read knobs: %s", strerror(-ret));
	if (!read_long(NUMA_BALANCING_SYSCTL, &self->numa_balancing)) {
		self->nb_saved = true;
		ASSERT_EQ(0, write_long(NUMA_BALANCING_SYSCTL, 0))
			TH_LOG("cannot turn NUMA balancing off");
	}

	/*
	 * Contract defaults, with a short period so detection is quick, and
	 * tlb_flush=1: without a flush, a hot page whose translation stays
	 * cached in the TLB is not seen young again until the entry is
	 * evicted, which makes detection depend on the TLB (QEMU's software
	 * TLB keeps a PMD-mapped THP cached indefinitely). The tests below
	 * check what kmmscand does with what it detects; hot_and_cold()
	 * checks detection with tlb_flush=0 too.
	 */
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 60000));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, PERIOD_MIN_MS));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, PERIOD_MAX_MS));
	ASSERT_EQ(0, knob_set(KNOB_HOT_HISTORY, 8));
	ASSERT_EQ(0, knob_set(KNOB_HOT_THRESHOLD, 2));
	ASSERT_EQ(0, knob_set(KNOB_HOT_HISTORY, 2));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_SIZE, 65536));
	ASSERT_EQ(0, knob_set(KNOB_PMD_SKIP, 1));
	ASSERT_EQ(0, knob_set(KNOB_TLB_FLUSH, 1));
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, 512));
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 256));
	ASSERT_EQ(0, knob_set(KNOB_TARGET_NODE, -1));
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 1));
}

FIXTURE_TEARDOWN_PARENT(promote)
{
	int i, ret;

	for (i = 0; i < 2; i++) {
		if (self->kids[i] > 0) {
			kill(self->kids[i], SIGKILL);
			waitpid(self->kids[i], NULL, 0);
		}
	}
	if (self->nb_saved)
		write_long(NUMA_BALANCING_SYSCTL, self->numa_balancing);
	if (self->demotion[0] && write_str(DEMOTION_SYSFS, self->demotion))
		TH_LOG("restoring %s failed", DEMOTION_SYSFS);
	if (self->boost_saved)
		write_long(BOOST_SYSCTL, self->boost_factor);
	if (self->min_addr_saved &&
	    write_long(MIN_ADDR_SYSCTL, self->min_addr))
		TH_LOG("restoring %s failed", MIN_ADDR_SYSCTL);
	ret = knobs_restore(&self->saved);
	if (ret)
		TH_LOG("restoring knobs failed: %s", strerror(-ret));
}

/* Counters only go up; say which one did not. */
static void expect_monotonic(struct __test_metadata *_metadata,
			     const struct kmm_stats *a,
			     const struct kmm_stats *b)
{
	int i;

	for (i = 0; i < NR_KMM_STATS; i++) {
		const char *name = kmm_stat_names[i] ?: "?";

		EXPECT_LE(a->v[i], b->v[i])
			TH_LOG("%s went down: %llu -> %llu", name, a->v[i],
			       b->v[i]);
	}
}

static void log_deltas(const struct kmm_stats *a, const struct kmm_stats *b)
{
	int i;

	for (i = 0; i < NR_KMM_STATS; i++)
		if (b->v[i] != a->v[i])
			ksft_print_msg("  %-28s +%llu\n", kmm_stat_names[i],
				       b->v[i] - a->v[i]);
}

static inline unsigned long long D(const struct kmm_stats *a,
				   const struct kmm_stats *b, enum kmm_stat s)
{
	return b->v[s] - a->v[s];
}

/*
 * 64 MB on node 1: 8 MB kept hot by a thread, the rest written once.
 * The hot pages must reach node 0, the cold ones stay, no byte changes,
 * and the counters agree with what moved.
 */
static void hot_and_cold(struct __test_metadata *_metadata, bool tlb_flush)
{
	const unsigned long hot_first = (16 * MB) / page_size;
	const unsigned long hot_n = (8 * MB) / page_size;
	struct node_count hot, cold_lo, cold_hi;
	unsigned long cold_on0, passes, bad;
	struct kmm_stats s0, s1;
	struct x_stats x0, x1;
	struct hot_thread h = {};
	long long t0, t_hot = -1, t;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_TLB_FLUSH, tlb_flush));
	ret = region_on_node1(&r, 64 * MB, false, false, 0x1234);
	ASSERT_EQ(0, ret) TH_LOG("placing 64 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base + hot_first * page_size, hot_n);

	kmm_stats_read(&s0);
	x_stats_read(&x0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	for (;;) {
		t = now_ms();
		ASSERT_EQ(0, where_pages(0, r.base + hot_first * page_size,
					 hot_n, &hot));
		if (t_hot < 0 && pct(hot.n[0], hot_n) >= HOT_PCT) {
			t_hot = t;
			ksft_print_msg("%lu%% of hot pages on node 0 after %lld ms\n",
				       pct(hot.n[0], hot_n), t - t0);
		}
		/* Once hot is done, watch the cold pages for three periods. */
		if (t_hot >= 0 && t - t_hot >= 3 * PERIOD_MAX_MS)
			break;
		if (t - t0 >= DEADLINE_MS)
			break;
		sleep_ms(POLL_MS);
	}
	passes = hot_stop(&h);
	kmm_stats_read(&s1);
	x_stats_read(&x1);
	ASSERT_EQ(0, where_pages(0, r.base + hot_first * page_size, hot_n,
				 &hot));
	ASSERT_EQ(0, where_pages(0, r.base, hot_first, &cold_lo));
	ASSERT_EQ(0, where_pages(0, r.base + (hot_first + hot_n) * page_size,
				 r.npages - hot_first - hot_n, &cold_hi));
	cold_on0 = cold_lo.n[0] + cold_hi.n[0];

	ksft_print_msg("tlb_flush=%d: hot %lu/%lu (%lu%%) on node 0 after %lld ms, %lu passes\n",
		       tlb_flush, hot.n[0], hot_n, pct(hot.n[0], hot_n),
		       now_ms() - t0, passes);
	ksft_print_msg("tlb_flush=%d: cold %lu/%lu (%lu%%) on node 0\n",
		       tlb_flush, cold_on0, r.npages - hot_n,
		       pct(cold_on0, r.npages - hot_n));
	log_deltas(&s0, &s1);

	EXPECT_LE(HOT_PCT, pct(hot.n[0], hot_n))
		TH_LOG("hot pages not promoted within %d ms", DEADLINE_MS);
	EXPECT_GT(COLD_PCT, pct(cold_on0, r.npages - hot_n))
		TH_LOG("cold pages promoted");

	/* Not a byte lost: hot pages were written while being migrated. */
	bad = region_verify(&r, 0, hot_first, 0) +
	      region_verify(&r, hot_first, hot_n, passes) +
	      region_verify(&r, hot_first + hot_n,
			    r.npages - hot_first - hot_n, 0);
	EXPECT_EQ(0UL, bad) TH_LOG("%lu pages changed content", bad);

	expect_monotonic(_metadata, &s0, &s1);
	EXPECT_LT(0ULL, D(&s0, &s1, S_MM_SCAN));
	EXPECT_LT(0ULL, D(&s0, &s1, S_PTE_SCANNED));
	EXPECT_LE(hot_n, D(&s0, &s1, S_YOUNG))
		TH_LOG("fewer young PTEs than hot pages");
	EXPECT_LE(hot.n[0] + cold_on0, D(&s0, &s1, S_CANDIDATE))
		TH_LOG("pages moved that were never candidates");
	EXPECT_LE(hot.n[0] + cold_on0, D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("our pages on node 0 exceed kmmscand_promote_success");
	EXPECT_LT(0ULL, D(&s0, &s1, S_PROMOTE_BATCH));
	/* Existing tools count promotions in pgpromote_success. */
	EXPECT_LE(D(&s0, &s1, S_PROMOTE_SUCCESS),
		  XD(&x0, &x1, X_PGPROMOTE_SUCCESS))
		TH_LOG("pgpromote_success +%llu, kmmscand_promote_success +%llu",
		       XD(&x0, &x1, X_PGPROMOTE_SUCCESS),
		       D(&s0, &s1, S_PROMOTE_SUCCESS));
	region_unmap(&r);
}

TEST_F_TIMEOUT(promote, hot_promoted_cold_stays, 120)
{
	hot_and_cold(_metadata, false);
}

/* The same with one TLB flush per PTE table whose A bits were cleared. */
TEST_F_TIMEOUT(promote, hot_promoted_tlb_flush, 120)
{
	hot_and_cold(_metadata, true);
}

/* A PMD-mapped hot THP is promoted whole, without being split. */
TEST_F_TIMEOUT(promote, thp_promoted_unsplit, 120)
{
	const unsigned long hot_n = (8 * MB) / page_size;
	long huge_before, huge_after;
	struct kmm_stats s0, s1;
	struct hot_thread h = {};
	struct node_count hot, cold;
	unsigned long passes, bad;
	long long t0;
	struct region r;
	char why[128];
	int ret;

	if (!thp_usable(why, sizeof(why)))
		SKIP(return, "%s", why);
	ret = region_on_node1(&r, 16 * MB, true, false, 0x5678);
	ASSERT_EQ(0, ret) TH_LOG("placing 16 MB on node 1: %s", strerror(-ret));
	huge_before = anon_huge_kb(r.base);
	if (huge_before <= 0)
		SKIP(return, "no THP on node 1 after MADV_HUGEPAGE (AnonHugePages %ld kB)",
		     huge_before);
	ksft_print_msg("AnonHugePages %ld kB on node 1\n", huge_before);

	hot_add(&h, r.base, hot_n);
	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, hot_n, &hot));
		if (pct(hot.n[0], hot_n) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	passes = hot_stop(&h);
	kmm_stats_read(&s1);
	huge_after = anon_huge_kb(r.base);
	ASSERT_EQ(0, where_pages(0, r.base, hot_n, &hot));
	ASSERT_EQ(0, where_pages(0, r.base + hot_n * page_size,
				 r.npages - hot_n, &cold));

	ksft_print_msg("hot %lu%% on node 0 after %lld ms, cold %lu%%\n",
		       pct(hot.n[0], hot_n), now_ms() - t0,
		       pct(cold.n[0], r.npages - hot_n));
	ksft_print_msg("AnonHugePages %ld -> %ld kB\n", huge_before, huge_after);
	log_deltas(&s0, &s1);

	EXPECT_LE(HOT_PCT, pct(hot.n[0], hot_n))
		TH_LOG("hot THPs not promoted within %d ms", DEADLINE_MS);
	EXPECT_GT(COLD_PCT, pct(cold.n[0], r.npages - hot_n));
	EXPECT_EQ(huge_before, huge_after) TH_LOG("THPs were split");
	EXPECT_LT(0ULL, D(&s0, &s1, S_THP_YOUNG));
	EXPECT_LE(hot.n[0], D(&s0, &s1, S_PROMOTE_SUCCESS));
	bad = region_verify(&r, 0, hot_n, passes) +
	      region_verify(&r, hot_n, r.npages - hot_n, 0);
	EXPECT_EQ(0UL, bad) TH_LOG("%lu pages changed content", bad);
	region_unmap(&r);
}

/*
 * A hot range that stays MPOL_BIND to node 1 must never move, while an
 * equally hot range without a policy beside it is promoted.
 */
TEST_F_TIMEOUT(promote, mbind_never_promoted, 120)
{
	struct node_count bound, free_;
	struct kmm_stats s0, s1;
	struct region rb, rf;
	struct hot_thread h = {};
	unsigned long passes;
	long long t0;
	int ret;

	ret = region_on_node1(&rb, 8 * MB, false, true, 0x9abc);
	ASSERT_EQ(0, ret) TH_LOG("bound region: %s", strerror(-ret));
	ret = region_on_node1(&rf, 8 * MB, false, false, 0xdef0);
	ASSERT_EQ(0, ret) TH_LOG("free region: %s", strerror(-ret));
	hot_add(&h, rb.base, rb.npages);
	hot_add(&h, rf.base, rf.npages);

	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, rf.base, rf.npages, &free_));
		ASSERT_EQ(0, where_pages(0, rb.base, rb.npages, &bound));
		if (bound.n[0] || pct(free_.n[0], rf.npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	passes = hot_stop(&h);
	kmm_stats_read(&s1);

	ksft_print_msg("after %lld ms: unbound %lu%% on node 0, MPOL_BIND %lu/%lu on node 0\n",
		       now_ms() - t0, pct(free_.n[0], rf.npages), bound.n[0],
		       rb.npages);
	log_deltas(&s0, &s1);
	ASSERT_LE(HOT_PCT, pct(free_.n[0], rf.npages))
		TH_LOG("control range not promoted: nothing to compare with");
	EXPECT_EQ(0UL, bound.n[0]) TH_LOG("pages promoted against MPOL_BIND");
	EXPECT_EQ(0UL, region_verify(&rb, 0, rb.npages, passes));
	EXPECT_EQ(0UL, region_verify(&rf, 0, rf.npages, passes));
	region_unmap(&rb);
	region_unmap(&rf);
}

/*
 * Twin processes with the same hot range: the one that opted out with
 * PR_SET_KMMSCAND keeps its pages on node 1 while the other is promoted.
 */
TEST_F_TIMEOUT(promote, opted_out_not_scanned, 120)
{
	const size_t len = 8 * MB;
	struct node_count in, out;
	struct kmm_stats s0, s1;
	unsigned long npages = len / page_size;
	pid_t twin[2];
	long long t0;
	char *base;
	int i;

	/* Mapped, not touched: each twin faults its own copy in. */
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	ASSERT_EQ(0, madvise(base, len, MADV_NOHUGEPAGE));

	for (i = 0; i < 2; i++) {
		int pfd[2];
		char c = 0;

		ASSERT_EQ(0, pipe(pfd));
		twin[i] = fork();
		ASSERT_LE(0, twin[i]);
		self->kids[i] = twin[i];
		if (!twin[i]) {
			unsigned long j;

			close(pfd[0]);
			if (i == 0 && prctl(PR_SET_KMMSCAND, 0, 0, 0, 0))
				_exit(1);
			if (bind_to_node(base, len, 1))
				_exit(2);
			for (j = 0; j < npages; j++)
				base[j * page_size] = 1;
			if (unbind(base, len))
				_exit(3);
			if (write(pfd[1], "r", 1) != 1)
				_exit(4);
			close(pfd[1]);
			hot_forever(base, npages);
			_exit(0);
		}
		close(pfd[1]);
		ASSERT_EQ(1, read(pfd[0], &c, 1))
			TH_LOG("twin %d did not start", i);
		close(pfd[0]);
	}

	kmm_stats_read(&s0);
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(twin[0], base, npages, &out));
		ASSERT_EQ(0, where_pages(twin[1], base, npages, &in));
		if (out.n[0] || pct(in.n[0], npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	for (i = 0; i < 2; i++) {
		kill(twin[i], SIGKILL);
		waitpid(twin[i], NULL, 0);
		self->kids[i] = 0;
	}
	kmm_stats_read(&s1);
	log_deltas(&s0, &s1);

	ksft_print_msg("after %lld ms: scanned twin %lu%% on node 0\n",
		       now_ms() - t0, pct(in.n[0], npages));
	ksft_print_msg("opted-out twin: %lu/%lu on node 0, %lu on node 1\n",
		       out.n[0], npages, out.n[1]);
	ASSERT_LE(HOT_PCT, pct(in.n[0], npages))
		TH_LOG("scanned twin not promoted: nothing to compare with");
	EXPECT_EQ(0UL, out.n[0]) TH_LOG("opted-out process had pages promoted");
	EXPECT_EQ(npages, out.n[1]);
	munmap(base, len);
}

/*
 * promote_rate_limit_mbps=1 with a 32 MB hot set: once promotion starts,
 * no more than the limit (plus one second of burst and one batch) may be
 * promoted per second, and it must still make progress.
 */
TEST_F_TIMEOUT(promote, rate_limited, 120)
{
	const long long rate = 1, batch = 32, window_ms = 5000;
	unsigned long long promoted, allowed_pages;
	struct kmm_stats s0, s1, s2;
	struct node_count nc0, nc1;
	struct hot_thread h = {};
	long long t0, t1, t2;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, rate));
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, batch));
	ret = region_on_node1(&r, 32 * MB, false, false, 0x1111);
	ASSERT_EQ(0, ret) TH_LOG("placing 32 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, r.npages);

	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		kmm_stats_read(&s1);
		if (D(&s0, &s1, S_PROMOTE_SUCCESS))
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	t1 = now_ms();
	ASSERT_LT(0ULL, D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("nothing promoted within %d ms at %lld MB/s",
		       DEADLINE_MS, rate);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc0));

	/* Measure one window from the first promotion on. */
	do {
		sleep_ms(POLL_MS);
		t2 = now_ms();
	} while (t2 - t1 < window_ms);
	kmm_stats_read(&s2);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc1));
	hot_stop(&h);

	promoted = D(&s1, &s2, S_PROMOTE_SUCCESS);
	allowed_pages = (rate * MB * ((t2 - t1) / 1000 + 2)) / page_size +
			batch;
	ksft_print_msg("%lld MB/s limit: %llu pages (%llu KB/s) in %lld ms, allowed %llu\n",
		       rate, promoted, promoted * page_size / 1024 * 1000 /
		       (t2 - t1), t2 - t1, allowed_pages);
	ksft_print_msg("ours on node 0: %lu -> %lu, defer_ratelimit +%llu\n",
		       nc0.n[0], nc1.n[0], D(&s0, &s2, S_DEFER_RATELIMIT));
	EXPECT_GE(allowed_pages, promoted)
		TH_LOG("rate limit exceeded");
	EXPECT_LE(allowed_pages, (unsigned long long)r.npages)
		TH_LOG("hot set too small to tell a limit from none");
	EXPECT_LT(nc0.n[0], nc1.n[0]) TH_LOG("no progress under the limit");
	EXPECT_LT(0ULL, D(&s0, &s2, S_DEFER_RATELIMIT))
		TH_LOG("kmmscand_defer_ratelimit did not move");
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, h.passes));
	region_unmap(&r);
}

/* promote_rate_limit_mbps=0: pages are found hot but none is moved. */
TEST_F_TIMEOUT(promote, rate_zero_detects_only, 120)
{
	struct kmm_stats s0, s1;
	struct node_count nc;
	struct hot_thread h = {};
	unsigned long passes;
	long long t0;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 0));
	ret = region_on_node1(&r, 8 * MB, false, false, 0x2222);
	ASSERT_EQ(0, ret) TH_LOG("placing 8 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, r.npages);

	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	/* Four young sightings per hot page: twice what "hot" needs. */
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
		if (nc.n[0] || D(&s0, &s1, S_YOUNG) >= 4 * r.npages)
			break;
	} while (now_ms() - t0 < DEADLINE_MS);
	passes = hot_stop(&h);

	ksft_print_msg("after %lld ms: young +%llu, candidate +%llu\n",
		       now_ms() - t0, D(&s0, &s1, S_YOUNG),
		       D(&s0, &s1, S_CANDIDATE));
	ksft_print_msg("promote_success +%llu, ours on node 0: %lu\n",
		       D(&s0, &s1, S_PROMOTE_SUCCESS), nc.n[0]);
	EXPECT_LE(4 * r.npages, D(&s0, &s1, S_YOUNG))
		TH_LOG("the hot pages were not seen young often enough");
	EXPECT_EQ(0UL, nc.n[0]) TH_LOG("pages promoted with the limit at 0");
	EXPECT_EQ(0ULL, D(&s0, &s1, S_PROMOTE_SUCCESS));
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes));
	region_unmap(&r);
}

/*
 * enabled=0 stops scanning and promotion (no counter moves, no page
 * moves over three maximum periods); enabled=1 resumes both.
 */
TEST_F_TIMEOUT(promote, disabled_then_enabled, 120)
{
	struct kmm_stats s0, s1, s2;
	struct node_count nc;
	struct hot_thread h = {};
	unsigned long passes;
	long long t0;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 0));
	ret = region_on_node1(&r, 8 * MB, false, false, 0x3333);
	ASSERT_EQ(0, ret) TH_LOG("placing 8 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, r.npages);
	ASSERT_EQ(0, hot_start(&h));

	/* Let a pass that was running when we wrote 0 finish. */
	sleep_ms(PERIOD_MAX_MS);
	kmm_stats_read(&s0);
	sleep_ms(3 * PERIOD_MAX_MS);
	kmm_stats_read(&s1);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	log_deltas(&s0, &s1);
	EXPECT_EQ(0UL, nc.n[0]) TH_LOG("pages promoted while disabled");
	EXPECT_EQ(0ULL, D(&s0, &s1, S_MM_SCAN)) TH_LOG("scanning while disabled");
	EXPECT_EQ(0ULL, D(&s0, &s1, S_PTE_SCANNED));
	EXPECT_EQ(0ULL, D(&s0, &s1, S_PROMOTE_SUCCESS));

	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 1));
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
		if (pct(nc.n[0], r.npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	passes = hot_stop(&h);
	kmm_stats_read(&s2);
	ksft_print_msg("re-enabled: %lu%% on node 0 after %lld ms\n",
		       pct(nc.n[0], r.npages), now_ms() - t0);
	EXPECT_LE(HOT_PCT, pct(nc.n[0], r.npages))
		TH_LOG("no promotion after enabled=1");
	EXPECT_LT(0ULL, D(&s1, &s2, S_MM_SCAN));
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes));
	region_unmap(&r);
}

/* ---- shared pages ---------------------------------------------------------- */

/*
 * Check pages [first, first + n) of a region that two processes touch:
 * word 0 is the parent's touch counter (@c0), word 1 the child's (@c1),
 * every other word the pattern. Returns the number of bad pages and logs
 * the first one.
 */
static unsigned long region_verify2(const struct region *r, unsigned long first,
				    unsigned long n, uint64_t c0, uint64_t c1)
{
	unsigned long words = page_size / sizeof(uint64_t), i, w, bad = 0;

	for (i = first; i < first + n; i++) {
		const uint64_t *p = (const uint64_t *)(r->base + i * page_size);
		bool ok = p[0] == c0 && p[1] == c1;

		for (w = 2; ok && w < words; w++)
			ok = p[w] == pattern(r, i, w);
		if (!ok && !bad++)
			ksft_print_msg("pid %d: page %lu corrupt: %llu %llu, want %llu %llu\n",
				       getpid(), i, (unsigned long long)p[0],
				       (unsigned long long)p[1],
				       (unsigned long long)c0,
				       (unsigned long long)c1);
	}
	return bad;
}

/* where_pages() for the pages of @r outside [first, first + n). */
static int where_outside(pid_t pid, const struct region *r, unsigned long first,
			 unsigned long n, struct node_count *nc)
{
	struct node_count hi;
	int i, ret;

	ret = where_pages(pid, r->base, first, nc);
	if (!ret)
		ret = where_pages(pid, r->base + (first + n) * page_size,
				  r->npages - first - n, &hi);
	if (ret)
		return ret;
	for (i = 0; i < KMM_MAX_NODES; i++)
		nc->n[i] += hi.n[i];
	nc->absent += hi.absent;
	nc->unmapped += hi.unmapped;
	nc->other += hi.other;
	nc->total += hi.total;
	return 0;
}

/* Shared by the parent and the child of shared_promoted (MAP_SHARED). */
struct shared_ctl {
	int ready;			/* child: mapped and checked every page */
	int stop;			/* parent: stop touching, check, exit */
	unsigned long parent_passes;	/* parent: its counter, before stop */
	unsigned long child_passes;	/* child: its counter */
	unsigned long bad_start;	/* child: bad pages before touching */
	unsigned long bad_end;		/* child: bad pages at the end */
};

/*
 * The child: map every page of @r in its own page tables by reading it,
 * then bump word 1 of every hot page, a full pass every millisecond, until
 * told to stop; then check every page from this side and exit 0 if each
 * holds the two counters and the pattern. The pause leaves CPU time to
 * the scanner, which otherwise shares the two CPUs of the test VM with the
 * parent's thread and this child both spinning.
 */
static void shared_child(const struct region *r, unsigned long hot_first,
			 unsigned long hot_n, struct shared_ctl *ctl)
{
	unsigned long i, passes = 0, bad;
	uint64_t pp;

	bad = region_verify2(r, 0, r->npages, 0, 0);
	__atomic_store_n(&ctl->bad_start, bad, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE)) {
		for (i = hot_first; i < hot_first + hot_n; i++)
			((uint64_t *)(r->base + i * page_size))[1]++;
		asm volatile("" ::: "memory");
		passes++;
		sleep_ms(1);
	}
	pp = __atomic_load_n(&ctl->parent_passes, __ATOMIC_ACQUIRE);
	bad = region_verify2(r, 0, hot_first, 0, 0) +
	      region_verify2(r, hot_first, hot_n, pp, passes) +
	      region_verify2(r, hot_first + hot_n,
			     r->npages - hot_first - hot_n, 0, 0);
	ctl->child_passes = passes;
	__atomic_store_n(&ctl->bad_end, bad, __ATOMIC_RELEASE);
	fflush(stdout);
	_exit(bad ? 1 : 0);
}

/*
 * 32 MB of MAP_SHARED anonymous memory (shmem) on node 1, mapped by this
 * process and a forked child, which both keep the same 8 MB of it hot.
 * kmmscand scans the page tables of each process on its own; whichever
 * finds a page hot first queues it, and the migration moves the shared
 * folio for both. The hot part must reach node 0 as either process sees
 * it, the cold part must stay on node 1, and both processes must read
 * back exactly what the two of them wrote.
 */
TEST_F_TIMEOUT(promote, shared_promoted, 120)
{
	const unsigned long hot_first = (8 * MB) / page_size;
	const unsigned long hot_n = (8 * MB) / page_size;
	struct node_count hot_p, hot_c, cold_p, cold_c;
	unsigned long i, passes, cold_n, bad;
	struct kmm_stats s0, s1;
	struct hot_thread h = {};
	struct shared_ctl *ctl;
	long long t0, t, t_hot = -1;
	int ret, status = 0;
	struct region r;
	pid_t child;

	ret = region_place_node1(&r, 32 * MB, false, false, 0x7777, MAP_SHARED);
	ASSERT_EQ(0, ret) TH_LOG("placing 32 MB of MAP_SHARED memory on node 1: %s",
				 strerror(-ret));
	cold_n = r.npages - hot_n;
	/* Word 1 of every page becomes the child's touch counter. */
	for (i = 0; i < r.npages; i++)
		((uint64_t *)(r.base + i * page_size))[1] = 0;
	ctl = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	memset(ctl, 0, sizeof(*ctl));

	/* Nothing buffered may be printed twice. */
	fflush(stdout);
	fflush(stderr);
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		shared_child(&r, hot_first, hot_n, ctl);
	self->kids[0] = child;
	t0 = now_ms();
	while (!__atomic_load_n(&ctl->ready, __ATOMIC_ACQUIRE) &&
	       now_ms() - t0 < 10000)
		sleep_ms(10);
	ASSERT_EQ(1, ctl->ready) TH_LOG("the child did not start");
	ASSERT_EQ(0UL, ctl->bad_start)
		TH_LOG("the child does not read what the parent wrote");

	hot_add(&h, r.base + hot_first * page_size, hot_n);
	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	for (;;) {
		t = now_ms();
		ASSERT_EQ(0, where_pages(0, r.base + hot_first * page_size,
					 hot_n, &hot_p));
		ASSERT_EQ(0, where_pages(child, r.base + hot_first * page_size,
					 hot_n, &hot_c));
		if (t_hot < 0 && pct(hot_p.n[0], hot_n) >= HOT_PCT &&
		    pct(hot_c.n[0], hot_n) >= HOT_PCT) {
			t_hot = t;
			ksft_print_msg("%lu%% of shared hot pages on node 0 after %lld ms\n",
				       pct(hot_p.n[0], hot_n), t - t0);
		}
		/* Once hot is done, watch the cold pages for three periods. */
		if (t_hot >= 0 && t - t_hot >= 3 * PERIOD_MAX_MS)
			break;
		if (t - t0 >= SHORT_DEADLINE_MS)
			break;
		sleep_ms(POLL_MS);
	}
	/* Both views, while both processes still map every page. */
	ASSERT_EQ(0, where_pages(child, r.base + hot_first * page_size, hot_n,
				 &hot_c));
	ASSERT_EQ(0, where_outside(child, &r, hot_first, hot_n, &cold_c));
	ASSERT_EQ(0, where_pages(0, r.base + hot_first * page_size, hot_n,
				 &hot_p));
	ASSERT_EQ(0, where_outside(0, &r, hot_first, hot_n, &cold_p));

	passes = hot_stop(&h);
	__atomic_store_n(&ctl->parent_passes, passes, __ATOMIC_RELEASE);
	__atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	self->kids[0] = 0;
	kmm_stats_read(&s1);
	bad = region_verify2(&r, 0, hot_first, 0, 0) +
	      region_verify2(&r, hot_first, hot_n, passes, ctl->child_passes) +
	      region_verify2(&r, hot_first + hot_n,
			     r.npages - hot_first - hot_n, 0, 0);

	ksft_print_msg("hot on node 0 after %lld ms: parent sees %lu/%lu, child %lu/%lu\n",
		       now_ms() - t0, hot_p.n[0], hot_n, hot_c.n[0], hot_n);
	ksft_print_msg("cold on node 0: parent sees %lu/%lu, child %lu/%lu (%lu absent)\n",
		       cold_p.n[0], cold_n, cold_c.n[0], cold_n, cold_c.absent);
	ksft_print_msg("touch passes: parent %lu, child %lu; bad pages: parent %lu, child %lu\n",
		       passes, ctl->child_passes, bad, ctl->bad_end);
	log_deltas(&s0, &s1);

	EXPECT_LE(HOT_PCT, pct(hot_p.n[0], hot_n))
		TH_LOG("shared hot pages not promoted within %d ms",
		       SHORT_DEADLINE_MS);
	EXPECT_LE(HOT_PCT, pct(hot_c.n[0], hot_n))
		TH_LOG("the child does not see the promoted pages on node 0");
	EXPECT_GT(COLD_PCT, pct(cold_p.n[0], cold_n))
		TH_LOG("cold shared pages promoted");
	EXPECT_GT(COLD_PCT, pct(cold_c.n[0], cold_n));
	EXPECT_EQ(0UL, cold_c.absent)
		TH_LOG("the child does not map every page: its view proves nothing");
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child read back wrong data (status %#x)", status);
	EXPECT_EQ(0UL, ctl->bad_end);
	EXPECT_EQ(0UL, bad) TH_LOG("the parent read back wrong data");
	expect_monotonic(_metadata, &s0, &s1);
	EXPECT_LE(hot_p.n[0] + cold_p.n[0], D(&s0, &s1, S_CANDIDATE))
		TH_LOG("pages moved that were never candidates");
	EXPECT_LE(hot_p.n[0] + cold_p.n[0], D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("our pages on node 0 exceed kmmscand_promote_success");
	munmap(ctl, page_size);
	region_unmap(&r);
}

/* ---- a full top tier ------------------------------------------------------- */

struct balloon_report {
	unsigned long pages;	/* populated */
	unsigned long on_node0;	/* of those, on node 0 */
	long long ms;		/* time it took */
	int err;		/* errno of the step that failed, or 0 */
};

static inline uint64_t balloon_stamp(unsigned long i)
{
	return 0xba11000000000000ULL ^ (i * 0x9e3779b97f4a7c15ULL);
}

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
static void balloon_child(int rep, int go, size_t len)
{
	const unsigned long chunk = HPAGE / page_size;
	unsigned long npages = len / page_size, i, bad = 0;
	struct balloon_report br = {};
	unsigned long node0 = 1UL;
	long long t0 = now_ms();
	struct node_count nc;
	char c, *p;

	prctl(PR_SET_KMMSCAND, 0, 0, 0, 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		br.err = errno;
		goto report;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	if (sys_mbind(p, len, MPOL_PREFERRED, &node0, sizeof(node0) * 8, 0)) {
		br.err = errno;
		goto report;
	}
	while (br.pages + chunk <= npages) {
		char *c0 = p + br.pages * page_size;

		if (madvise(c0, HPAGE, MADV_POPULATE_WRITE) ||
		    where_pages(0, c0, chunk, &nc)) {
			br.err = errno;
			break;
		}
		br.pages += chunk;
		br.on_node0 += nc.n[0];
		if (nc.n[0] < chunk)
			break;		/* spilled: node 0 is full */
	}
	for (i = 0; i < br.pages; i++)
		*(uint64_t *)(p + i * page_size) = balloon_stamp(i);
	br.ms = now_ms() - t0;
report:
	if (write(rep, &br, sizeof(br)) != sizeof(br) || br.err)
		_exit(2);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	for (i = 0; i < br.pages; i++)
		bad += *(uint64_t *)(p + i * page_size) != balloon_stamp(i);
	_exit(bad ? 1 : 0);
}

/*
 * Node 0 filled to its low watermark by a balloon process, demotion off
 * so that kswapd cannot make room, 16 MB on node 1 kept hot. The
 * migrator must defer for the watermark (kmmscand_defer_watermark), move
 * no more than fits above the high watermark plus a batch, and nothing
 * may be demoted or migrated back and forth. Once the balloon is freed
 * the hot set must be promoted. Data must stay intact throughout.
 */
TEST_F_TIMEOUT(promote, top_tier_full_defers, 150)
{
	const unsigned long hot_n = (16 * MB) / page_size;
	unsigned long long bound, slack = MB / page_size;
	struct zone_info z[MAX_ZONES];
	struct x_stats x0, x1, x2;
	struct kmm_stats s0, s1, s2;
	struct balloon_report br;
	struct node_count nc1, nc2;
	struct hot_thread h = {};
	int rep[2], go[2], nz, ret, status = 0;
	long free_kb, total_kb, room, zfree = 0, zpromo = 0;
	long long batch = 0, t0, t1, t2;
	struct pollfd pfd;
	unsigned long passes;
	struct region r;
	pid_t pid;

	if (access(DEMOTION_SYSFS, W_OK))
		SKIP(return, "%s: %s", DEMOTION_SYSFS, strerror(errno));
	free_kb = node_meminfo_kb(0, "MemFree:");
	total_kb = node_meminfo_kb(0, "MemTotal:");
	ASSERT_LT(0, free_kb) TH_LOG("no MemFree in node 0's meminfo");
	ASSERT_LE(free_kb, total_kb);
	if (free_kb > 4L * 1024 * 1024)
		SKIP(return, "node 0 has %ld MB free: too much to fill in time",
		     free_kb / 1024);
	ASSERT_EQ(0, knob_get(KNOB_MIGRATE_BATCH, &batch));

	/* No demotion: node 0 stays full. No boost: fixed watermarks. */
	ASSERT_LT(0, read_file(DEMOTION_SYSFS, self->demotion,
			       sizeof(self->demotion)));
	ASSERT_EQ(0, write_str(DEMOTION_SYSFS, "0"));
	if (!read_long(BOOST_SYSCTL, &self->boost_factor)) {
		self->boost_saved = true;
		ASSERT_EQ(0, write_long(BOOST_SYSCTL, 0));
	}

	ret = region_on_node1(&r, 16 * MB, false, false, 0x8888);
	ASSERT_EQ(0, ret) TH_LOG("placing 16 MB on node 1: %s", strerror(-ret));
	/*
	 * The balloon child must not share the region copy-on-write: the
	 * hot thread's first writes would then copy every page, onto node 0
	 * while it still has a little room, and that is not promotion.
	 */
	ASSERT_EQ(0, madvise(r.map, r.map_len, MADV_DONTFORK));
	hot_add(&h, r.base, hot_n);

	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(go));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(rep[0]);
		close(go[1]);
		balloon_child(rep[1], go[0], (size_t)total_kb * 1024);
	}
	self->kids[0] = pid;
	close(rep[1]);
	close(go[0]);
	pfd.fd = rep[0];
	pfd.events = POLLIN;
	/* About 10 s for 1 GB in the test VM; more when the host is busy. */
	ASSERT_EQ(1, poll(&pfd, 1, DEADLINE_MS))
		TH_LOG("the balloon did not fill node 0 within %d ms",
		       DEADLINE_MS);
	ASSERT_EQ((ssize_t)sizeof(br), read(rep[0], &br, sizeof(br)));
	close(rep[0]);
	ASSERT_EQ(0, br.err) TH_LOG("balloon: %s", strerror(br.err));
	nz = node_zones(0, z, MAX_ZONES);
	ASSERT_LT(0, nz) TH_LOG("no zone of node 0 in /proc/zoneinfo");
	for (ret = 0; ret < nz; ret++) {
		zfree += z[ret].free;
		zpromo += z[ret].promo;
	}
	room = node_room_above_high(z, nz);
	/*
	 * A batch only runs while a zone stays above WMARK_HIGH after it, so
	 * at most the room is promoted; one batch more for good measure, and
	 * 1 MB for what the kernel may give back meanwhile (per-cpu lists).
	 */
	bound = room + batch + slack;
	ksft_print_msg("balloon: %lu MB in %lld ms, %lu pages of it on node 1\n",
		       br.pages * page_size / MB, br.ms, br.pages - br.on_node0);
	log_zones(0, z, nz);
	ksft_print_msg("node 0 MemFree %ld kB; room above WMARK_HIGH %ld pages; bound %llu pages\n",
		       node_meminfo_kb(0, "MemFree:"), room, bound);
	ASSERT_LT(br.on_node0, br.pages)
		TH_LOG("node 0 took %lu MB without filling up", br.pages * page_size / MB);
	EXPECT_LT(zfree, zpromo) TH_LOG("node 0 not below its promotion watermark");
	EXPECT_GT(hot_n, bound)
		TH_LOG("room above the watermark too large to tell deferral from promotion");

	/* Full: batches must be deferred, and only the room may be used. */
	kmm_stats_read(&s0);
	x_stats_read(&x0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		/* Two seconds of deferral: a batch is retried every 100 ms. */
		if (D(&s0, &s1, S_DEFER_WATERMARK) >= 20)
			break;
	} while (now_ms() - t0 < SHORT_DEADLINE_MS);
	t1 = now_ms();
	x_stats_read(&x1);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc1));
	nz = node_zones(0, z, MAX_ZONES);
	ksft_print_msg("full for %lld ms: defer_watermark +%llu, hot on node 0 %lu/%lu\n",
		       t1 - t0, D(&s0, &s1, S_DEFER_WATERMARK), nc1.n[0], hot_n);
	ksft_print_msg("full: promote_success +%llu, bound %llu\n",
		       D(&s0, &s1, S_PROMOTE_SUCCESS), bound);
	log_zones(0, z, nz);
	log_deltas(&s0, &s1);
	EXPECT_LT(0ULL, D(&s0, &s1, S_DEFER_WATERMARK))
		TH_LOG("no batch deferred for the watermark in %d ms",
		       SHORT_DEADLINE_MS);
	EXPECT_GE(bound, D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("promoted more than fits above the watermark");
	EXPECT_GE(bound, nc1.n[0]);
	EXPECT_EQ(0ULL, D(&s0, &s1, S_DEFER_DEMOTION))
		TH_LOG("deferred for demotion with demotion off");

	/* Free the balloon: promotion must resume. */
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->kids[0] = 0;
	t2 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc2));
		if (pct(nc2.n[0], r.npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t2 < SHORT_DEADLINE_MS);
	passes = hot_stop(&h);
	kmm_stats_read(&s2);
	x_stats_read(&x2);

	ksft_print_msg("balloon freed: hot on node 0 %lu/%lu after %lld ms, promoted +%llu\n",
		       nc2.n[0], hot_n, now_ms() - t2,
		       D(&s1, &s2, S_PROMOTE_SUCCESS));
	ksft_print_msg("whole test: pgdemote kswapd +%llu direct +%llu khugepaged +%llu\n",
		       XD(&x0, &x2, X_PGDEMOTE_KSWAPD),
		       XD(&x0, &x2, X_PGDEMOTE_DIRECT),
		       XD(&x0, &x2, X_PGDEMOTE_KHUGEPAGED));
	ksft_print_msg("whole test: pgmigrate_success +%llu (while full +%llu), fail +%llu\n",
		       XD(&x0, &x2, X_PGMIGRATE_SUCCESS),
		       XD(&x0, &x1, X_PGMIGRATE_SUCCESS),
		       XD(&x0, &x2, X_PGMIGRATE_FAIL));
	ksft_print_msg("whole test: compact_isolated +%llu\n",
		       XD(&x0, &x2, X_COMPACT_ISOLATED));
	log_deltas(&s1, &s2);

	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("balloon pages changed content (status %#x)", status);
	EXPECT_LE(HOT_PCT, pct(nc2.n[0], r.npages))
		TH_LOG("promotion did not resume within %d ms after the balloon left",
		       SHORT_DEADLINE_MS);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes));
	/* No thrash: nothing demoted, nothing migrated but promotions. */
	EXPECT_EQ(0ULL, XD(&x0, &x2, X_PGDEMOTE_KSWAPD) +
		  XD(&x0, &x2, X_PGDEMOTE_DIRECT) +
		  XD(&x0, &x2, X_PGDEMOTE_KHUGEPAGED))
		TH_LOG("pages demoted with demotion_enabled=0");
	EXPECT_GE(D(&s0, &s2, S_PROMOTE_SUCCESS) +
		  XD(&x0, &x2, X_COMPACT_ISOLATED),
		  XD(&x0, &x2, X_PGMIGRATE_SUCCESS))
		TH_LOG("migrations besides promotion and compaction");
	EXPECT_EQ(0ULL, D(&s0, &s2, S_DEFER_DEMOTION));
	expect_monotonic(_metadata, &s0, &s2);
	EXPECT_LE(nc2.n[0], D(&s0, &s2, S_PROMOTE_SUCCESS));
	region_unmap(&r);
}

/* ---- tracepoints ---------------------------------------------------------- */

/* Value of " key=" in @line as a number; false if absent or not a number. */
static bool trace_field(const char *line, const char *key,
			unsigned long long *val)
{
	char pat[64], *end;
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	errno = 0;
	*val = strtoull(p, &end, 0);
	if (end == p || errno)
		return false;
	return *end == ' ' || *end == '\n' || *end == '\0' || *end == ',';
}

static bool trace_has_key(const char *line, const char *key)
{
	char pat[64];

	snprintf(pat, sizeof(pat), " %s=", key);
	return strstr(line, pat);
}

static int tracefs_write(const char *rel, const char *val)
{
	return write_str_at(TRACE_INSTANCE, rel, val);
}

/*
 * With all kmmscand events on in a private trace instance, a hot workload
 * and a few short-lived children must produce every common event with
 * fields that parse and agree with each other and with the knobs.
 */
TEST_F_TIMEOUT(promote, tracepoints_fire, 120)
{
	unsigned long long v, scanned, young, budget, period, nr, ok, fail;
	unsigned long n_enter = 0, n_exit = 0, n_start = 0, n_end = 0;
	unsigned long n_batch = 0, bad = 0, promoted = 0;
	static char line[1024];
	struct node_count nc;
	struct hot_thread h = {};
	long long t0;
	struct region r;
	FILE *f;
	int i, ret;

	if (access("/sys/kernel/tracing/instances", F_OK))
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	if (access("/sys/kernel/tracing/events/kmmscand", F_OK))
		SKIP(return, "no kmmscand trace events (CONFIG_EVENT_TRACING?)");
	if (mkdir(TRACE_INSTANCE, 0700) && errno != EEXIST)
		SKIP(return, "cannot create trace instance: %s", strerror(errno));
	ASSERT_EQ(0, tracefs_write("buffer_size_kb", "4096"));
	ASSERT_EQ(0, tracefs_write("trace", ""));
	ASSERT_EQ(0, tracefs_write("events/kmmscand/enable", "1"));

	for (i = 0; i < 3; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	ret = region_on_node1(&r, 8 * MB, false, false, 0x4444);
	ASSERT_EQ(0, ret) TH_LOG("placing 8 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, r.npages);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
		if (pct(nc.n[0], r.npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	hot_stop(&h);
	tracefs_write("events/kmmscand/enable", "0");

	f = fopen(TRACE_INSTANCE "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strstr(line, " kmmscand_mm_enter: ")) {
			n_enter++;
			bad += !trace_has_key(line, "mm");
		} else if (strstr(line, " kmmscand_mm_exit: ")) {
			n_exit++;
			bad += !trace_has_key(line, "mm");
		} else if (strstr(line, " kmmscand_scan_start: ")) {
			n_start++;
			if (!trace_field(line, "period_ms", &period) ||
			    !trace_field(line, "budget", &budget) ||
			    !trace_has_key(line, "mm")) {
				if (!bad++)
					ksft_print_msg("unparsed: %s", line);
			}
		} else if (strstr(line, " kmmscand_scan_end: ")) {
			n_end++;
			if (!trace_field(line, "scanned", &scanned) ||
			    !trace_field(line, "pmd_skipped", &v) ||
			    !trace_field(line, "young", &young) ||
			    !trace_field(line, "candidates", &v) ||
			    !trace_field(line, "period_ms", &period) ||
			    !trace_field(line, "budget", &budget) ||
			    young > scanned || period < 100 ||
			    period > 60000 || !budget || budget > 4194304) {
				if (!bad++)
					ksft_print_msg("bad kmmscand_scan_end: %s", line);
			}
		} else if (strstr(line, " kmmscand_migrate_batch: ")) {
			n_batch++;
			if (!trace_field(line, "nr", &nr) ||
			    !trace_field(line, "succeeded", &ok) ||
			    !trace_field(line, "failed", &fail) ||
			    !trace_field(line, "target_nid", &v) ||
			    !strstr(line, " reason=kmmscand") ||
			    ok + fail != nr || v != 0) {
				/* all three counts are in base pages */
				if (!bad++)
					ksft_print_msg("bad kmmscand_migrate_batch: %s",
						       line);
			} else {
				promoted += ok;
			}
		}
	}
	fclose(f);
	rmdir(TRACE_INSTANCE);

	ksft_print_msg("events: kmmscand_mm_enter %lu kmmscand_mm_exit %lu\n",
		       n_enter, n_exit);
	ksft_print_msg("events: kmmscand_scan_start %lu kmmscand_scan_end %lu\n",
		       n_start, n_end);
	ksft_print_msg("kmmscand_migrate_batch %lu (promoted %lu), bad %lu; ours on node 0: %lu\n",
		       n_batch, promoted, bad, nc.n[0]);
	EXPECT_LT(0UL, n_enter) TH_LOG("forks did not trace kmmscand_mm_enter");
	EXPECT_LT(0UL, n_exit) TH_LOG("exits did not trace kmmscand_mm_exit");
	EXPECT_LT(0UL, n_start);
	EXPECT_LT(0UL, n_end);
	EXPECT_LT(0UL, n_batch);
	EXPECT_EQ(0UL, bad) TH_LOG("events with missing or inconsistent fields");
	EXPECT_LE(nc.n[0], promoted)
		TH_LOG("pages moved that no kmmscand_migrate_batch event reported");
	region_unmap(&r);
}

/* ---- churn ---------------------------------------------------------------- */

/* A short-lived process: 1 MB on node 1, touched a few times, then exit. */
static void short_lived(unsigned int seed)
{
	const size_t len = MB;
	unsigned long i;
	int round;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	if (seed & 1)
		prctl(PR_SET_KMMSCAND, 0, 0, 0, 0);
	bind_to_node(p, len, 1);
	for (round = 0; round < 20; round++) {
		for (i = 0; i < len; i += page_size)
			p[i]++;
		sleep_ms(5 + seed % 20);
	}
	_exit(0);
}

/*
 * While the scanner is busy with a hot range, 100 processes come and go,
 * and part of a second hot range becomes PROT_NONE and part is unmapped.
 * The kernel must stay sane (the host fails the run on any WARN, BUG or
 * Oops), counters must stay consistent, surviving data intact, and the
 * scanner must still promote afterwards.
 */
TEST_F_TIMEOUT(promote, churn_and_unmap, 150)
{
	const unsigned long q = (8 * MB) / page_size / 4;
	struct node_count nc, moved;
	struct kmm_stats s0, s1;
	struct hot_thread h = {}, h2 = {};
	unsigned long passes, passes2 = 0, bad;
	int i, status, failed = 0;
	struct region r, r2;
	bool kthread;
	long long t0;
	pid_t pid;

	ASSERT_EQ(0, region_on_node1(&r, 8 * MB, false, false, 0x5555));
	ASSERT_EQ(0, region_on_node1(&r2, 8 * MB, false, false, 0x6666));
	hot_add(&h2, r2.base, r2.npages);
	ASSERT_EQ(0, hot_start(&h2));

	kmm_stats_read(&s0);
	t0 = now_ms();
	for (i = 0; i < 100; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			short_lived(i);
			_exit(0);
		}
		/* Ten alive at a time. */
		if (i >= 9 && waitpid(-1, &status, 0) > 0 &&
		    (!WIFEXITED(status) || WEXITSTATUS(status)))
			failed++;
		/* Halfway through, pull r2 out from under the scanner. */
		if (i == 50) {
			passes2 = hot_stop(&h2);
			ASSERT_EQ(0, mprotect(r2.base + q * page_size,
					      q * page_size, PROT_NONE));
			ASSERT_EQ(0, munmap(r2.base + 2 * q * page_size,
					    q * page_size));
		}
	}
	while ((pid = waitpid(-1, &status, 0)) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	ksft_print_msg("100 processes done in %lld ms, %d failed\n",
		       now_ms() - t0, failed);
	EXPECT_EQ(0, failed);

	/* The scanner still works: r becomes hot now and is promoted. */
	hot_add(&h, r.base, r.npages);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
		if (pct(nc.n[0], r.npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	passes = hot_stop(&h);
	kmm_stats_read(&s1);
	log_deltas(&s0, &s1);

	ksft_print_msg("after churn: %lu%% on node 0 in %lld ms\n",
		       pct(nc.n[0], r.npages), now_ms() - t0);
	EXPECT_NE(0, find_task("kmmscand", &kthread)) TH_LOG("kthread gone");
	EXPECT_LE(HOT_PCT, pct(nc.n[0], r.npages));
	expect_monotonic(_metadata, &s0, &s1);
	EXPECT_LE(nc.n[0], D(&s0, &s1, S_PROMOTE_SUCCESS));

	/* What is left of r2: unmapped quarter gone, the rest intact. */
	ASSERT_EQ(0, where_pages(0, r2.base + 2 * q * page_size, q, &moved));
	EXPECT_EQ(q, moved.unmapped)
		TH_LOG("unmapped range: %lu unmapped, %lu absent, %lu on node 0, %lu on node 1",
		       moved.unmapped, moved.absent, moved.n[0], moved.n[1]);
	ASSERT_EQ(0, mprotect(r2.base + q * page_size, q * page_size,
			      PROT_READ | PROT_WRITE));
	bad = region_verify(&r, 0, r.npages, passes) +
	      region_verify(&r2, 0, q, passes2) +
	      region_verify(&r2, q, q, passes2) +
	      region_verify(&r2, 3 * q, q, passes2);
	EXPECT_EQ(0UL, bad) TH_LOG("%lu pages changed content", bad);
	region_unmap(&r);
	region_unmap(&r2);
}

/*
 * Wait until the hot pages [first, first + n) of @r reach @want percent on
 * node 0, polling every POLL_MS up to @deadline_ms.  Returns the time it
 * took in ms, or -1; *@got is the last share observed.
 */
static long long wait_promoted(const struct region *r, unsigned long first,
			       unsigned long n, unsigned long want,
			       long long deadline_ms, unsigned long *got)
{
	long long t0 = now_ms();
	struct node_count nc;

	for (;;) {
		if (where_pages(0, r->base + first * page_size, n, &nc))
			return -1;
		*got = pct(nc.n[0], n);
		if (*got >= want)
			return now_ms() - t0;
		if (now_ms() - t0 >= deadline_ms)
			return -1;
		sleep_ms(POLL_MS);
	}
}

/*
 * The hot set moves after a long idle period, at the default periods:
 * every page of the new hot set reaches node 0, and no migration fails
 * while the top tier has room (a reference left behind by the scanner,
 * in an LRU batch of its CPU or in the queue, would fail it).
 */
TEST_F_TIMEOUT(promote, phase_change_after_idle, 180)
{
	const unsigned long n = (8 * MB) / page_size;
	const unsigned long a_first = (8 * MB) / page_size;
	const unsigned long b_first = (40 * MB) / page_size;
	long long t_a, t_b90, t_b;
	unsigned long got, passes, bad;
	struct kmm_stats s0, s1, s2;
	struct hot_thread h = {};
	struct node_count nc;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, 500));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 5000));
	ret = region_on_node1(&r, 64 * MB, false, false, 0x5eed);
	ASSERT_EQ(0, ret) TH_LOG("placing 64 MB on node 1: %s", strerror(-ret));

	kmm_stats_read(&s0);
	hot_add(&h, r.base + a_first * page_size, n);
	ASSERT_EQ(0, hot_start(&h));
	t_a = wait_promoted(&r, a_first, n, 100, DEADLINE_MS, &got);
	passes = hot_stop(&h);
	ksft_print_msg("phase A: %lu%% on node 0 after %lld ms\n", got, t_a);
	ASSERT_LE(0, t_a) TH_LOG("phase A never reached 100%% (%lu%%)", got);

	/* Idle for 30 s: the period backs off to scan_period_max_ms. */
	sleep_ms(30000);
	kmm_stats_read(&s1);
	ASSERT_EQ(0, where_pages(0, r.base + a_first * page_size, n, &nc));
	EXPECT_EQ(n, nc.n[0]) TH_LOG("phase A pages left node 0 while idle");

	h.nr = 0;
	hot_add(&h, r.base + b_first * page_size, n);
	ASSERT_EQ(0, hot_start(&h));
	t_b90 = wait_promoted(&r, b_first, n, HOT_PCT, DEADLINE_MS, &got);
	t_b = wait_promoted(&r, b_first, n, 100, DEADLINE_MS, &got);
	passes += hot_stop(&h);
	kmm_stats_read(&s2);
	ksft_print_msg("phase B after 30 s idle: 90%% after %lld ms, %lu%% after %lld ms more\n",
		       t_b90, got, t_b);
	log_deltas(&s1, &s2);
	EXPECT_LE(0, t_b90) TH_LOG("new hot set never reached %lu%%", HOT_PCT);
	EXPECT_LE(0, t_b) TH_LOG("new hot set stalled at %lu%% on node 0", got);
	EXPECT_EQ(0ULL, D(&s0, &s2, S_FAIL_MIGRATE))
		TH_LOG("%llu failed migrations on an idle top tier",
		       D(&s0, &s2, S_FAIL_MIGRATE));

	bad = region_verify(&r, 0, a_first, 0) +
	      region_verify(&r, a_first + n, b_first - a_first - n, 0) +
	      region_verify(&r, b_first + n, r.npages - b_first - n, 0);
	EXPECT_EQ(0UL, bad) TH_LOG("%lu cold pages changed content", bad);
	(void)passes;
	region_unmap(&r);
}

/*
 * A queued candidate holds no reference on its folio: while the rate
 * limit keeps thousands of hot pages waiting in the queue, the owner can
 * still migrate them itself.  An extra reference makes migrate_pages()
 * refuse a page, and the same reference breaks KSM, THP collapse and
 * split, UFFDIO_MOVE and COW reuse.
 */
TEST_F_TIMEOUT(promote, queued_pages_stay_movable, 120)
{
	const unsigned long n = (32 * MB) / page_size;
	unsigned long i, left, queued;
	struct kmm_stats s0, s1;
	struct hot_thread h = {};
	struct node_count nc;
	long long t0;
	struct region r;
	void **addrs;
	int *nodes, *status;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1));
	ret = region_on_node1(&r, n * page_size, false, false, 0xbeef);
	ASSERT_EQ(0, ret) TH_LOG("placing 32 MB on node 1: %s", strerror(-ret));
	kmm_stats_read(&s0);
	hot_add(&h, r.base, n);
	ASSERT_EQ(0, hot_start(&h));
	/* Wait until a few thousand candidates were queued. */
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		queued = D(&s0, &s1, S_CANDIDATE);
	} while (queued < 4096 && now_ms() - t0 < DEADLINE_MS);
	ASSERT_LE(4096UL, queued) TH_LOG("only %lu candidates", queued);

	addrs = calloc(n, sizeof(*addrs));
	nodes = calloc(n, sizeof(*nodes));
	status = calloc(n, sizeof(*status));
	ASSERT_TRUE(addrs && nodes && status);
	for (i = 0; i < n; i++) {
		addrs[i] = r.base + i * page_size;
		nodes[i] = 0;
	}
	ret = sys_move_pages(0, n, addrs, nodes, status, MPOL_MF_MOVE);
	ASSERT_LE(0, ret) TH_LOG("move_pages: %s", strerror(errno));
	hot_stop(&h);
	ASSERT_EQ(0, where_pages(0, r.base, n, &nc));
	left = nc.n[1];
	kmm_stats_read(&s1);
	ksft_print_msg("%lu candidates; move_pages (returned %d) left %lu/%lu on node 1\n",
		       queued, ret, left, n);
	log_deltas(&s0, &s1);
	/* At most the batch the migrator has isolated right now. */
	EXPECT_GE(512UL, left)
		TH_LOG("%lu pages could not be moved while queued", left);
	EXPECT_EQ(0UL, region_verify(&r, 0, n, h.passes));
	free(addrs);
	free(nodes);
	free(status);
	region_unmap(&r);
}

/*
 * A THP that lost all but a few of its pages to munmap() waits for its
 * deferred split; promoting it would make migrate_pages() split it, so
 * kmmscand leaves it alone.  It must not even queue it: the migrator's
 * lookup of every candidate takes a folio reference, and a reference at
 * the wrong moment makes MADV_COLLAPSE of a PTE table built from such
 * pages (khugepaged's collapse_compound_extreme) fail with EAGAIN.
 * Four THPs on node 1 keep 4 pages each, kept hot until the scanner has
 * found them young a few times over: no candidate, no page moved.
 */
TEST_F_TIMEOUT(promote, partial_thp_not_queued, 120)
{
	const unsigned long nthp = 4, keep = 4;
	unsigned long k, bad = 0, young, passes;
	struct kmm_stats s0, s1;
	struct x_stats x0, x1;
	struct hot_thread h = {};
	struct node_count nc;
	long long t0;
	struct region r;
	char why[128];
	int ret;

	if (!thp_usable(why, sizeof(why)))
		SKIP(return, "%s", why);
	ret = region_on_node1(&r, nthp * HPAGE, true, false, 0x7777);
	ASSERT_EQ(0, ret) TH_LOG("placing 8 MB on node 1: %s", strerror(-ret));
	if (anon_huge_kb(r.base) < (long)(nthp * HPAGE / 1024))
		SKIP(return, "not all of the region is THP on node 1 (AnonHugePages %ld kB)",
		     anon_huge_kb(r.base));
	/* Hot first: the scanner has the pages' history when they turn partial. */
	x_stats_read(&x0);
	for (k = 0; k < nthp; k++) {
		char *thp = r.base + k * HPAGE;

		ASSERT_EQ(0, munmap(thp + keep * page_size,
				    HPAGE - keep * page_size))
			TH_LOG("munmap: %s", strerror(errno));
		hot_add(&h, thp, keep);
	}
	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		young = D(&s0, &s1, S_YOUNG);
	} while (young < 8 * nthp * keep && now_ms() - t0 < DEADLINE_MS);
	passes = hot_stop(&h);
	/* What was queued last is looked up within a batch's time. */
	sleep_ms(2 * POLL_MS);
	kmm_stats_read(&s1);
	x_stats_read(&x1);
	ksft_print_msg("young +%lu after %lld ms, %lu passes, thp_split_page +%llu\n",
		       young, now_ms() - t0, passes,
		       XD(&x0, &x1, X_THP_SPLIT_PAGE));
	log_deltas(&s0, &s1);
	ASSERT_LE(8 * nthp * keep, young)
		TH_LOG("the scanner did not find the pages young within %d ms",
		       DEADLINE_MS);
	if (XD(&x0, &x1, X_THP_SPLIT_PAGE))
		SKIP(goto out, "%s",
		     "THPs were split meanwhile: their pages may be queued");
	EXPECT_EQ(0ULL, D(&s0, &s1, S_CANDIDATE))
		TH_LOG("pages of partially mapped THPs were queued");
	EXPECT_EQ(0ULL, D(&s0, &s1, S_FAIL_STALE));
	for (k = 0; k < nthp; k++) {
		ASSERT_EQ(0, where_pages(0, r.base + k * HPAGE, keep, &nc));
		EXPECT_EQ(keep, nc.n[1])
			TH_LOG("THP %lu: %lu of %lu pages left node 1", k,
			       keep - nc.n[1], keep);
		bad += region_verify(&r, k * HPAGE / page_size, keep, passes);
	}
	EXPECT_EQ(0UL, bad) TH_LOG("%lu pages changed content", bad);
out:
	region_unmap(&r);
}

#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE	6
#endif
#ifndef MPOL_F_NUMA_BALANCING
#define MPOL_F_NUMA_BALANCING		0x2000	/* uapi: 1 << 13 */
#endif
#define WI_SYSFS	"/sys/kernel/mm/mempolicy/weighted_interleave/"

/*
 * Memory policies, NUMA balancing's rule: pages under an explicit policy
 * stay where it put them, unless the policy asks to be optimised
 * (MPOL_F_NUMA_BALANCING), and then only within its nodes.
 *  - MPOL_PREFERRED for node 1: stays on node 1;
 *  - weighted interleave 3:1 over nodes 0 and 1: keeps its node-1 pages;
 *  - MPOL_BIND {0, 1} | MPOL_F_NUMA_BALANCING: promoted;
 *  - the default policy: promoted.
 */
TEST_F_TIMEOUT(promote, mempolicy_rules, 150)
{
	const unsigned long n = (4 * MB) / page_size;
	unsigned long both = 3UL, one = 2UL, got, passes;
	struct region pref, wi, mof, def;
	struct node_count nc_pref, nc_wi0, nc_wi, nc_mof;
	char w0[16] = "", w1[16] = "";
	bool have_wi = true;
	struct hot_thread h = {};
	long long t;
	int ret;

	/* MPOL_PREFERRED node 1, kept. */
	ret = region_on_node1(&pref, n * page_size, false, true, 0x1);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, sys_mbind(pref.base, pref.len, MPOL_PREFERRED, &one,
			       sizeof(one) * 8, 0));

	/* Weighted interleave, node 0 weight 3, node 1 weight 1. */
	memset(&wi, 0, sizeof(wi));
	wi.len = n * page_size;
	wi.npages = n;
	wi.map_len = wi.len;
	wi.map = mmap(NULL, wi.len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, wi.map);
	wi.base = wi.map;
	madvise(wi.base, wi.len, MADV_NOHUGEPAGE);
	if (read_file(WI_SYSFS "node0", w0, sizeof(w0)) <= 0 ||
	    read_file(WI_SYSFS "node1", w1, sizeof(w1)) <= 0 ||
	    write_str(WI_SYSFS "node0", "3") || write_str(WI_SYSFS "node1", "1") ||
	    sys_mbind(wi.base, wi.len, MPOL_WEIGHTED_INTERLEAVE, &both,
		      sizeof(both) * 8, 0))
		have_wi = false;
	memset(wi.base, 1, wi.len);
	ASSERT_EQ(0, where_pages(0, wi.base, n, &nc_wi0));
	if (have_wi && !nc_wi0.n[1])
		have_wi = false;

	/* MPOL_BIND {0, 1} with MPOL_F_NUMA_BALANCING, pages on node 1. */
	ret = region_on_node1(&mof, n * page_size, false, false, 0x3);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, sys_mbind(mof.base, mof.len,
			       MPOL_BIND | MPOL_F_NUMA_BALANCING, &both,
			       sizeof(both) * 8, 0))
		TH_LOG("mbind MPOL_F_NUMA_BALANCING: %s", strerror(errno));

	/* The default policy: the control. */
	ret = region_on_node1(&def, n * page_size, false, false, 0x4);
	ASSERT_EQ(0, ret);

	hot_add(&h, pref.base, n);
	hot_add(&h, wi.base, n);
	hot_add(&h, mof.base, n);
	hot_add(&h, def.base, n);
	ASSERT_EQ(0, hot_start(&h));
	t = wait_promoted(&def, 0, n, HOT_PCT, DEADLINE_MS, &got);
	ksft_print_msg("default policy: %lu%% on node 0 after %lld ms\n", got, t);
	t = wait_promoted(&mof, 0, n, HOT_PCT, SHORT_DEADLINE_MS, &got);
	ksft_print_msg("MPOL_BIND|MPOL_F_NUMA_BALANCING: %lu%% on node 0 after %lld ms\n",
		       got, t);
	/* Three more periods for the others to (wrongly) move. */
	sleep_ms(3 * PERIOD_MAX_MS);
	passes = hot_stop(&h);
	ASSERT_EQ(0, where_pages(0, pref.base, n, &nc_pref));
	ASSERT_EQ(0, where_pages(0, wi.base, n, &nc_wi));
	ASSERT_EQ(0, where_pages(0, mof.base, n, &nc_mof));
	ksft_print_msg("MPOL_PREFERRED node 1: %lu/%lu on node 1\n",
		       nc_pref.n[1], n);
	ksft_print_msg("weighted interleave 3:1: node 1 %lu before, %lu after%s\n",
		       nc_wi0.n[1], nc_wi.n[1],
		       have_wi ? "" : " (not available: skipped)");

	EXPECT_LE(HOT_PCT, pct(nc_mof.n[0], n))
		TH_LOG("MPOL_F_NUMA_BALANCING memory not promoted");
	EXPECT_EQ(n, nc_pref.n[1]) TH_LOG("MPOL_PREFERRED memory was moved");
	if (have_wi)
		EXPECT_EQ(nc_wi0.n[1], nc_wi.n[1])
			TH_LOG("weighted interleave was drained to node 0");
	EXPECT_EQ(0UL, region_verify(&pref, 0, n, passes));
	EXPECT_EQ(0UL, region_verify(&def, 0, n, passes));

	if (w0[0])
		write_str(WI_SYSFS "node0", w0);
	if (w1[0])
		write_str(WI_SYSFS "node1", w1);
	region_unmap(&pref);
	region_unmap(&wi);
	region_unmap(&mof);
	region_unmap(&def);
}

/* Take mmap_lock for writing as often as possible until told to stop. */
static void *lock_churn(void *arg)
{
	int *stop = arg;
	unsigned long n = 0;
	void *p;

	while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		p = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, page_size);
		n++;
	}
	return (void *)n;
}

/*
 * A VMA at address 0 (vm.mmap_min_addr=0, as wine and dosemu use) whose
 * first PTE table is where a visit stops when a writer waits for
 * mmap_lock: the pass must resume at address 0, page-aligned, and not
 * walk the table from a byte address.  A thread maps and unmaps a page in
 * a loop so that visits keep stopping on contention; the hot pages at
 * address 0 must still be promoted, no byte may change, and the kernel
 * must stay sane (the host fails the run on any splat).
 */
TEST_F_TIMEOUT(promote, low_vma_resumed, 120)
{
	const size_t len = 4 * MB;
	struct kmm_stats s0, s1;
	struct hot_thread h = {};
	struct node_count hot;
	unsigned long passes, got = 0;
	pthread_t churn;
	void *churned;
	int stop = 0, ret;
	struct region r;
	long long t;
	void *p;

	if (read_long(MIN_ADDR_SYSCTL, &self->min_addr))
		SKIP(return, "cannot read %s", MIN_ADDR_SYSCTL);
	self->min_addr_saved = true;
	ASSERT_EQ(0, write_long(MIN_ADDR_SYSCTL, 0))
		TH_LOG("cannot set %s to 0", MIN_ADDR_SYSCTL);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		SKIP(return, "no mapping at address 0: %s", strerror(errno));
	ASSERT_EQ(NULL, p) TH_LOG("MAP_FIXED_NOREPLACE at 0 returned %p", p);

	memset(&r, 0, sizeof(r));
	r.map = p;
	r.map_len = len;
	r.base = p;
	r.len = len;
	r.npages = len / page_size;
	r.seed = 0x10;
	ret = region_fill_node1(&r, false, false);
	ASSERT_EQ(0, ret) TH_LOG("placing 4 MB at 0 on node 1: %s",
				 strerror(-ret));
	hot_add(&h, r.base, r.npages);

	kmm_stats_read(&s0);
	ASSERT_EQ(0, pthread_create(&churn, NULL, lock_churn, &stop));
	ASSERT_EQ(0, hot_start(&h));
	t = wait_promoted(&r, 0, r.npages, HOT_PCT, DEADLINE_MS, &got);
	passes = hot_stop(&h);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(churn, &churned);
	kmm_stats_read(&s1);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &hot));

	ksft_print_msg("VMA at 0: %lu/%lu (%lu%%) on node 0, %lu%% at %lld ms, %lu munmaps\n",
		       hot.n[0], r.npages, pct(hot.n[0], r.npages), got, t,
		       (unsigned long)churned);
	log_deltas(&s0, &s1);

	EXPECT_LE(HOT_PCT, pct(hot.n[0], r.npages))
		TH_LOG("hot pages at address 0 not promoted within %d ms",
		       DEADLINE_MS);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes));
	expect_monotonic(_metadata, &s0, &s1);
	munmap(r.base, len);	/* region_unmap() takes NULL as "none" */
}

int main(int argc, char **argv)
{
	struct kmm_knob_state saved = {};
	char demotion[16] = "";
	long boost = -1;
	int ret;

	/*
	 * Belt and braces: a test killed by its timeout cannot run its
	 * teardown, so the runner restores the knobs, demotion_enabled and
	 * watermark_boost_factor once more at the end.
	 */
	if (!geteuid() && kmmscand_present()) {
		knobs_save(&saved);
		if (read_file(DEMOTION_SYSFS, demotion, sizeof(demotion)) <= 0)
			demotion[0] = '\0';
		if (read_long(BOOST_SYSCTL, &boost))
			boost = -1;
	}
	ret = test_harness_run(argc, argv);
	knobs_restore(&saved);
	if (demotion[0])
		write_str(DEMOTION_SYSFS, demotion);
	if (boost >= 0)
		write_long(BOOST_SYSCTL, boost);
	return ret;
}
