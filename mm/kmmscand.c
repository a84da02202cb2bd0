// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand: find hot slow-tier pages by scanning page-table Accessed bits
 * from a kernel thread, so that the tasks owning them do not pay for it.
 *
 * Every user mm is registered at fork and exec (khugepaged style: struct
 * mm_slot hash + list under one spinlock).  The "kmmscand" thread visits the
 * registered mms round robin.  A visit walks at most a budget of PTE slots
 * from a per-mm cursor under mmap_read_trylock(), test-and-clears the
 * Accessed bits of slow-tier pages (mmu-notifier aware; top-tier pages are
 * only counted, their bits are left to reclaim) and keeps a small per-mm
 * history of the slow-tier pages it found young.  A page young in K of the
 * last N passes is hot: it is queued by PFN, with the folio's mapping and
 * index and the mm as a key, without a folio reference, for the
 * "kmmscand_migrate" thread (mm/kmmscand_migrate.c), which looks the folio
 * up again by PFN, takes it only if it is still the same folio (same
 * mapping and index, still mapped, on the LRU, on the slow tier) and
 * promotes it to a top-tier node.  No page table is walked again.
 *
 * PTE tables whose non-leaf PMD Accessed bit stayed clear since the last
 * pass are skipped without being mapped (x86 sets that bit on a page walk
 * through the PMD).  MGLRU uses the same bit for the same purpose, so with
 * MGLRU enabled kmmscand leaves it alone and maps every table.  PMD-mapped
 * THPs are handled in .pmd_entry under the PMD lock and never split.
 *
 * The period between passes and the pages examined per visit adapt per mm
 * to the number of hot pages found; see mm/kmmscand_policy.h.
 *
 * mm/kmmscand_internal.h lists the files of kmmscand.  This one has the
 * scanner thread: its rounds over the registered mms, its visits and
 * passes over each of them, and kmmscand_init(), which starts it all.
 */

#define pr_fmt(fmt) "kmmscand: " fmt

#include <linux/freezer.h>
#include <linux/hugetlb.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/kmmscand.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/memory.h>
#include <linux/memory-tiers.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/notifier.h>
#include <linux/oom.h>
#include <linux/pagewalk.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <linux/wait.h>

#include <asm/tlbflush.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"

#include <trace/events/kmmscand.h>

/* Shortest sleep between two rounds over the registered mms (ms). */
#define KMMSCAND_SLEEP_MIN_MS		10

static struct task_struct *kmmscand_thread __read_mostly;
/* The scanner saw a slow tier when it last looked (kmmscand_catch_up()). */
static bool kmmscand_tiered;

static struct kmmscand_walk kmmscand_walk_state;

/*
 * Most TLB flushes of the whole mm at the end of a pass; more PTE tables
 * than this in separate VMAs or ranges are flushed with flush_tlb_mm().
 */
#define KMMSCAND_FLUSH_RANGES_MAX	4

/*
 * The end of a full pass: flush from the TLB the ranges of the PTE tables
 * whose PMD Accessed bit the pass cleared, so that a CPU does not keep
 * using a cached copy of such a PMD entry.
 *
 * Why the flush: x86 (and arm64 with hardware Access flag updates for
 * table descriptors) sets the Accessed bit of a non-leaf entry when a
 * page walk loads that entry.  Paging-structure caches may keep the entry
 * after the scanner cleared its bit; a TLB miss served from the cached
 * entry goes straight to the PTE and sets only the PTE's Accessed bit, so
 * the PMD bit stays clear and the next pass would skip a table with young
 * PTEs (and age its history, kmmscand_age_range()).  INVLPG, and so any
 * range flush that covers an address of the table, also drops the cached
 * entries of the paging structures above it (on x86 all of them for the
 * PCID), so the next translation through the table walks the PMD again
 * and sets its bit.
 *
 * Why once per pass, and not after each visit or table: only the next
 * pass looks at the bits again (a pass never comes back to a table it
 * passed), so one flush before the pass ends covers every bit it cleared.
 * A CPU that used a table only between the clear and the flush leaves its
 * PTE Accessed bits set and the PMD bit clear: the table is skipped and
 * those bits are seen when the table is next used, a delay of accesses
 * that stopped before the flush, never the loss of a page still in use.
 *
 * Ranges rather than the mm: x86 turns a range of more than a few pages
 * into a full flush anyway, but each call is one round of IPIs to the
 * CPUs running the mm, so many ranges or VMAs go in one flush_tlb_mm().
 *
 * Returns the number of flushes issued.  Context: mmap_read_lock() held.
 */
