// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_throttle: when the migration thread holds promotion back.
 *
 * It defers a batch when
 *  - the token bucket of promote_rate_limit_mbps is empty,
 *  - the target node has no zone above WMARK_HIGH + batch (kswapd, woken
 *    below WMARK_PROMO + batch, refills; see kmmscand_node_has_room()), or
 *  - the target node demoted at least as many pages as we promoted to it
 *    in the last second (promotion would only feed demotion: ping-pong).
 */

#include <linux/jiffies.h>
#include <linux/kmmscand.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/sched/numa_balancing.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"

#include <trace/events/kmmscand.h>

static struct kmmscand_bucket kmmscand_bucket;

/* Per target node: promotions and demotions over the last second. */
struct kmmscand_node_rate {
	u64 window_start;
	unsigned long promoted;		/* total pages promoted to the node */
	unsigned long promoted_base;
	unsigned long demoted_base;
	unsigned long promoted_last;	/* in the last complete window */
	unsigned long demoted_last;
	unsigned long need_promo_until;	/* jiffies; see kmmscand_node_has_room() */
};

static struct kmmscand_node_rate *kmmscand_node_rate;

/*
 * Watermark guard.
 *
 * The band between WMARK_HIGH and WMARK_PROMO of a top-tier node is what
 * promotion may use:
 *
 *  - if no zone of the node would stay above WMARK_PROMO after @nr more
 *    pages, ask kswapd to keep WMARK_PROMO free on this node for a while
 *    (kmmscand_promo_wmark_active()) and wake it on the highest zone;
 *  - if no zone would even stay above WMARK_HIGH, defer the batch.
 *
 * So kswapd's behaviour only changes on a node where promotion actually ran
 * short of room in the last KMMSCAND_PROMO_WMARK_HOLD_MS, not on every
 * node of every machine that has kmmscand enabled.
 *
 * "No zone" rather than "any zone" because kswapd itself calls a node
 * balanced when one zone meets the mark (pgdat_balanced()); waiting for
 * every zone, ZONE_DMA included, could defer for ever.  Deferring below
 * WMARK_PROMO + @nr instead, as a first version did, stalled promotion in
 * the VM: kswapd stops at WMARK_PROMO, so free memory sat a few hundred
 * pages above it, below WMARK_PROMO + a 512-page batch, and 326 batches
 * in a row were deferred while only 19 pages moved.
 */
#define KMMSCAND_PROMO_WMARK_HOLD_MS	10000

static bool kmmscand_node_has_room(int nid, unsigned long nr)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	bool above_promo = false, above_high = false;
	struct zone *top = NULL;
	int z;

	for (z = pgdat->nr_zones - 1; z >= 0; z--) {
		struct zone *zone = pgdat->node_zones + z;

		if (!managed_zone(zone))
			continue;
		if (!top)
			top = zone;
		if (zone_watermark_ok(zone, 0, promo_wmark_pages(zone) + nr,
				      ZONE_MOVABLE, 0)) {
			above_promo = true;
			break;
		}
		if (zone_watermark_ok(zone, 0, high_wmark_pages(zone) + nr,
				      ZONE_MOVABLE, 0))
			above_high = true;
	}
	if (!above_promo && top) {
		WRITE_ONCE(kmmscand_node_rate[nid].need_promo_until,
			   jiffies + msecs_to_jiffies(KMMSCAND_PROMO_WMARK_HOLD_MS));
		wakeup_kswapd(top, 0, 0, ZONE_MOVABLE);
	}
	return above_promo || above_high;
}

/**
 * kmmscand_promo_wmark_active - should kswapd reclaim a node up to WMARK_PROMO
 * @pgdat: the node kswapd balances
 *
 * True while kmmscand may promote and, in the last
 * KMMSCAND_PROMO_WMARK_HOLD_MS, found @pgdat without room for a batch above
 * WMARK_PROMO.  Then kswapd keeps the promotion band free on that node, as
 * it does for NUMA balancing's tiering mode; otherwise the migrator's
 * watermark guard could defer for ever.  Nodes promotion never ran short
 * on are balanced to WMARK_HIGH, exactly as without kmmscand.
 *
 * Context: any context (kswapd); lockless, never sleeps.
 *
 * Return: true if kswapd should balance @pgdat to WMARK_PROMO.
 */
bool kmmscand_promo_wmark_active(struct pglist_data *pgdat)
{
	struct kmmscand_node_rate *r = READ_ONCE(kmmscand_node_rate);

	if (!r || !READ_ONCE(kmmscand_enabled) ||
	    !READ_ONCE(kmmscand_promote_rate_mbps))
		return false;
	return time_before(jiffies,
			   READ_ONCE(r[pgdat->node_id].need_promo_until));
}

/**
 * kmmscand_node_demoted - pages demoted from a node since boot
 * @nid: the node
 *
 * In 6.12 PGDEMOTE_* are node_stat_items of the node demoted from.
 *
 * Context: any.
 *
 * Return: the sum of its PGDEMOTE_* counters.
 */
unsigned long kmmscand_node_demoted(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);

	return node_page_state(pgdat, PGDEMOTE_KSWAPD) +
	       node_page_state(pgdat, PGDEMOTE_DIRECT) +
	       node_page_state(pgdat, PGDEMOTE_KHUGEPAGED);
}

