// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the rules of kmmscand's hotness sources
 * (mm/kmmscand_sources.h): the sources file, the per-page record, the
 * combination rule at a hint fault and the target of an access whose node
 * is known.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/string.h>

#include "../kmmscand_internal.h"
#include "../kmmscand_policy.h"
#include "../kmmscand_sources.h"

static int kmmscand_test_dist(int from, int to)
{
	/* nodes on a line: distance grows with the id difference */
	return 10 + 10 * abs(from - to);
}

static int kt_parse(const char *text, unsigned int *mask)
{
	return kmmscand_sources_parse(text, strlen(text), mask);
}

static void kmmscand_test_sources_parse(struct kunit *test)
{
	static const char * const bad[] = {
		"", "\n", "none", "abit ", " abit", "abit  fault", "abit,fault",
		"abit abit", "fault fault\n", "ABIT", "abit\n\n", "abitfault",
		"abit\nfault", "abit fault ", "fault\t", "ab", "faults",
	};
	unsigned int mask, i;

	KUNIT_EXPECT_EQ(test, 0, kt_parse("abit", &mask));
	KUNIT_EXPECT_EQ(test, BIT(KMMSCAND_SRC_ABIT), mask);
	KUNIT_EXPECT_EQ(test, 0, kt_parse("fault\n", &mask));
	KUNIT_EXPECT_EQ(test, BIT(KMMSCAND_SRC_FAULT), mask);
	KUNIT_EXPECT_EQ(test, 0, kt_parse("abit fault\n", &mask));
	KUNIT_EXPECT_EQ(test, BIT(KMMSCAND_SRC_ABIT) | BIT(KMMSCAND_SRC_FAULT),
			mask);
	KUNIT_EXPECT_EQ(test, 0, kt_parse("fault abit", &mask));
	KUNIT_EXPECT_EQ(test, BIT(KMMSCAND_SRC_ABIT) | BIT(KMMSCAND_SRC_FAULT),
			mask);
	/* a bad write leaves the mask alone */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		mask = 0xdead;
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL, kt_parse(bad[i], &mask),
				    "accepted \"%s\"", bad[i]);
		KUNIT_EXPECT_EQ(test, 0xdeadU, mask);
	}
	/* not NUL-terminated: only @len bytes count */
	KUNIT_EXPECT_EQ(test, 0, kmmscand_sources_parse("faultXYZ", 5, &mask));
	KUNIT_EXPECT_EQ(test, BIT(KMMSCAND_SRC_FAULT), mask);
	KUNIT_EXPECT_STREQ(test, "abit", kmmscand_source_name(KMMSCAND_SRC_ABIT));
	KUNIT_EXPECT_PTR_EQ(test, (const char *)NULL,
			    kmmscand_source_name(KMMSCAND_NR_SOURCES));
}

static void kmmscand_test_fault_hot(struct kunit *test)
{
	/* K = 2 of N = 2: a first fault is not hot, a second one is */
	KUNIT_EXPECT_FALSE(test, kmmscand_fault_hot(0, 0, 2, 2, false));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(0, 1, 2, 2, false));
	/* the scanner found it young in its last pass: the fault confirms */
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(1, 0, 2, 2, false));
	/*
	 * room to spare: two windows of either source are enough, but a page
	 * touched once never is (NUMA balancing would promote it)
	 */
	KUNIT_EXPECT_FALSE(test, kmmscand_fault_hot(0, 0, 2, 2, true));
	KUNIT_EXPECT_FALSE(test, kmmscand_fault_hot(0, 0, 8, 8, true));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(0, 1, 8, 8, true));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(1, 0, 8, 8, true));
	KUNIT_EXPECT_FALSE(test, kmmscand_fault_hot(1, 0, 8, 8, false));
	/* K = 1: every fault */
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(0, 0, 2, 1, false));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(0, 0, 1, 1, false));
	/*
	 * K = 3 of N = 3: a fault and the young pass it caused are one
	 * access, not two: max, not the sum, of the two sources
	 */
	KUNIT_EXPECT_FALSE(test, kmmscand_fault_hot(1, 1, 3, 3, false));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(2, 1, 3, 3, false));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(1, 2, 3, 3, false));
	/* at most N - 1 earlier windows count */
	KUNIT_EXPECT_FALSE(test, kmmscand_fault_hot(7, 7, 2, 3, false));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(7, 7, 8, 8, false));
	KUNIT_EXPECT_FALSE(test, kmmscand_fault_hot(6, 6, 8, 8, false));
	/* out-of-range N and K are clamped, never wrap */
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(0, 0, 0, 0, false));
	KUNIT_EXPECT_TRUE(test, kmmscand_fault_hot(9, 9, 100, 8, false));
}