static unsigned int kmmscand_flush_cleared(struct kmmscand_mm_slot *ms,
					   struct mm_struct *mm)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	unsigned int i, n = 0;

	if (!ms->nr_cleared)
		return 0;
	for (i = 0; i < ms->nr_cleared; i++) {
		vma_iter_set(&vmi, ms->cleared[i].start);
		for_each_vma_range(vmi, vma, ms->cleared[i].end)
			n++;
	}
	if (n > KMMSCAND_FLUSH_RANGES_MAX) {
		flush_tlb_mm(mm);
		n = 1;
	} else {
		for (i = 0; i < ms->nr_cleared; i++) {
			unsigned long start = ms->cleared[i].start;
			unsigned long end = ms->cleared[i].end;

			vma_iter_set(&vmi, start);
			for_each_vma_range(vmi, vma, end)
				flush_tlb_range(vma, max(start, vma->vm_start),
						min(end, vma->vm_end));
		}
	}
	ms->nr_cleared = 0;
	return n;
}

/* Forget everything about an mm that opted out; it restarts from scratch. */
static void kmmscand_slot_reset(struct kmmscand_mm_slot *ms)
{
	/*
	 * A pass cut short may have cleared PMD Accessed bits it did not
	 * flush yet; the mm is pinned (kmmscand_visit()).
	 */
	if (ms->nr_cleared) {
		flush_tlb_mm(ms->slot.mm);
		ms->nr_cleared = 0;
		count_vm_event(KMMSCAND_TLB_FLUSH);
	}
	kmmscand_history_free(ms);
	ms->in_pass = false;
	ms->cursor = 0;
	ms->cand_cur = 0;
	ms->warm = 0;
	ms->next_scan = jiffies + msecs_to_jiffies(ms->period_ms);
	ms->next_full = ms->next_scan;
}

/*
 * A pass ended.  Called without mmap_lock: the history belongs to the
 * scanner thread alone.
 *
 * After a full pass, the period and budget adapt to what the passes since
 * the last full one found.  Between full passes, quick passes over the
 * tables that held slow-tier pages run every scan_period_min_ms, so that
 * a new hot set on the slow tier is seen within a short period even when
 * the full passes have backed off to scan_period_max_ms; up to
 * KMMSCAND_QUICK_MAX times that while they keep finding every such table
 * unused (@unused: the pass ended in kmmscand_walk_idle(), see
 * kmmscand_next_quick()).
 */
