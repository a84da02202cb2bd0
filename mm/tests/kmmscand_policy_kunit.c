// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the kmmscand policy helpers (mm/kmmscand_policy.h) and
 * for the parts of the scanner that need no mm: the history store and its
 * bound (mm/kmmscand_history.c), the memory policy rule, the top-tier span
 * lookup.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/slab.h>

#include "../kmmscand_internal.h"
#include "../kmmscand_policy.h"

/* ---- kmmscand_policy: period, budget, hotness, history ---- */

static void kmmscand_test_period_steady(struct kunit *test)
{
	/* 0 < Y <= X: unchanged */
	KUNIT_EXPECT_EQ(test, 2000U, kmmscand_next_period(2000, 10, 10, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 2000U, kmmscand_next_period(2000, 10, 1, 0, 500, 5000));
	/* above the floor (16384 / 16 = 1024), where a halving would show */
	KUNIT_EXPECT_EQ(test, 4096U, kmmscand_next_budget(4096, 10, 10, 0, 16384));
	KUNIT_EXPECT_EQ(test, 4096U, kmmscand_next_budget(4096, 10, 1, 0, 16384));
}

static void kmmscand_test_period_ramp(struct kunit *test)
{
	/* Y > X: period halves, budget doubles */
	KUNIT_EXPECT_EQ(test, 1000U, kmmscand_next_period(2000, 0, 1, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 1000U, kmmscand_next_period(2000, 5, 6, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 8192U, kmmscand_next_budget(4096, 5, 6, 0, 65536));
	/* clamped at the minimum period and at scan_size */
	KUNIT_EXPECT_EQ(test, 500U, kmmscand_next_period(600, 0, 1, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 65536U, kmmscand_next_budget(65536, 0, 1, 0, 65536));
}

static void kmmscand_test_period_idle(struct kunit *test)
{
	/* Y == 0: period += period / 4, budget halves */
	KUNIT_EXPECT_EQ(test, 2500U, kmmscand_next_period(2000, 0, 0, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 2500U, kmmscand_next_period(2000, 7, 0, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 5000U, kmmscand_next_period(4500, 0, 0, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 2048U, kmmscand_next_budget(4096, 3, 0, 0, 16384));
	/* budget floor is scan_size / 16 */
	KUNIT_EXPECT_EQ(test, 4096U, kmmscand_next_budget(4096, 0, 0, 0, 65536));
	KUNIT_EXPECT_EQ(test, 32U, kmmscand_next_budget(32, 0, 0, 0, 512));
}

static void kmmscand_test_period_clamp(struct kunit *test)
{
	/* out-of-range inputs come back inside the bounds */
	KUNIT_EXPECT_EQ(test, 500U, kmmscand_next_period(1, 1, 1, 0, 500, 5000));
	KUNIT_EXPECT_EQ(test, 5000U, kmmscand_next_period(60000, 1, 1, 0, 500, 5000));
	/* min > max (transiently, between two stores): min wins */
	KUNIT_EXPECT_EQ(test, 800U, kmmscand_next_period(2000, 1, 1, 0, 800, 700));
	KUNIT_EXPECT_EQ(test, 512U, kmmscand_next_budget(100000, 1, 1, 0, 512));
	KUNIT_EXPECT_EQ(test, 32U, kmmscand_next_budget(0, 1, 1, 0, 512));
	/* a budget kept across a scan_size change is clamped at once */
	KUNIT_EXPECT_EQ(test, 512U, kmmscand_clamp_budget(65536, 512));
	KUNIT_EXPECT_EQ(test, 4096U, kmmscand_clamp_budget(32, 65536));
	KUNIT_EXPECT_EQ(test, 1000U, kmmscand_clamp_budget(1000, 4096));
	KUNIT_EXPECT_EQ(test, 1U, kmmscand_clamp_budget(0, 0));
	/* a pass that looks for a moved hot set does it at full budget */
	KUNIT_EXPECT_EQ(test, 65536U, kmmscand_visit_budget(4096, 65536, true));
	KUNIT_EXPECT_EQ(test, 4096U, kmmscand_visit_budget(4096, 65536, false));
	KUNIT_EXPECT_EQ(test, 512U, kmmscand_visit_budget(65536, 512, false));
	KUNIT_EXPECT_EQ(test, 1U, kmmscand_visit_budget(0, 0, true));
	/* idle decay from the bottom gets off the floor: 500 -> 625 */
	KUNIT_EXPECT_EQ(test, 625U, kmmscand_next_period(500, 0, 0, 0, 500, 5000));
	/* tiny period still grows or clamps, never sticks below min */
	KUNIT_EXPECT_EQ(test, 100U, kmmscand_next_period(3, 0, 0, 0, 100, 200));
}

static void kmmscand_test_period_overflow(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, UINT_MAX,
			kmmscand_next_period(UINT_MAX, 0, 0, 0, 100, UINT_MAX));
	KUNIT_EXPECT_EQ(test, UINT_MAX,
			kmmscand_next_period(UINT_MAX - 1, 0, 0, 0, 100, UINT_MAX));
	KUNIT_EXPECT_EQ(test, UINT_MAX,
			kmmscand_next_budget(UINT_MAX - 1, 0, 1, 0, UINT_MAX));
	KUNIT_EXPECT_EQ(test, UINT_MAX,
			kmmscand_next_budget(UINT_MAX / 2 + 1, 0, 1, 0, UINT_MAX));
	/* counts near ULONG_MAX compare correctly */
	KUNIT_EXPECT_EQ(test, 1000U,
			kmmscand_next_period(2000, ULONG_MAX - 1, ULONG_MAX, 0,
					     500, 5000));
	KUNIT_EXPECT_EQ(test, 2000U,
			kmmscand_next_period(2000, ULONG_MAX, ULONG_MAX, 0,
					     500, 5000));
}

static void kmmscand_test_quick_interval(struct kunit *test)
{
	unsigned int q = 0;
	int i;

	/* The first pass starts at the minimum period. */
	KUNIT_EXPECT_EQ(test, 500U, kmmscand_next_quick(0, false, false, 500));
	/* Unused slow-tier tables: + 1/4 per pass, up to twice the minimum. */
	KUNIT_EXPECT_EQ(test, 625U, kmmscand_next_quick(500, true, false, 500));
	KUNIT_EXPECT_EQ(test, 781U, kmmscand_next_quick(625, true, false, 500));
	for (i = 0; i < 100; i++)
		q = kmmscand_next_quick(q, true, false, 500);
	KUNIT_EXPECT_EQ(test, 500U * KMMSCAND_QUICK_MAX, q);
	/* A walk that found nothing young on the slow tier keeps it. */
	KUNIT_EXPECT_EQ(test, 781U, kmmscand_next_quick(781, false, false, 500));
	/* A young slow-tier page brings it back to the minimum at once. */
	KUNIT_EXPECT_EQ(test, 500U, kmmscand_next_quick(1000, false, true, 500));
	KUNIT_EXPECT_EQ(test, 500U, kmmscand_next_quick(1000, true, true, 500));
	/* A changed minimum applies at the next pass, either way. */
	KUNIT_EXPECT_EQ(test, 200U, kmmscand_next_quick(1000, false, false, 100));
	KUNIT_EXPECT_EQ(test, 2000U, kmmscand_next_quick(1000, false, false, 2000));
	/* No wrap near UINT_MAX. */
	KUNIT_EXPECT_EQ(test, UINT_MAX,
			kmmscand_next_quick(UINT_MAX - 1, true, false, UINT_MAX));
	KUNIT_EXPECT_EQ(test, UINT_MAX,
			kmmscand_next_quick(UINT_MAX - 1, true, false,
					    UINT_MAX / 2 + 1));
}

static void kmmscand_test_hot_first_touch(struct kunit *test)
{
	unsigned int h = 0;

	/* Defaults K = 2 of N = 2: one young pass is never hot. */
	h = kmmscand_history_update(h, true, 2);
	KUNIT_EXPECT_EQ(test, 1U, h);
	KUNIT_EXPECT_FALSE(test, kmmscand_history_hot(h, 2));
	h = kmmscand_history_update(h, true, 2);
	KUNIT_EXPECT_EQ(test, 3U, h);
	KUNIT_EXPECT_TRUE(test, kmmscand_history_hot(h, 2));
	/* young, idle, young: only 1 of the last 2 */
	h = kmmscand_history_update(1, false, 2);
	h = kmmscand_history_update(h, true, 2);
	KUNIT_EXPECT_EQ(test, 1U, h);
	KUNIT_EXPECT_FALSE(test, kmmscand_history_hot(h, 2));
}

static void kmmscand_test_hot_k_of_n(struct kunit *test)
{
	unsigned int h = 0;
	int i;

	/* K = 3 of N = 8: three young passes anywhere in eight */
	h = kmmscand_history_update(h, true, 8);
	for (i = 0; i < 3; i++)
		h = kmmscand_history_update(h, false, 8);
	h = kmmscand_history_update(h, true, 8);
	KUNIT_EXPECT_FALSE(test, kmmscand_history_hot(h, 3));
	h = kmmscand_history_update(h, false, 8);
	h = kmmscand_history_update(h, true, 8);
	KUNIT_EXPECT_TRUE(test, kmmscand_history_hot(h, 3));
	/* K = 1: first touch promotes (explicitly requested) */
	KUNIT_EXPECT_TRUE(test,
			  kmmscand_history_hot(kmmscand_history_update(0, true, 1), 1));
	/* K = 0 is treated as 1: an empty history is never hot */
	KUNIT_EXPECT_FALSE(test, kmmscand_history_hot(0, 0));
}

static void kmmscand_test_history_aging(struct kunit *test)
{
	unsigned int h = 0xff;
	int i;

	/* N idle passes forget everything, so the entry can be erased */
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_NE(test, 0U, h);
		h = kmmscand_history_update(h, false, 8);
	}
	KUNIT_EXPECT_EQ(test, 0U, h);
	/* history never exceeds N bits, even if N shrinks */
	KUNIT_EXPECT_EQ(test, 3U, kmmscand_history_update(0xff, true, 2));
	KUNIT_EXPECT_EQ(test, 0U, kmmscand_history_update(0xff, false, 1));
	/* out of range N is clamped to 1..8 */
	KUNIT_EXPECT_EQ(test, 1U, kmmscand_history_update(0xff, true, 0));
	KUNIT_EXPECT_EQ(test, 0xffU, kmmscand_history_update(0xff, true, 32));
}

static void kmmscand_test_period_warm(struct kunit *test)
{
	/* W > 0 and Y == 0: pages started being used, speed up */
	KUNIT_EXPECT_EQ(test, 2500U, kmmscand_next_period(5000, 0, 0, 1, 500, 5000));
	KUNIT_EXPECT_EQ(test, 500U, kmmscand_next_period(600, 3, 0, 9, 500, 5000));
	KUNIT_EXPECT_EQ(test, 8192U, kmmscand_next_budget(4096, 0, 0, 1, 65536));
	/* W does not turn a steady pass into a ramp, nor into a decay */
	KUNIT_EXPECT_EQ(test, 2000U, kmmscand_next_period(2000, 10, 5, 7, 500, 5000));
	KUNIT_EXPECT_EQ(test, 4096U, kmmscand_next_budget(4096, 10, 5, 7, 16384));
}

static void kmmscand_test_hot_ample(struct kunit *test)
{
	/* not young in this pass: never hot, room or not */
	KUNIT_EXPECT_FALSE(test, kmmscand_is_hot(1, 2, 2, true));
	/* first sighting: only K = 1 makes it hot, room or not */
	KUNIT_EXPECT_FALSE(test, kmmscand_is_hot(0, 1, 2, true));
	KUNIT_EXPECT_TRUE(test, kmmscand_is_hot(0, 1, 1, false));
	/* young, cleared, idle, young again: hot only with room */
	KUNIT_EXPECT_TRUE(test, kmmscand_is_hot(2, 1, 2, true));
	KUNIT_EXPECT_FALSE(test, kmmscand_is_hot(2, 1, 2, false));
	/* young twice in a row: hot either way */
	KUNIT_EXPECT_TRUE(test, kmmscand_is_hot(1, 3, 2, false));
	KUNIT_EXPECT_TRUE(test, kmmscand_is_hot(1, 3, 2, true));
}

static struct kunit_case kmmscand_policy_cases[] = {
	KUNIT_CASE(kmmscand_test_period_warm),
	KUNIT_CASE(kmmscand_test_hot_ample),
	KUNIT_CASE(kmmscand_test_period_steady),
	KUNIT_CASE(kmmscand_test_period_ramp),
	KUNIT_CASE(kmmscand_test_period_idle),
	KUNIT_CASE(kmmscand_test_period_clamp),
	KUNIT_CASE(kmmscand_test_period_overflow),
	KUNIT_CASE(kmmscand_test_quick_interval),
	KUNIT_CASE(kmmscand_test_hot_first_touch),
	KUNIT_CASE(kmmscand_test_hot_k_of_n),
	KUNIT_CASE(kmmscand_test_history_aging),
	{},
};

static struct kunit_suite kmmscand_policy_suite = {
	.name = "kmmscand_policy",
	.test_cases = kmmscand_policy_cases,
};

/* ---- kmmscand_migrate: token bucket, target choice ---- */

#define KT_PAGES_PER_MB		((u64)SZ_1M >> PAGE_SHIFT)

static void kmmscand_test_bucket_refill(struct kunit *test)
{
	struct kmmscand_bucket b = { .tokens = 0, .last_ns = 1000 };
	u64 per_sec = 100 * KT_PAGES_PER_MB;	/* 100 MB/s */

	/* 10 ms at 100 MB/s = 1 MB */
	kmmscand_bucket_refill(&b, 1000 + 10 * NSEC_PER_MSEC, 100, 512);
	KUNIT_EXPECT_EQ(test, per_sec / 100, b.tokens);
	KUNIT_EXPECT_TRUE(test, kmmscand_bucket_take(&b, per_sec / 100));
	KUNIT_EXPECT_FALSE(test, kmmscand_bucket_take(&b, 1));
	/*
	 * Steps that each earn a whole token and a fraction: the fractions
	 * must add up.  5 ms at 1 MB/s is 1.28 pages; 100 steps are 128
	 * pages, where dropping the fraction on every step would give 100.
	 */
	b.tokens = 0;
	b.last_ns = 0;
	{
		u64 t;

		for (t = 1; t <= 100; t++)
			kmmscand_bucket_refill(&b, t * 5 * NSEC_PER_MSEC, 1,
					       4096);
	}
	KUNIT_EXPECT_GE(test, b.tokens, (u64)(KT_PAGES_PER_MB / 2 - 1));
	KUNIT_EXPECT_LE(test, b.tokens, (u64)(KT_PAGES_PER_MB / 2));
	/* steps too short to earn a token still count */
	b.tokens = 0;
	b.last_ns = 0;
	{
		u64 t;

		for (t = 1; t <= 1000; t++)
			kmmscand_bucket_refill(&b, t * 100 * NSEC_PER_USEC, 1,
					       4096);
	}
	/* 100 ms at 1 MB/s = 25.6 pages */
	KUNIT_EXPECT_GE(test, b.tokens, (u64)(KT_PAGES_PER_MB / 10 - 1));
	KUNIT_EXPECT_LE(test, b.tokens, (u64)(KT_PAGES_PER_MB / 10));
}

static void kmmscand_test_bucket_cap(struct kunit *test)
{
	struct kmmscand_bucket b = { .tokens = 0, .last_ns = 0 };

	/* capacity is one second of rate ... */
	kmmscand_bucket_refill(&b, 10 * NSEC_PER_SEC, 256, 512);
	KUNIT_EXPECT_EQ(test, 256ULL * KT_PAGES_PER_MB, b.tokens);
	/* ... or one batch if that is larger, earned at the rate */
	b.tokens = 0;
	b.last_ns = 0;
	kmmscand_bucket_refill(&b, 10 * NSEC_PER_SEC, 1, 4096);
	KUNIT_EXPECT_EQ(test, 10 * KT_PAGES_PER_MB, b.tokens);
	kmmscand_bucket_refill(&b, 20 * NSEC_PER_SEC, 1, 4096);
	KUNIT_EXPECT_EQ(test, 4096ULL, b.tokens);
	KUNIT_EXPECT_EQ(test, 4096ULL, kmmscand_bucket_capacity(1, 4096));
	/* a full bucket stays full */
	kmmscand_bucket_refill(&b, 21 * NSEC_PER_SEC, 1, 4096);
	KUNIT_EXPECT_EQ(test, 4096ULL, b.tokens);
	/* lowering the rate shrinks an overfull bucket */
	b.tokens = 1ULL << 40;
	kmmscand_bucket_refill(&b, 21 * NSEC_PER_SEC, 1, 512);
	KUNIT_EXPECT_EQ(test, 512ULL, b.tokens);
}

/*
 * The limit holds over time whatever the batch size: a second earns a
 * second of tokens even when the bucket holds more, and a migrator that
 * sleeps as told and moves THPs at 1 MB/s gets no more than the capacity
 * plus the rate over a minute.
 */
static void kmmscand_test_bucket_long_run(struct kunit *test)
{
	struct kmmscand_bucket b = { .tokens = 0, .last_ns = 0 };
	u64 t = 0, passed = 0, per_sec = KT_PAGES_PER_MB;
	const u64 thp = 512, span = 60 * NSEC_PER_SEC;

	kmmscand_bucket_refill(&b, NSEC_PER_SEC, 1, thp);
	KUNIT_EXPECT_EQ(test, per_sec, b.tokens);
	kmmscand_bucket_refill(&b, 2 * NSEC_PER_SEC, 1, thp);
	KUNIT_EXPECT_EQ(test, max(thp, per_sec), b.tokens);

	b.tokens = 0;
	b.last_ns = 0;
	while (t < span) {
		kmmscand_bucket_refill(&b, t, 1, thp);
		if (kmmscand_bucket_take(&b, thp)) {
			passed += thp;
			t += NSEC_PER_MSEC;
		} else {
			t += max_t(u64, kmmscand_bucket_wait_ns(&b, thp, 1),
				   NSEC_PER_MSEC);
		}
	}
	KUNIT_EXPECT_LE(test, passed, max(thp, per_sec) + 60 * per_sec);
	KUNIT_EXPECT_GE(test, passed, 59 * per_sec - thp);
}

static void kmmscand_test_bucket_zero_rate(struct kunit *test)
{
	struct kmmscand_bucket b = { .tokens = 1000, .last_ns = 0 };

	kmmscand_bucket_refill(&b, 5 * NSEC_PER_SEC, 0, 512);
	KUNIT_EXPECT_EQ(test, 0ULL, b.tokens);
	KUNIT_EXPECT_FALSE(test, kmmscand_bucket_take(&b, 1));
	KUNIT_EXPECT_EQ(test, 0ULL, kmmscand_bucket_capacity(0, 512));
	KUNIT_EXPECT_EQ(test, (u64)NSEC_PER_SEC,
			kmmscand_bucket_wait_ns(&b, 1, 0));
}

static void kmmscand_test_bucket_overflow(struct kunit *test)
{
	struct kmmscand_bucket b = { .tokens = 0, .last_ns = 0 };

	/* maximum rate, huge time jump: no wrap, just full */
	kmmscand_bucket_refill(&b, U64_MAX, 1048576, 4096);
	KUNIT_EXPECT_EQ(test, 1048576ULL * KT_PAGES_PER_MB, b.tokens);
	/* clock going backwards does not add tokens */
	b.tokens = 0;
	b.last_ns = 5 * NSEC_PER_SEC;
	kmmscand_bucket_refill(&b, NSEC_PER_SEC, 1048576, 4096);
	KUNIT_EXPECT_EQ(test, 0ULL, b.tokens);
	/* just under one second at the maximum rate stays in range */
	b.tokens = 0;
	b.last_ns = 0;
	kmmscand_bucket_refill(&b, NSEC_PER_SEC - 1, 1048576, 4096);
	KUNIT_EXPECT_LE(test, b.tokens, 1048576ULL * KT_PAGES_PER_MB);
	KUNIT_EXPECT_GT(test, b.tokens, 1048575ULL * KT_PAGES_PER_MB - 2);
	/* wait time is bounded and exact enough */
	b.tokens = 0;
	KUNIT_EXPECT_EQ(test, (u64)NSEC_PER_SEC,
			kmmscand_bucket_wait_ns(&b, U64_MAX, 1));
	KUNIT_EXPECT_EQ(test, 0ULL, kmmscand_bucket_wait_ns(&b, 0, 1));
}

static void kmmscand_test_bucket_wait(struct kunit *test)
{
	struct kmmscand_bucket b = { .tokens = 0, .last_ns = 0 };

	if (PAGE_SIZE != SZ_4K)
		kunit_skip(test, "the expected values assume 4 KiB pages");
	/* 1 MB/s is 256 pages/s: 3 pages are 3/256 s */
	KUNIT_EXPECT_EQ(test, 11718750ULL, kmmscand_bucket_wait_ns(&b, 3, 1));
	/* only the missing tokens count: 8 wanted, 5 there */
	b.tokens = 5;
	KUNIT_EXPECT_EQ(test, 11718750ULL, kmmscand_bucket_wait_ns(&b, 8, 1));
	/* 3 MB/s is 768 pages/s: 1/768 s = 1302083.33 ns, rounded up */
	b.tokens = 0;
	KUNIT_EXPECT_EQ(test, 1302084ULL, kmmscand_bucket_wait_ns(&b, 1, 3));
	/* one page short of a second's worth: 767/768 s, under the cap */
	KUNIT_EXPECT_EQ(test, 998697917ULL,
			kmmscand_bucket_wait_ns(&b, 767, 3));
	/* a second's worth or more: the cap */
	KUNIT_EXPECT_EQ(test, (u64)NSEC_PER_SEC,
			kmmscand_bucket_wait_ns(&b, 768, 3));
}

static int kmmscand_test_dist(int from, int to)
{
	/* nodes on a line: distance grows with the id difference */
	return 10 + 10 * abs(from - to);
}

static int kt_pick(const unsigned long *fp, unsigned int nr,
		   const nodemask_t *allowed, const nodemask_t *top, int src,
		   int override)
{
	return kmmscand_choose_target(fp, nr, allowed, top, src, override,
				      kmmscand_test_dist);
}

static void kmmscand_test_target_footprint(struct kunit *test)
{
	unsigned long fp[4] = { 100, 300, 0, 0 };
	nodemask_t allowed = NODE_MASK_NONE, top = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs MAX_NUMNODES >= 4");
	node_set(0, top);
	node_set(1, top);
	node_set(0, allowed);
	node_set(1, allowed);
	node_set(3, allowed);
	/* largest footprint: node 1, also the nearest to the source 3 */
	KUNIT_EXPECT_EQ(test, 1, kt_pick(fp, 4, &allowed, &top, 3, -1));
	/*
	 * Largest footprint wins over distance: node 0 holds more and is
	 * farther from the source (40 against 30).
	 */
	fp[0] = 300;
	fp[1] = 100;
	KUNIT_EXPECT_EQ(test, 0, kt_pick(fp, 4, &allowed, &top, 3, -1));
	KUNIT_EXPECT_EQ(test, 0, kt_pick(fp, 4, &allowed, &top, 2, -1));
	/*
	 * A node outside the top tier is never chosen, even allowed, with
	 * the largest footprint and not the source.
	 */
	fp[3] = 1000;
	KUNIT_EXPECT_EQ(test, 0, kt_pick(fp, 4, &allowed, &top, 2, -1));
	/* a disallowed node is never chosen, even with the largest footprint */
	node_clear(0, allowed);
	KUNIT_EXPECT_EQ(test, 1, kt_pick(fp, 4, &allowed, &top, 3, -1));
}

static void kmmscand_test_target_ties(struct kunit *test)
{
	unsigned long fp[4] = { 50, 0, 50, 0 };
	nodemask_t allowed = NODE_MASK_NONE, top = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs MAX_NUMNODES >= 4");
	node_set(0, top);
	node_set(2, top);
	node_set(0, allowed);
	node_set(2, allowed);
	/* equal footprint: nearest to the source (3 is next to 2) */
	KUNIT_EXPECT_EQ(test, 2, kt_pick(fp, 4, &allowed, &top, 3, -1));
	/* equal footprint and distance: lowest id */
	KUNIT_EXPECT_EQ(test, 0, kt_pick(fp, 4, &allowed, &top, 1, -1));
}

static void kmmscand_test_target_distance(struct kunit *test)
{
	unsigned long fp[4] = { 0, 0, 0, 0 };
	nodemask_t allowed = NODE_MASK_NONE, top = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs MAX_NUMNODES >= 4");
	node_set(0, top);
	node_set(1, top);
	nodes_setall(allowed);
	/* no footprint anywhere: nearest top-tier node */
	KUNIT_EXPECT_EQ(test, 1, kt_pick(fp, 4, &allowed, &top, 3, -1));
	/*
	 * Footprint array shorter than the node ids: the entries past its
	 * end count as 0, whatever lies there.  Only fp[0..1] are valid,
	 * so node 2's 1000 is not read and the nearest to the source (0)
	 * of the top-tier nodes 1 and 2 wins.
	 */
	fp[2] = 1000;
	node_clear(0, top);
	node_set(2, top);
	KUNIT_EXPECT_EQ(test, 1, kt_pick(fp, 2, &allowed, &top, 0, -1));
	/* within the array it counts */
	KUNIT_EXPECT_EQ(test, 2, kt_pick(fp, 3, &allowed, &top, 0, -1));
}

static void kmmscand_test_target_override(struct kunit *test)
{
	unsigned long fp[4] = { 1000, 10, 0, 0 };
	nodemask_t allowed = NODE_MASK_NONE, top = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs MAX_NUMNODES >= 4");
	node_set(0, top);
	node_set(1, top);
	node_set(0, allowed);
	node_set(1, allowed);
	node_set(2, allowed);
	/* valid override wins over the footprint (node 0) */
	KUNIT_EXPECT_EQ(test, 1, kt_pick(fp, 4, &allowed, &top, 2, 1));
	/*
	 * override not in the top tier: automatic choice, the footprint
	 * (node 0), although node 1 is nearer to the source 2
	 */
	KUNIT_EXPECT_EQ(test, 0, kt_pick(fp, 4, &allowed, &top, 2, 2));
	/* override not allowed for this mm/VMA: automatic choice */
	node_clear(1, allowed);
	KUNIT_EXPECT_EQ(test, 0, kt_pick(fp, 4, &allowed, &top, 2, 1));
	/* out of range override: automatic choice */
	node_set(1, allowed);
	KUNIT_EXPECT_EQ(test, 0, kt_pick(fp, 4, &allowed, &top, 2, MAX_NUMNODES));
}

static void kmmscand_test_target_none(struct kunit *test)
{
	unsigned long fp[4] = { 10, 10, 10, 10 };
	nodemask_t allowed = NODE_MASK_NONE, top = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs MAX_NUMNODES >= 4");
	node_set(0, top);
	node_set(2, allowed);
	node_set(3, allowed);
	/* only slow nodes allowed (mbind to the slow tier): no promotion */
	KUNIT_EXPECT_EQ(test, NUMA_NO_NODE,
			kt_pick(fp, 4, &allowed, &top, 3, 0));
	/* nothing allowed at all */
	nodes_clear(allowed);
	KUNIT_EXPECT_EQ(test, NUMA_NO_NODE,
			kt_pick(fp, 4, &allowed, &top, 3, -1));
	/* no top tier at all */
	nodes_setall(allowed);
	nodes_clear(top);
	KUNIT_EXPECT_EQ(test, NUMA_NO_NODE,
			kt_pick(fp, 4, &allowed, &top, 3, -1));
}

static struct kunit_case kmmscand_migrate_cases[] = {
	KUNIT_CASE(kmmscand_test_bucket_refill),
	KUNIT_CASE(kmmscand_test_bucket_cap),
	KUNIT_CASE(kmmscand_test_bucket_long_run),
	KUNIT_CASE(kmmscand_test_bucket_zero_rate),
	KUNIT_CASE(kmmscand_test_bucket_overflow),
	KUNIT_CASE(kmmscand_test_bucket_wait),
	KUNIT_CASE(kmmscand_test_target_footprint),
	KUNIT_CASE(kmmscand_test_target_ties),
	KUNIT_CASE(kmmscand_test_target_distance),
	KUNIT_CASE(kmmscand_test_target_override),
	KUNIT_CASE(kmmscand_test_target_none),
	{},
};

static struct kunit_suite kmmscand_migrate_suite = {
	.name = "kmmscand_migrate",
	.test_cases = kmmscand_migrate_cases,
};

/* ---- kmmscand_scan: history store, memory policies, node spans ---- */

static struct kmmscand_mm_slot *kt_slot(struct kunit *test)
{
	struct kmmscand_mm_slot *ms = kunit_kzalloc(test, sizeof(*ms),
						    GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ms);
	ms->tables = RB_ROOT;
	return ms;
}

static struct kmmscand_walk *kt_walk(struct kunit *test,
				     struct kmmscand_mm_slot *ms,
				     unsigned int n)
{
	struct kmmscand_walk *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->ms = ms;
	w->hist_n = n;
	w->hot_k = n;
	w->tbl_idx = ULONG_MAX;
	return w;
}

/* A new pass over the mm. */
static void kt_pass(struct kmmscand_walk *w, bool quick)
{
	w->ms->seq++;
	if (!quick)
		w->ms->full++;
	w->ms->quick = quick;
	w->quick = quick;
	w->top_wake = false;
	w->tbl_idx = ULONG_MAX;
}

/* The history of page @bit of the table at @addr before this pass. */
static unsigned int kt_hist(struct kmmscand_walk *w, unsigned long addr,
			    unsigned int bit)
{
	return kmmscand_table_hist(kmmscand_table_cur(w, addr), bit);
}

/* A fragment [start, end) of a table: @young page @bit or none (-1). */
static void kt_frag(struct kmmscand_walk *w, unsigned long start,
		    unsigned long end, int bit, bool slow)
{
	kmmscand_table_cur(w, start);
	if (bit >= 0) {
		__set_bit(bit, w->young_map);
		w->frag_young = true;
	}
	w->slow_seen = slow || bit >= 0;
	w->top_seen = false;
	kmmscand_note_table(w, start, end);
}

/* A fragment [start, end) of a table in which only top-tier pages were. */
static void kt_frag_top(struct kmmscand_walk *w, unsigned long start,
			unsigned long end)
{
	kmmscand_table_cur(w, start);
	w->slow_seen = false;
	w->top_seen = true;
	kmmscand_note_table(w, start, end);
	w->top_seen = false;
}

/*
 * A page's history in the table records is the one kmmscand_history_update()
 * builds, pass by pass, with passes that do not visit the table counting
 * as passes that did not find the page young; so K of N holds.
 */
static void kmmscand_test_table_history(struct kunit *test)
{
	static const signed char young[] = {
		1, 0, 1, 1, -1, 1, 0, 0, 0, 1, -1, -1, 1, 1, 1, 0, -1, -1,
		-1, -1, 1, 0, 1,
	};
	struct kmmscand_mm_slot *ms = kt_slot(test);
	const unsigned long t0 = 5UL << PMD_SHIFT;
	unsigned int n, i, ref;

	for (n = 1; n <= KMMSCAND_HISTORY_MAX; n++) {
		struct kmmscand_walk *w = kt_walk(test, ms, n);

		ref = 0;
		for (i = 0; i < ARRAY_SIZE(young); i++) {
			kt_pass(w, false);
			if (young[i] < 0) {	/* not visited */
				ref = kmmscand_history_update(ref, false, n);
				continue;
			}
			KUNIT_EXPECT_EQ_MSG(test, kt_hist(w, t0, 7), ref,
					    "n %u pass %u", n, i);
			ref = kmmscand_history_update(ref, young[i], n);
			kt_frag(w, t0, t0 + PMD_SIZE, young[i] ? 7 : -1, true);
		}
		kmmscand_history_free(ms);
		KUNIT_EXPECT_EQ(test, ms->hist_bytes, 0UL);
	}
}

/*
 * Review item: a table handed over in fragments (two VMAs sharing it, or
 * a visit that ran out of budget in it) is the sum of its fragments: a
 * later fragment without slow-tier pages neither erases the table nor
 * the history of the pages of an earlier one, in either order.
 */
static void kmmscand_test_table_fragments(struct kunit *test)
{
	struct kmmscand_mm_slot *ms = kt_slot(test);
	struct kmmscand_walk *w = kt_walk(test, ms, 2);
	const unsigned long t0 = 9UL << PMD_SHIFT, mid = t0 + PMD_SIZE / 2;
	unsigned int prev, hist;

	/* Full pass: young page 3 in [t0, mid), nothing in [mid, end). */
	kt_pass(w, false);
	kt_frag(w, t0, mid, 3, true);
	kt_frag(w, mid, t0 + PMD_SIZE, -1, false);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 1UL);

	/* The quick pass still visits the table, and page 3 is hot. */
	kt_pass(w, true);
	KUNIT_EXPECT_FALSE(test, kmmscand_table_skip(w, t0));
	prev = kt_hist(w, t0, 3);
	KUNIT_EXPECT_EQ(test, prev, 1U);
	hist = kmmscand_history_update(prev, true, 2);
	KUNIT_EXPECT_TRUE(test, kmmscand_is_hot(prev, hist, 2, false));
	kt_frag(w, t0, mid, 3, true);
	kmmscand_history_sweep(ms);

	/* The other order: the empty fragment first. */
	kt_pass(w, false);
	kt_frag(w, mid, t0 + PMD_SIZE, -1, false);
	kt_frag(w, t0, mid, -1, true);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 1UL);
	kt_pass(w, false);
	KUNIT_EXPECT_EQ(test, kt_hist(w, t0, 3), 2U);

	/* A fragment stored later in a pass keeps the earlier one's bits. */
	kt_frag(w, mid, t0 + PMD_SIZE, PTRS_PER_PTE - 1, true);
	kt_frag(w, t0, mid, 3, true);
	kt_pass(w, false);
	KUNIT_EXPECT_EQ(test, kt_hist(w, t0, 3), 1U);
	KUNIT_EXPECT_EQ(test, kt_hist(w, t0, PTRS_PER_PTE - 1), 1U);
	kmmscand_history_free(ms);
}

/*
 * A full pass drops the tables it found no slow-tier page in, quick passes
 * drop nothing, and the bytes are counted as they come and go.
 */
static void kmmscand_test_table_sweep(struct kunit *test)
{
	struct kmmscand_mm_slot *ms = kt_slot(test);
	struct kmmscand_walk *w = kt_walk(test, ms, 2);
	const unsigned long a = 1UL << PMD_SHIFT, b = 2UL << PMD_SHIFT;

	kt_pass(w, false);
	kt_frag(w, a, a + PMD_SIZE, 1, true);
	kt_frag(w, b, b + PMD_SIZE, -1, true);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 2UL);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, 2 * kmmscand_table_size() +
			kmmscand_planes_size(2));

	/* Nothing visited in a quick pass: kept. */
	kt_pass(w, true);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 2UL);

	/* A full pass that sees only b: a goes, with its bitmaps. */
	kt_pass(w, false);
	kt_frag(w, b, b + PMD_SIZE, -1, true);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 1UL);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, kmmscand_table_size());
	KUNIT_EXPECT_TRUE(test, kmmscand_table_skip(w, a) == false);
	kt_pass(w, true);
	KUNIT_EXPECT_TRUE(test, kmmscand_table_skip(w, a));

	/* A page that stops being young: its bitmaps go after N visits. */
	kt_pass(w, false);
	kt_frag(w, b, b + PMD_SIZE, 0, true);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, kmmscand_table_size() +
			kmmscand_planes_size(2));
	kt_pass(w, false);
	kt_frag(w, b, b + PMD_SIZE, -1, true);
	kt_pass(w, false);
	kt_frag(w, b, b + PMD_SIZE, -1, true);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, kmmscand_table_size());
	kmmscand_history_free(ms);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, 0UL);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 0UL);
}

