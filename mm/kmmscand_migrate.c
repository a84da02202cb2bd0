// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_migrate: promote the hot slow-tier folios found by kmmscand.
 *
 * The scanner hands candidates over through a bounded queue: the PFN of a
 * folio and what identifies it (mapping and index), the mm it was found in
 * (an opaque key for purging, never dereferenced here), the target node
 * and its size.  A queued candidate holds no folio reference.  The scanner
 * never blocks: when the queue is full it stops its visit and resumes
 * there later.
 *
 * This thread takes up to migrate_batch pages at a time, looks each folio
 * up again and revalidates it, isolates it and calls migrate_pages() once per target node.  It
 * holds back (defers) a batch when
 *  - the token bucket of promote_rate_limit_mbps is empty,
 *  - the target node has no zone above WMARK_HIGH + batch (kswapd, woken
 *    below WMARK_PROMO + batch, refills; see kmmscand_node_has_room()), or
 *  - the target node demoted at least as many pages as we promoted to it
 *    in the last second (promotion would only feed demotion: ping-pong).
 */

#define pr_fmt(fmt) "kmmscand: " fmt

#include <linux/freezer.h>
#include <linux/gfp.h>
#include <linux/kmmscand.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/memory_hotplug.h>
#include <linux/memory-tiers.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/sort.h>
#include <linux/swap.h>
#include <linux/timekeeping.h>
#include <linux/vmstat.h>
#include <linux/wait.h>

#include "internal.h"
#include "kmmscand_internal.h"
#include "kmmscand_policy.h"

#include <trace/events/kmmscand.h>

/* Pause after a deferred batch, for kswapd or the demotion window. */
#define KMMSCAND_DEFER_PAUSE	max_t(long, HZ / 10, 1)

/* In-flight entry still to be processed (see struct kmmscand_cand.gone). */
#define KMMSCAND_ALIVE		(-1)

/* kmmscand_promote_group() verdicts besides enum kmmscand_throttle_reason. */
#define KMMSCAND_GROUP_GO		(-1)	/* promote the group */
#define KMMSCAND_GROUP_TARGET_GONE	(-2)	/* target left N_MEMORY/top tier */

/**
 * struct kmmscand_cand - a queued promotion candidate
 * @pfn: the first page frame of the folio
 * @mapping: folio->mapping when it was queued (anon_vma or address_space)
 * @index: folio->index when it was queued
 * @mm: the mm it was found in; a key for purging, never dereferenced
 * @nid: the target node chosen by the scanner
 * @src: the node the folio was on when it was queued (for tracing)
 * @nr: pages in the folio when it was queued
 * @gone: in the in-flight batch: KMMSCAND_ALIVE, or the reason the mm no
 *	longer wants it (exit, opt-out), set by kmmscand_queue_purge()
 *
 * A candidate holds no reference on its folio: a queued page stays free to
 * be split, collapsed, merged by KSM, reused on a write fault, migrated or
 * freed.  The migrator looks the folio up again by @pfn and only takes it
 * if it is still the same folio: the same @mapping and @index (see
 * kmmscand_cand_folio()).
 */
struct kmmscand_cand {
	unsigned long pfn;
	void *mapping;
	pgoff_t index;
	struct mm_struct *mm;
	int nid;
	int src;
	unsigned int nr;
	int gone;
};

/*
 * The ring of queued candidates and the batch in flight.  Both under
 * kmmscand_queue_lock; the batch contents other than @gone also belong to
 * the migrator, which holds kmmscand_batch_mutex while a batch is out.
 *
 * Lock order: kmmscand_batch_mutex, then the PTL, kmmscand_queue_lock,
 * kmmscand_mm_lock (mm/kmmscand.c).
 */
