// SPDX-License-Identifier: GPL-2.0
/*
 * Throttling tests for kmmscand: promote_rate_limit_mbps holds the
 * promotion rate and still lets it progress, and with NUMA balancing's
 * tiering mode on, NUMA balancing's limit holds for both promoters
 * together; a limit of 0 finds hot pages
 * but moves none; with node 0 filled to its low watermark, the migrator
 * defers instead of pushing node 0 below its high watermark, nothing is
 * demoted or migrated back and forth, and promotion resumes once node 0
 * has room again.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_fixture.h"

/*
 * Poll every 20 ms until pgpromote_success moves past @x0, for at most
 * DEADLINE_MS; leaves the counters read then in @s and @x and returns
 * the time taken just before that read, so that a window measured from
 * it holds every promotion counted after it.  Both promoters count there.
 * kmmscand counts a batch in pgpromote_success first and in its own
 * counters after, so @x is read first: a promotion it shows is in @s.
 */
static long long await_promotion(const struct x_stats *x0,
				 struct kmm_stats *s, struct x_stats *x)
{
	long long t0 = now_ms(), t;

	do {
		t = now_ms();
		x_stats_read(x);
		kmm_stats_read(s);
		if (XD(x0, x, X_PGPROMOTE_SUCCESS))
			break;
		sleep_ms(20);
	} while (t - t0 < DEADLINE_MS);
	return t;
}

/* Pages that @mbps MB/s earns in @ms milliseconds, rounded up. */
static unsigned long long rate_pages_in(long long mbps, long long ms)
{
	return (mbps * MB / psize() * ms + 999) / 1000;
}

/* Sleep in POLL_MS steps until @window_ms after @t1; returns the time. */
static long long await_window(long long t1, long long window_ms)
{
	long long t2;

	do {
		sleep_ms(POLL_MS);
		t2 = now_ms();
	} while (t2 - t1 < window_ms);
	return t2;
}

/*
 * promote_rate_limit_mbps=1 with a 32 MB hot set: once promotion starts,
 * no more than the limit may be promoted over a window, plus the burst
 * the limit allows (one second of it, or one THP or batch when larger:
 * see promote_rate_limit_mbps in the admin guide) and one batch in
 * flight when the window opened; and it must still make progress.  The
 * window runs from just before its first counter read to just after its
 * last, so a slow read widens the allowance instead of failing the test.
 */
TEST_F_TIMEOUT(promote, rate_limited, 120)
{
	const long long rate = 1, batch = 32, window_ms = 5000;
	unsigned long long promoted, allowed_pages, burst;
	struct kmm_stats s0, s1, s2;
	struct node_count nc0, nc1;
	struct hot_thread h = {};
	struct x_stats x0, x1;
	long long t0, t1, t2;
	struct region r;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, rate));
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, batch));
	ret = region_on_node1(&r, 32 * MB, 0, 0x1111);
	ASSERT_EQ(0, ret) TH_LOG("placing 32 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, r.npages);

	kmm_stats_read(&s0);
	x_stats_read(&x0);
	t0 = now_ms();
	ASSERT_EQ(0, hot_start(&h));
	t1 = await_promotion(&x0, &s1, &x1);
	ASSERT_LT(0ULL, D(&s0, &s1, S_PROMOTE_SUCCESS))
		TH_LOG("kmmscand promoted nothing at %lld MB/s in %lld ms (pgpromote +%llu)",
		       rate, t1 - t0, XD(&x0, &x1, X_PGPROMOTE_SUCCESS));
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc0));

	/* Measure one window from the first promotion on. */
	await_window(t1, window_ms);
	kmm_stats_read(&s2);
	t2 = now_ms();
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc1));
	hot_stop(&h);

	promoted = D(&s1, &s2, S_PROMOTE_SUCCESS);
	burst = rate_pages_in(rate, 1000);
	if (burst < (unsigned long long)batch)
		burst = batch;
	if (burst < read_pmd_pagesize() / psize())
		burst = read_pmd_pagesize() / psize();
	allowed_pages = burst + rate_pages_in(rate, t2 - t1) + batch;
	ksft_print_msg("%lld MB/s limit: %llu pages (%llu KB/s) in %lld ms, ",
		       rate, promoted, promoted * psize() / 1024 * 1000 /
		       (t2 - t1), t2 - t1);
	printf("allowed %llu (burst %llu)\n", allowed_pages, burst);
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

