// SPDX-License-Identifier: GPL-2.0
/*
 * Promotion tests for kmmscand: what a slow-tier page must do once it is
 * hot.  A hot range on node 1 reaches node 0, the cold pages around it
 * stay, with and without a TLB flush per scanned PTE table; enabled=0
 * stops both threads and enabled=1 resumes them; a new hot set is found
 * after a long idle period; shmem pages that two processes keep hot are
 * promoted once for both; a page still in the LRU add batch of the CPU
 * that faulted it in and keeps it hot is promoted too.  Every byte must
 * stay intact, and the counters must agree with what moved.
 *
 * Every test places memory on the slow-tier node 1, keeps part of it hot
 * from a thread (or a child), and polls where the pages are; the fixture
 * (kmmscand_fixture.h) lowers the scan period, turns NUMA balancing off
 * and restores everything from the parent process afterwards.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <sched.h>

#include "kmmscand_fixture.h"

/*
 * 64 MB on node 1: 8 MB kept hot by a thread, the rest written once.
 * The hot pages must reach node 0, the cold ones stay, no byte changes,
 * and the counters agree with what moved.
 */
static void hot_and_cold(struct __test_metadata *_metadata, bool tlb_flush)
{
	const unsigned long hot_first = (16 * MB) / psize();
	const unsigned long hot_n = (8 * MB) / psize();
	struct node_count hot, cold_lo, cold_hi;
	unsigned long cold_on0, passes, bad;
	struct kmm_stats s0, s1;
	struct x_stats x0, x1;
	struct hot_thread h = {};
	long long t0, t_hot = -1, t;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_TLB_FLUSH, tlb_flush));
	ret = region_on_node1(&r, 64 * MB, 0, 0x1234);
	ASSERT_EQ(0, ret) TH_LOG("placing 64 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base + hot_first * psize(), hot_n);

	kmm_stats_read(&s0);
	x_stats_read(&x0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	for (;;) {
		t = now_ms();
		ASSERT_EQ(0, where_pages(0, r.base + hot_first * psize(),
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
	ASSERT_EQ(0, where_pages(0, r.base + hot_first * psize(), hot_n,
				 &hot));
	ASSERT_EQ(0, where_pages(0, r.base, hot_first, &cold_lo));
	ASSERT_EQ(0, where_pages(0, r.base + (hot_first + hot_n) * psize(),
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
	EXPECT_GE(COLD_MAX_PAGES, cold_on0)
		TH_LOG("%lu cold pages promoted", cold_on0);

	/* Not a byte lost: hot pages were written while being migrated. */
	bad = region_verify(&r, 0, hot_first, 0) +
	      region_verify(&r, hot_first, hot_n, passes) +
	      region_verify(&r, hot_first + hot_n,
			    r.npages - hot_first - hot_n, 0);
	EXPECT_EQ(0UL, bad) TH_LOG("%lu pages changed content", bad);

	expect_accounting(_metadata, &s0, &s1);
	EXPECT_LT(0ULL, D(&s0, &s1, S_MM_SCAN));
	EXPECT_LT(0ULL, D(&s0, &s1, S_PTE_SCANNED));
	EXPECT_LE(hot_n, D(&s0, &s1, S_YOUNG))
		TH_LOG("fewer young PTEs than hot pages");
	/* promoted <= candidates: expect_accounting() */
	EXPECT_LE(hot.n[0] + cold_on0, D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("our pages on node 0 exceed kmmscand_promote_success");
	/*
	 * Only this region sits on node 1: what was promoted beyond its
	 * pages on node 0 came from elsewhere, or moved twice.
	 */
	EXPECT_GE(hot.n[0] + cold_on0 + COLD_MAX_PAGES,
		  D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("kmmscand_promote_success +%llu for %lu of our pages on node 0",
		       D(&s0, &s1, S_PROMOTE_SUCCESS), hot.n[0] + cold_on0);
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

/*
 * enabled=0 stops scanning and promotion (no counter moves, no page
 * moves over three maximum periods); enabled=1 resumes both.
 */
/*
 * The PMD Accessed bits a full pass clears are flushed from the TLB when
 * the pass ends, not after every visit: 256 MB written on node 1 (128 PTE
 * tables whose PMD bit the first pass clears), scanned 512 PTE slots per
 * visit, i.e. one table per visit.  Once later passes skipped the 128
 * tables twice over (so the pass that cleared them ended), the scanner
 * must have flushed, and far fewer times than it visited.
 */
TEST_F_TIMEOUT(promote, pmd_clear_flushed_once_per_pass, 120)
{
	const unsigned long tables = (256 * MB) / (2 * MB);
	unsigned long long passes, flushes, skipped;
	struct kmm_stats s0, s1;
	long long t0, t;
	struct region r;
	char buf[32];
	int ret;

	if (!kmm_read_file("/sys/kernel/mm/lru_gen/enabled", buf, sizeof(buf)) &&
	    strtoul(buf, NULL, 0))
		SKIP(return, "MGLRU enabled: kmmscand leaves PMD Accessed bits alone");
	ASSERT_EQ(0, knob_set(KNOB_TLB_FLUSH, 0));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_SIZE, 512));
	kmm_stats_read(&s0);
	ret = region_on_node1(&r, 256 * MB, 0, 0x7f1b);
	ASSERT_EQ(0, ret) TH_LOG("placing 256 MB on node 1: %s", strerror(-ret));
	t0 = now_ms();
	for (;;) {
		kmm_stats_read(&s1);
		t = now_ms();
		if (D(&s0, &s1, S_PMD_SKIPPED) >= 2 * tables ||
		    t - t0 >= DEADLINE_MS)
			break;
		sleep_ms(POLL_MS);
	}
	passes = D(&s0, &s1, S_MM_SCAN);
	flushes = D(&s0, &s1, S_TLB_FLUSH);
	skipped = D(&s0, &s1, S_PMD_SKIPPED);
	ksft_print_msg("%llu TLB flushes, %llu passes, %llu tables skipped,\n",
		       flushes, passes, skipped);
	ksft_print_msg("%llu PTEs scanned in %lld ms\n",
		       D(&s0, &s1, S_PTE_SCANNED), t - t0);
	ASSERT_LE(2 * tables, skipped)
		TH_LOG("the region's tables were not skipped within %d ms",
		       DEADLINE_MS);
	EXPECT_LT(0ULL, flushes) TH_LOG("cleared PMD Accessed bits never flushed");
	EXPECT_GE(4 * passes, flushes) TH_LOG("more than 4 flushes per pass");
	EXPECT_GT(tables / 8, flushes)
		TH_LOG("%llu flushes for %lu tables cleared one per visit",
		       flushes, tables);
	region_unmap(&r);
}

TEST_F_TIMEOUT(promote, disabled_then_enabled, 120)
{
	struct kmm_stats s0, s1, s2;
	struct node_count nc;
	struct hot_thread h = {};
	unsigned long passes, got = 0;
	struct region r;
	long long t;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 0));
	ret = region_on_node1(&r, 8 * MB, 0, 0x3333);
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
	t = wait_promoted(&r, 0, r.npages, HOT_PCT, DEADLINE_MS, &got);
	passes = hot_stop(&h);
	kmm_stats_read(&s2);
	ksft_print_msg("re-enabled: %lu%% on node 0 after %lld ms\n", got, t);
	EXPECT_LE(HOT_PCT, got) TH_LOG("no promotion after enabled=1");
	EXPECT_LT(0ULL, D(&s1, &s2, S_MM_SCAN));
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes));
	region_unmap(&r);
}

/*
 * The hot set moves after a long idle period, at the default periods:
 * every page of the new hot set reaches node 0, and no migration fails
 * while the top tier has room (a reference left behind by the scanner,
 * in an LRU batch of its CPU or in the queue, would fail it).
 */
TEST_F_TIMEOUT(promote, phase_change_after_idle, 180)
{
	const unsigned long n = (8 * MB) / psize();
	const unsigned long a_first = (8 * MB) / psize();
	const unsigned long b_first = (40 * MB) / psize();
	long long t_a, t_b90, t_b;
	unsigned long got = 0, passes, bad;
	struct kmm_stats s0, s1, s2;
	struct hot_thread h = {};
	struct node_count nc;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, 500));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 5000));
	ret = region_on_node1(&r, 64 * MB, 0, 0x5eed);
	ASSERT_EQ(0, ret) TH_LOG("placing 64 MB on node 1: %s", strerror(-ret));

	kmm_stats_read(&s0);
	hot_add(&h, r.base + a_first * psize(), n);
	ASSERT_EQ(0, hot_start(&h));
	t_a = wait_promoted(&r, a_first, n, 100, DEADLINE_MS, &got);
	passes = hot_stop(&h);
	ksft_print_msg("phase A: %lu%% on node 0 after %lld ms\n", got, t_a);
	ASSERT_LE(0, t_a) TH_LOG("phase A never reached 100%% (%lu%%)", got);

	/* Idle for 30 s: the period backs off to scan_period_max_ms. */
	sleep_ms(30000);
	kmm_stats_read(&s1);
	ASSERT_EQ(0, where_pages(0, r.base + a_first * psize(), n, &nc));
	EXPECT_EQ(n, nc.n[0]) TH_LOG("phase A pages left node 0 while idle");

	h.nr = 0;
	hot_add(&h, r.base + b_first * psize(), n);
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
	unsigned long words = psize() / sizeof(uint64_t), i, w, bad = 0;

	for (i = first; i < first + n; i++) {
		const uint64_t *p = (const uint64_t *)(r->base + i * psize());
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
		ret = where_pages(pid, r->base + (first + n) * psize(),
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
			((uint64_t *)(r->base + i * psize()))[1]++;
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
	const unsigned long hot_first = (8 * MB) / psize();
	const unsigned long hot_n = (8 * MB) / psize();
	struct node_count hot_p, hot_c, cold_p, cold_c;
	unsigned long i, passes, cold_n, bad;
	struct kmm_stats s0, s1;
	struct hot_thread h = {};
	struct shared_ctl *ctl;
	long long t0, t, t_hot = -1;
	int ret, status = 0;
	struct region r;
	pid_t child;

	ret = region_on_node1(&r, 32 * MB, REGION_SHARED, 0x7777);
	ASSERT_EQ(0, ret) TH_LOG("placing 32 MB of MAP_SHARED memory on node 1: %s",
				 strerror(-ret));
	cold_n = r.npages - hot_n;
	/* Word 1 of every page becomes the child's touch counter. */
	for (i = 0; i < r.npages; i++)
		((uint64_t *)(r.base + i * psize()))[1] = 0;
	ctl = mmap(NULL, psize(), PROT_READ | PROT_WRITE,
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
	self->env.kids[0] = child;
	t0 = now_ms();
	while (!__atomic_load_n(&ctl->ready, __ATOMIC_ACQUIRE) &&
	       now_ms() - t0 < 10000)
		sleep_ms(10);
	ASSERT_EQ(1, ctl->ready) TH_LOG("the child did not start");
	ASSERT_EQ(0UL, ctl->bad_start)
		TH_LOG("the child does not read what the parent wrote");

	hot_add(&h, r.base + hot_first * psize(), hot_n);
	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	for (;;) {
		t = now_ms();
		ASSERT_EQ(0, where_pages(0, r.base + hot_first * psize(),
					 hot_n, &hot_p));
		ASSERT_EQ(0, where_pages(child, r.base + hot_first * psize(),
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
	ASSERT_EQ(0, where_pages(child, r.base + hot_first * psize(), hot_n,
				 &hot_c));
	ASSERT_EQ(0, where_outside(child, &r, hot_first, hot_n, &cold_c));
	ASSERT_EQ(0, where_pages(0, r.base + hot_first * psize(), hot_n,
				 &hot_p));
	ASSERT_EQ(0, where_outside(0, &r, hot_first, hot_n, &cold_p));

	passes = hot_stop(&h);
	__atomic_store_n(&ctl->parent_passes, passes, __ATOMIC_RELEASE);
	__atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	self->env.kids[0] = 0;
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
	expect_accounting(_metadata, &s0, &s1);
	EXPECT_LE(hot_p.n[0] + cold_p.n[0], D(&s0, &s1, S_CANDIDATE))
		TH_LOG("pages moved that were never candidates");
	EXPECT_LE(hot_p.n[0] + cold_p.n[0], D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("our pages on node 0 exceed kmmscand_promote_success");
	munmap(ctl, psize());
	region_unmap(&r);
}

/*
 * @r: @len bytes (at most a PTE table) at the start of a PTE table, in a
 * mapping of two tables' worth, filled on node 1.  Returns 0 or -errno.
 */
static int region_table_node1(struct region *r, size_t len)
{
	const size_t pmd = thp_size();
	char *map = mmap(NULL, 2 * pmd, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	memset(r, 0, sizeof(*r));
	if (map == MAP_FAILED)
		return -errno;
	r->map = map;
	r->map_len = 2 * pmd;
	r->base = (char *)(((uintptr_t)map + pmd - 1) & ~(pmd - 1));
	r->len = len;
	r->npages = len / psize();
	r->seed = 0x5eed;
	return region_fill_node1(r, 0);
}

/*
 * One PTE table, two VMAs: hot slow-tier pages in the first half of a
 * 2 MB range, the second half a VMA of its own (read-only) with no page in
 * it.  The scanner gets the table in two fragments, one per VMA; what the
 * first one found young must count in the quick passes and the next full
 * pass, so the hot half reaches node 0 with K = N = 2.  The longest
 * period is left high, so that quick passes run between full ones.
 */
TEST_F_TIMEOUT(promote, split_table_promoted, 120)
{
	const size_t pmd = thp_size(), half = pmd / 2;
	struct hot_thread h = {};
	unsigned long got, passes;
	struct kmm_stats s0, s1;
	struct region r = {};
	long long took;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 10000));
	ret = region_table_node1(&r, half);
	ASSERT_EQ(0, ret) TH_LOG("placing %zu kB on node 1: %s", half >> 10,
				 strerror(-ret));
	/* The second half of the table: a VMA of its own, left empty. */
	ASSERT_EQ(0, madvise(r.base + half, half, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, mprotect(r.base + half, half, PROT_READ));

	hot_add(&h, r.base, r.npages);
	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	took = wait_promoted(&r, 0, r.npages, HOT_PCT, DEADLINE_MS, &got);
	passes = hot_stop(&h);
	kmm_stats_read(&s1);
	ksft_print_msg("split table: %lu%% of the hot half on node 0 (%lld ms), %lu touch passes\n",
		       got, took, passes);
	log_deltas(&s0, &s1);
	EXPECT_LE(0, took)
		TH_LOG("hot pages of a table shared by two VMAs not promoted within %d ms",
		       DEADLINE_MS);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes));
	region_unmap(&r);
}

/*
 * One PTE table shared by 32 VMAs of 64 KB each, one hot slow-tier page
 * in each of four of them but the first, and full passes only (the
 * shortest and the longest period equal).  A full pass clears the
 * table's PMD Accessed bit in the first VMA and must still read the PTEs
 * of the others, although the bit it has just cleared says nobody used
 * the table since (kmmscand_cleared_in_pass()); a pass that skipped them
 * would never see the hot pages young.  Four pages stay in the TLB, so
 * nothing walks the table between the clear and the flush at the end of
 * the pass to set the bit again.
 */
TEST_F_TIMEOUT(promote, many_vmas_one_table, 120)
{
	const size_t pmd = thp_size(), chunk = 64 << 10;
	const unsigned long per_chunk = chunk / psize();
	unsigned long hot[MAX_HOT_RANGES], on0 = 0, passes, off, bad = 0, i;
	struct hot_thread h = {};
	struct kmm_stats s0, s1;
	struct node_count nc;
	struct region r = {};
	long long t0, took = -1;
	int k, ret;

	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, 300));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 300));
	ret = region_table_node1(&r, pmd);
	ASSERT_EQ(0, ret) TH_LOG("placing %zu kB on node 1: %s", pmd >> 10,
				 strerror(-ret));
	/* Neighbours with other flags do not merge: one VMA per chunk. */
	for (off = chunk; off < pmd; off += 2 * chunk)
		ASSERT_EQ(0, mprotect(r.base + off, chunk,
				      PROT_READ | PROT_WRITE | PROT_EXEC));

	/* A page in VMAs 7, 15, 23 and 31 of the table. */
	for (k = 0; k < MAX_HOT_RANGES; k++) {
		hot[k] = (8 * k + 7) * per_chunk + 3;
		hot_add(&h, r.base + hot[k] * psize(), 1);
	}
	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	while (now_ms() - t0 < DEADLINE_MS) {
		for (on0 = 0, k = 0; k < MAX_HOT_RANGES; k++)
			if (!where_pages(0, r.base + hot[k] * psize(), 1, &nc))
				on0 += nc.n[0];
		if (on0 == MAX_HOT_RANGES) {
			took = now_ms() - t0;
			break;
		}
		sleep_ms(POLL_MS);
	}
	passes = hot_stop(&h);
	kmm_stats_read(&s1);
	ksft_print_msg("32 VMAs in one table: %lu of %d hot pages on node 0 (%lld ms)\n",
		       on0, MAX_HOT_RANGES, took);
	log_deltas(&s0, &s1);
	EXPECT_LE(0, took)
		TH_LOG("hot pages past the first VMA of a table not promoted within %d ms",
		       DEADLINE_MS);
	for (i = 0, k = 0; i < r.npages; i++) {
		bool is_hot = k < MAX_HOT_RANGES && i == hot[k];

		bad += region_verify(&r, i, 1, is_hot ? passes : 0);
		k += is_hot;
	}
	EXPECT_EQ(0UL, bad) TH_LOG("%lu pages changed content", bad);
	region_unmap(&r);
}

