// SPDX-License-Identifier: GPL-2.0
/*
 * Memory policy tests for kmmscand.  Memory under an explicit policy stays
 * where the policy put it, as NUMA balancing leaves it: a hot range bound
 * to node 1 with MPOL_BIND is never promoted while an equally hot range
 * beside it is; MPOL_PREFERRED for node 1 and weighted interleave keep
 * their pages on node 1; a policy that asks to be optimised
 * (MPOL_F_NUMA_BALANCING) is promoted within its nodes.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_promote.h"

#ifndef MPOL_WEIGHTED_INTERLEAVE
#define MPOL_WEIGHTED_INTERLEAVE	6
#endif
#ifndef MPOL_F_NUMA_BALANCING
#define MPOL_F_NUMA_BALANCING		0x2000	/* uapi: 1 << 13 */
#endif
#define WI_SYSFS	"/sys/kernel/mm/mempolicy/weighted_interleave/"

FIXTURE(promote) {
	struct kmm_env env;
};

FIXTURE_SETUP(promote)
{
	kmm_env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN_PARENT(promote)
{
	kmm_env_restore(&self->env);
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

int main(int argc, char **argv)
{
	return kmm_test_main(argc, argv);
}