/*
 * Isolated young pages, one per table: the history of an mm stays within
 * its budget, one byte per slow-tier page it maps or the floor.
 */
static void kmmscand_test_table_budget(struct kunit *test)
{
	struct kmmscand_mm_slot *ms = kt_slot(test);
	struct kmmscand_walk *w = kt_walk(test, ms, KMMSCAND_HISTORY_MAX);
	unsigned long i, addr;

	kt_pass(w, false);
	for (i = 0; i < 4096; i++) {
		addr = (i + 1) << PMD_SHIFT;
		ms->slow_pages++;
		kt_frag(w, addr, addr + PMD_SIZE, i % PTRS_PER_PTE, true);
		KUNIT_ASSERT_LE(test, ms->hist_bytes,
				kmmscand_hist_budget(ms->slow_pages_last,
						     ms->slow_pages));
	}
	KUNIT_EXPECT_LT(test, ms->nr_tables, 4096UL);
	KUNIT_EXPECT_GT(test, ms->hist_bytes, KMMSCAND_HIST_FLOOR / 2UL);

	/* Dense slow-tier tables: one byte per page is room for all. */
	kmmscand_history_free(ms);
	ms->slow_pages_last = 64 * PTRS_PER_PTE;
	for (i = 0; i < 64; i++) {
		addr = (i + 1) << PMD_SHIFT;
		kt_frag(w, addr, addr + PMD_SIZE, 5, true);
	}
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 64UL);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, 64 * (kmmscand_table_size() +
			kmmscand_planes_size(KMMSCAND_HISTORY_MAX)));
	kmmscand_history_free(ms);
}

