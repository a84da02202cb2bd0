// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_migrate: promote the hot slow-tier folios found by kmmscand.
 *
 * This thread takes up to migrate_batch pages at a time from the queue
 * (mm/kmmscand_queue.c), looks each folio up again and revalidates it,
 * isolates it and calls migrate_pages() once per target node, source and
 * memcg.
 * It holds a batch back while the rate limit or a guard of the target
 * node says so (mm/kmmscand_throttle.c), and reports a target that
 * promoted nothing for an mm (mm/kmmscand_target.c).
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
#include <linux/swap.h>
#include <linux/timekeeping.h>
#include <linux/vmstat.h>
#include <linux/wait.h>

#include "internal.h"
#include "kmmscand_internal.h"

#include <trace/events/kmmscand.h>

/* Pause after a deferred batch, for kswapd or the demotion window. */
#define KMMSCAND_DEFER_PAUSE	max_t(long, HZ / 10, 1)
/*
 * Target nodes found throttled, since kmmscand_throttled_at: their
 * candidates wait at the back of the queue while those for other nodes
 * go, until the next pause.
 */
static nodemask_t kmmscand_throttled;
static unsigned long kmmscand_throttled_at;

/*
 * A candidate whose folio is off the LRU is mostly one that waits in the
 * LRU add batch of the CPU that faulted it in, and it waits there for as
 * long as that CPU runs only user code: nothing but a drain of every CPU
 * puts it on the LRU, where the migrator can isolate it.  Such a failure
 * asks for lru_add_drain_all() before the next batch, at most once per
 * KMMSCAND_DRAIN_INTERVAL (khugepaged drains once per scan round).  Only
 * the migration thread reads and writes these.
 */
#define KMMSCAND_DRAIN_INTERVAL	HZ
static bool kmmscand_drain_wanted;
static unsigned long kmmscand_drained_at = INITIAL_JIFFIES;

/* kmmscand_promote_group() verdicts besides enum kmmscand_throttle_reason. */
#define KMMSCAND_GROUP_GO		KMMSCAND_THROTTLE_NONE	/* promote the group */
#define KMMSCAND_GROUP_TARGET_GONE	(-2)	/* target left N_MEMORY/top tier */

static struct task_struct *kmmscand_migrate_thread __read_mostly;
static DECLARE_WAIT_QUEUE_HEAD(kmmscand_migrate_wait);
static bool kmmscand_migrate_kick;

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
 * Look a candidate's folio up again, DAMON paddr style: take a reference
 * only if the page still belongs to an LRU folio that starts at the queued
 * PFN and still has the queued mapping and index, i.e. it was not freed
 * and reused for something else meanwhile.  Returns the folio with a
 * reference, or NULL.
 *
 * No folio flag is read before the reference is taken: the page may
 * become the tail of a new large folio at any moment, and a folio flag
 * test on what page_folio() returned then trips CONFIG_DEBUG_VM_PGFLAGS.
 * The page flag tests below are safe on a tail (PageTail() reads the
 * page, PageLRU() its head), and a queued PFN that is a tail now is not
 * the folio that was queued anyway: no reference is taken on whatever
 * large folio it belongs to, which would make its split or migration fail.
 */
static struct folio *kmmscand_cand_folio(const struct kmmscand_cand *e)
{
	struct page *page = pfn_to_online_page(e->pfn);
	struct folio *folio;

