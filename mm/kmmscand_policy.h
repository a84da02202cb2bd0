/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmmscand policy: pure functions, no locks, no global state.
 *
 * Everything that decides "how often", "how much", "is it hot", "how fast",
 * "where to" and "may it move at all" lives here so that it can be unit tested (see
 * mm/tests/kmmscand_policy_kunit.c) without a page table in sight.
 */
#ifndef _MM_KMMSCAND_POLICY_H
#define _MM_KMMSCAND_POLICY_H

#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/mempolicy.h>
#include <linux/minmax.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/sizes.h>
#include <linux/time64.h>
#include <linux/types.h>

/* Passes of history kept per page at most (history is stored in a u8). */
#define KMMSCAND_HISTORY_MAX	8

/**
 * kmmscand_history_update - shift one pass of Accessed-bit state into a history
 * @history: the previous history, bit 0 = most recent pass
 * @young: whether the page was found young in this pass
 * @n: number of passes remembered, 1..KMMSCAND_HISTORY_MAX
 *
 * Return: ((@history << 1) | @young) limited to the low @n bits.
 */
static inline unsigned int kmmscand_history_update(unsigned int history,
						   bool young, unsigned int n)
{
	n = clamp_t(unsigned int, n, 1, KMMSCAND_HISTORY_MAX);
	return ((history << 1) | (young ? 1U : 0U)) & ((1U << n) - 1);
}

/**
 * kmmscand_history_hot - decide whether a history makes a page hot
 * @history: the history after kmmscand_history_update()
 * @k: number of young passes required, >= 1
 *
 * A page is hot when it was young in at least @k of the remembered passes.
 * With the defaults (K = 2 of N = 2) a page must be seen young in two
 * consecutive passes, so a single touch never promotes anything.
 *
 * Return: true if hot.
 */
static inline bool kmmscand_history_hot(unsigned int history, unsigned int k)
{
	return hweight32(history) >= max(k, 1U);
}

/**
 * kmmscand_is_hot - the hotness rule, with the top tier's room in mind
 * @prev: the history before this pass (0: none, the page was not seen
 *	young in the remembered passes)
 * @history: the history after this pass, bit 0 = young in this pass
 * @k: number of young passes required when the target is tight
 * @ample: the target node has room to spare
 *
 * A page not young in this pass is never hot.  With room to spare, a page
 * seen young again after an earlier pass cleared its Accessed bit is hot
 * (one access after a clearing pass, as NUMA balancing promotes while the
 * top tier has plenty of free memory); otherwise it takes @k young passes
 * of the remembered ones.
 *
 * Return: true if hot.
 */
static inline bool kmmscand_is_hot(unsigned int prev, unsigned int history,
				   unsigned int k, bool ample)
{
	if (!(history & 1))
		return false;
	if (ample && prev)
		return true;
	return kmmscand_history_hot(history, k);
}

/* Bytes of table records an mm may keep at least (mm/kmmscand_history.c). */
#define KMMSCAND_HIST_FLOOR	SZ_64K

/**
 * kmmscand_hist_budget - the bytes of history an mm may keep
 * @slow_last: slow-tier pages examined in the mm's last complete full pass
 * @slow_cur: slow-tier pages examined in the pass in progress
 *
 * One byte per slow-tier page the mm maps, as its last complete full pass
 * or the pass in progress counted them, and never less than
 * KMMSCAND_HIST_FLOOR, so that an mm can be tracked from its first pass.
 *
 * Return: the budget in bytes.
 */
static inline unsigned long kmmscand_hist_budget(unsigned long slow_last,
						 unsigned long slow_cur)
{
	return max3((unsigned long)KMMSCAND_HIST_FLOOR, slow_last, slow_cur);
}

/*
 * Idle tables.  A PTE table that held slow-tier pages and was mapped and
 * examined in KMMSCAND_IDLE_GRACE visits in a row without a young
 * slow-tier page is visited only once every 2, 4, ... passes, at most
 * every 2^KMMSCAND_IDLE_SHIFT_MAX passes, until a visit finds one again.
 * The passes a table is visited in are spread by its address, so that
 * every pass visits a share of the idle tables and a hot set that moves
 * across many tables is seen by the next pass.
 */