/*
 * Idle tables: visited every pass until KMMSCAND_IDLE_GRACE idle visits,
 * then in turn, at most 2^KMMSCAND_IDLE_SHIFT_MAX passes apart, and spread
 * over the passes by address.
 */
static void kmmscand_test_table_interval(struct kunit *test)
{
	unsigned int idle, seq, due;
	unsigned long idx;

	KUNIT_EXPECT_EQ(test, kmmscand_table_interval(0), 1U);
	KUNIT_EXPECT_EQ(test, kmmscand_table_interval(KMMSCAND_IDLE_GRACE - 1),
			1U);
	KUNIT_EXPECT_EQ(test, kmmscand_table_interval(KMMSCAND_IDLE_GRACE), 2U);
	KUNIT_EXPECT_EQ(test, kmmscand_table_interval(KMMSCAND_IDLE_MAX),
			1U << KMMSCAND_IDLE_SHIFT_MAX);
	KUNIT_EXPECT_EQ(test, kmmscand_table_interval(255),
			1U << KMMSCAND_IDLE_SHIFT_MAX);
	for (idle = 0; idle <= KMMSCAND_IDLE_MAX; idle++) {
		for (idx = 0; idx < 40; idx += 13) {
			due = 0;
			for (seq = 0; seq < 64; seq++)
				due += kmmscand_table_due(seq, idx, idle);
			KUNIT_EXPECT_EQ(test, due,
					64 / kmmscand_table_interval(idle));
		}
	}
	/* Neighbouring tables take their turns in different passes. */
	KUNIT_EXPECT_NE(test, kmmscand_table_due(0, 0, KMMSCAND_IDLE_MAX),
			kmmscand_table_due(0, 1, KMMSCAND_IDLE_MAX));
}