	if (!page || PageTail(page))
		return NULL;
	if (!PageLRU(page)) {
		/* In some CPU's LRU add batch, most likely: drain them. */
		kmmscand_drain_wanted = true;
		return NULL;
	}
	folio = page_folio(page);
	if (!folio_try_get(folio))
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

/*
 * Put the folios that wait in the CPUs' LRU add batches on the LRU, when
 * a candidate of an earlier batch was off it and the last drain is at
 * least KMMSCAND_DRAIN_INTERVAL ago.  The scanner queues such a folio
 * again at its next pass that finds it young.
 */
static void kmmscand_lru_drain(void)
{
	if (!kmmscand_drain_wanted ||
	    time_before(jiffies, kmmscand_drained_at + KMMSCAND_DRAIN_INTERVAL))
		return;
	kmmscand_drain_wanted = false;
	kmmscand_drained_at = jiffies;
	lru_add_drain_all();
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

/* The owner's nodes for kmmscand_recheck(): only the migrator uses them. */
static nodemask_t kmmscand_rc_cpuset, kmmscand_rc_owner, kmmscand_rc_allowed;

/* Mark a candidate of the batch as dropped, unless purged meanwhile. */
static void kmmscand_cand_drop(struct kmmscand_cand *e, int why)
{
	if (cmpxchg(&e->gone, KMMSCAND_ALIVE, why) == KMMSCAND_ALIVE)
		trace_kmmscand_candidate_drop(e->pfn, e->src, why);
}

/*
 * Check the @n candidates of one mm at @g in the batch against what
 * the mm allows now, before any is moved to @nid: the mm still has users
 * and has not opted out, the candidate's address is still mapped, and the
 * memory policy there and the owner's cpuset still allow @nid.  A policy
 * or cpuset change after the candidate was queued (it may have waited
 * behind the rate limit or a full node for long) then stops its
 * promotion.  A change while the batch migrates may still see it moved,
 * as a change during a NUMA hint fault's migration may.  The ones that
 * fail are marked gone; if the mm's mmap_lock is contended, the ones not
 * yet checked go back to the queue (the scanner does not wait for it
 * either).  Returns the pages put back.
 */
static unsigned long kmmscand_recheck_mm(struct kmmscand_cand *g,
					 unsigned int n, int nid)
{
	struct mm_struct *mm = g[0].mm;
	unsigned long requeued = 0;
	unsigned int i;
	bool mof;

	if (!mmget_not_zero(mm)) {
		for (i = 0; i < n; i++)
			kmmscand_cand_drop(&g[i], KMMSCAND_DROP_EXIT);
		return 0;
	}
	if (test_bit(MMF_KMMSCAND_OFF, &mm->flags)) {
		for (i = 0; i < n; i++)
			kmmscand_cand_drop(&g[i], KMMSCAND_DROP_OPTOUT);
		goto out;
	}
	if (!mmap_read_trylock(mm)) {
		/* Backwards: each goes to the head of the ring, in order. */
		for (i = n; i > 0; i--) {
			struct kmmscand_cand *e = &g[i - 1];

			if (READ_ONCE(e->gone) != KMMSCAND_ALIVE)
				continue;
			requeued += e->nr;
			kmmscand_requeue(e, false);
		}
		goto out;
	}

	kmmscand_owner_nodes(mm, &kmmscand_rc_cpuset, &kmmscand_rc_owner, &mof);
	for (i = 0; i < n; i++) {
		struct kmmscand_cand *e = &g[i];
		struct vm_area_struct *vma;

		if (READ_ONCE(e->gone) != KMMSCAND_ALIVE)
			continue;
		vma = vma_lookup(mm, e->addr);
		if (!vma || !kmmscand_vma_nodes(vma, e->addr, &kmmscand_rc_cpuset,
						&kmmscand_rc_owner, mof,
						&kmmscand_rc_allowed) ||
		    !node_isset(nid, kmmscand_rc_allowed))
			kmmscand_cand_drop(e, KMMSCAND_DROP_POLICY);
	}
	mmap_read_unlock(mm);
out:
	/* Not the last user's exit_mmap() in this thread. */
	mmput_async(mm);
	return requeued;
}

/*
 * kmmscand_recheck_mm() for each mm of the @n candidates of group @g.
 * Returns the pages put back to the queue.
 */
static unsigned long kmmscand_recheck(struct kmmscand_cand *g,
				      unsigned int n, int nid)
{
	unsigned long requeued = 0;
	unsigned int i, j;

	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n; j++)
			if (g[j].mm != g[i].mm)
				break;
		requeued += kmmscand_recheck_mm(g + i, j - i, nid);
	}
	return requeued;
}

/* Pages promoted, per source. */
static const enum vm_event_item kmmscand_promoted_event[KMMSCAND_NR_SOURCES] = {
	[KMMSCAND_SRC_ABIT] = KMMSCAND_ABIT_PROMOTED,
	[KMMSCAND_SRC_FAULT] = KMMSCAND_FAULT_PROMOTED,
};

/*
 * Promote the @n candidates at @g in the batch, all towards @nid and
 * all from one source, sorted by mm.  Returns the pages that were deferred
 * (put back to the queue); adds the pages handed to migrate_pages() to
 * @tried, and the pages put back behind the queue because @nid is
 * throttled to @throttled.
 */
