// SPDX-License-Identifier: GPL-2.0
/*
 * Memory hot-remove tests for kmmscand: the slow tier is memory that can be
 * taken away (a CXL device), and a page that kmmscand queued for promotion
 * must not keep it from going.  A queued candidate that held a folio
 * reference would make the migration of its page fail, and the offlining
 * would never complete while the candidate waits.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, ZONE_MOVABLE
 * memory blocks on node 1 (harness/vm.sh: DIMM1_MB and
 * memhp_default_state=online_movable), CONFIG_MEMORY_HOTREMOVE, a kernel
 * with CONFIG_KMMSCAND.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_harness.h"
#include "kmmscand_hotplug.h"

/*
 * 10% of a zone between its watermarks (the default is 0.1%): with node 0
 * filled to its low watermark, promotion (which needs room above WMARK_HIGH)
 * is deferred, while the migration of an offlining, which may allocate
 * down to WMARK_MIN, still has about 100 MB of node 0 to go to.
 */
#define SCALE_FACTOR		1000

FIXTURE(hotplug) {
	struct kmm_env env;
	struct dimm dimm;
};

FIXTURE_SETUP(hotplug)
{
	char why[200];
	bool kthread;

	if (dimm_find(&self->dimm, why, sizeof(why)) <= 0)
		SKIP(return, "%s", why);
	kmm_env_setup(_metadata, &self->env);
	if (_metadata->exit_code)
		return;
	ASSERT_NE(0, find_task("kmmscand_migrate", &kthread))
		TH_LOG("no kmmscand_migrate thread");
}

FIXTURE_TEARDOWN_PARENT(hotplug)
{
	kmm_env_restore(&self->env);
	dimm_online_all(&self->dimm);
}

/*
 * The control: 8 MB written once on the dimm, nothing queued. Every block
 * of the dimm goes offline within the deadline, the pages leave it with
 * their content, and the blocks come back online in ZONE_MOVABLE. If this
 * fails, offlining itself does not work here, whatever kmmscand does.
 */
TEST_F_TIMEOUT(hotplug, offline_online_cycle, 180)
{
	struct block_op ops[MAX_BLOCKS];
	uint64_t lo = 0, hi = 0;
	struct dimm again;
	struct node_count nc;
	struct region r;
	char why[200];
	long on;
	int n, ret;

	ret = region_on_node1(&r, 8 * MB, REGION_DONTFORK, 0xc0de);
	ASSERT_EQ(0, ret) TH_LOG("placing 8 MB on node 1: %s", strerror(-ret));
	on = pages_on_dimm(&self->dimm, r.base, r.npages, &lo, &hi);
	ksft_print_msg("dimm: %d blocks of %lu MB from memory%d; region: %ld/%lu pages on it\n",
		       self->dimm.nr, self->dimm.block_pages * psize() / MB,
		       self->dimm.block[0], on, r.npages);
	ksft_print_msg("region: PFNs %#llx-%#llx\n", (unsigned long long)lo,
		       (unsigned long long)hi);
	ASSERT_LE(0, on) TH_LOG("pagemap: %s", strerror(-on));
	ASSERT_EQ((long)r.npages, on) TH_LOG("the region is not on the dimm");

	n = dimm_write_state(&self->dimm, "offline", OFFLINE_DEADLINE_MS, ops);
	ASSERT_LE(0, n) TH_LOG("offlining: %s", strerror(-n));
	ASSERT_EQ(0, log_ops("offline", &self->dimm, ops, n));
	ASSERT_EQ(self->dimm.nr, dimm_count_state(&self->dimm, "offline"));
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	ksft_print_msg("region after offlining: node 0 %lu, node 1 %lu\n",
		       nc.n[0], nc.n[1]);
	EXPECT_EQ(r.npages, nc.n[0] + nc.n[1]);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, 0)) TH_LOG("data changed by offlining");

	n = dimm_write_state(&self->dimm, "online_movable", OFFLINE_DEADLINE_MS,
			     ops);
	ASSERT_LE(0, n);
	EXPECT_EQ(0, log_ops("online", &self->dimm, ops, n));
	EXPECT_EQ(self->dimm.nr, dimm_find(&again, why, sizeof(why)))
		TH_LOG("the dimm did not come back online in ZONE_MOVABLE");
	region_unmap(&r);
}