static void kmmscand_pass_end(struct kmmscand_mm_slot *ms, bool unused)
{
	struct mm_struct *mm = ms->slot.mm;
	unsigned int pmin = READ_ONCE(kmmscand_scan_period_min_ms);
	unsigned int pmax = READ_ONCE(kmmscand_scan_period_max_ms);
	unsigned long now = jiffies;

	kmmscand_history_sweep(ms);
	if (!ms->quick) {
		ms->period_ms = kmmscand_next_period(ms->period_ms, ms->cand_last,
						     ms->cand_cur, ms->warm,
						     pmin, pmax);
		ms->budget = kmmscand_next_budget(ms->budget, ms->cand_last,
						  ms->cand_cur, ms->warm,
						  READ_ONCE(kmmscand_scan_size));
		memcpy(ms->footprint + nr_node_ids, ms->footprint,
		       nr_node_ids * sizeof(*ms->footprint));
		ms->cand_last = ms->cand_cur;
		ms->next_full = now + msecs_to_jiffies(ms->period_ms);
	}
	count_vm_event(KMMSCAND_MM_SCAN);
	trace_kmmscand_scan_end(mm, ms->scanned, ms->pmd_skipped, ms->young,
				ms->cand_cur, ms->period_ms, ms->budget);

	ms->passes++;
	ms->in_pass = false;
	ms->cursor = 0;
	ms->next_scan = ms->next_full;
	ms->quick_ms = kmmscand_next_quick(ms->quick_ms, unused, ms->young,
					   pmin);
	/* Confirm what this pass found young, and watch slow-tier tables. */
	if (ms->warm || ms->cand_cur)
		ms->next_scan = min_t(unsigned long, ms->next_scan,
				      now + msecs_to_jiffies(pmin));
	else if (ms->watch && ms->nr_tables > ms->nr_top)
		ms->next_scan = min_t(unsigned long, ms->next_scan,
				      now + msecs_to_jiffies(ms->quick_ms));
	if (!ms->quick) {
		ms->cand_cur = 0;
		ms->warm = 0;
	}
}

/*
 * Has the slow tier changed since @ms's last full pass?  A PTE table that
 * held only top-tier pages can gain a slow-tier page only by a page being
 * mapped on the slow tier: a fault there, a migration or a demotion.
 * Demotions are counted (kmmscand_node_demoted()); the others change
 * the slow-tier nodes' mapped pages.  Both are read from the node
 * counters, a few loads per node, once per full pass.  The
 * counters are folded from the CPUs' deltas within about a second, and
 * changes that cancel out between two full passes go unseen: such a table
 * is still visited in its turn (kmmscand_table_skip()).
 */
static void kmmscand_note_slow_tier(struct kmmscand_mm_slot *ms)
{
	unsigned long demoted = 0, mapped = 0;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		struct pglist_data *pgdat = NODE_DATA(nid);

		demoted += kmmscand_node_demoted(nid);
		if (!node_is_toptier(nid))
			mapped += node_page_state(pgdat, NR_ANON_MAPPED) +
				  node_page_state(pgdat, NR_FILE_MAPPED);
	}
	ms->top_wake = demoted != ms->demoted_mark ||
		       mapped != ms->mapped_mark;
	ms->demoted_mark = demoted;
	ms->mapped_mark = mapped;
}

static void kmmscand_pass_start(struct kmmscand_mm_slot *ms)
{
	ms->in_pass = true;
	ms->cursor = 0;
	ms->quick = ms->passes && time_before(jiffies, ms->next_full);
	ms->seq++;
	if (!ms->quick) {
		ms->full++;
		kmmscand_note_slow_tier(ms);
	}
	ms->scanned = 0;
	ms->pmd_skipped = 0;
	ms->young = 0;
	if (!ms->quick)
		memset(ms->footprint, 0, nr_node_ids * sizeof(*ms->footprint));
	trace_kmmscand_scan_start(ms->slot.mm, ms->period_ms, ms->budget);
}

/*
 * One visit: examine at most ms->budget PTE slots (and no more than
 * @round_budget) of the mm from its cursor.  Returns the PTE slots used;
 * *@queued is set if candidates were queued.
 */