/* A page faulted in and then kept hot by a thread on one CPU. */
struct batch_toucher {
	pthread_t tid;
	char *page;
	int cpu;
	int ready;		/* __atomic accesses */
	int stop;		/* __atomic accesses */
	int err;
	unsigned long passes;
};

static int pin_cpu(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

/*
 * Fault the page in on this CPU, then only loop over it: no system call,
 * nothing that drains this CPU's LRU add batch, where the page waits.
 */
static void *batch_toucher_main(void *arg)
{
	struct batch_toucher *t = arg;
	uint64_t *w = (uint64_t *)t->page;

	t->err = pin_cpu(0, t->cpu);
	if (!t->err)
		*w = 1;
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	if (t->err)
		return NULL;
	while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
		(*w)++;
		/* every loop really stores to the page */
		asm volatile("" ::: "memory");
		t->passes++;
	}
	return NULL;
}

/* Is @pfn on the LRU (KPF_LRU in /proc/kpageflags)?  1, 0 or -errno. */
static int pfn_on_lru(unsigned long pfn)
{
	uint64_t flags;
	int fd = open("/proc/kpageflags", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, &flags, sizeof(flags), pfn * sizeof(flags));
	close(fd);
	if (n != sizeof(flags))
		return n < 0 ? -errno : -EIO;
	return !!(flags & (1ULL << 5));
}