static void kmmscand_test_history_prior(struct kunit *test)
{
	/* N = 2: only the last complete pass is an earlier window */
	KUNIT_EXPECT_EQ(test, 1U, kmmscand_history_prior(0x3, 2));
	KUNIT_EXPECT_EQ(test, 0U, kmmscand_history_prior(0x2, 2));
	KUNIT_EXPECT_EQ(test, 2U, kmmscand_history_prior(0x7, 3));
	KUNIT_EXPECT_EQ(test, 1U, kmmscand_history_prior(0x5, 3));
	KUNIT_EXPECT_EQ(test, 0U, kmmscand_history_prior(0xff, 1));
	KUNIT_EXPECT_EQ(test, 7U, kmmscand_history_prior(0xff, 8));
	KUNIT_EXPECT_EQ(test, 7U, kmmscand_history_prior(0xff, 100));
}

static void kmmscand_test_rec_pack(struct kunit *test)
{
	struct kmmscand_rec r = {
		.tag = KMMSCAND_REC_TAG_MASK, .valid = true, .faults = 5,
		.coarse = 7, .t_fault = 12345, .t_abit = KMMSCAND_REC_TIME_MASK,
	}, o;

	kmmscand_rec_unpack(kmmscand_rec_pack(&r), &o);
	KUNIT_EXPECT_EQ(test, r.tag, o.tag);
	KUNIT_EXPECT_TRUE(test, o.valid);
	KUNIT_EXPECT_EQ(test, 5U, o.faults);
	KUNIT_EXPECT_EQ(test, 7U, o.coarse);
	KUNIT_EXPECT_EQ(test, 12345U, o.t_fault);
	KUNIT_EXPECT_EQ(test, KMMSCAND_REC_TIME_MASK, o.t_abit);
	/* counts saturate, times and tags wrap to their width */
	r.faults = 100;
	r.coarse = 100;
	r.t_fault = KMMSCAND_REC_TIME_MASK + 2;
	r.tag = KMMSCAND_REC_TAG_MASK + 2;
	kmmscand_rec_unpack(kmmscand_rec_pack(&r), &o);
	KUNIT_EXPECT_EQ(test, KMMSCAND_REC_FAULT_MAX, o.faults);
	KUNIT_EXPECT_EQ(test, KMMSCAND_REC_COARSE_MAX, o.coarse);
	KUNIT_EXPECT_EQ(test, 1U, o.t_fault);
	KUNIT_EXPECT_EQ(test, 1U, o.tag);
	/* the spare bits stay clear */
	KUNIT_EXPECT_EQ(test, 0ULL, kmmscand_rec_pack(&r) & GENMASK_ULL(63, 60));
	r.valid = false;
	KUNIT_EXPECT_EQ(test, 0ULL, kmmscand_rec_pack(&r));
}

static void kmmscand_test_rec_time(struct kunit *test)
{
	/* N windows of scan_period_max_ms, in 128 ms ticks, rounded up */
	KUNIT_EXPECT_EQ(test, 79U, kmmscand_rec_span(2, 5000));
	KUNIT_EXPECT_EQ(test, 3750U, kmmscand_rec_span(8, 60000));
	KUNIT_EXPECT_EQ(test, 1U, kmmscand_rec_span(0, 0));
	KUNIT_EXPECT_EQ(test, KMMSCAND_REC_TIME_MASK >> 1,
			kmmscand_rec_span(100, UINT_MAX));
	KUNIT_EXPECT_EQ(test, 0U, kmmscand_rec_tick(127));
	KUNIT_EXPECT_EQ(test, 1U, kmmscand_rec_tick(128));
	KUNIT_EXPECT_EQ(test, KMMSCAND_REC_TIME_MASK,
			kmmscand_rec_tick(UINT_MAX));
	/* ages across the wrap of the clock */
	KUNIT_EXPECT_TRUE(test, kmmscand_rec_fresh(KMMSCAND_REC_TIME_MASK, 5, 6));
	KUNIT_EXPECT_FALSE(test, kmmscand_rec_fresh(KMMSCAND_REC_TIME_MASK, 5, 5));
	KUNIT_EXPECT_TRUE(test, kmmscand_rec_fresh(100, 100, 0));
	KUNIT_EXPECT_FALSE(test, kmmscand_rec_fresh(101, 100, 79));
}