static struct kmmscand_cand *kmmscand_ring;
static unsigned int kmmscand_ring_head;
static unsigned int kmmscand_ring_len;
static unsigned long kmmscand_ring_pages;
static struct kmmscand_cand *kmmscand_batch;
static unsigned int kmmscand_batch_len;
/* ring + batch entries; read locklessly to skip purging an empty queue */
static unsigned int kmmscand_nr_held;
static DEFINE_SPINLOCK(kmmscand_queue_lock);
/*
 * The PFNs held by the ring or the batch, so that a folio is queued once:
 * a folio shared by several mms, or found hot again while its batch was
 * deferred, is not queued (and looked up, and tried) twice.  Updated under
 * kmmscand_queue_lock; a failed insertion only allows a duplicate.
 */
static DEFINE_XARRAY(kmmscand_queued);
static DEFINE_MUTEX(kmmscand_batch_mutex);

static struct task_struct *kmmscand_migrate_thread __read_mostly;
static DECLARE_WAIT_QUEUE_HEAD(kmmscand_migrate_wait);
static bool kmmscand_migrate_kick;

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

static inline struct kmmscand_cand *kmmscand_ring_at(unsigned int i)
{
	return &kmmscand_ring[(kmmscand_ring_head + i) % KMMSCAND_QUEUE_LEN];
}

/**
 * kmmscand_queue_folio - offer a hot folio for promotion
 * @folio: the folio; the caller holds the PTL of a mapping of it
 * @mm: the mm it was found in (key only)
 * @nid: target node
 * @nr: pages in @folio
 *
 * Never blocks and takes no folio reference: the candidate is recorded by
 * PFN and identity (mapping, index) and looked up again at batch time.  A
 * folio that is already queued is not queued again.
 *
 * Context: atomic, under the page table lock; takes kmmscand_queue_lock.
 *
 * Return: true if queued (now or before), false if the queue is full.
 */
bool kmmscand_queue_folio(struct folio *folio, struct mm_struct *mm,
			  int nid, unsigned int nr)
{
	unsigned long pfn = folio_pfn(folio);
	struct kmmscand_cand *e;

	spin_lock(&kmmscand_queue_lock);
	if (xa_load(&kmmscand_queued, pfn)) {
		/* Already on its way: nothing to add. */
		spin_unlock(&kmmscand_queue_lock);
		return true;
	}
	if (kmmscand_ring_len >= KMMSCAND_QUEUE_LEN) {
		spin_unlock(&kmmscand_queue_lock);
		return false;
	}
	xa_store(&kmmscand_queued, pfn, xa_mk_value(0), GFP_NOWAIT);
	e = kmmscand_ring_at(kmmscand_ring_len);
	e->pfn = pfn;
	e->mapping = READ_ONCE(folio->mapping);
	e->index = folio->index;
	e->mm = mm;
	e->nid = nid;
	e->src = folio_nid(folio);
	e->nr = nr;
	e->gone = KMMSCAND_ALIVE;
	kmmscand_ring_len++;
	kmmscand_ring_pages += nr;
	WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held + 1);
	spin_unlock(&kmmscand_queue_lock);
	return true;
}

/**
 * kmmscand_queue_purge - drop the queued candidates of an mm
 * @mm: the mm (key only), or NULL for all
 * @why: KMMSCAND_DROP_EXIT, _OPTOUT or _OFF
 *
 * Candidates already taken into a batch are marked so that the migrator
 * skips them.  For an opt-out, also waits until a batch in flight has
 * finished, so that no page of the mm is promoted after this returns.
 *
 * Context: process context; for an opt-out sleeps (kmmscand_batch_mutex).
 */
void kmmscand_queue_purge(struct mm_struct *mm, enum kmmscand_drop_reason why)
{
	unsigned int i, kept = 0, dropped = 0;

	if (!READ_ONCE(kmmscand_nr_held))
		goto wait;

	spin_lock(&kmmscand_queue_lock);
	for (i = 0; i < kmmscand_ring_len; i++) {
		struct kmmscand_cand *e = kmmscand_ring_at(i);

		if (mm && e->mm != mm) {
			if (kept != i)
				*kmmscand_ring_at(kept) = *e;
			kept++;
			continue;
		}
		kmmscand_ring_pages -= e->nr;
		xa_erase(&kmmscand_queued, e->pfn);
		trace_kmmscand_candidate_drop(e->pfn, e->src, why);
		dropped++;
	}
	kmmscand_ring_len = kept;
	WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held - dropped);
	/* The batch is sorted before it is published: indices are stable. */
	for (i = 0; i < kmmscand_batch_len; i++)
		if (!mm || kmmscand_batch[i].mm == mm)
			WRITE_ONCE(kmmscand_batch[i].gone, why);
	spin_unlock(&kmmscand_queue_lock);

	count_vm_events(why == KMMSCAND_DROP_EXIT ? KMMSCAND_FAIL_EXIT :
			KMMSCAND_FAIL_STALE, dropped);