static unsigned long kmmscand_promote_group(struct kmmscand_cand *g,
					    unsigned int n, int nid, u64 now,
					    unsigned long *tried,
					    unsigned long *throttled)
{
	unsigned long pages = 0, isolated = 0, failed, nr_succeeded = 0;
	unsigned long requeued = 0;
	struct mem_cgroup *memcg = NULL, *cur = NULL;
	int reason = KMMSCAND_GROUP_GO;
	LIST_HEAD(folios);
	unsigned int i;

	for (i = 0; i < n; i++)
		pages += g[i].nr;

	if (!node_state(nid, N_MEMORY) || !node_is_toptier(nid))
		reason = KMMSCAND_GROUP_TARGET_GONE;	/* all stale below */
	else
		reason = kmmscand_node_throttle(nid, pages, now);

	if (reason >= 0) {
		count_vm_event(reason == KMMSCAND_THROTTLE_WATERMARK ?
			       KMMSCAND_DEFER_WATERMARK :
			       reason == KMMSCAND_THROTTLE_RATELIMIT ?
			       KMMSCAND_DEFER_RATELIMIT :
			       KMMSCAND_DEFER_DEMOTION);
		trace_kmmscand_throttle(reason, nid, pages);
		/*
		 * Behind the candidates for other nodes: a throttled node
		 * must not hold back promotion to a node with room.
		 */
		for (i = 0; i < n; i++)
			kmmscand_requeue(&g[i], true);
		if (nodes_empty(kmmscand_throttled))
			kmmscand_throttled_at = jiffies;
		node_set(nid, kmmscand_throttled);
		*throttled += pages;
		return pages;
	}
	if (reason == KMMSCAND_GROUP_GO)
		requeued = kmmscand_recheck(g, n, nid);

	for (i = 0; i < n; i++) {
		struct kmmscand_cand *e = &g[i];
		int gone = READ_ONCE(e->gone);
		struct folio *folio = NULL;

		/* Put back (mmap_lock contended), or dropped on the way. */
		if (e->requeued || gone == KMMSCAND_DROP_DEFER)
			continue;
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
		*tried += folio_nr_pages(folio);
		/* The isolation holds its own reference now. */
		folio_put(folio);
		list_add_tail(&folio->lru, &folios);
		e->tried = true;
	}
	nr_succeeded += kmmscand_migrate_list(&folios, nid, memcg);
	mem_cgroup_put(memcg);
	if (!isolated)
		return requeued;

	failed = isolated - min(isolated, nr_succeeded);
	count_vm_event(KMMSCAND_PROMOTE_BATCH);
	count_vm_events(KMMSCAND_PROMOTE_SUCCESS, nr_succeeded);
	count_vm_events(kmmscand_promoted_event[g[0].source],
			nr_succeeded);
	count_vm_events(KMMSCAND_FAIL_MIGRATE, failed);
	kmmscand_node_promoted(nid, nr_succeeded);
	trace_kmmscand_migrate_batch(isolated, nr_succeeded, failed, nid,
				     MR_KMMSCAND, g[0].source);

	/*
	 * Nothing moved: let the mms involved back off this target.  The
	 * candidates hold their mm_structs, so none of them has been freed
	 * and reused for another mm; one that has exited is not registered
	 * any more and is not found.
	 */
	if (!nr_succeeded) {
		struct mm_struct *prev = NULL;

		spin_lock(&kmmscand_queue_lock);
		for (i = 0; i < n; i++) {
			struct kmmscand_cand *e = &g[i];

			if (!e->tried || e->gone != KMMSCAND_ALIVE ||
			    e->mm == prev)
				continue;
			prev = e->mm;
			kmmscand_target_failed(e->mm, nid);
		}
		spin_unlock(&kmmscand_queue_lock);
	}
	return requeued;
}

/* Drop everything queued: kmmscand was disabled or the rate set to 0. */
static void kmmscand_drain_all(void)
{
	struct kmmscand_cand *b;
	unsigned int n;

	if (!kmmscand_queue_held())
		return;
	kmmscand_queue_purge(NULL, KMMSCAND_DROP_OFF);
	do {
		unsigned int i;

		b = kmmscand_batch_get(ULONG_MAX, NULL, &n);
		for (i = 0; i < n; i++) {
			struct kmmscand_cand *e = &b[i];
			bool exited = !atomic_read(&e->mm->mm_users);

			kmmscand_cand_drop(e, exited ? KMMSCAND_DROP_EXIT :
					   KMMSCAND_DROP_OFF);
			count_vm_event(exited ? KMMSCAND_FAIL_EXIT :
				       KMMSCAND_FAIL_STALE);
		}
		kmmscand_batch_put(n);
		cond_resched();
	} while (n);
}

/*
 * Run one batch if possible.  Returns 0 to go on at once, or the number of
 * jiffies to sleep (MAX_SCHEDULE_TIMEOUT: until woken).
 */