/*
 * Ping-pong guard: true if in the last complete one-second window the node
 * demoted at least as many pages as we promoted to it, both nonzero.
 */
static bool kmmscand_node_pingpong(int nid, u64 now)
{
	struct kmmscand_node_rate *r = &kmmscand_node_rate[nid];

	if (now - r->window_start >= NSEC_PER_SEC) {
		unsigned long demoted = kmmscand_node_demoted(nid);

		r->demoted_last = demoted - r->demoted_base;
		r->promoted_last = r->promoted - r->promoted_base;
		/* An old window says nothing about the last second. */
		if (now - r->window_start >= 2 * NSEC_PER_SEC) {
			r->demoted_last = 0;
			r->promoted_last = 0;
		}
		r->demoted_base = demoted;
		r->promoted_base = r->promoted;
		r->window_start = now;
	}
	return r->demoted_last && r->promoted_last &&
	       r->demoted_last >= r->promoted_last;
}

/**
 * kmmscand_node_throttle - should a batch towards a node be held back?
 * @nid: the target node, a top-tier node with memory
 * @pages: the pages the batch would promote
 * @now: the time of the batch (ktime_get_ns())
 *
 * Applies the watermark guard, then the ping-pong guard, then, in NUMA
 * balancing's tiering mode, NUMA balancing's rate limit, which the batch
 * is charged to if it may go (numa_promotion_charge()): promotions by hint
 * faults and by kmmscand then share one limit per node.
 *
 * Context: the migration thread.
 *
 * Return: KMMSCAND_THROTTLE_WATERMARK, KMMSCAND_THROTTLE_DEMOTION or
 * KMMSCAND_THROTTLE_RATELIMIT if the batch must wait,
 * KMMSCAND_THROTTLE_NONE if it may go.
 */
int kmmscand_node_throttle(int nid, unsigned long pages, u64 now)
{
	if (!kmmscand_node_has_room(nid, pages))
		return KMMSCAND_THROTTLE_WATERMARK;
	if (kmmscand_node_pingpong(nid, now))
		return KMMSCAND_THROTTLE_DEMOTION;
	if (!numa_promotion_charge(NODE_DATA(nid), pages))
		return KMMSCAND_THROTTLE_RATELIMIT;
	return KMMSCAND_THROTTLE_NONE;
}

/**
 * kmmscand_node_promoted - count pages promoted to a node
 * @nid: the target node
 * @pages: base pages that moved
 *
 * For the ping-pong guard of the node.
 *
 * Context: the migration thread.
 */
void kmmscand_node_promoted(int nid, unsigned long pages)
{
	kmmscand_node_rate[nid].promoted += pages;
}

/**
 * kmmscand_rate_take - take a batch's pages from the promotion rate limit
 * @now: the time of the batch (ktime_get_ns())
 * @rate: the promote_rate_limit_mbps tunable, not 0
 * @batch: the migrate_batch tunable
 * @want: the pages the batch needs
 *
 * Context: the migration thread.
 *
 * Return: 0 if the tokens were taken, else the jiffies until they will be
 * there (the deferral is counted and traced).
 */
long kmmscand_rate_take(u64 now, unsigned int rate, unsigned int batch,
			unsigned long want)
{
	kmmscand_bucket_refill(&kmmscand_bucket, now, rate,
			       max_t(unsigned int, batch, 1U << PMD_ORDER));
	if (!kmmscand_bucket_take(&kmmscand_bucket, want)) {
		u64 ns = kmmscand_bucket_wait_ns(&kmmscand_bucket, want, rate);

		count_vm_event(KMMSCAND_DEFER_RATELIMIT);
		trace_kmmscand_throttle(KMMSCAND_THROTTLE_RATELIMIT,
					NUMA_NO_NODE, want);
		return max_t(long, nsecs_to_jiffies(ns), 1);
	}
	return 0;
}

/**
 * kmmscand_rate_return - give back tokens of pages that were not promoted
 * @pages: pages taken by kmmscand_rate_take() and not used
 *
 * Context: the migration thread.
 */
void kmmscand_rate_return(unsigned long pages)
{
	kmmscand_bucket.tokens += pages;
}

/**
 * kmmscand_throttle_free - free what kmmscand_throttle_init() allocated
 *
 * Context: process context, at boot.
 */
void __init kmmscand_throttle_free(void)
{
	struct kmmscand_node_rate *r = kmmscand_node_rate;

	/* kswapd reads it locklessly (kmmscand_promo_wmark_active()). */
	WRITE_ONCE(kmmscand_node_rate, NULL);
	kfree(r);
}

/**
 * kmmscand_throttle_init - allocate the per-node promotion and demotion rates
 *
 * Context: process context, at boot; sleeps.
 *
 * Return: 0 or -ENOMEM.
 */
int __init kmmscand_throttle_init(void)
{
	kmmscand_node_rate = kcalloc(nr_node_ids, sizeof(*kmmscand_node_rate),
				     GFP_KERNEL);
	return kmmscand_node_rate ? 0 : -ENOMEM;
}