wait:
	if (why == KMMSCAND_DROP_OPTOUT) {
		mutex_lock(&kmmscand_batch_mutex);
		mutex_unlock(&kmmscand_batch_mutex);
	}
}

/* Put a deferred candidate back at the head of the ring, or drop it. */
static void kmmscand_requeue(struct kmmscand_cand *e)
{
	bool kept = false;
	int gone;

	spin_lock(&kmmscand_queue_lock);
	gone = e->gone;
	if (gone == KMMSCAND_ALIVE &&
	    kmmscand_ring_len < KMMSCAND_QUEUE_LEN) {
		kmmscand_ring_head = (kmmscand_ring_head + KMMSCAND_QUEUE_LEN - 1) %
				     KMMSCAND_QUEUE_LEN;
		*kmmscand_ring_at(0) = *e;
		kmmscand_ring_len++;
		kmmscand_ring_pages += e->nr;
		WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held + 1);
		kept = true;
	}
	spin_unlock(&kmmscand_queue_lock);
	/* The ring's copy keeps the PFN queued; this one is done. */
	if (kept) {
		e->pfn = 0;
		return;
	}
	trace_kmmscand_candidate_drop(e->pfn, e->src, KMMSCAND_DROP_DEFER);
	if (gone == KMMSCAND_ALIVE)
		count_vm_event(KMMSCAND_CANDIDATE_DROP);
	else
		count_vm_event(gone == KMMSCAND_DROP_EXIT ?
			       KMMSCAND_FAIL_EXIT : KMMSCAND_FAIL_STALE);
}

/**
 * kmmscand_migrate_wake - tell the migrator that there is work
 * @tunables: a tunable changed; also cut short a throttling sleep
 *
 * New candidates only wake the migrator when it is idle, so a migrator
 * held back by the rate limit or a guard is not woken on every round.
 *
 * Context: any context that may wake a task.
 */
void kmmscand_migrate_wake(bool tunables)
{
	if (tunables)
		WRITE_ONCE(kmmscand_migrate_kick, true);
	wake_up_interruptible(&kmmscand_migrate_wait);
}

/* Like alloc_misplaced_dst_folio(): on @nid only, no direct reclaim. */
static struct folio *kmmscand_alloc_dst(struct folio *src, unsigned long data)
{
	int nid = (int)data;
	int order = folio_order(src);
	gfp_t gfp = __GFP_THISNODE;

	if (order > 0) {
		gfp |= GFP_TRANSHUGE_LIGHT;
	} else {
		gfp |= GFP_HIGHUSER_MOVABLE | __GFP_NOMEMALLOC | __GFP_NORETRY |
		       __GFP_NOWARN;
		gfp &= ~__GFP_RECLAIM;
	}
	return __folio_alloc_node(gfp, order, nid);
}

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

/* In 6.12 PGDEMOTE_* are node_stat_items of the node demoted from. */
static unsigned long kmmscand_node_demoted(int nid)
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

/*
 * Look a candidate's folio up again, DAMON paddr style: take a reference
 * only if the page still belongs to an LRU folio that starts at the queued
 * PFN and still has the queued mapping and index, i.e. it was not freed
 * and reused for something else meanwhile.  Returns the folio with a
 * reference, or NULL.
 */
static struct folio *kmmscand_cand_folio(const struct kmmscand_cand *e)
{
	struct page *page = pfn_to_online_page(e->pfn);
	struct folio *folio;

