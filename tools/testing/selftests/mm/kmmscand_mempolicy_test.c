// SPDX-License-Identifier: GPL-2.0
/*
 * Memory policy tests for kmmscand.  Memory under an explicit policy stays
 * where the policy put it, as NUMA balancing leaves it: a hot range bound
 * to node 1 with MPOL_BIND is never promoted while an equally hot range
 * beside it is; MPOL_PREFERRED for node 1 and weighted interleave keep
 * their pages on node 1; a policy that asks to be optimised
 * (MPOL_F_NUMA_BALANCING) is promoted within its nodes; a range bound
 * to node 1 while its candidates wait in the queue is not promoted; a
 * process whose task policy binds it to node 1 keeps its pages there.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_fixture.h"

#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE	6
#endif
#ifndef MPOL_F_NUMA_BALANCING
#define MPOL_F_NUMA_BALANCING		0x2000	/* uapi: 1 << 13 */
#endif
#define WI_SYSFS	"/sys/kernel/mm/mempolicy/weighted_interleave/"

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

	ret = region_on_node1(&rb, 8 * MB, REGION_BOUND, 0x9abc);
	ASSERT_EQ(0, ret) TH_LOG("bound region: %s", strerror(-ret));
	ret = region_on_node1(&rf, 8 * MB, 0, 0xdef0);
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
	const unsigned long n = (4 * MB) / psize();
	unsigned long both = 3UL, one = 2UL, got, passes;
	struct region pref, wi, mof, def;
	struct node_count nc_pref, nc_wi0, nc_wi, nc_mof;
	bool have_wi = true;
	struct hot_thread h = {};
	long long t;
	int ret;

	/* MPOL_PREFERRED node 1, kept. */
	ret = region_on_node1(&pref, n * psize(), REGION_BOUND, 0x1);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, sys_mbind(pref.base, pref.len, MPOL_PREFERRED, &one,
			       sizeof(one) * 8, 0));

	/* Weighted interleave, node 0 weight 3, node 1 weight 1. */
	memset(&wi, 0, sizeof(wi));
	wi.len = n * psize();
	wi.npages = n;
	wi.map_len = wi.len;
	wi.map = mmap(NULL, wi.len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, wi.map);
	wi.base = wi.map;
	madvise(wi.base, wi.len, MADV_NOHUGEPAGE);
	if (kmm_env_set(&self->env, WI_SYSFS "node0", "3") ||
	    kmm_env_set(&self->env, WI_SYSFS "node1", "1") ||
	    sys_mbind(wi.base, wi.len, MPOL_WEIGHTED_INTERLEAVE, &both,
		      sizeof(both) * 8, 0))
		have_wi = false;
	memset(wi.base, 1, wi.len);
	ASSERT_EQ(0, where_pages(0, wi.base, n, &nc_wi0));
	if (have_wi && !nc_wi0.n[1])
		have_wi = false;

	/* MPOL_BIND {0, 1} with MPOL_F_NUMA_BALANCING, pages on node 1. */
	ret = region_on_node1(&mof, n * psize(), 0, 0x3);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, sys_mbind(mof.base, mof.len,
			       MPOL_BIND | MPOL_F_NUMA_BALANCING, &both,
			       sizeof(both) * 8, 0))
		TH_LOG("mbind MPOL_F_NUMA_BALANCING: %s", strerror(errno));

	/* The default policy: the control. */
	ret = region_on_node1(&def, n * psize(), 0, 0x4);
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

	region_unmap(&pref);
	region_unmap(&wi);
	region_unmap(&mof);
	region_unmap(&def);
}

/*
 * The task policy of the process whose memory it is applies as well: a
 * process whose task policy is MPOL_BIND to node 1 keeps its hot pages on
 * node 1, while a process with the default policy, started beside it, has
 * its hot pages promoted.  Each process has a VMA without a policy, so
 * the task policy is the one that decides.  Without CONFIG_MEMCG there is
 * no mm->owner to find the task by.
 */