/*
 * A table examined without finding a young slow-tier page backs off; a
 * young page found in another idle table of the mm wakes them all.
 */
static void kmmscand_test_table_backoff(struct kunit *test)
{
	struct kmmscand_mm_slot *ms = kt_slot(test);
	struct kmmscand_walk *w = kt_walk(test, ms, 2);
	const unsigned long a = 16UL << PMD_SHIFT, b = 17UL << PMD_SHIFT;
	unsigned int pass, visits = 0;

	for (pass = 0; pass < 64; pass++) {
		kt_pass(w, pass % 4);
		if (!kmmscand_table_skip(w, a)) {
			kt_frag(w, a, a + PMD_SIZE, -1, true);
			visits++;
		}
		if (!kmmscand_table_skip(w, b))
			kt_frag(w, b, b + PMD_SIZE, -1, true);
		kmmscand_history_sweep(ms);
	}
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 2UL);
	KUNIT_EXPECT_LT(test, visits, 64U / 4);
	KUNIT_EXPECT_GE(test, visits, 64U >> KMMSCAND_IDLE_SHIFT_MAX);

	/* b finds a young page: a is visited in the next pass. */
	do {
		kt_pass(w, true);
	} while (kmmscand_table_skip(w, b));
	kt_frag(w, b, b + PMD_SIZE, 4, true);
	kt_pass(w, true);
	KUNIT_EXPECT_FALSE(test, kmmscand_table_skip(w, a));
	KUNIT_EXPECT_FALSE(test, kmmscand_table_skip(w, b));

	/* Skipping for the PMD Accessed bit is cheap: not idle. */
	kmmscand_table_cur(w, a);
	kmmscand_age_range(w, a, a + PMD_SIZE);
	w->slow_seen = kmmscand_table_slow(w, a);
	KUNIT_EXPECT_TRUE(test, w->slow_seen);
	kmmscand_note_table(w, a, a + PMD_SIZE);
	kt_pass(w, true);
	KUNIT_EXPECT_FALSE(test, kmmscand_table_skip(w, a));
	kmmscand_history_free(ms);
}