	if (!page)
		return NULL;
	folio = page_folio(page);
	if (!folio_test_lru(folio) || !folio_try_get(folio))
		return NULL;
	if (unlikely(page_folio(page) != folio || folio_pfn(folio) != e->pfn ||
		     !folio_test_lru(folio) ||
		     READ_ONCE(folio->mapping) != e->mapping ||
		     folio->index != e->index)) {
		folio_put(folio);
		return NULL;
	}
	return folio;
}

/**
 * kmmscand_folio_promotable - may @folio be migrated in its present state?
 * @folio: a mapped folio, stable: the caller holds a page table lock that
 *	maps it or a reference on it
 *
 * The scanner asks before it queues a candidate, the migrator again
 * before it isolates one.  Asking early matters: every candidate costs the
 * migrator a short-lived folio reference to look it up, and an isolated
 * folio is off the LRU for the whole batch; either makes THP collapse,
 * split, KSM merging or UFFDIO_MOVE fail on the folio meanwhile.  So a
 * folio that would only be dropped is never queued.  Some states pass
 * (writeback, a dirty page cache folio, a partially mapped THP waiting for
 * its deferred split): a later pass that finds the page young asks again.
 *
 * Return: true if migrate_pages() may be asked to move @folio.
 */
bool kmmscand_folio_promotable(struct folio *folio)
{
	if (folio_maybe_dma_pinned(folio) || folio_test_ksm(folio) ||
	    folio_test_writeback(folio) || folio_test_hugetlb(folio))
		return false;
	/*
	 * migrate_pages() splits a partially mapped large folio, whoever
	 * asked for the migration.  Promotion is no reason to split: leave
	 * it to the deferred split queue.
	 */
	if (folio_order(folio) > 1 && folio_test_partially_mapped(folio))
		return false;
	/* Async migration of dirty file folios mostly fails; as NUMA balancing. */
	return !(folio_is_file_lru(folio) && folio_test_dirty(folio));
}

static bool kmmscand_still_eligible(struct folio *folio, int target)
{
	int nid = folio_nid(folio);

	if (!folio_mapped(folio) || nid == target || node_is_toptier(nid))
		return false;
	if (!kmmscand_folio_promotable(folio))
		return false;
	return node_state(target, N_MEMORY) && node_is_toptier(target);
}

static int kmmscand_cand_cmp(const void *a, const void *b)
{
	const struct kmmscand_cand *x = a, *y = b;

	if (x->nid != y->nid)
		return x->nid < y->nid ? -1 : 1;
	if (x->mm != y->mm)
		return (unsigned long)x->mm < (unsigned long)y->mm ? -1 : 1;
	return 0;
}

/*
 * Migrate the isolated folios on @folios, all charged to @memcg (NULL
 * without memcg), to @nid.  Counts the promotions in kmmscand's events and
 * in pgpromote_success of the node and the memcg, as NUMA balancing does.
 * Returns the base pages that moved.
 */
static unsigned int kmmscand_migrate_list(struct list_head *folios, int nid,
					  struct mem_cgroup *memcg)
{
	unsigned int nr_succeeded = 0;

	if (list_empty(folios))
		return 0;
	/*
	 * nr_succeeded is in base pages and also set when migrate_pages()
	 * fails with an error; its return value counts folios.
	 */
	migrate_pages(folios, kmmscand_alloc_dst, NULL, nid, MIGRATE_ASYNC,
		      MR_KMMSCAND, &nr_succeeded);
	if (!list_empty(folios))
		putback_movable_pages(folios);
	/*
	 * The new folios, and the ones put back, wait in this CPU's LRU add
	 * batch with a reference each until it is drained; this thread may
	 * sleep next, and off the LRU with that reference THP collapse,
	 * split and KSM would refuse them for as long.
	 */
	lru_add_drain();
#ifdef CONFIG_NUMA_BALANCING
	if (nr_succeeded)
		mod_lruvec_state(mem_cgroup_lruvec(memcg, NODE_DATA(nid)),
				 PGPROMOTE_SUCCESS, nr_succeeded);
#endif
	return nr_succeeded;
}