static long kmmscand_migrate_once(void)
{
	unsigned int rate = READ_ONCE(kmmscand_promote_rate_mbps);
	unsigned int batch = READ_ONCE(kmmscand_migrate_batch);
	unsigned long want, deferred = 0, tried = 0;
	unsigned long throttled_pages = 0;
	struct kmmscand_cand *b;
	unsigned int i, n;
	long wait;
	u64 now;

	if (!READ_ONCE(kmmscand_enabled) || !rate) {
		kmmscand_drain_all();
		return MAX_SCHEDULE_TIMEOUT;
	}

	want = kmmscand_queue_want(batch);
	if (!want)
		return MAX_SCHEDULE_TIMEOUT;

	now = ktime_get_ns();
	wait = kmmscand_rate_take(now, rate, batch, want);
	if (wait)
		return wait;

	/* Look at the throttled nodes again after a pause's time. */
	if (time_after(jiffies, kmmscand_throttled_at + KMMSCAND_DEFER_PAUSE))
		nodes_clear(kmmscand_throttled);
	/*
	 * Not a drain before every batch: lru_add_drain() would drain only
	 * the CPU this thread happens to run on, and lru_add_drain_all()
	 * costs every CPU a work item.  Only after a candidate was found off
	 * the LRU, and rate limited (kmmscand_lru_drain()).
	 */
	kmmscand_lru_drain();
	b = kmmscand_batch_get(want, &kmmscand_throttled, &n);
	for (i = 0; i < n; ) {
		unsigned int j = i + 1;

		while (j < n && b[j].nid == b[i].nid &&
		       b[j].source == b[i].source)
			j++;
		deferred += kmmscand_promote_group(b + i, j - i, b[i].nid, now,
						   &tried, &throttled_pages);
		i = j;
		cond_resched();
	}

	kmmscand_batch_put(n);

	/*
	 * Tokens are spent on what was handed to migrate_pages(); the rest
	 * go back: pages not pulled, deferred, or dropped as stale.
	 */
	kmmscand_rate_return(want - min(want, tried));
	if (tried || (n && !deferred))
		return 0;
	/*
	 * Nothing went.  Candidates for nodes with room go on at once;
	 * otherwise pause for kswapd, the demotion window or the holder of
	 * a contended mmap_lock.
	 */
	if (n && deferred > throttled_pages)
		return KMMSCAND_DEFER_PAUSE;
	if (kmmscand_queue_elsewhere(&kmmscand_throttled))
		return 0;
	nodes_clear(kmmscand_throttled);
	return KMMSCAND_DEFER_PAUSE;
}

/* Waiting for work, not throttled: set before waiting, cleared after. */
static bool kmmscand_migrate_idle;

/**
 * kmmscand_migrate_nudge - wake the migrator if it waits for work
 *
 * For a source that queues one candidate at a time (a hint fault): a
 * migrator that is busy, or sleeps on the rate limit or a guard, is left
 * alone, so that a stream of candidates does not cost a wake-up each.
 *
 * Context: any context that may wake a task; the caller queued a
 * candidate just before.
 */
void kmmscand_migrate_nudge(void)
{
	/*
	 * Order the queueing before the test of the flag; pairs with the
	 * barrier of the migrator's wait between setting the flag and
	 * testing the queue, so that one of the two sees the other.
	 */
	smp_mb();
	if (READ_ONCE(kmmscand_migrate_idle))
		wake_up_interruptible(&kmmscand_migrate_wait);
}

static bool kmmscand_migrate_wake_cond(void)
{
	return kthread_should_stop() || READ_ONCE(kmmscand_migrate_kick) ||
	       (kmmscand_migrate_idle && kmmscand_queue_held());
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
		WRITE_ONCE(kmmscand_migrate_idle,
			   timeout == MAX_SCHEDULE_TIMEOUT);
		wait_event_freezable_timeout(kmmscand_migrate_wait,
					     kmmscand_migrate_wake_cond(),
					     timeout);
		WRITE_ONCE(kmmscand_migrate_idle, false);
	}
	return 0;
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
	int err;

	err = kmmscand_queue_init();
	if (err)
		return err;
	err = kmmscand_throttle_init();
	if (err) {
		kmmscand_queue_free();
		return err;
	}

	t = kthread_run(kmmscand_migrate, NULL, "kmmscand_migrate");
	if (IS_ERR(t)) {
		pr_err("failed to start the migration thread: %ld\n",
		       PTR_ERR(t));
		kmmscand_throttle_free();
		kmmscand_queue_free();
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
	kmmscand_throttle_free();
	kmmscand_queue_free();
}