/*
 * A page that a thread faults in and then keeps hot without a system call
 * stays in its CPU's LRU add batch, off the LRU, where the migration
 * thread cannot isolate it.  The migration thread is kept on another CPU
 * while the test waits (its own lru_add_drain() would drain the batch if
 * it ran there), so the page reaches node 0 only because the migration
 * thread drains every CPU's batches after it found a candidate off the
 * LRU.
 */
TEST_F_TIMEOUT(promote, hot_page_in_lru_batch, 120)
{
	struct batch_toucher t = { .cpu = 1 };
	cpu_set_t self0, mig0;
	struct kmm_stats s0, s1;
	struct node_count nc;
	unsigned long pfn;
	long long t0, took = -1;
	pid_t mig;
	bool kthread;
	int pm, lru, ret;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs: with one, every drain reaches the batch");
	mig = find_task("kmmscand_migrate", &kthread);
	ASSERT_NE(0, mig) TH_LOG("no kmmscand_migrate thread");
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(self0), &self0));
	ASSERT_EQ(0, sched_getaffinity(mig, sizeof(mig0), &mig0));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, 300));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 300));

	t.page = mmap(NULL, psize(), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, t.page);
	ASSERT_EQ(0, bind_to_node(t.page, psize(), 1));
	ret = pin_cpu(0, 0);
	ASSERT_EQ(0, ret) TH_LOG("pinning the test to CPU 0: %s", strerror(-ret));
	ASSERT_EQ(0, pthread_create(&t.tid, NULL, batch_toucher_main, &t));
	t0 = now_ms();
	while (!__atomic_load_n(&t.ready, __ATOMIC_ACQUIRE) &&
	       now_ms() - t0 < 5000)
		sleep_ms(10);
	ASSERT_EQ(1, __atomic_load_n(&t.ready, __ATOMIC_ACQUIRE))
		TH_LOG("the toucher did not start within 5 s");
	ASSERT_EQ(0, t.err) TH_LOG("pinning the toucher to CPU 1: %s",
				   strerror(-t.err));
	/* Promotion allowed from now on; no MPOL_MF_MOVE, so no drain. */
	ASSERT_EQ(0, unbind(t.page, psize()));

	pm = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, pm) TH_LOG("/proc/self/pagemap: %s", strerror(errno));
	pfn = pagemap_get_pfn(pm, t.page);
	close(pm);
	ASSERT_NE(-1UL, pfn) TH_LOG("no pfn for the page");
	lru = pfn_on_lru(pfn);
	ASSERT_EQ(0, where_pages(0, t.page, 1, &nc));
	ASSERT_EQ(1UL, nc.n[1]) TH_LOG("the page is not on node 1");
	/* The case under test: the page waits in CPU 1's LRU add batch. */
	ASSERT_EQ(0, lru) TH_LOG("the page is %s before kmmscand looked at it",
				 lru > 0 ? "on the LRU already" : "of unknown LRU state");

	/*
	 * Pinned only from here on, past every assertion that could end
	 * the test, so that none leaves the thread pinned; its affinity is
	 * restored before the expectations.
	 */
	ret = pin_cpu(mig, 0);
	ASSERT_EQ(0, ret) TH_LOG("pinning kmmscand_migrate to CPU 0: %s",
				 strerror(-ret));
	kmm_stats_read(&s0);
	t0 = now_ms();
	while (now_ms() - t0 < DEADLINE_MS) {
		if (!where_pages(0, t.page, 1, &nc) && nc.n[0] == 1) {
			took = now_ms() - t0;
			break;
		}
		sleep_ms(POLL_MS);
	}
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t.tid, NULL);
	kmm_stats_read(&s1);
	sched_setaffinity(mig, sizeof(mig0), &mig0);
	sched_setaffinity(0, sizeof(self0), &self0);
	ksft_print_msg("hot page faulted in on CPU 1: on node 0 after %lld ms, %lu loops\n",
		       took, t.passes);
	log_deltas(&s0, &s1);
	EXPECT_LE(0, took)
		TH_LOG("a hot page in a CPU's LRU add batch not promoted within %d ms",
		       DEADLINE_MS);
	EXPECT_EQ(t.passes + 1, *(uint64_t *)t.page)
		TH_LOG("the page's counter changed beside the toucher's loops");
	munmap(t.page, psize());
}