/*
 * Promote the candidates [first, last) of the batch, all towards @nid.
 * Returns the pages that were deferred (put back to the queue).
 */
static unsigned long kmmscand_promote_group(unsigned int first,
					    unsigned int last, int nid, u64 now)
{
	unsigned long pages = 0, isolated = 0, failed, nr_succeeded = 0;
	struct mem_cgroup *memcg = NULL, *cur = NULL;
	int reason = KMMSCAND_GROUP_GO;
	LIST_HEAD(folios);
	unsigned int i;

	for (i = first; i < last; i++)
		pages += kmmscand_batch[i].nr;

	if (!node_state(nid, N_MEMORY) || !node_is_toptier(nid))
		reason = KMMSCAND_GROUP_TARGET_GONE;	/* all stale below */
	else if (!kmmscand_node_has_room(nid, pages))
		reason = KMMSCAND_THROTTLE_WATERMARK;
	else if (kmmscand_node_pingpong(nid, now))
		reason = KMMSCAND_THROTTLE_DEMOTION;

	if (reason >= 0) {
		count_vm_event(reason == KMMSCAND_THROTTLE_WATERMARK ?
			       KMMSCAND_DEFER_WATERMARK :
			       KMMSCAND_DEFER_DEMOTION);
		trace_kmmscand_throttle(reason, nid, pages);
		for (i = last; i > first; i--)
			kmmscand_requeue(&kmmscand_batch[i - 1]);
		return pages;
	}

	for (i = first; i < last; i++) {
		struct kmmscand_cand *e = &kmmscand_batch[i];
		int gone = READ_ONCE(e->gone);
		struct folio *folio = NULL;

		if (gone == KMMSCAND_ALIVE &&
		    reason != KMMSCAND_GROUP_TARGET_GONE)
			folio = kmmscand_cand_folio(e);
		if (folio && !kmmscand_still_eligible(folio, nid)) {
			folio_put(folio);
			folio = NULL;
		}
		if (!folio) {
			count_vm_event(gone == KMMSCAND_DROP_EXIT ?
				       KMMSCAND_FAIL_EXIT : KMMSCAND_FAIL_STALE);
			continue;
		}
		if (!folio_isolate_lru(folio)) {
			count_vm_event(KMMSCAND_FAIL_ISOLATE);
			folio_put(folio);
			continue;
		}
		node_stat_mod_folio(folio,
				    NR_ISOLATED_ANON + folio_is_file_lru(folio),
				    folio_nr_pages(folio));
		/* One migrate_pages() call per memcg, for pgpromote_success. */
		if (list_empty(&folios) || folio_memcg(folio) != cur) {
			nr_succeeded += kmmscand_migrate_list(&folios, nid, memcg);
			mem_cgroup_put(memcg);
			cur = folio_memcg(folio);
			memcg = get_mem_cgroup_from_folio(folio);
		}
		/* The folio may have been split since it was queued. */
		isolated += folio_nr_pages(folio);
		/* The isolation holds its own reference now. */
		folio_put(folio);
		list_add_tail(&folio->lru, &folios);
		/* Remember which entries made it to migrate_pages(). */
		e->nr = 0;
	}
	nr_succeeded += kmmscand_migrate_list(&folios, nid, memcg);
	mem_cgroup_put(memcg);
	if (!isolated)
		return 0;

	failed = isolated - min(isolated, nr_succeeded);
	count_vm_event(KMMSCAND_PROMOTE_BATCH);
	count_vm_events(KMMSCAND_PROMOTE_SUCCESS, nr_succeeded);
	count_vm_events(KMMSCAND_FAIL_MIGRATE, failed);
	kmmscand_node_rate[nid].promoted += nr_succeeded;
	trace_kmmscand_migrate_batch(isolated, nr_succeeded, failed, nid,
				     MR_KMMSCAND);

	/*
	 * Nothing moved: let the mms involved back off this target.  Only
	 * mms whose candidates were not purged meanwhile: a purged mm may be
	 * gone, and its address reused by a new mm.  Under kmmscand_queue_lock
	 * a not yet purged mm stays registered or at least allocated, because
	 * both paths that unregister an mm purge it before they drop it.
	 */
	if (!nr_succeeded) {
		struct mm_struct *prev = NULL;

		spin_lock(&kmmscand_queue_lock);
		for (i = first; i < last; i++) {
			struct kmmscand_cand *e = &kmmscand_batch[i];

			if (e->nr || e->gone != KMMSCAND_ALIVE || e->mm == prev)
				continue;
			prev = e->mm;
			kmmscand_target_failed(e->mm, nid);
		}
		spin_unlock(&kmmscand_queue_lock);
	}
	return 0;
}