static void kmmscand_test_rec_fault(struct kunit *test)
{
	unsigned int f, c, span = 79;
	u64 v = 0;
	int i;

	/* counts up from an empty slot, saturating */
	for (i = 1; i <= 9; i++) {
		v = kmmscand_rec_add_fault(v, 42, 1000 + i, span, false);
		kmmscand_rec_evidence(v, 42, 1000 + i, span, &f, &c);
		KUNIT_EXPECT_EQ(test, min(i, 7), (int)f);
		KUNIT_EXPECT_EQ(test, 0U, c);
	}
	/* another page sees nothing, and a fault of it takes the slot */
	kmmscand_rec_evidence(v, 43, 1010, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 0U, f);
	KUNIT_EXPECT_TRUE(test, kmmscand_rec_live(v, 1010, span));
	v = kmmscand_rec_add_fault(v, 43, 1010, span, false);
	kmmscand_rec_evidence(v, 43, 1010, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 1U, f);
	kmmscand_rec_evidence(v, 42, 1010, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 0U, f);
	/* faults older than the span are forgotten: counting starts again */
	kmmscand_rec_evidence(v, 43, 1010 + span + 1, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 0U, f);
	KUNIT_EXPECT_FALSE(test, kmmscand_rec_live(v, 1010 + span + 1, span));
	v = kmmscand_rec_add_fault(v, 43, 1010 + span + 1, span, false);
	kmmscand_rec_evidence(v, 43, 1010 + span + 1, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 1U, f);
	/* a queued page starts again from nothing */
	v = kmmscand_rec_set_coarse(v, 43, 1, 1100, span);
	v = kmmscand_rec_add_fault(v, 43, 1100, span, true);
	kmmscand_rec_evidence(v, 43, 1100, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 0U, f);
	KUNIT_EXPECT_EQ(test, 0U, c);
}

static void kmmscand_test_rec_coarse(struct kunit *test)
{
	unsigned int f, c, span = 79;
	u64 v = 0, w;

	/* "not young" takes no free slot */
	KUNIT_EXPECT_EQ(test, 0ULL, kmmscand_rec_set_coarse(0, 7, 0, 10, span));
	v = kmmscand_rec_set_coarse(0, 7, 1, 10, span);
	kmmscand_rec_evidence(v, 7, 10, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 0U, f);
	KUNIT_EXPECT_EQ(test, 1U, c);
	/* a fault keeps the scanner's evidence of the same page */
	v = kmmscand_rec_add_fault(v, 7, 11, span, false);
	kmmscand_rec_evidence(v, 7, 11, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 1U, f);
	KUNIT_EXPECT_EQ(test, 1U, c);
	/* and the scanner keeps the faults: it decays to 0 on its own */
	v = kmmscand_rec_set_coarse(v, 7, 0, 12, span);
	kmmscand_rec_evidence(v, 7, 12, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 1U, f);
	KUNIT_EXPECT_EQ(test, 0U, c);
	/* the scanner never evicts another page's live evidence */
	w = kmmscand_rec_set_coarse(v, 8, 1, 12, span);
	KUNIT_EXPECT_EQ(test, v, w);
	/* but takes a slot whose evidence is too old */
	w = kmmscand_rec_set_coarse(v, 8, 1, 12 + span + 1, span);
	kmmscand_rec_evidence(w, 8, 12 + span + 1, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 0U, f);
	KUNIT_EXPECT_EQ(test, 1U, c);
	/* old scanner evidence does not count for a fault */
	kmmscand_rec_evidence(w, 8, 12 + 2 * span + 2, span, &f, &c);
	KUNIT_EXPECT_EQ(test, 0U, c);
}