/* Processes with a user address space: each may hold the history floor. */
static unsigned long user_processes(void)
{
	unsigned long n = 0;
	struct dirent *d;
	char path[300], buf[4096];
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", d->d_name);
		if (kmm_read_file(path, buf, sizeof(buf)) > 0 &&
		    strstr(buf, "VmSize:"))
			n++;
	}
	closedir(dir);
	return n;
}

/*
 * A hot set that appears while full passes are a minute apart is found by
 * the quick passes, which look again only at the tables that held
 * slow-tier pages, and skip those whose PMD Accessed bit stayed clear
 * without walking the mm (kmmscand_walk_idle()).  While they find every
 * such table unused, they come every scan_period_min_ms growing to twice
 * that (kmmscand_next_quick()); the hot set appears after enough quiet
 * for that.  A quick pass that took a table in use for unused, or quick
 * passes that stopped while nothing changed, would leave the hot set to
 * the next full pass, 30 s or more away, and K = N = 2 needs two passes
 * to see it young.
 */
TEST_F_TIMEOUT(promote, quick_pass_finds_new_hot_set, 120)
{
	const unsigned long n = (4 * MB) / psize();
	const unsigned long first = (8 * MB) / psize();
	unsigned long long want, passes_seen = 0;
	unsigned long got = 0, passes;
	struct kmm_stats s0, s1, s2;
	struct hot_thread h = {};
	struct region r;
	long long t0, took;
	int ret;

	ret = region_on_node1(&r, 16 * MB, 0, 0x5eed);
	ASSERT_EQ(0, ret) TH_LOG("placing 16 MB on node 1: %s", strerror(-ret));

	/*
	 * Every mm's period becomes 60 s; quick passes stay at 500 ms.  The
	 * next pass of ours is a full one, due within the fixture's longest
	 * period: it finds the region untouched since it was written.  Each
	 * other mm makes at most that one pass in the next minute unless it
	 * has slow-tier pages too; wait until two more passes than there are
	 * processes were made, so that ours were the full pass and a quick
	 * one.
	 */
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 60000));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, 60000));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, 500));
	kmm_stats_read(&s0);
	want = user_processes() + 2;
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		passes_seen = D(&s0, &s1, S_MM_SCAN);
	} while (passes_seen < want && now_ms() - t0 < 10000);
	ksft_print_msg("%llu passes in %lld ms after the periods changed (waited for %llu)\n",
		       passes_seen, now_ms() - t0, want);
	ASSERT_LE(want, passes_seen)
		TH_LOG("the scanner made %llu passes in 10 s, want %llu",
		       passes_seen, want);
	/*
	 * 4 s of quiet: at least five quick passes at 0.5-1 s, which find the
	 * region unused and take the interval to its bound.
	 */
	sleep_ms(4000);
	kmm_stats_read(&s1);
	ksft_print_msg("%llu passes in the 4 s of quiet\n",
		       D(&s0, &s1, S_MM_SCAN) - passes_seen);

	hot_add(&h, r.base + first * psize(), n);
	ASSERT_EQ(0, hot_start(&h));
	took = wait_promoted(&r, first, n, HOT_PCT, 20000, &got);
	passes = hot_stop(&h);
	kmm_stats_read(&s2);
	ksft_print_msg("full passes 30-60 s apart, new hot set: %lu%% on node 0 after %lld ms\n",
		       got, took);
	log_deltas(&s1, &s2);
	EXPECT_LE(0, took)
		TH_LOG("quick passes did not find the hot set in 20 s (%lu%% on node 0)",
		       got);
	EXPECT_EQ(0UL, region_verify(&r, 0, first, 0) +
		       region_verify(&r, first, n, passes) +
		       region_verify(&r, first + n, r.npages - first - n, 0))
		TH_LOG("pages changed content");
	region_unmap(&r);
}