/*
 * The hot-remove case: node 0 is full, so hot pages on the dimm are queued
 * for promotion and wait there (kmmscand_defer_watermark). Offlining the
 * dimm must still succeed within OFFLINE_DEADLINE_MS, with the pages
 * going to the room left on node 0, and no byte of the region may change
 * while its thread keeps writing to it. Once node 0 has room again, the
 * candidates of the removed memory are dropped as stale, not promoted.
 */
TEST_F_TIMEOUT(hotplug, offline_with_queued_candidates, 300)
{
	const unsigned long n = (16 * MB) / psize();
	struct block_op ops[MAX_BLOCKS];
	struct zone_info z[MAX_ZONES];
	struct kmm_stats s0, s1, s2, s3;
	struct hot_thread h = {};
	struct node_count nc;
	int nz, nops, bad_ops, status = 0;
	long free_kb, total_kb, room_high, room_min, on;
	unsigned long long offers;
	uint64_t lo = 0, hi = 0;
	unsigned long passes;
	long long t0, t_off;
	struct balloon b;
	struct region r;
	int ret;

	if (access(DEMOTION_SYSFS, W_OK))
		SKIP(return, "%s: %s", DEMOTION_SYSFS, strerror(errno));
	if (access(SCALE_SYSCTL, W_OK))
		SKIP(return, "%s: %s", SCALE_SYSCTL, strerror(errno));
	free_kb = node_meminfo_kb(0, "MemFree:");
	total_kb = node_meminfo_kb(0, "MemTotal:");
	ASSERT_LT(0, free_kb) TH_LOG("no MemFree in node 0's meminfo");
	if (free_kb > 4L * 1024 * 1024)
		SKIP(return, "node 0 has %ld MB free: too much to fill in time",
		     free_kb / 1024);

	/* No demotion and no boost: node 0 stays full, at fixed marks. */
	ASSERT_EQ(0, kmm_env_set(&self->env, DEMOTION_SYSFS, "0"));
	ASSERT_EQ(0, kmm_env_set_long(&self->env, BOOST_SYSCTL, 0));
	ASSERT_EQ(0, kmm_env_set_long(&self->env, SCALE_SYSCTL, SCALE_FACTOR));

	ret = region_on_node1(&r, n * psize(), REGION_DONTFORK, 0xd177);
	ASSERT_EQ(0, ret) TH_LOG("placing 16 MB on node 1: %s", strerror(-ret));
	on = pages_on_dimm(&self->dimm, r.base, r.npages, &lo, &hi);
	ASSERT_LE(0, on) TH_LOG("pagemap: %s", strerror(-on));
	ASSERT_EQ((long)n, on) TH_LOG("only %ld/%lu pages on the dimm", on, n);

	ret = balloon_start(&b, (size_t)total_kb * 1024, DEADLINE_MS);
	self->env.kids[0] = b.pid;
	ASSERT_EQ(0, ret) TH_LOG("the balloon did not fill node 0 within %d ms: %s",
				 DEADLINE_MS, strerror(-ret));
	ASSERT_EQ(0, b.br.err) TH_LOG("balloon: %s", strerror(b.br.err));
	nz = node_zones(0, z, MAX_ZONES);
	ASSERT_LT(0, nz) TH_LOG("no zone of node 0 in /proc/zoneinfo");
	room_high = node_room(z, nz, true);
	room_min = node_room(z, nz, false);
	ksft_print_msg("balloon: %lu MB in %lld ms, %lu pages of it on node 1\n",
		       b.br.pages * psize() / MB, b.br.ms, b.br.pages - b.br.on_node0);
	log_zones(0, z, nz);
	ksft_print_msg("node 0: %ld pages above WMARK_HIGH, %ld above WMARK_MIN\n",
		       room_high, room_min);
	ASSERT_LT(b.br.on_node0, b.br.pages)
		TH_LOG("node 0 took %lu MB without filling up",
		       b.br.pages * psize() / MB);
	/* A batch of 512 pages is deferred unless it fits above WMARK_HIGH. */
	ASSERT_GT(512L, room_high) TH_LOG("node 0 has room for promotion");
	/* The region, the balloon's spill and whatever else is on the dimm. */
	ASSERT_LT((long)(4 * n), room_min)
		TH_LOG("node 0 has no room left for the offlining's migration");

	/* Hot: queued, and waiting, as nothing fits above WMARK_HIGH. */
	kmm_stats_read(&s0);
	hot_add(&h, r.base, r.npages);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		offers = D(&s0, &s1, S_CANDIDATE);
		/* Every pass offers every hot page; two passes queued all. */
		if (offers >= 2 * n && D(&s0, &s1, S_DEFER_WATERMARK) >= 10)
			break;
	} while (now_ms() - t0 < DEADLINE_MS);
	lo = 0;
	hi = 0;
	on = pages_on_dimm(&self->dimm, r.base, r.npages, &lo, &hi);
	ksft_print_msg("after %lld ms hot: %llu candidates, %ld/%lu pages still on the dimm\n",
		       now_ms() - t0, offers, on, n);
	ksft_print_msg("region: PFNs %#llx-%#llx\n", (unsigned long long)lo,
		       (unsigned long long)hi);
	log_deltas(&s0, &s1);
	ASSERT_LE(2 * n, offers) TH_LOG("the hot region was not queued");
	ASSERT_LE(10ULL, D(&s0, &s1, S_DEFER_WATERMARK))
		TH_LOG("the migrator did not defer for the watermark");
	ASSERT_EQ((long)n, on) TH_LOG("pages left the dimm before the offlining");

	/* Remove the dimm while its pages are queued and written to. */
	t0 = now_ms();
	nops = dimm_write_state(&self->dimm, "offline", OFFLINE_DEADLINE_MS, ops);
	t_off = now_ms() - t0;
	passes = hot_stop(&h);
	kmm_stats_read(&s2);
	ASSERT_LE(0, nops) TH_LOG("offlining: %s", strerror(-nops));
	bad_ops = log_ops("offline", &self->dimm, ops, nops);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	ksft_print_msg("offlining took %lld ms; region: node 0 %lu, node 1 %lu; %lu passes\n",
		       t_off, nc.n[0], nc.n[1], passes);
	log_deltas(&s1, &s2);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes))
		TH_LOG("region content changed");
	ASSERT_EQ(0, bad_ops)
		TH_LOG("the dimm could not be offlined within %d ms while its pages were queued",
		       OFFLINE_DEADLINE_MS);
	ASSERT_EQ(self->dimm.nr, dimm_count_state(&self->dimm, "offline"));
	EXPECT_EQ(n, nc.n[0] + nc.n[1]);

	/*
	 * Room on node 0 again: every candidate of the offline memory is
	 * dropped as stale.  Promotions are not asserted to be 0: pages this
	 * test and the balloon child allocated on node 1 while node 0 was
	 * full are legitimate candidates, and the counter is global.  The
	 * region itself must be whole and unchanged.
	 */
	status = balloon_free(&b);
	self->env.kids[0] = 0;
	ASSERT_NE(-1, status) TH_LOG("the balloon could not be freed");
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("balloon pages changed content (status %#x)", status);
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s3);
		if (D(&s2, &s3, S_FAIL_STALE) >= n)
			break;
	} while (now_ms() - t0 < DEADLINE_MS);
	ksft_print_msg("balloon freed: after %lld ms, %llu stale, %llu promoted\n",
		       now_ms() - t0, D(&s2, &s3, S_FAIL_STALE),
		       D(&s2, &s3, S_PROMOTE_SUCCESS));
	log_deltas(&s2, &s3);
	EXPECT_LE(n, D(&s2, &s3, S_FAIL_STALE))
		TH_LOG("candidates of the offline memory were not dropped");
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	EXPECT_EQ(n, nc.n[0] + nc.n[1]);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes))
		TH_LOG("region content changed after the queue drained");

	nops = dimm_write_state(&self->dimm, "online_movable",
				OFFLINE_DEADLINE_MS, ops);
	ASSERT_LE(0, nops);
	EXPECT_EQ(0, log_ops("online", &self->dimm, ops, nops));
	EXPECT_EQ(self->dimm.nr, dimm_count_state(&self->dimm, "online"));
	region_unmap(&r);
}

int main(int argc, char **argv)
{
	struct dimm dimm;
	char why[200];
	int ret;

	/* A test killed by its timeout leaves the dimm offline. */
	if (dimm_find(&dimm, why, sizeof(why)) < 0)
		dimm.nr = 0;
	ret = kmm_test_main(argc, argv);
	if (!geteuid())
		dimm_online_all(&dimm);
	return ret;
}