static void kmmscand_test_access_target(struct kunit *test)
{
	nodemask_t allowed = NODE_MASK_NONE, top = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs MAX_NUMNODES >= 4");
	node_set(0, top);
	node_set(1, top);
	node_set(0, allowed);
	node_set(1, allowed);
	node_set(3, allowed);
	/* the accessing node, whatever the distances */
	KUNIT_EXPECT_EQ(test, 0, kmmscand_access_target(0, &allowed, &top, 3,
							-1, kmmscand_test_dist));
	/* a valid target_node still wins */
	KUNIT_EXPECT_EQ(test, 1, kmmscand_access_target(0, &allowed, &top, 3,
							1, kmmscand_test_dist));
	/* accessing node not allowed: the nearest allowed top-tier one */
	node_clear(1, allowed);
	KUNIT_EXPECT_EQ(test, 0, kmmscand_access_target(1, &allowed, &top, 3,
							-1, kmmscand_test_dist));
	/* accessor on a slow node (2): nearest top-tier node to it */
	node_set(1, allowed);
	KUNIT_EXPECT_EQ(test, 1, kmmscand_access_target(2, &allowed, &top, 3,
							-1, kmmscand_test_dist));
	/* accessor unknown: nearest to the page */
	KUNIT_EXPECT_EQ(test, 1, kmmscand_access_target(NUMA_NO_NODE, &allowed,
							&top, 3, -1,
							kmmscand_test_dist));
	/* no allowed top-tier node: nowhere */
	nodes_clear(allowed);
	node_set(3, allowed);
	KUNIT_EXPECT_EQ(test, NUMA_NO_NODE,
			kmmscand_access_target(0, &allowed, &top, 3, 0,
					       kmmscand_test_dist));
}

/*
 * Nearest to the accessor and nearest to the page disagree: top tier
 * {0, 3} on the line 0-1-2-3, accessor on the slow node 1, page on the
 * slow node 2.  Node 0 is nearer to the accessor (20 against 30), node 3
 * nearer to the page.
 */
static void kmmscand_test_access_target_far(struct kunit *test)
{
	nodemask_t allowed, top = NODE_MASK_NONE;

	if (MAX_NUMNODES < 4)
		kunit_skip(test, "needs MAX_NUMNODES >= 4");
	nodes_setall(allowed);
	node_set(0, top);
	node_set(3, top);
	KUNIT_EXPECT_EQ(test, 0, kmmscand_access_target(1, &allowed, &top, 2,
							-1, kmmscand_test_dist));
	/* and the other way round */
	KUNIT_EXPECT_EQ(test, 3, kmmscand_access_target(2, &allowed, &top, 1,
							-1, kmmscand_test_dist));
	/* accessor unknown: nearest to the page */
	KUNIT_EXPECT_EQ(test, 3, kmmscand_access_target(NUMA_NO_NODE, &allowed,
							&top, 2, -1,
							kmmscand_test_dist));
	KUNIT_EXPECT_EQ(test, 0, kmmscand_access_target(NUMA_NO_NODE, &allowed,
							&top, 1, -1,
							kmmscand_test_dist));
}

static struct kunit_case kmmscand_sources_cases[] = {
	KUNIT_CASE(kmmscand_test_sources_parse),
	KUNIT_CASE(kmmscand_test_fault_hot),
	KUNIT_CASE(kmmscand_test_history_prior),
	KUNIT_CASE(kmmscand_test_rec_pack),
	KUNIT_CASE(kmmscand_test_rec_time),
	KUNIT_CASE(kmmscand_test_rec_fault),
	KUNIT_CASE(kmmscand_test_rec_coarse),
	KUNIT_CASE(kmmscand_test_access_target),
	KUNIT_CASE(kmmscand_test_access_target_far),
	{},
};

static struct kunit_suite kmmscand_sources_suite = {
	.name = "kmmscand_sources",
	.test_cases = kmmscand_sources_cases,
};

kunit_test_suite(kmmscand_sources_suite);