/*
 * A table in which a full pass found only top-tier pages (a hot set
 * already promoted) keeps a record without bitmaps: quick passes leave it
 * alone, full passes visit it in turn, all of them when the slow tier
 * changed, and it is a slow-tier table again as soon as a visit finds a
 * slow-tier page in it.  Its record goes when its table is not seen for
 * twice its longest turn, or when a slow-tier table needs the room.
 */
static void kmmscand_test_table_top(struct kunit *test)
{
	struct kmmscand_mm_slot *ms = kt_slot(test);
	struct kmmscand_walk *w = kt_walk(test, ms, 2);
	const unsigned long a = 40UL << PMD_SHIFT;
	unsigned int pass, visits = 0;
	unsigned long i, addr;

	/* A new table with only top-tier pages: a top-only record. */
	kt_pass(w, false);
	KUNIT_EXPECT_FALSE(test, kmmscand_table_skip(w, a));
	kt_frag_top(w, a, a + PMD_SIZE);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 1UL);
	KUNIT_EXPECT_EQ(test, ms->nr_top, 1UL);
	KUNIT_EXPECT_FALSE(test, kmmscand_table_slow(w, a));
	/* Not in a quick pass. */
	kt_pass(w, true);
	KUNIT_EXPECT_TRUE(test, kmmscand_table_skip(w, a));
	kmmscand_history_sweep(ms);

	/* Full passes visit it in turn; it stays. */
	for (pass = 0; pass < 64; pass++) {
		kt_pass(w, pass % 4);
		if (!kmmscand_table_skip(w, a)) {
			KUNIT_EXPECT_EQ(test, pass % 4, 0U);
			kt_frag_top(w, a, a + PMD_SIZE);
			visits++;
		}
		kmmscand_history_sweep(ms);
	}
	KUNIT_EXPECT_EQ(test, ms->nr_top, 1UL);
	KUNIT_EXPECT_LT(test, visits, 64U / 4 / 2);
	KUNIT_EXPECT_GE(test, visits, 64U / 4 >> KMMSCAND_IDLE_SHIFT_MAX);

	/* The slow tier changed: every full pass of it visits the table. */
	for (pass = 0; pass < 64; pass++) {
		kt_pass(w, false);
		if (kmmscand_table_skip(w, a))
			break;
		kmmscand_history_sweep(ms);
	}
	KUNIT_ASSERT_LT(test, pass, 64U);
	w->top_wake = true;
	KUNIT_EXPECT_FALSE(test, kmmscand_table_skip(w, a));

	/* A slow-tier page in it: a slow-tier table again. */
	kt_frag(w, a, a + PMD_SIZE, -1, true);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_top, 0UL);
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 1UL);
	kt_pass(w, true);
	KUNIT_EXPECT_FALSE(test, kmmscand_table_skip(w, a));
	kt_frag(w, a, a + PMD_SIZE, 3, true);
	kmmscand_history_sweep(ms);

	/* Its pages promoted: top-only again, without bitmaps. */
	kt_pass(w, false);
	kt_frag_top(w, a, a + PMD_SIZE);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_top, 1UL);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, kmmscand_table_size());

	/* Not seen for twice its longest turn: gone. */
	for (pass = 0; pass <= 2U << KMMSCAND_IDLE_SHIFT_MAX; pass++) {
		kt_pass(w, false);
		kmmscand_history_sweep(ms);
	}
	KUNIT_EXPECT_EQ(test, ms->nr_tables, 0UL);
	KUNIT_EXPECT_EQ(test, ms->nr_top, 0UL);

	/*
	 * Top-only records take at most half the budget, and go when a
	 * slow-tier table lacks room.
	 */
	kt_pass(w, false);
	for (i = 0; i < KMMSCAND_HIST_FLOOR / kmmscand_table_size(); i++) {
		addr = (i + 64) << PMD_SHIFT;
		kt_frag_top(w, addr, addr + PMD_SIZE);
	}
	KUNIT_EXPECT_GT(test, ms->nr_top, 0UL);
	KUNIT_EXPECT_LE(test, ms->hist_bytes, KMMSCAND_HIST_FLOOR / 2UL);
	for (i = 0; i < 4096 && !ms->shed_top; i++) {
		addr = (i + 8192) << PMD_SHIFT;
		kt_frag(w, addr, addr + PMD_SIZE, 1, true);
	}
	KUNIT_EXPECT_TRUE(test, ms->shed_top);
	kmmscand_history_sweep(ms);
	KUNIT_EXPECT_EQ(test, ms->nr_top, 0UL);
	KUNIT_EXPECT_FALSE(test, ms->shed_top);
	kmmscand_history_free(ms);
	KUNIT_EXPECT_EQ(test, ms->hist_bytes, 0UL);
}