#define KMMSCAND_IDLE_GRACE	2
#define KMMSCAND_IDLE_SHIFT_MAX	4
#define KMMSCAND_IDLE_MAX	(KMMSCAND_IDLE_GRACE + KMMSCAND_IDLE_SHIFT_MAX - 1)

/**
 * kmmscand_table_interval - passes between two visits of an idle table
 * @idle: visits in a row that found no young slow-tier page in the table
 *
 * Return: 1 (every pass) up to 2^KMMSCAND_IDLE_SHIFT_MAX.
 */
static inline unsigned int kmmscand_table_interval(unsigned int idle)
{
	if (idle < KMMSCAND_IDLE_GRACE)
		return 1;
	return 1U << min(idle - KMMSCAND_IDLE_GRACE + 1,
			 (unsigned int)KMMSCAND_IDLE_SHIFT_MAX);
}

/**
 * kmmscand_table_due - is an idle table visited in this pass?
 * @seq: the pass number
 * @idx: the table's address >> PMD_SHIFT
 * @idle: visits in a row that found no young slow-tier page in the table
 *
 * Return: true if the pass visits the table.
 */
static inline bool kmmscand_table_due(unsigned int seq, unsigned long idx,
				      unsigned int idle)
{
	return !((seq + idx) & (kmmscand_table_interval(idle) - 1));
}

/*
 * Per-mm adaptive scan rate.
 *
 * After every full pass over an mm, with X = candidates found in the
 * previous full pass (and the quick passes before it), Y = candidates
 * found since, and W = slow-tier pages found young for the first time
 * since (not hot yet, "warm"):
 *
 *   Y == 0, W == 0   idle:     period += period / 4,  budget /= 2
 *   Y == 0, W > 0    warm:     period /= 2,           budget *= 2
 *   Y > X            ramp up:  period /= 2,           budget *= 2
 *   0 < Y <= X       steady:   period and budget unchanged
 *
 * then period is clamped to [scan_period_min_ms, scan_period_max_ms] and the
 * budget (pages examined per visit) to [max(scan_size / 16, 1), scan_size].
 * All arithmetic is unsigned and saturates instead of wrapping.
 *
 * So an mm that stops producing hot pages backs off by 25 % per pass until
 * it reaches the maximum period: 500 ms -> 5000 ms takes 11 idle passes.
 * Pages that start being used, or a burst of new hot pages, halve the
 * period at once.  Independently of the period, a pass that found warm
 * pages or candidates get a quick pass (slow-tier tables only) after
 * scan_period_min_ms, and an mm with slow-tier pages at all one after
 * kmmscand_next_quick() (mm/kmmscand.c).
 * A pass that finds a young slow-tier page in an idle table runs at the
 * full budget from then on (kmmscand_visit_budget()).
 */

/**
 * kmmscand_next_period - compute the scan period for the next full pass
 * @period: current period in ms
 * @last: candidates found in the previous pass (X)
 * @cur: candidates found in the pass that just ended (Y)
 * @warm: slow-tier pages found young for the first time (W)
 * @pmin: scan_period_min_ms
 * @pmax: scan_period_max_ms
 *
 * Return: the new period, within [@pmin, max(@pmin, @pmax)].
 */
static inline unsigned int kmmscand_next_period(unsigned int period,
						unsigned long last,
						unsigned long cur,
						unsigned long warm,
						unsigned int pmin,
						unsigned int pmax)
{
	if (cur == 0 && warm == 0) {
		unsigned int inc = period / 4;

		period = period > UINT_MAX - inc ? UINT_MAX : period + inc;
	} else if (cur > last || cur == 0) {
		period /= 2;
	}
	if (pmax < pmin)
		pmax = pmin;
	return clamp(period, pmin, pmax);
}

/**
 * kmmscand_clamp_budget - keep a per-visit page budget within its limits
 * @budget: budget in pages
 * @scan_size: the scan_size tunable (upper bound)
 *
 * Return: @budget within [max(@scan_size / 16, 1), max(@scan_size, 1)].
 */