/* Drop everything queued: kmmscand was disabled or the rate set to 0. */
static void kmmscand_drain_all(void)
{
	kmmscand_queue_purge(NULL, KMMSCAND_DROP_OFF);
}

/*
 * Run one batch if possible.  Returns 0 to go on at once, or the number of
 * jiffies to sleep (MAX_SCHEDULE_TIMEOUT: until woken).
 */
static long kmmscand_migrate_once(void)
{
	unsigned int rate = READ_ONCE(kmmscand_promote_rate_mbps);
	unsigned int batch = READ_ONCE(kmmscand_migrate_batch);
	unsigned long want, pulled = 0, deferred = 0;
	unsigned int i, n = 0;
	u64 now;

	if (!READ_ONCE(kmmscand_enabled) || !rate) {
		kmmscand_drain_all();
		return MAX_SCHEDULE_TIMEOUT;
	}

	spin_lock(&kmmscand_queue_lock);
	if (!kmmscand_ring_len) {
		spin_unlock(&kmmscand_queue_lock);
		return MAX_SCHEDULE_TIMEOUT;
	}
	/* A batch holds at least one folio, even a THP larger than batch. */
	want = min_t(unsigned long, kmmscand_ring_pages,
		     max_t(unsigned long, batch, kmmscand_ring_at(0)->nr));
	spin_unlock(&kmmscand_queue_lock);

	now = ktime_get_ns();
	kmmscand_bucket_refill(&kmmscand_bucket, now, rate,
			       max_t(unsigned int, batch, 1U << PMD_ORDER));
	if (!kmmscand_bucket_take(&kmmscand_bucket, want)) {
		u64 ns = kmmscand_bucket_wait_ns(&kmmscand_bucket, want, rate);

		count_vm_event(KMMSCAND_DEFER_RATELIMIT);
		trace_kmmscand_throttle(KMMSCAND_THROTTLE_RATELIMIT,
					NUMA_NO_NODE, want);
		return max_t(long, nsecs_to_jiffies(ns), 1);
	}

	mutex_lock(&kmmscand_batch_mutex);
	spin_lock(&kmmscand_queue_lock);
	while (kmmscand_ring_len && n < KMMSCAND_BATCH_MAX) {
		struct kmmscand_cand *e = kmmscand_ring_at(0);

		if (n && pulled + e->nr > want)
			break;
		kmmscand_batch[n++] = *e;
		pulled += e->nr;
		kmmscand_ring_pages -= e->nr;
		kmmscand_ring_head = (kmmscand_ring_head + 1) % KMMSCAND_QUEUE_LEN;
		kmmscand_ring_len--;
	}
	/*
	 * Sort before publishing the batch: kmmscand_queue_purge() marks
	 * batch entries by index under this lock.
	 */
	sort(kmmscand_batch, n, sizeof(*kmmscand_batch), kmmscand_cand_cmp,
	     NULL);
	kmmscand_batch_len = n;
	spin_unlock(&kmmscand_queue_lock);

	/* Unused tokens go back (the queue may have shrunk meanwhile). */
	if (pulled < want)
		kmmscand_bucket.tokens += want - pulled;

	/* Folios faulted in on this CPU may still wait to enter the LRU. */
	lru_add_drain();
	for (i = 0; i < n; ) {
		unsigned int j = i + 1;

		while (j < n && kmmscand_batch[j].nid == kmmscand_batch[i].nid)
			j++;
		deferred += kmmscand_promote_group(i, j, kmmscand_batch[i].nid,
						   now);
		i = j;
		cond_resched();
	}

	spin_lock(&kmmscand_queue_lock);
	/* Done with these folios (migrated, put back or dropped). */
	for (i = 0; i < n; i++)
		if (kmmscand_batch[i].pfn)
			xa_erase(&kmmscand_queued, kmmscand_batch[i].pfn);
	WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held - kmmscand_batch_len);
	kmmscand_batch_len = 0;
	spin_unlock(&kmmscand_queue_lock);
	mutex_unlock(&kmmscand_batch_mutex);

	if (deferred) {
		kmmscand_bucket.tokens += deferred;
		/* Let kswapd or the demotion window make progress. */
		return KMMSCAND_DEFER_PAUSE;
	}
	return 0;
}