/* Pages in use on node @nid, from its meminfo. */
static unsigned long node_used_pages(int nid)
{
	char path[80], buf[4096], *p;
	unsigned long kb;

	snprintf(path, sizeof(path), NODE_SYSFS "node%d/meminfo", nid);
	if (kmm_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "MemUsed:");
	if (!p || sscanf(p, "MemUsed: %lu", &kb) != 1)
		return 0;
	return kb * 1024 / psize();
}

struct sparse_toucher {
	char *base;
	unsigned long n;
	size_t stride;
	int stop;
};

static void *sparse_touch(void *arg)
{
	struct sparse_toucher *t = arg;
	unsigned long i;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < t->n; i++)
			(*(uint64_t *)(t->base + i * t->stride))++;
		/* every round really stores to every page */
		asm volatile("" ::: "memory");
	}
	return NULL;
}

#define HISTORY_TABLES	8192
#define HISTORY_FLOOR	(64UL * 1024)	/* KMMSCAND_HIST_FLOOR */

/*
 * The worst layout for the access history: isolated young slow-tier
 * pages, one per PTE table, over a sparse 16 GB.  Nothing is promoted
 * (promote_rate_limit_mbps = 0: found hot, counted, left in place), so the
 * pages stay young on the slow tier for the whole test.  history_bytes
 * must stay within the documented bound: per mm, one byte per slow-tier
 * page it maps or 64 kB, whichever is more.  Then, kmmscand off, the
 * history shrinker must give the memory back on drop_caches.
 */