static inline unsigned int kmmscand_clamp_budget(unsigned int budget,
						 unsigned int scan_size)
{
	unsigned int lo = max(scan_size / 16, 1U);
	unsigned int hi = max(scan_size, lo);

	return clamp(budget, lo, hi);
}

/**
 * kmmscand_visit_budget - the page budget of the next visit of an mm
 * @budget: the mm's budget in pages
 * @scan_size: the scan_size tunable (upper bound)
 * @woken: the pass in progress found a young slow-tier page in an idle
 *	table (the hot set moved) and looks for it in every table
 *
 * An idle mm's budget has halved down to scan_size / 16, which spreads a
 * pass over many rounds: right while nothing changes, too slow for the
 * pass that looks for a hot set that moved.  That pass, and the ones
 * after it until a full pass finds the mm idle again, get the whole
 * scan_size.  The pages examined are the same, only sooner.
 *
 * Return: the budget, within [max(@scan_size / 16, 1), max(@scan_size, 1)].
 */
static inline unsigned int kmmscand_visit_budget(unsigned int budget,
						 unsigned int scan_size,
						 bool woken)
{
	return kmmscand_clamp_budget(woken ? UINT_MAX : budget, scan_size);
}

/**
 * kmmscand_next_budget - compute the per-visit page budget for the next pass
 * @budget: current budget in pages
 * @last: candidates found in the previous pass (X)
 * @cur: candidates found in the pass that just ended (Y)
 * @warm: slow-tier pages found young for the first time (W)
 * @scan_size: the scan_size tunable (upper bound)
 *
 * Return: the new budget, within [max(@scan_size / 16, 1), max(@scan_size, 1)].
 */
static inline unsigned int kmmscand_next_budget(unsigned int budget,
						unsigned long last,
						unsigned long cur,
						unsigned long warm,
						unsigned int scan_size)
{
	if (cur == 0 && warm == 0)
		budget /= 2;
	else if (cur > last || cur == 0)
		budget = budget > UINT_MAX / 2 ? UINT_MAX : budget * 2;
	return kmmscand_clamp_budget(budget, scan_size);
}

/*
 * Quick passes that only watch.  An mm with slow-tier pages gets a quick
 * pass between its full passes, so that a hot set appearing on the slow
 * tier is seen soon even when the full passes are scan_period_max_ms
 * apart.  When every slow-tier table of the mm stayed unused since the
 * last full pass (its PMD Accessed bit clear), the quick pass reads one
 * PMD entry per table and nothing else: its cost is the visit itself, paid
 * by each registered mm.  So the interval between such quick passes grows
 * by a quarter per pass that found all of them unused, up to
 * KMMSCAND_QUICK_MAX times scan_period_min_ms, and falls back to
 * scan_period_min_ms as soon as a pass finds a young slow-tier page.  The
 * bound keeps a new hot set within two quick passes of
 * KMMSCAND_QUICK_MAX + 1 minimum periods: one to see it young, one
 * scan_period_min_ms later to confirm it (K = N = 2).
 */
#define KMMSCAND_QUICK_MAX	2

/**
 * kmmscand_next_quick - the interval to an mm's next quick pass that watches
 * @quick: the current interval in ms (0 before the first pass)
 * @unused: the pass that ended found every slow-tier table of the mm
 *	unused since the last full pass, or idle and not in its turn
 * @young: the pass that ended found a young slow-tier page
 * @pmin: scan_period_min_ms
 *
 * A pass that is neither (it walked tables in use and found only top-tier
 * pages young) leaves the interval as it was.
 *
 * Return: the new interval, within [@pmin, KMMSCAND_QUICK_MAX * @pmin]
 * (saturating at UINT_MAX).
 */
static inline unsigned int kmmscand_next_quick(unsigned int quick,
					       bool unused, bool young,
					       unsigned int pmin)
{
	unsigned int max = pmin > UINT_MAX / KMMSCAND_QUICK_MAX ?
			   UINT_MAX : pmin * KMMSCAND_QUICK_MAX;

	if (young)
		return pmin;
	if (unused)
		quick = quick > UINT_MAX - quick / 4 ? UINT_MAX : quick + quick / 4;
	return clamp(quick, pmin, max);
}