static unsigned long kmmscand_visit(struct kmmscand_mm_slot *ms,
				    unsigned long round_budget, bool *queued)
{
	struct kmmscand_walk *w = &kmmscand_walk_state;
	struct mm_struct *mm = ms->slot.mm;
	struct mem_cgroup *memcg, *old_memcg;
	unsigned long used = 0;
	bool ended = false;
	int err;

	/* Pins the address space: __kmmscand_exit() cannot run meanwhile. */
	if (!mmget_not_zero(mm))
		return 0;

	if (test_bit(MMF_KMMSCAND_OFF, &mm->flags)) {
		kmmscand_slot_reset(ms);
		goto out;
	}
	if (!ms->footprint) {
		ms->footprint = kcalloc(2 * nr_node_ids, sizeof(*ms->footprint),
					GFP_KERNEL);
		if (!ms->footprint)
			goto out;
	}
	if (!mmap_read_trylock(mm)) {
		count_vm_event(KMMSCAND_MM_SKIP_CONTENDED);
		goto out;
	}
	/* Re-check under the lock: prctl() sets the bit under mmap_lock. */
	if (check_stable_address_space(mm) ||
	    test_bit(MMF_KMMSCAND_OFF, &mm->flags)) {
		mmap_read_unlock(mm);
		goto out;
	}

	if (!ms->in_pass)
		kmmscand_pass_start(ms);
	/* A quick pass that can only age unused tables needs no walk. */
	if (ms->quick && !ms->cursor && kmmscand_walk_idle(w, ms, &used)) {
		kmmscand_flush_counts(w);
		ms->watch = true;
		mmap_read_unlock(mm);
		kmmscand_pass_end(ms, true);
		goto out;
	}

	/* The history of this mm's pages is charged to its memcg. */
	memcg = get_mem_cgroup_from_mm(mm);
	old_memcg = set_active_memcg(memcg);
	kmmscand_prepare_walk(w, ms, round_budget);
	err = walk_page_range(mm, ms->cursor, mm->task_size,
			      &kmmscand_walk_ops, w);
	kmmscand_flush_counts(w);
	*queued |= w->candidates && !w->detect_only;
	ms->watch = kmmscand_walk_pmd_bit(w, mm);
	used = min_t(unsigned long, ms->budget, round_budget) - w->budget;

	if (err == KMMSCAND_WALK_STOP && w->stop_addr < mm->task_size) {
		/* Budget used up, lock contended or queue full: go on later. */
		ms->cursor = PAGE_ALIGN(w->stop_addr);
	} else {
		ended = true;
	}
	/*
	 * The PMD Accessed bits this pass cleared are flushed from the TLB
	 * once, when the pass ends: see kmmscand_flush_cleared().
	 */
	if (ended)
		count_vm_events(KMMSCAND_TLB_FLUSH,
				kmmscand_flush_cleared(ms, mm));
	mmap_read_unlock(mm);
	if (ended)
		kmmscand_pass_end(ms, false);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
out:
	/* The final put may run __mmput(); keep that off this thread. */
	mmput_async(mm);
	return used;
}

static bool kmmscand_due(struct kmmscand_mm_slot *ms)
{
	/* A pass in progress continues on every round. */
	return ms->in_pass || time_after_eq(jiffies, ms->next_scan);
}

/*
 * One round: visit every due mm once, in list order, up to the last mm
 * registered before the round started, examining at most scan_size PTE
 * slots in all, however many mms are in mid-pass.  Returns the number of
 * jiffies until the next mm is due.
 */
