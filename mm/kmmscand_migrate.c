// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_migrate: promote the hot slow-tier folios found by kmmscand.
 *
 * The scanner hands candidates over through a bounded queue: a folio with a
 * reference, the mm it was found in (an opaque key for purging, never
 * dereferenced here), the target node and its size.  It never blocks: when
 * the queue is full the candidate is dropped.
 *
 * This thread takes up to migrate_batch pages at a time, revalidates each
 * folio, isolates it and calls migrate_pages() once per target node.  It
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
#include <linux/memory-tiers.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/sort.h>
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
 * @folio: the folio, with a reference taken by the scanner
 * @mm: the mm it was found in; a key for purging, never dereferenced
 * @nid: the target node chosen by the scanner
 * @nr: pages in @folio
 * @gone: in the in-flight batch: KMMSCAND_ALIVE, or the reason the mm no
 *	longer wants it (exit, opt-out), set by kmmscand_queue_purge()
 * @pfn: folio_pfn(@folio), its key in kmmscand_queued; 0 once the entry
 *	was put back into the ring (the ring's copy keeps the key)
 */
struct kmmscand_cand {
	struct folio *folio;
	unsigned long pfn;
	struct mm_struct *mm;
	int nid;
	unsigned int nr;
	int gone;
};

/*
 * The ring of queued candidates and the batch in flight.  Both under
 * kmmscand_queue_lock; the batch contents other than @gone also belong to
 * the migrator, which holds kmmscand_batch_mutex while a batch is out.
 * kmmscand_purged holds the folios a purge took out of the ring until it
 * has put them outside the spinlock; it belongs to kmmscand_purge_mutex.
 *
 * Lock order: kmmscand_purge_mutex, kmmscand_batch_mutex, then the PTL,
 * kmmscand_queue_lock, kmmscand_mm_lock (mm/kmmscand.c).
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
 * The PFNs of the folios held by the ring or the batch, so that a folio is
 * queued once: every queued copy holds a folio reference, and a reference
 * that migrate_pages() does not expect makes the migration fail.  A folio
 * shared by several mms, or found hot again while its batch was deferred,
 * would otherwise be queued again and block its own promotion.  Updated
 * under kmmscand_queue_lock; a failed insertion only allows a duplicate.
 */
static DEFINE_XARRAY(kmmscand_queued);
static DEFINE_MUTEX(kmmscand_batch_mutex);
static struct folio **kmmscand_purged;
static DEFINE_MUTEX(kmmscand_purge_mutex);

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
 * Never blocks.  Takes a folio reference that the migrator drops.  A
 * folio that is already queued is not queued again.
 *
 * Context: atomic, under the page table lock; takes kmmscand_queue_lock.
 *
 * Return: true if queued (now or before), false if the queue is full.
 */
bool kmmscand_queue_folio(struct folio *folio, struct mm_struct *mm,
			  int nid, unsigned int nr)
{
	struct kmmscand_cand *e;

	unsigned long pfn = folio_pfn(folio);

	spin_lock(&kmmscand_queue_lock);
	if (xa_load(&kmmscand_queued, pfn)) {
		/* Already on its way: nothing to add. */
		spin_unlock(&kmmscand_queue_lock);
		return true;
	}
	if (kmmscand_ring_len >= KMMSCAND_QUEUE_LEN || !folio_try_get(folio)) {
		spin_unlock(&kmmscand_queue_lock);
		return false;
	}
	xa_store(&kmmscand_queued, pfn, xa_mk_value(0), GFP_NOWAIT);
	e = kmmscand_ring_at(kmmscand_ring_len);
	e->folio = folio;
	e->pfn = pfn;
	e->mm = mm;
	e->nid = nid;
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
 * Context: process context; sleeps (kmmscand_purge_mutex, and for an
 * opt-out kmmscand_batch_mutex).
 */
void kmmscand_queue_purge(struct mm_struct *mm, enum kmmscand_drop_reason why)
{
	unsigned int i, kept = 0, dropped = 0;

	if (!READ_ONCE(kmmscand_nr_held))
		goto wait;

	mutex_lock(&kmmscand_purge_mutex);
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
		kmmscand_purged[dropped++] = e->folio;
	}
	kmmscand_ring_len = kept;
	WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held - dropped);
	for (i = 0; i < kmmscand_batch_len; i++)
		if (!mm || kmmscand_batch[i].mm == mm)
			WRITE_ONCE(kmmscand_batch[i].gone, why);
	spin_unlock(&kmmscand_queue_lock);

	/*
	 * A folio may have been unmapped (or its mm torn down) since it was
	 * queued, so ours can be the last reference: freeing the folio is
	 * not for under a spinlock.
	 */
	for (i = 0; i < dropped; i++) {
		struct folio *folio = kmmscand_purged[i];

		trace_kmmscand_candidate_drop(folio_pfn(folio),
					      folio_nid(folio), why);
		folio_put(folio);
		kmmscand_purged[i] = NULL;
	}
	mutex_unlock(&kmmscand_purge_mutex);

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
	spin_lock(&kmmscand_queue_lock);
	if (e->gone == KMMSCAND_ALIVE &&
	    kmmscand_ring_len < KMMSCAND_QUEUE_LEN) {
		kmmscand_ring_head = (kmmscand_ring_head + KMMSCAND_QUEUE_LEN - 1) %
				     KMMSCAND_QUEUE_LEN;
		*kmmscand_ring_at(0) = *e;
		kmmscand_ring_len++;
		kmmscand_ring_pages += e->nr;
		WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held + 1);
		e->folio = NULL;
		/* The ring's copy is still queued. */
		e->pfn = 0;
	}
	spin_unlock(&kmmscand_queue_lock);
	if (e->folio) {
		trace_kmmscand_candidate_drop(folio_pfn(e->folio),
					      folio_nid(e->folio),
					      KMMSCAND_DROP_DEFER);
		if (e->gone == KMMSCAND_ALIVE)
			count_vm_event(KMMSCAND_CANDIDATE_DROP);
		else
			count_vm_event(e->gone == KMMSCAND_DROP_EXIT ?
				       KMMSCAND_FAIL_EXIT : KMMSCAND_FAIL_STALE);
		folio_put(e->folio);
		e->folio = NULL;
	}
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
 * While kmmscand promotes, kswapd keeps the top-tier nodes up to
 * WMARK_PROMO (mm/vmscan.c, as for NUMA balancing's tiering mode); the
 * band between WMARK_HIGH and WMARK_PROMO is what promotion may use:
 *
 *  - if no zone of the node would stay above WMARK_PROMO after @nr more
 *    pages, wake kswapd on the highest zone so that it refills the band;
 *  - if no zone would even stay above WMARK_HIGH, defer the batch.
 *
 * "No zone" rather than "any zone" because kswapd itself calls a node
 * balanced when one zone meets the mark (pgdat_balanced()); waiting for
 * every zone, ZONE_DMA included, could defer for ever.  Deferring below
 * WMARK_PROMO + @nr instead, as a first version did, stalled promotion in
 * the VM: kswapd stops at WMARK_PROMO, so free memory sat a few hundred
 * pages above it, below WMARK_PROMO + a 512-page batch, and 326 batches
 * in a row were deferred while only 19 pages moved.
 */
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
	if (!above_promo && top)
		wakeup_kswapd(top, 0, 0, ZONE_MOVABLE);
	return above_promo || above_high;
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

static bool kmmscand_still_eligible(struct folio *folio, int target)
{
	int nid = folio_nid(folio);

	if (!folio_mapped(folio) || nid == target || node_is_toptier(nid))
		return false;
	if (folio_maybe_dma_pinned(folio) || folio_test_ksm(folio) ||
	    folio_test_writeback(folio) || folio_test_hugetlb(folio))
		return false;
	/* Async migration of dirty file folios mostly fails; as NUMA balancing. */
	if (folio_is_file_lru(folio) && folio_test_dirty(folio))
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
 * Promote the candidates [first, last) of the batch, all towards @nid.
 * Returns the pages that were deferred (put back to the queue).
 */
static unsigned long kmmscand_promote_group(unsigned int first,
					    unsigned int last, int nid, u64 now)
{
	unsigned long pages = 0, isolated = 0, failed;
	unsigned int i, nr_succeeded = 0;
	int reason = KMMSCAND_GROUP_GO;
	LIST_HEAD(folios);

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
		struct folio *folio = e->folio;
		int gone = READ_ONCE(e->gone);

		e->folio = NULL;
		if (gone != KMMSCAND_ALIVE ||
		    reason == KMMSCAND_GROUP_TARGET_GONE ||
		    !kmmscand_still_eligible(folio, nid)) {
			count_vm_event(gone == KMMSCAND_DROP_EXIT ?
				       KMMSCAND_FAIL_EXIT : KMMSCAND_FAIL_STALE);
			folio_put(folio);
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
		/* The folio may have been split since it was queued. */
		isolated += folio_nr_pages(folio);
		/* The isolation holds its own reference now. */
		folio_put(folio);
		list_add_tail(&folio->lru, &folios);
		/* Remember which entries made it to migrate_pages(). */
		e->nr = 0;
	}
	if (list_empty(&folios))
		return 0;

	/*
	 * nr_succeeded is in base pages and also set when migrate_pages()
	 * fails with an error; its return value counts folios.  Count and
	 * trace in base pages only.
	 */
	migrate_pages(&folios, kmmscand_alloc_dst, NULL, nid, MIGRATE_ASYNC,
		      MR_NUMA_MISPLACED, &nr_succeeded);
	if (!list_empty(&folios))
		putback_movable_pages(&folios);
	failed = isolated - min_t(unsigned long, isolated, nr_succeeded);

	count_vm_event(KMMSCAND_PROMOTE_BATCH);
	count_vm_events(KMMSCAND_PROMOTE_SUCCESS, nr_succeeded);
	count_vm_events(KMMSCAND_FAIL_MIGRATE, failed);
	kmmscand_node_rate[nid].promoted += nr_succeeded;
	trace_kmmscand_migrate_batch(isolated, nr_succeeded, failed, nid,
				     MR_NUMA_MISPLACED);

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
	kmmscand_batch_len = n;
	spin_unlock(&kmmscand_queue_lock);

	/* Unused tokens go back (the queue may have shrunk meanwhile). */
	if (pulled < want)
		kmmscand_bucket.tokens += want - pulled;

	lru_add_drain();
	sort(kmmscand_batch, n, sizeof(*kmmscand_batch), kmmscand_cand_cmp,
	     NULL);
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
	kvfree(kmmscand_ring);
	kmmscand_ring = NULL;
	kvfree(kmmscand_batch);
	kmmscand_batch = NULL;
	kvfree(kmmscand_purged);
	kmmscand_purged = NULL;
	kfree(kmmscand_node_rate);
	kmmscand_node_rate = NULL;
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
	kmmscand_purged = kvcalloc(KMMSCAND_QUEUE_LEN, sizeof(*kmmscand_purged),
				   GFP_KERNEL);
	kmmscand_node_rate = kcalloc(nr_node_ids, sizeof(*kmmscand_node_rate),
				     GFP_KERNEL);
	if (!kmmscand_ring || !kmmscand_batch || !kmmscand_purged ||
	    !kmmscand_node_rate) {
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