/*
 * Token bucket for the promotion rate limit.  Tokens are base pages.  The
 * bucket holds at most max(one second of tokens, one batch), so that a
 * batch larger than the per-second rate can still pass, and it refills
 * continuously at promote_rate_limit_mbps: over any span of time no more
 * than the capacity plus the span's worth of tokens is handed out.
 */
struct kmmscand_bucket {
	u64 tokens;		/* pages available now */
	u64 last_ns;		/* time tokens was last brought up to date */
};

/**
 * kmmscand_rate_pages - convert a MB/s rate limit into pages per second
 * @mbps: rate in MB/s (0 = promotion off)
 *
 * Return: pages per second.
 */
static inline u64 kmmscand_rate_pages(unsigned int mbps)
{
	return (u64)mbps * (SZ_1M >> PAGE_SHIFT);
}

/**
 * kmmscand_bucket_capacity - size of the token bucket
 * @mbps: rate in MB/s
 * @batch: pages in one batch
 *
 * Return: max(one second of tokens, @batch) pages; 0 when @mbps is 0.
 */
static inline u64 kmmscand_bucket_capacity(unsigned int mbps,
					   unsigned int batch)
{
	if (!mbps)
		return 0;
	return max_t(u64, kmmscand_rate_pages(mbps), batch);
}

/**
 * kmmscand_bucket_refill - add the tokens earned since the last refill
 * @b: the bucket
 * @now_ns: current time (monotonic ns)
 * @mbps: rate in MB/s; 0 empties the bucket
 * @batch: pages in one batch (for the capacity)
 *
 * Time that did not earn a whole token is kept for the next refill, so
 * frequent refills do not starve a slow rate.  A clock going backwards
 * only resets the reference time.
 */
static inline void kmmscand_bucket_refill(struct kmmscand_bucket *b,
					  u64 now_ns, unsigned int mbps,
					  unsigned int batch)
{
	u64 cap = kmmscand_bucket_capacity(mbps, batch);
	u64 rate = kmmscand_rate_pages(mbps);
	u64 delta, add, missing;

	if (!mbps) {
		b->tokens = 0;
		b->last_ns = now_ns;
		return;
	}
	if (now_ns <= b->last_ns) {
		b->last_ns = now_ns;
		b->tokens = min(b->tokens, cap);
		return;
	}
	if (b->tokens >= cap) {
		b->tokens = cap;
		b->last_ns = now_ns;
		return;
	}
	delta = now_ns - b->last_ns;
	/*
	 * A span that fills the bucket just fills it.  missing <= cap < 2^32
	 * (a batch is an unsigned int), so missing * NSEC_PER_SEC fits.
	 */
	missing = cap - b->tokens;
	if (delta >= div64_u64(missing * NSEC_PER_SEC + rate - 1, rate)) {
		b->tokens = cap;
		b->last_ns = now_ns;
		return;
	}
	/* delta * rate < missing * NSEC_PER_SEC + rate: it fits too. */
	add = div_u64(delta * rate, NSEC_PER_SEC);
	if (!add)
		return;
	if (add >= missing) {
		b->tokens = cap;
		b->last_ns = now_ns;
		return;
	}
	b->tokens += add;
	/* Advance by the time those tokens cost, keep the remainder. */
	b->last_ns += div64_u64(add * NSEC_PER_SEC + rate - 1, rate);
	if (b->last_ns > now_ns)
		b->last_ns = now_ns;
}

/**
 * kmmscand_bucket_take - consume tokens if enough are available
 * @b: the bucket
 * @nr: pages wanted
 *
 * Return: true and @nr tokens consumed, or false and nothing consumed.
 */
static inline bool kmmscand_bucket_take(struct kmmscand_bucket *b, u64 nr)
{
	if (b->tokens < nr)
		return false;
	b->tokens -= nr;
	return true;
}

/**
 * kmmscand_bucket_wait_ns - time until the bucket holds @nr tokens
 * @b: the bucket (already refilled)
 * @nr: pages wanted
 * @mbps: rate in MB/s, must not be 0
 *
 * Return: nanoseconds to wait, at most NSEC_PER_SEC.
 */