TEST_F_TIMEOUT(promote, task_policy_kept, 120)
{
	const size_t len = 4 * MB;
	const unsigned long n = len / psize();
	struct node_count nb = {};
	unsigned long one = 2UL, got = 0;
	pid_t bound, free_;
	char *bb, *fb;
	long long ms;

	bb = mmap(NULL, len, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fb = mmap(NULL, len, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bb);
	ASSERT_NE(MAP_FAILED, fb);
	/* The child inherits the task policy. */
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_BIND, &one, sizeof(one) * 8));
	bound = hot_child(bb, len, false);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	ASSERT_LT(0, bound) TH_LOG("bound child: %s", strerror(-bound));
	free_ = hot_child(fb, len, false);
	if (free_ < 0) {
		kill(bound, SIGKILL);
		waitpid(bound, NULL, 0);
	}
	ASSERT_LT(0, free_) TH_LOG("free child: %s", strerror(-free_));

	ms = wait_on_node(free_, fb, n, 0, HOT_PCT, DEADLINE_MS, &got);
	/* Three more periods for the bound pages to (wrongly) move. */
	if (ms >= 0)
		sleep_ms(3 * PERIOD_MAX_MS);
	EXPECT_EQ(0, where_pages(bound, bb, n, &nb));
	kill(bound, SIGKILL);
	kill(free_, SIGKILL);
	waitpid(bound, NULL, 0);
	waitpid(free_, NULL, 0);
	munmap(bb, len);
	munmap(fb, len);

	ksft_print_msg("default policy: %lu%% on node 0 after %lld ms\n",
		       got, ms);
	ksft_print_msg("task policy MPOL_BIND node 1: %lu on node 0, %lu on node 1 of %lu\n",
		       nb.n[0], nb.n[1], n);
	ASSERT_LE(0, ms) TH_LOG("the control was not promoted: nothing to compare with");
	EXPECT_EQ(0UL, nb.n[0]) TH_LOG("pages promoted against the task's MPOL_BIND");
}

/*
 * A policy change while candidates wait must stop them, as it stops a
 * hint fault: hot pages on node 1 are queued behind a rate limit of
 * 1 MB/s (32 pages a batch), then the range is bound to node 1 with
 * MPOL_BIND and the limit lifted.  The candidates that waited must be
 * dropped, not promoted: at most the batch in flight when mbind() ran may
 * still move.
 */
TEST_F_TIMEOUT(promote, mbind_while_queued_not_promoted, 120)
{
	const unsigned long n = (16 * MB) / psize();
	const long batch = 32;
	unsigned long one = 2UL, passes;
	struct node_count nc1, nc2;
	struct kmm_stats s0, s1, s2;
	struct hot_thread h = {};
	long queued = 0, left = 0;
	long long t0, t1;
	struct region r;
	int ret;

	ASSERT_EQ(0, access(KMMSCAND_SYSFS "queued", R_OK))
		TH_LOG("no %squeued", KMMSCAND_SYSFS);
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, batch));
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1));
	ret = region_on_node1(&r, n * psize(), 0, 0x6b6b);
	ASSERT_EQ(0, ret) TH_LOG("placing 16 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, n);

	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		ASSERT_EQ(0, read_long(KMMSCAND_SYSFS "queued", &queued));
	} while (queued < (long)n / 2 && now_ms() - t0 < SHORT_DEADLINE_MS);
	ksft_print_msg("%ld candidates waiting after %lld ms\n", queued,
		       now_ms() - t0);
	ASSERT_LE((long)n / 2, queued)
		TH_LOG("the hot set did not queue up behind the rate limit");

	/* The policy changes while they wait: node 1 only. */
	ASSERT_EQ(0, sys_mbind(r.base, r.len, MPOL_BIND, &one,
			       sizeof(one) * 8, 0))
		TH_LOG("mbind: %s", strerror(errno));
	ASSERT_EQ(0, where_pages(0, r.base, n, &nc1));
	kmm_stats_read(&s1);
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1048576));
	t1 = now_ms();
	do {
		sleep_ms(POLL_MS);
		ASSERT_EQ(0, read_long(KMMSCAND_SYSFS "queued", &left));
	} while (left && now_ms() - t1 < SHORT_DEADLINE_MS);
	kmm_stats_read(&s2);
	ASSERT_EQ(0, where_pages(0, r.base, n, &nc2));
	passes = hot_stop(&h);

	ksft_print_msg("at mbind: %lu/%lu on node 0, %ld queued\n",
		       nc1.n[0], n, queued);
	ksft_print_msg("%lld ms later: %lu on node 0, %ld queued\n",
		       now_ms() - t1, nc2.n[0], left);
	ksft_print_msg("after mbind: promote_success +%llu, fail_stale +%llu\n",
		       D(&s1, &s2, S_PROMOTE_SUCCESS), D(&s1, &s2, S_FAIL_STALE));
	log_deltas(&s0, &s2);
	ASSERT_EQ(0, left) TH_LOG("the queue did not drain in %d ms",
				  SHORT_DEADLINE_MS);
	EXPECT_GE(nc1.n[0] + batch, nc2.n[0])
		TH_LOG("%lu pages promoted against MPOL_BIND after mbind()",
		       nc2.n[0] - nc1.n[0]);
	/* Dropped at batch time, not just outlived by a later pass. */
	EXPECT_LE((unsigned long long)queued / 2, D(&s1, &s2, S_FAIL_STALE))
		TH_LOG("the candidates that waited were not dropped as stale");
	EXPECT_EQ(0UL, region_verify(&r, 0, n, passes));
	region_unmap(&r);
}

int main(int argc, char **argv)
{
	return kmm_test_main(argc, argv);
}