static unsigned long kmmscand_round(void)
{
	unsigned long min_sleep = msecs_to_jiffies(KMMSCAND_SLEEP_MIN_MS);
	unsigned long max_sleep =
		msecs_to_jiffies(READ_ONCE(kmmscand_scan_period_min_ms));
	unsigned long budget = READ_ONCE(kmmscand_scan_size);
	unsigned long sleep = max_sleep;
	struct kmmscand_mm_slot *ms, *next;
	struct mm_slot *slot;
	unsigned long round;
	bool queued = false;

	/*
	 * Every node with memory is in the top tier: nothing can be promoted,
	 * so do not touch any page table.  Look again after the longest scan
	 * period, or when memory comes online (kmmscand_memory_callback()).
	 */
	if (!kmmscand_tiered)
		return max(msecs_to_jiffies(READ_ONCE(kmmscand_scan_period_max_ms)),
			   min_sleep);

	spin_lock(&kmmscand_mm_lock);
	if (list_empty(&kmmscand_scan.mm_head)) {
		spin_unlock(&kmmscand_mm_lock);
		return max_sleep;
	}
	/* Slots registered from now on carry this round and end it. */
	round = ++kmmscand_scan.round;
	slot = list_first_entry(&kmmscand_scan.mm_head, struct mm_slot, mm_node);
	ms = mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
	while (ms) {
		kmmscand_scan.mm_slot = ms;
		spin_unlock(&kmmscand_mm_lock);

		if (budget && kmmscand_due(ms))
			budget -= min(budget, kmmscand_visit(ms, budget, &queued));
		/* Also between mms that are not due: the list may be long. */
		cond_resched();
		if (ms->in_pass)
			sleep = min_sleep;
		else if (time_before(jiffies, ms->next_scan))
			sleep = min(sleep, ms->next_scan - jiffies);
		else
			sleep = min_sleep;

		spin_lock(&kmmscand_mm_lock);
		next = NULL;
		if (ms->slot.mm_node.next != &kmmscand_scan.mm_head) {
			slot = list_next_entry(&ms->slot, mm_node);
			next = mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
			/* Registered during this round: the round is over. */
			if (next->round == round)
				next = NULL;
		}
		/*
		 * The round's budget is used up: the next round starts at
		 * @next, so that the mms at the end of the list get their
		 * turn however busy the ones before them are.
		 */
		if (!budget && next) {
			list_rotate_to_front(&next->slot.mm_node,
					     &kmmscand_scan.mm_head);
			next = NULL;
		}
		/*
		 * Decide to end the round before handing the registry position
		 * to @next: __kmmscand_exit() leaves the slot the scanner is
		 * on to the scanner, and a round that ended would strand it.
		 */
		if (kthread_should_stop() || !READ_ONCE(kmmscand_enabled))
			next = NULL;
		if (kmmscand_collect(ms)) {
			/* Keep @next from being freed while we drop the lock. */
			kmmscand_scan.mm_slot = next;
			spin_unlock(&kmmscand_mm_lock);
			kmmscand_release(ms);
			spin_lock(&kmmscand_mm_lock);
		}
		ms = next;
	}
	kmmscand_scan.mm_slot = NULL;
	spin_unlock(&kmmscand_mm_lock);

	if (queued)
		kmmscand_migrate_wake(false);
	return clamp(sleep, min_sleep, max(max_sleep, min_sleep));
}

/*
 * A tunable changed.  Bring every mm's scan period within the current
 * limits and, when scan_period_max_ms was lowered, pull in a next pass
 * that was planned further ahead than the new maximum allows.
 */
static void kmmscand_apply_tunables(void)
{
	unsigned int pmin = READ_ONCE(kmmscand_scan_period_min_ms);
	unsigned int pmax = READ_ONCE(kmmscand_scan_period_max_ms);
	unsigned long latest = jiffies + msecs_to_jiffies(pmax);
	struct mm_slot *slot;

	spin_lock(&kmmscand_mm_lock);
	list_for_each_entry(slot, &kmmscand_scan.mm_head, mm_node) {
		struct kmmscand_mm_slot *ms;

		ms = mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
		ms->period_ms = clamp(ms->period_ms, pmin, max(pmax, pmin));
		if (time_after(ms->next_scan, latest))
			ms->next_scan = latest;
	}
	spin_unlock(&kmmscand_mm_lock);
}

/*
 * Memory came online: it may be a slow tier that processes created
 * without one should now be registered for.  Runs after the memory tiers
 * were updated (memtier_hotplug_callback() has a higher priority).
 */
static int kmmscand_memory_callback(struct notifier_block *nb,
				    unsigned long action, void *arg)
{
	if (action == MEM_ONLINE)
		kmmscand_scanner_wake(KMMSCAND_EV_MEMORY);
	return NOTIFY_OK;
}

/*
 * Register every mm that exists now if kmmscand may have been enabled
 * (@asked) or a slow tier appeared since the last look.  The
 * test_and_clear_bit() that consumed the event and the barrier below
 * pair with the one in __kmmscand_enter(): a fork or exec that did not
 * see the new state has its task on the task list before the walk.
 */