/*
 * NUMA balancing's rule: only the default policy and policies carrying
 * MPOL_F_MOF let pages move; a movable BIND or PREFERRED_MANY policy
 * keeps them within its nodes.
 */
static void kmmscand_test_policy_rule(struct kunit *test)
{
	struct mempolicy pol = {};
	nodemask_t nodes;

	KUNIT_EXPECT_TRUE(test, kmmscand_policy_moves(NULL));

	pol.mode = MPOL_PREFERRED;
	pol.nodes = nodemask_of_node(1);
	KUNIT_EXPECT_FALSE(test, kmmscand_policy_moves(&pol));
	pol.mode = MPOL_LOCAL;
	KUNIT_EXPECT_FALSE(test, kmmscand_policy_moves(&pol));
	pol.mode = MPOL_INTERLEAVE;
	KUNIT_EXPECT_FALSE(test, kmmscand_policy_moves(&pol));
	pol.mode = MPOL_WEIGHTED_INTERLEAVE;
	KUNIT_EXPECT_FALSE(test, kmmscand_policy_moves(&pol));
	pol.mode = MPOL_BIND;
	KUNIT_EXPECT_FALSE(test, kmmscand_policy_moves(&pol));

	/* mbind(MPOL_BIND | MPOL_F_NUMA_BALANCING, {0, 1}) */
	pol.flags = MPOL_F_MOF | MPOL_F_MORON;
	nodes_clear(pol.nodes);
	node_set(0, pol.nodes);
	node_set(1, pol.nodes);
	KUNIT_EXPECT_TRUE(test, kmmscand_policy_moves(&pol));
	nodes_clear(nodes);
	node_set(0, nodes);
	node_set(1, nodes);
	node_set(2, nodes);
	kmmscand_policy_nodes(&pol, &nodes);
	KUNIT_EXPECT_TRUE(test, node_isset(0, nodes));
	KUNIT_EXPECT_TRUE(test, node_isset(1, nodes));
	KUNIT_EXPECT_FALSE(test, node_isset(2, nodes));

	/* A preferred node does not confine: it is not a BIND set. */
	pol.mode = MPOL_PREFERRED;
	pol.nodes = nodemask_of_node(1);
	nodes_clear(nodes);
	node_set(0, nodes);
	node_set(1, nodes);
	kmmscand_policy_nodes(&pol, &nodes);
	KUNIT_EXPECT_TRUE(test, node_isset(0, nodes));
}