TEST_F_TIMEOUT(promote, history_bound, 120)
{
	const size_t stride = thp_size();
	const size_t len = HISTORY_TABLES * stride;
	struct sparse_toucher t = {};
	unsigned long i, bytes, peak = 0, bound, procs;
	struct kmm_stats s0, s1;
	pthread_t tid;
	long long t0;
	long val;
	char *map;

	/* The feature under test: its absence is a failure. */
	ASSERT_EQ(0, access(KMMSCAND_SYSFS "history_bytes", R_OK))
		TH_LOG("no %shistory_bytes", KMMSCAND_SYSFS);
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 0));
	map = mmap(NULL, len + stride, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	t.base = (char *)(((uintptr_t)map + stride - 1) & ~(stride - 1));
	t.n = HISTORY_TABLES;
	t.stride = stride;
	ASSERT_EQ(0, madvise(t.base, len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, bind_to_node(t.base, len, 1));
	for (i = 0; i < t.n; i++)
		t.base[i * stride] = 1;
	ASSERT_EQ(0, unbind(t.base, len));

	kmm_stats_read(&s0);
	ASSERT_EQ(0, pthread_create(&tid, NULL, sparse_touch, &t));
	/*
	 * At least 8 s of sampling, and on until every isolated page could
	 * have been seen young once (a slow emulator may need longer), with
	 * a deadline.
	 */
	t0 = now_ms();
	do {
		ASSERT_EQ(0, read_long(KMMSCAND_SYSFS "history_bytes", &val));
		bytes = val;
		if (bytes > peak)
			peak = bytes;
		sleep_ms(POLL_MS / 2);
		kmm_stats_read(&s1);
	} while (now_ms() - t0 < 8000 ||
		 (D(&s0, &s1, S_YOUNG) < HISTORY_TABLES &&
		  now_ms() - t0 < 60000));
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	kmm_stats_read(&s1);
	ksft_print_msg("history: sampled for %lld ms\n", now_ms() - t0);

	procs = user_processes();
	bound = procs * HISTORY_FLOOR + node_used_pages(1);
	ksft_print_msg("history: peak %lu bytes for %d isolated young pages\n",
		       peak, HISTORY_TABLES);
	ksft_print_msg("history: %lu processes, bound %lu bytes\n",
		       procs, bound);
	log_deltas(&s0, &s1);
	EXPECT_LE((unsigned long long)HISTORY_TABLES, D(&s0, &s1, S_YOUNG))
		TH_LOG("the isolated pages were not seen young");
	EXPECT_LE(HISTORY_FLOOR / 2, peak)
		TH_LOG("so little history proves nothing");
	EXPECT_GE(bound, peak)
		TH_LOG("history above its bound: %lu > %lu bytes", peak, bound);

	/*
	 * Under memory pressure the history goes back.  The shrinker leaves
	 * alone the mm the scanner is on until its round ends, which the
	 * visit in flight when kmmscand was disabled still has to do: ask
	 * again, for up to 10 s.
	 */
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 0));
	t0 = now_ms();
	for (i = 1;; i++) {
		ASSERT_EQ(0, write_str("/proc/sys/vm/drop_caches", "2"));
		ASSERT_EQ(0, read_long(KMMSCAND_SYSFS "history_bytes", &val));
		if ((unsigned long)val < HISTORY_FLOOR / 4 ||
		    now_ms() - t0 > 10000)
			break;
		sleep_ms(POLL_MS / 2);
	}
	ksft_print_msg("history after drop_caches: %ld bytes (%lu times, %lld ms)\n",
		       val, i, now_ms() - t0);
	EXPECT_GT(HISTORY_FLOOR / 4, (unsigned long)val)
		TH_LOG("the shrinker left %ld bytes of history", val);
	munmap(map, len + stride);
}

int main(int argc, char **argv)
{
	return kmm_test_main(argc, argv);
}