static void kmmscand_catch_up(bool asked)
{
	bool tiered;

	/* Pairs with smp_mb() in __kmmscand_enter(). */
	smp_mb();
	tiered = kmmscand_have_slow_tier();
	if (tiered && (asked || !kmmscand_tiered)) {
		unsigned long n = kmmscand_register_all();

		if (n)
			pr_debug("registered %lu mms\n", n);
	}
	kmmscand_tiered = tiered;
}

/*
 * The thread idles while kmmscand is off.  With the abit source not
 * selected it only registers mms (for the fault source) when something
 * changed.
 */
static bool kmmscand_should_run(void)
{
	return READ_ONCE(kmmscand_enabled) || kthread_should_stop();
}

/* Disabling kmmscand or a source is a sysfs store: KMMSCAND_EV_TUNABLES. */
static bool kmmscand_wake_early(void)
{
	return kthread_should_stop() || READ_ONCE(kmmscand_events);
}

static int kmmscand(void *unused)
{
	unsigned long sleep;
	bool asked;

	/*
	 * Default priority, like kdamond and kswapd, not khugepaged's
	 * MAX_NICE: at MAX_NICE a few CPU-bound tasks starve the scanner, and
	 * promotion stops exactly when the machine is busy.  Its cost is
	 * bounded by scan_size and the scan periods instead.
	 */
	set_freezable();
	while (!kthread_should_stop()) {
		wait_event_freezable(kmmscand_wait, kmmscand_should_run());
		if (kthread_should_stop())
			break;
		asked = test_and_clear_bit(KMMSCAND_EV_MEMORY, &kmmscand_events);
		if (test_and_clear_bit(KMMSCAND_EV_TUNABLES, &kmmscand_events)) {
			kmmscand_apply_tunables();
			asked = true;
		}
		clear_bit(KMMSCAND_EV_FIRST_MM, &kmmscand_events);
		kmmscand_catch_up(asked);
		sleep = MAX_SCHEDULE_TIMEOUT;
		if (kmmscand_source_on(KMMSCAND_SRC_ABIT))
			sleep = kmmscand_round();
		wait_event_freezable_timeout(kmmscand_wait,
					     kmmscand_wake_early(), sleep);
	}
	return 0;
}

static int __init kmmscand_init(void)
{
	int err;

	err = kmmscand_registry_init();
	if (err)
		goto err_off;

	err = kmmscand_history_init();
	if (err)
		goto err_cache;

	err = kmmscand_migrate_init();
	if (err)
		goto err_history;

	/* See kmmscand_sources_set(): no scanner without hardware A bits. */
	if (!arch_has_hw_pte_young()) {
		WRITE_ONCE(kmmscand_sources,
			   kmmscand_sources & ~BIT(KMMSCAND_SRC_ABIT));
		pr_info("no hardware Accessed bits: the abit source is off\n");
	}

	err = kmmscand_sysfs_init();
	if (err)
		goto err_migrate;
	kmmscand_thread = kthread_run(kmmscand, NULL, "kmmscand");
	if (IS_ERR(kmmscand_thread)) {
		err = PTR_ERR(kmmscand_thread);
		kmmscand_thread = NULL;
		pr_err("failed to start kthread: %d\n", err);
		goto err_sysfs;
	}
	kmmscand_registry_open();
	/* After the memory tiers' callback, which has a higher priority. */
	hotplug_memory_notifier(kmmscand_memory_callback, DEFAULT_CALLBACK_PRI);
	return 0;

	/* No mm was registered (the registry is not open): nothing to undo there. */
err_sysfs:
	kmmscand_sysfs_exit();
err_migrate:
	kmmscand_migrate_exit();
err_history:
	kmmscand_history_exit();
err_cache:
	kmmscand_registry_free();
err_off:
	/* Fully off: in particular kswapd's WMARK_PROMO hook stays inactive. */
	WRITE_ONCE(kmmscand_enabled, false);
	return err;
}
subsys_initcall(kmmscand_init);