static inline u64 kmmscand_bucket_wait_ns(const struct kmmscand_bucket *b,
					  u64 nr, unsigned int mbps)
{
	u64 rate = kmmscand_rate_pages(mbps);
	u64 missing;

	if (!rate)
		return NSEC_PER_SEC;
	if (b->tokens >= nr)
		return 0;
	missing = nr - b->tokens;
	if (missing >= rate)
		return NSEC_PER_SEC;
	return div64_u64(missing * NSEC_PER_SEC + rate - 1, rate);
}

/* Distance between two nodes, node_distance() in the kernel. */
typedef int (*kmmscand_distance_fn)(int from, int to);

/**
 * kmmscand_choose_target - pick the top-tier node a hot page should go to
 * @footprint: pages of the mm found on each node in the last pass
 * @nr_nodes: number of entries in @footprint
 * @allowed: nodes the mm may use (cpuset, VMA policy), already intersected
 * @toptier: nodes in the top memory tier that have memory
 * @src: node the page is on now
 * @override: the target_node tunable, -1 for automatic
 * @distance: node distance callback
 *
 * Rule, in order:
 *  1. @override, if it is an allowed top-tier node;
 *  2. the allowed top-tier node where the mm has the largest footprint,
 *     ties broken by the smallest distance from @src, then the lowest id
 *     (with no footprint anywhere this is the nearest allowed top-tier node);
 *  3. NUMA_NO_NODE if no top-tier node is allowed (do not promote).
 *
 * Return: the target node id or NUMA_NO_NODE.
 */
static inline int kmmscand_choose_target(const unsigned long *footprint,
					 unsigned int nr_nodes,
					 const nodemask_t *allowed,
					 const nodemask_t *toptier,
					 int src, int override,
					 kmmscand_distance_fn distance)
{
	int nid, best = NUMA_NO_NODE, best_dist = 0;
	unsigned long best_fp = 0;

	if (override >= 0 && override < MAX_NUMNODES &&
	    node_isset(override, *allowed) && node_isset(override, *toptier))
		return override;

	for_each_node_mask(nid, *allowed) {
		unsigned long fp;
		int dist;

		if (!node_isset(nid, *toptier) || nid == src)
			continue;
		fp = (unsigned int)nid < nr_nodes ? footprint[nid] : 0;
		dist = distance(src, nid);
		if (best == NUMA_NO_NODE || fp > best_fp ||
		    (fp == best_fp && dist < best_dist)) {
			best = nid;
			best_fp = fp;
			best_dist = dist;
		}
	}
	return best;
}

/**
 * kmmscand_policy_moves - may the pages under a memory policy be promoted?
 * @pol: a VMA's or a task's memory policy, NULL for the default policy
 *
 * Memory policies follow NUMA balancing's rule (vma_policy_mof()): pages
 * under an explicit policy stay where the policy put them unless the
 * policy asks to be optimised (MPOL_F_MOF, set by MPOL_F_NUMA_BALANCING
 * on MPOL_BIND and MPOL_PREFERRED_MANY).  The default policy and the
 * per-node preferred policies carry MPOL_F_MOF.
 *
 * Return: true if the pages may move.
 */
static inline bool kmmscand_policy_moves(const struct mempolicy *pol)
{
	return !pol || (pol->flags & MPOL_F_MOF);
}

/**
 * kmmscand_policy_nodes - keep a node mask within a memory policy's nodes
 * @pol: a memory policy that may move (kmmscand_policy_moves()), or NULL
 * @nodes: the nodes allowed so far, narrowed in place
 *
 * A policy that may move keeps its pages within its nodes: MPOL_BIND and
 * MPOL_PREFERRED_MANY narrow @nodes to their node set, the others leave
 * it alone.
 */
static inline void kmmscand_policy_nodes(const struct mempolicy *pol,
					 nodemask_t *nodes)
{
	if (pol && (pol->mode == MPOL_BIND ||
		    pol->mode == MPOL_PREFERRED_MANY))
		nodes_and(*nodes, *nodes, pol->nodes);
}

#endif /* _MM_KMMSCAND_POLICY_H */