static bool kmmscand_migrate_idle;

static bool kmmscand_migrate_wake_cond(void)
{
	return kthread_should_stop() || READ_ONCE(kmmscand_migrate_kick) ||
	       (kmmscand_migrate_idle && READ_ONCE(kmmscand_nr_held));
}

static int kmmscand_migrate(void *unused)
{
	long timeout;

	set_freezable();
	while (!kthread_should_stop()) {
		WRITE_ONCE(kmmscand_migrate_kick, false);
		timeout = kmmscand_migrate_once();
		if (!timeout) {
			cond_resched();
			try_to_freeze();
			continue;
		}
		kmmscand_migrate_idle = timeout == MAX_SCHEDULE_TIMEOUT;
		wait_event_freezable_timeout(kmmscand_migrate_wait,
					     kmmscand_migrate_wake_cond(),
					     timeout);
	}
	return 0;
}

/* Free what kmmscand_migrate_init() allocated (kvfree() copes with NULL). */
static void __init kmmscand_migrate_free(void)
{
	struct kmmscand_node_rate *r = kmmscand_node_rate;

	kvfree(kmmscand_ring);
	kmmscand_ring = NULL;
	kvfree(kmmscand_batch);
	kmmscand_batch = NULL;
	/* kswapd reads it locklessly (kmmscand_promo_wmark_active()). */
	WRITE_ONCE(kmmscand_node_rate, NULL);
	kfree(r);
}

/**
 * kmmscand_migrate_init - allocate the queue and start the migrator thread
 *
 * On failure nothing is left allocated or running.
 *
 * Context: process context, at boot; sleeps.
 *
 * Return: 0 or a negative errno.
 */
int __init kmmscand_migrate_init(void)
{
	struct task_struct *t;

	kmmscand_ring = kvcalloc(KMMSCAND_QUEUE_LEN, sizeof(*kmmscand_ring),
				 GFP_KERNEL);
	kmmscand_batch = kvcalloc(KMMSCAND_BATCH_MAX, sizeof(*kmmscand_batch),
				  GFP_KERNEL);
	kmmscand_node_rate = kcalloc(nr_node_ids, sizeof(*kmmscand_node_rate),
				     GFP_KERNEL);
	if (!kmmscand_ring || !kmmscand_batch || !kmmscand_node_rate) {
		kmmscand_migrate_free();
		return -ENOMEM;
	}

	t = kthread_run(kmmscand_migrate, NULL, "kmmscand_migrate");
	if (IS_ERR(t)) {
		pr_err("failed to start the migration thread: %ld\n",
		       PTR_ERR(t));
		kmmscand_migrate_free();
		return PTR_ERR(t);
	}
	kmmscand_migrate_thread = t;
	return 0;
}

/**
 * kmmscand_migrate_exit - undo kmmscand_migrate_init()
 *
 * For a kmmscand_init() that failed after kmmscand_migrate_init()
 * succeeded: no mm was registered, so the queue is empty.  Stops the
 * migrator thread and frees the queue.
 *
 * Context: process context, at boot; sleeps (kthread_stop()).
 */
void __init kmmscand_migrate_exit(void)
{
	if (kmmscand_migrate_thread) {
		kthread_stop(kmmscand_migrate_thread);
		kmmscand_migrate_thread = NULL;
	}
	kmmscand_migrate_free();
}