#define NUMAB_RATE_SYSCTL "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"

/*
 * NUMA balancing's tiering mode and kmmscand both on: its rate limit
 * (1 MB/s here) must hold for all promotions together, not add to
 * kmmscand's own (lifted here).  Counted in pgpromote_success, which
 * both promoters increment, over a window from the first promotion on;
 * kmmscand must have taken part and been held back by that limit.
 */
TEST_F_TIMEOUT(promote, numab_rate_limit_shared, 120)
{
	const long long numab_mbps = 1, batch = 32, window_ms = 5000;
	unsigned long long promoted, allowed_pages;
	struct kmm_stats s0, s1, s2;
	struct x_stats x0, x1, x2;
	struct hot_thread h = {};
	long long t1, t2;
	struct region r;
	int ret;

	ASSERT_EQ(0, kmm_env_set_long(&self->env, NUMAB_RATE_SYSCTL,
				      numab_mbps))
		TH_LOG("%s not writable", NUMAB_RATE_SYSCTL);
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1048576));
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, batch));
	ret = region_on_node1(&r, 64 * MB, 0, 0x2222);
	ASSERT_EQ(0, ret) TH_LOG("placing 64 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, r.npages);
	ASSERT_EQ(0, kmm_env_set(&self->env, NUMA_BALANCING_SYSCTL, "2"));

	kmm_stats_read(&s0);
	x_stats_read(&x0);
	ASSERT_EQ(0, hot_start(&h));
	t1 = await_promotion(&x0, &s1, &x1);
	ASSERT_LT(0ULL, XD(&x0, &x1, X_PGPROMOTE_SUCCESS))
		TH_LOG("nothing promoted within %d ms", DEADLINE_MS);

	await_window(t1, window_ms);
	x_stats_read(&x2);
	kmm_stats_read(&s2);
	t2 = now_ms();
	hot_stop(&h);

	/*
	 * NUMA balancing passes at most its limit per window of a second or
	 * more; a window of t2 - t1 ms meets at most ceil(seconds) + 1 of
	 * them.  One batch may have been in flight when it opened.
	 */
	promoted = XD(&x1, &x2, X_PGPROMOTE_SUCCESS);
	allowed_pages = rate_pages_in(numab_mbps,
				      ((t2 - t1 + 999) / 1000 + 1) * 1000) +
			batch;
	ksft_print_msg("numa_balancing=2 at %lld MB/s: %llu pages in %lld ms, allowed %llu\n",
		       numab_mbps, promoted, t2 - t1, allowed_pages);
	ksft_print_msg("%llu pages promoted before the window\n",
		       XD(&x0, &x1, X_PGPROMOTE_SUCCESS));
	ksft_print_msg("kmmscand: promote_success +%llu, defer_ratelimit +%llu\n",
		       D(&s0, &s2, S_PROMOTE_SUCCESS),
		       D(&s0, &s2, S_DEFER_RATELIMIT));
	EXPECT_GE(allowed_pages, promoted)
		TH_LOG("NUMA balancing's rate limit exceeded by the two promoters together");
	EXPECT_LE(allowed_pages, (unsigned long long)r.npages)
		TH_LOG("hot set too small to tell a limit from none");
	EXPECT_LT(0ULL, D(&s0, &s2, S_PROMOTE_SUCCESS))
		TH_LOG("kmmscand promoted nothing: nothing shared");
	EXPECT_LT(0ULL, D(&s0, &s2, S_DEFER_RATELIMIT))
		TH_LOG("kmmscand was never held back by the shared limit");
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
	ret = region_on_node1(&r, 8 * MB, 0, 0x2222);
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
 * Node 0 filled to its low watermark by a balloon process, demotion off
 * so that kswapd cannot make room, 16 MB on node 1 kept hot. The
 * migrator must defer for the watermark (kmmscand_defer_watermark), move
 * no more than fits above the high watermark plus a batch, and nothing
 * may be demoted or migrated back and forth. Once the balloon is freed
 * the hot set must be promoted. Data must stay intact throughout.
 */
TEST_F_TIMEOUT(promote, top_tier_full_defers, 150)
{
	const unsigned long hot_n = (16 * MB) / psize();
	unsigned long long bound, slack = MB / psize();
	struct zone_info z[MAX_ZONES];
	struct x_stats x0, x1, x2;
	struct kmm_stats s0, s1, s2;
	struct node_count nc1, nc2;
	struct hot_thread h = {};
	int nz, ret, status = 0;
	long free_kb, total_kb, room, zfree = 0, zpromo = 0;
	long long batch = 0, gained, t0, t1, t2;
	unsigned long passes;
	struct balloon b;
	struct region r;

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
	ASSERT_EQ(0, kmm_env_set(&self->env, DEMOTION_SYSFS, "0"));
	if (!access(BOOST_SYSCTL, F_OK))
		ASSERT_EQ(0, kmm_env_set_long(&self->env, BOOST_SYSCTL, 0));

	/*
	 * The balloon child must not share the region copy-on-write: the
	 * hot thread's first writes would then copy every page, onto node 0
	 * while it still has a little room, and that is not promotion.
	 */
	ret = region_on_node1(&r, 16 * MB, REGION_DONTFORK, 0x8888);
	ASSERT_EQ(0, ret) TH_LOG("placing 16 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, hot_n);

	ret = balloon_start(&b, (size_t)total_kb * 1024, DEADLINE_MS);
	self->env.kids[0] = b.pid;
	ASSERT_EQ(0, ret) TH_LOG("the balloon did not fill node 0 within %d ms: %s",
				 DEADLINE_MS, strerror(-ret));
	ASSERT_EQ(0, b.br.err) TH_LOG("balloon: %s", strerror(b.br.err));
	nz = node_zones(0, z, MAX_ZONES);
	ASSERT_LT(0, nz) TH_LOG("no zone of node 0 in /proc/zoneinfo");
	for (ret = 0; ret < nz; ret++) {
		zfree += z[ret].free;
		zpromo += z[ret].promo;
	}
	room = node_room(z, nz, true);
	/*
	 * A batch only runs while a zone stays above WMARK_HIGH after it, so
	 * at most the room is promoted; one batch more for good measure, and
	 * 1 MB for what the kernel may give back meanwhile (per-cpu lists).
	 */
	bound = room + batch + slack;
	ksft_print_msg("balloon: %lu MB in %lld ms, %lu pages of it on node 1\n",
		       b.br.pages * psize() / MB, b.br.ms, b.br.pages - b.br.on_node0);
	log_zones(0, z, nz);
	ksft_print_msg("node 0 MemFree %ld kB; room above WMARK_HIGH %ld pages; bound %llu pages\n",
		       node_meminfo_kb(0, "MemFree:"), room, bound);
	ASSERT_LT(b.br.on_node0, b.br.pages)
		TH_LOG("node 0 took %lu MB without filling up", b.br.pages * psize() / MB);
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
	/*
	 * Memory node 0 got back meanwhile (kswapd reclaiming slab or page
	 * cache, the kernel's own frees) is room too: add what its free
	 * count gained beyond the promotions.  A promoter that ignored the
	 * watermark takes free memory down by what it promotes, so this adds
	 * nothing for it.
	 */
	for (ret = 0, gained = -zfree; ret < nz; ret++)
		gained += z[ret].free;
	gained += D(&s0, &s1, S_PROMOTE_SUCCESS);
	if (gained > 0)
		bound += gained;
	ksft_print_msg("full for %lld ms: defer_watermark +%llu, hot on node 0 %lu/%lu\n",
		       t1 - t0, D(&s0, &s1, S_DEFER_WATERMARK), nc1.n[0], hot_n);
	ksft_print_msg("node 0 gained %lld free pages besides the promotions\n",
		       gained);
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
	status = balloon_free(&b);
	self->env.kids[0] = 0;
	ASSERT_NE(-1, status) TH_LOG("the balloon could not be freed");
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
	expect_accounting(_metadata, &s0, &s2);
	EXPECT_LE(nc2.n[0], D(&s0, &s2, S_PROMOTE_SUCCESS));
	region_unmap(&r);
}

int main(int argc, char **argv)
{
	return kmm_test_main(argc, argv);
}