static void kmmscand_test_pfn_spans(struct kunit *test)
{
	struct kmmscand_walk *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_EXPECT_EQ(test, kmmscand_pfn_toptier(w, 5), NUMA_NO_NODE);
	w->nr_spans = 2;
	w->span[0].start = 0x1000;
	w->span[0].end = 0x2000;
	w->span[0].nid = 0;
	w->span[1].start = 0x8000;
	w->span[1].end = 0x9000;
	w->span[1].nid = 2;
	KUNIT_EXPECT_EQ(test, kmmscand_pfn_toptier(w, 0xfff), NUMA_NO_NODE);
	KUNIT_EXPECT_EQ(test, kmmscand_pfn_toptier(w, 0x1000), 0);
	KUNIT_EXPECT_EQ(test, kmmscand_pfn_toptier(w, 0x1fff), 0);
	KUNIT_EXPECT_EQ(test, kmmscand_pfn_toptier(w, 0x2000), NUMA_NO_NODE);
	KUNIT_EXPECT_EQ(test, kmmscand_pfn_toptier(w, 0x8fff), 2);
	KUNIT_EXPECT_EQ(test, kmmscand_pfn_toptier(w, 0x9000), NUMA_NO_NODE);
}

static struct kunit_case kmmscand_scan_cases[] = {
	KUNIT_CASE(kmmscand_test_table_history),
	KUNIT_CASE(kmmscand_test_table_fragments),
	KUNIT_CASE(kmmscand_test_table_sweep),
	KUNIT_CASE(kmmscand_test_table_budget),
	KUNIT_CASE(kmmscand_test_table_interval),
	KUNIT_CASE(kmmscand_test_table_backoff),
	KUNIT_CASE(kmmscand_test_table_top),
	KUNIT_CASE(kmmscand_test_policy_rule),
	KUNIT_CASE(kmmscand_test_pfn_spans),
	{},
};

static struct kunit_suite kmmscand_scan_suite = {
	.name = "kmmscand_scan",
	.test_cases = kmmscand_scan_cases,
};

kunit_test_suites(&kmmscand_policy_suite, &kmmscand_migrate_suite,
		  &kmmscand_scan_suite);
