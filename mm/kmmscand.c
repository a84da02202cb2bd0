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
 * history of the slow-tier pages it found young.  A page young in K of the last N passes
 * is hot: its folio is queued (with a reference) for the "kmmscand_migrate"
 * thread (mm/kmmscand_migrate.c), which promotes it to a top-tier node.
 *
 * PTE tables whose non-leaf PMD Accessed bit stayed clear since the last
 * pass are skipped without being mapped (x86 sets that bit on a page walk
 * through the PMD).  MGLRU uses the same bit for the same purpose, so with
 * MGLRU enabled kmmscand leaves it alone and maps every table.  PMD-mapped THPs are handled
 * in .pmd_entry under the PMD lock and never split.
 *
 * The period between passes and the pages examined per visit adapt per mm
 * to the number of hot pages found; see mm/kmmscand_policy.h.
 */

#define pr_fmt(fmt) "kmmscand: " fmt

#include <linux/cpuset.h>
#include <linux/freezer.h>
#include <linux/hugetlb.h>
#include <linux/init.h>
#include <linux/kmmscand.h>
#include <linux/kobject.h>
#include <linux/kthread.h>
#include <linux/memory-tiers.h>
#include <linux/mempolicy.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mmu_notifier.h>
#include <linux/oom.h>
#include <linux/pagewalk.h>
#include <linux/sched/mm.h>
#include <linux/swap.h>
#include <linux/sysfs.h>
#include <linux/vmstat.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <asm/tlbflush.h>

#include "internal.h"
#include "mm_slot.h"
#include "kmmscand_internal.h"
#include "kmmscand_policy.h"

#define CREATE_TRACE_POINTS
#include <trace/events/kmmscand.h>

/* Scan period of a new mm, before the first adaptation (ms). */
#define KMMSCAND_PERIOD_INIT_MS		2000
/* Shortest sleep between two rounds over the registered mms (ms). */
#define KMMSCAND_SLEEP_MIN_MS		10
/* Skip a target for this long after it kept failing for an mm (ms). */
#define KMMSCAND_BACKOFF_MS		5000
/* Failed batches in a row before a target is backed off. */
#define KMMSCAND_BACKOFF_STREAK		3

#define KMMSCAND_HASH_BITS		10

/* Limits of the sysfs tunables (see the ABI document). */
#define KMMSCAND_PERIOD_FLOOR_MS	100	/* scan_period_min_ms >= */
#define KMMSCAND_PERIOD_CEIL_MS		60000	/* scan_period_max_ms <= */
#define KMMSCAND_SCAN_SIZE_MIN		512
#define KMMSCAND_SCAN_SIZE_MAX		4194304
#define KMMSCAND_RATE_MAX_MBPS		1048576	/* 1 TB/s */

/* Tunables: see Documentation/admin-guide/mm/kmmscand.rst. */
bool kmmscand_enabled __read_mostly = true;
static unsigned int kmmscand_scan_period_min_ms __read_mostly = 500;
static unsigned int kmmscand_scan_period_max_ms __read_mostly = 5000;
static unsigned int kmmscand_scan_size __read_mostly = 65536;
static unsigned int kmmscand_hot_history __read_mostly = 2;
static unsigned int kmmscand_hot_threshold __read_mostly = 2;
static bool kmmscand_pmd_skip __read_mostly = true;
static bool kmmscand_tlb_flush __read_mostly;
unsigned int kmmscand_migrate_batch __read_mostly = 512;
unsigned int kmmscand_promote_rate_mbps __read_mostly = 256;
static int kmmscand_target_node __read_mostly = NUMA_NO_NODE;

/*
 * Per-page history.
 *
 * Only slow-tier pages that were seen young within the last N passes have
 * an entry: an xa_mk_value() in the per-mm xarray, indexed by virtual page
 * number (a PMD-mapped THP uses the index of its first page).  Bits 0..7
 * hold the history, bits 8..15 the low byte of the pass number that last
 * touched the entry; entries not touched by a complete pass (unmapped,
 * swapped out, VMA no longer eligible) are erased at the end of that pass,
 * and an entry whose history decays to 0 is erased at once.  So the
 * xarray only ever holds pages that were young in the last N passes.
 *
 * Cost: an entry is one 8-byte slot in an xa_node of 64 slots (576 bytes
 * on 64-bit), i.e. about 9 bytes per tracked page when young pages are
 * dense, up to 576 bytes for an isolated one.
 */
#define KMMSCAND_HIST_MASK	0xffUL
#define KMMSCAND_SEQ_SHIFT	8
#define KMMSCAND_SEQ_MASK	0xffUL

/**
 * struct kmmscand_mm_slot - kmmscand state of one registered mm
 * @slot: hash lookup from mm to mm_slot (embeds the list node)
 * @next_scan: jiffies at which the next pass may start
 * @cursor: address where the next visit continues; 0 = pass not started
 * @period_ms: current scan period (adaptive)
 * @budget: PTE slots examined per visit at most (adaptive)
 * @passes: complete passes so far
 * @seq: low byte of the pass number, stamped into history entries
 * @cand_last: candidates found in the previous complete pass (X)
 * @cand_cur: candidates found in the pass in progress (Y)
 * @scanned: PTEs and THPs examined in the pass in progress
 * @pmd_skipped: PTE tables skipped in the pass in progress
 * @young: young entries found in the pass in progress
 * @footprint: pages per node, [0, nr_node_ids) = pass in progress,
 *	[nr_node_ids, 2 * nr_node_ids) = last complete pass
 * @history: per-page access history (see above)
 * @backoff_nid: target node that kept failing for this mm
 * @backoff_until: jiffies until which @backoff_nid is not used
 * @fail_streak: failed promotion batches towards @backoff_nid, each less
 *	than KMMSCAND_BACKOFF_MS after the one before
 * @fail_last: jiffies of the last failed batch counted in @fail_streak
 * @round: value of kmmscand_scan.round when the mm was (re)registered; a
 *	round ends before the slots added after it started
 *
 * Everything except the @backoff_* and @fail_* fields belongs to the
 * scanner thread; those four are written by the migrator under
 * kmmscand_mm_lock and read locklessly by the scanner.
 */
struct kmmscand_mm_slot {
	struct mm_slot slot;
	unsigned long next_scan;
	unsigned long cursor;
	unsigned int period_ms;
	unsigned int budget;
	unsigned long passes;
	u8 seq;
	unsigned long cand_last;
	unsigned long cand_cur;
	unsigned long scanned;
	unsigned long pmd_skipped;
	unsigned long young;
	unsigned long *footprint;
	struct xarray history;
	int backoff_nid;
	unsigned long backoff_until;
	unsigned int fail_streak;
	unsigned long fail_last;
	unsigned long round;
};

/**
 * struct kmmscand_scan - the registry and the scanner's position in it
 * @mm_head: all registered mms, in visiting order
 * @mm_slot: the slot the scanner is on; __kmmscand_exit() leaves it alone
 * @round: number of rounds started; a slot stamped with the current value
 *	was added during this round and is left for the next one
 */
struct kmmscand_scan {
	struct list_head mm_head;
	struct kmmscand_mm_slot *mm_slot;
	unsigned long round;
};

static struct kmmscand_scan kmmscand_scan = {
	.mm_head = LIST_HEAD_INIT(kmmscand_scan.mm_head),
};

static DEFINE_SPINLOCK(kmmscand_mm_lock);
static DEFINE_READ_MOSTLY_HASHTABLE(kmmscand_slots_hash, KMMSCAND_HASH_BITS);
static struct kmem_cache *kmmscand_slot_cache __ro_after_init;
/* Set once kmmscand_init() succeeded; until then no mm is registered. */
static bool kmmscand_ready __read_mostly;

static struct task_struct *kmmscand_thread __read_mostly;
static DECLARE_WAIT_QUEUE_HEAD(kmmscand_wait);
static DEFINE_MUTEX(kmmscand_mutex);	/* serialises sysfs stores */
static bool kmmscand_kick;		/* a tunable changed: rescan now */

/* Per-walk state.  The scanner is a single thread, so one static copy. */
struct kmmscand_walk {
	struct kmmscand_mm_slot *ms;
	unsigned long budget;		/* PTE slots left in this visit */
	unsigned long stop_addr;	/* where the walk stopped early */
	unsigned int hist_n;
	unsigned int hot_k;
	bool pmd_skip;
	bool tlb_flush;
	bool detect_only;		/* promotion rate 0: count, do not queue */
	int target_override;
	nodemask_t toptier;		/* top-tier nodes with memory */
	nodemask_t owner_allowed;	/* cpuset and task policy of the owner */
	nodemask_t allowed;		/* the above & policy of the VMA */
	struct folio *last_queued;	/* dedup PTE-mapped large folios */
	unsigned long scanned;
	unsigned long pmd_skipped;
	unsigned long young;
	unsigned long thp_young;
	unsigned long candidates;
	unsigned long drops;
};

static struct kmmscand_walk kmmscand_walk_state;

#define KMMSCAND_WALK_STOP	1

static void kmmscand_slot_free(struct kmmscand_mm_slot *ms)
{
	xa_destroy(&ms->history);
	kfree(ms->footprint);
	mm_slot_free(kmmscand_slot_cache, ms);
}

/**
 * __kmmscand_enter - register an mm with kmmscand
 * @mm: a new user mm (from fork or exec), or current->mm opting back in
 *
 * Takes a reference on the mm_struct (mmgrab) that is dropped when the
 * slot is freed.  Allocation failure only means the mm is not scanned.
 *
 * Context: process context; may sleep (GFP_KERNEL allocation).
 */
void __kmmscand_enter(struct mm_struct *mm)
{
	struct kmmscand_mm_slot *ms;
	struct mm_slot *slot;
	unsigned int period;
	bool wakeup;

	if (!READ_ONCE(kmmscand_ready) ||
	    test_and_set_bit(MMF_VM_KMMSCAND, &mm->flags))
		return;

	ms = mm_slot_alloc(kmmscand_slot_cache);
	if (!ms) {
		clear_bit(MMF_VM_KMMSCAND, &mm->flags);
		return;
	}
	xa_init(&ms->history);
	period = clamp(KMMSCAND_PERIOD_INIT_MS,
		       READ_ONCE(kmmscand_scan_period_min_ms),
		       READ_ONCE(kmmscand_scan_period_max_ms));
	ms->period_ms = period;
	ms->budget = READ_ONCE(kmmscand_scan_size);
	/* Let a new address space settle (and short-lived tasks go away). */
	ms->next_scan = jiffies + msecs_to_jiffies(period);
	ms->backoff_nid = NUMA_NO_NODE;

	slot = &ms->slot;
	spin_lock(&kmmscand_mm_lock);
	mm_slot_insert(kmmscand_slots_hash, mm, slot);
	ms->round = kmmscand_scan.round;
	wakeup = list_empty(&kmmscand_scan.mm_head);
	list_add_tail(&slot->mm_node, &kmmscand_scan.mm_head);
	spin_unlock(&kmmscand_mm_lock);

	mmgrab(mm);
	trace_kmmscand_mm_enter(mm);
	if (wakeup)
		wake_up_interruptible(&kmmscand_wait);
}

/**
 * __kmmscand_exit - unregister an mm whose last user is gone
 * @mm: the mm, from __mmput() before exit_mmap()
 *
 * Drops the mm's queued candidates.  If the scanner is positioned on this
 * mm's slot, the slot is left for the scanner to free (kmmscand_release()):
 * it cannot be walking the page tables, because it only does so holding an
 * mm_users reference (mmget_not_zero()), and mm_users is already 0 here.
 * Whoever takes the slot out of the registry traces kmmscand_mm_exit, so
 * every registration is matched by exactly one such event.
 *
 * Context: process context; may sleep (kmmscand_queue_purge()).
 */
void __kmmscand_exit(struct mm_struct *mm)
{
	struct kmmscand_mm_slot *ms = NULL;
	struct mm_slot *slot;
	bool free = false;

	spin_lock(&kmmscand_mm_lock);
	slot = mm_slot_lookup(kmmscand_slots_hash, mm);
	if (slot) {
		ms = mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
		if (kmmscand_scan.mm_slot != ms) {
			hash_del(&slot->hash);
			list_del(&slot->mm_node);
			free = true;
		}
	}
	spin_unlock(&kmmscand_mm_lock);

	kmmscand_queue_purge(mm, KMMSCAND_DROP_EXIT);

	if (free) {
		trace_kmmscand_mm_exit(mm);
		clear_bit(MMF_VM_KMMSCAND, &mm->flags);
		kmmscand_slot_free(ms);
		mmdrop(mm);
	}
}

/**
 * kmmscand_target_failed - note that promotions of an mm to a node failed
 * @mm: the mm, used only as a hash key (it may have exited)
 * @nid: the target node
 *
 * Called by the migration thread when a whole batch towards @nid failed.
 * After KMMSCAND_BACKOFF_STREAK such batches, each within
 * KMMSCAND_BACKOFF_MS of the previous one, the scanner stops queueing
 * that mm's candidates for @nid for KMMSCAND_BACKOFF_MS.  Failures further
 * apart start a new streak, so that occasional failures never add up.
 *
 * Context: process context, never sleeps.  The caller holds
 * kmmscand_queue_lock and has seen a candidate of @mm that was not purged,
 * so the registry has not dropped its reference to @mm yet (both paths
 * that do purge first); if @mm was just unregistered, nothing is found.
 * Lock order: kmmscand_queue_lock, then kmmscand_mm_lock.
 */
void kmmscand_target_failed(struct mm_struct *mm, int nid)
{
	struct kmmscand_mm_slot *ms;
	struct mm_slot *slot;

	spin_lock(&kmmscand_mm_lock);
	slot = mm_slot_lookup(kmmscand_slots_hash, mm);
	if (slot) {
		ms = mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
		if (ms->backoff_nid != nid ||
		    time_after(jiffies, ms->fail_last +
			       msecs_to_jiffies(KMMSCAND_BACKOFF_MS))) {
			WRITE_ONCE(ms->backoff_nid, nid);
			ms->fail_streak = 0;
		}
		ms->fail_last = jiffies;
		if (++ms->fail_streak >= KMMSCAND_BACKOFF_STREAK) {
			WRITE_ONCE(ms->backoff_until, jiffies +
				   msecs_to_jiffies(KMMSCAND_BACKOFF_MS));
			ms->fail_streak = 0;
		}
	}
	spin_unlock(&kmmscand_mm_lock);
}

static bool kmmscand_backed_off(struct kmmscand_mm_slot *ms, int nid)
{
	return READ_ONCE(ms->backoff_nid) == nid &&
	       time_before(jiffies, READ_ONCE(ms->backoff_until));
}

/* Memory policies that confine the pages of a VMA to a node set. */
static bool kmmscand_policy_confines(const struct mempolicy *pol)
{
	if (!pol)
		return false;
	switch (pol->mode) {
	case MPOL_BIND:
	case MPOL_PREFERRED_MANY:
	case MPOL_INTERLEAVE:
	case MPOL_WEIGHTED_INTERLEAVE:
		return true;
	default:
		/* MPOL_PREFERRED and MPOL_LOCAL only say where to start. */
		return false;
	}
}

/*
 * Nodes the owner of @mm may allocate from: its cpuset's mems_allowed and
 * a confining task mempolicy.  mm->owner only exists with CONFIG_MEMCG;
 * without it every node with memory is allowed (the VMA policy still
 * applies).
 */
static void kmmscand_owner_nodes(struct mm_struct *mm, nodemask_t *nodes)
{
	*nodes = node_states[N_MEMORY];
#ifdef CONFIG_MEMCG
	{
		struct task_struct *p;

		rcu_read_lock();
		p = rcu_dereference(mm->owner);
		if (p)
			get_task_struct(p);
		rcu_read_unlock();
		if (!p)
			return;
		task_lock(p);
		nodes_and(*nodes, *nodes, p->mems_allowed);
		if (kmmscand_policy_confines(p->mempolicy))
			nodes_and(*nodes, *nodes, p->mempolicy->nodes);
		task_unlock(p);
		put_task_struct(p);
	}
#endif
}

/*
 * VMAs never scanned:
 *  - hugetlb: not on the LRU, promotion would need a free huge page;
 *  - VM_IO, VM_PFNMAP, VM_MIXEDMAP: no (normal) struct pages behind them;
 *  - PROT_NONE: nothing can be young there;
 *  - VM_DROPPABLE: the kernel may drop it any time;
 *  - file mappings that are not writable, i.e. program and shared library
 *    text and read-only data: those pages are usually shared by many
 *    processes, no single mm's access pattern justifies moving them, and
 *    NUMA balancing refuses them for the same reason;
 *  - VMAs that cannot migrate (vma_migratable()).
 */
static bool kmmscand_vma_eligible(struct vm_area_struct *vma)
{
	if (is_vm_hugetlb_page(vma))
		return false;
	if (vma->vm_flags & (VM_IO | VM_PFNMAP | VM_MIXEDMAP | VM_DROPPABLE))
		return false;
	if (!vma_is_accessible(vma))
		return false;
	if (vma->vm_file && !(vma->vm_flags & VM_WRITE))
		return false;
	return vma_migratable(vma);
}

static int kmmscand_test_walk(unsigned long start, unsigned long end,
			      struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	struct vm_area_struct *vma = walk->vma;
	struct mempolicy *pol;
	pgoff_t ilx;

	if (!kmmscand_vma_eligible(vma))
		return 1;

	w->allowed = w->owner_allowed;
	/*
	 * The policy at the start of the VMA stands for the whole VMA; a
	 * shared (shmem) policy may differ by offset, and the migrator only
	 * allocates on the chosen node anyway.
	 */
	pol = __get_vma_policy(vma, vma->vm_start, &ilx);
	if (kmmscand_policy_confines(pol))
		nodes_and(w->allowed, w->allowed, pol->nodes);
	mpol_cond_put(pol);

	/* Nothing in this VMA may go to a top-tier node: do not touch it. */
	if (!nodes_intersects(w->allowed, w->toptier))
		return 1;
	return 0;
}

static unsigned long kmmscand_hist_val(unsigned int hist, u8 seq)
{
	return (hist & KMMSCAND_HIST_MASK) |
	       ((unsigned long)seq << KMMSCAND_SEQ_SHIFT);
}

/* Store @hist for @idx, or erase the entry when it decayed to 0. */
static void kmmscand_hist_store(struct kmmscand_mm_slot *ms,
				unsigned long idx, unsigned int hist)
{
	if (!hist) {
		xa_erase(&ms->history, idx);
		return;
	}
	/* Under the PTL: no sleeping allocation; losing history is harmless. */
	xa_store(&ms->history, idx, xa_mk_value(kmmscand_hist_val(hist, ms->seq)),
		 GFP_NOWAIT | __GFP_NOWARN);
}

/* Shift an idle pass into every history entry of [start, end). */
static void kmmscand_age_range(struct kmmscand_walk *w, unsigned long start,
			       unsigned long end)
{
	struct kmmscand_mm_slot *ms = w->ms;
	unsigned long idx;
	void *entry;

	xa_for_each_range(&ms->history, idx, entry, start >> PAGE_SHIFT,
			  (end >> PAGE_SHIFT) - 1) {
		unsigned int hist = xa_to_value(entry) & KMMSCAND_HIST_MASK;

		kmmscand_hist_store(ms, idx,
				    kmmscand_history_update(hist, false, w->hist_n));
	}
}

static int kmmscand_distance(int from, int to)
{
	return node_distance(from, to);
}

static int kmmscand_target(struct kmmscand_walk *w, int src)
{
	struct kmmscand_mm_slot *ms = w->ms;
	const unsigned long *fp = ms->footprint;

	/* Prefer the footprint of the last complete pass once there is one. */
	if (ms->passes)
		fp += nr_node_ids;
	return kmmscand_choose_target(fp, nr_node_ids, &w->allowed, &w->toptier,
				      src, w->target_override,
				      kmmscand_distance);
}

/*
 * Called for every mapped folio found, before its Accessed bit is looked
 * at.  A top-tier folio only counts toward the mm's footprint; its
 * Accessed bit is left alone, for reclaim: folio_referenced() would
 * otherwise find hot DRAM pages unreferenced, demote them, and we would
 * promote them back.  Returns true for a slow-tier folio that may become a
 * candidate, whose Accessed bit the caller then tests and clears.
 */
static bool kmmscand_want_young(struct kmmscand_walk *w, struct folio *folio,
				unsigned int nr)
{
	int nid = folio_nid(folio);

	if (node_isset(nid, w->toptier)) {
		w->ms->footprint[nid] += nr;
		return false;
	}
	return !is_zero_folio(folio) && !folio_test_ksm(folio) &&
	       !folio_test_hugetlb(folio) && !folio_maybe_dma_pinned(folio);
}

/*
 * We just cleared an Accessed bit that reclaim would have found: pass the
 * access on, as zap_pte_range() does for a young PTE it tears down.  Safe
 * under the PTL.
 */
static void kmmscand_keep_referenced(struct vm_area_struct *vma,
				     struct folio *folio)
{
	if (vma_has_recency(vma))
		folio_mark_accessed(folio);
}

/*
 * Account one examined mapping of slow-tier @folio at @addr (the first
 * address of a THP) covering @nr pages, that was @young.  Called under the
 * PTL, so the folio is stable and mapped.
 */
static void kmmscand_account(struct kmmscand_walk *w, struct folio *folio,
			     unsigned long addr, unsigned int nr, bool young)
{
	struct kmmscand_mm_slot *ms = w->ms;
	unsigned long idx = addr >> PAGE_SHIFT;
	unsigned int hist = 0, nhist;
	int nid = folio_nid(folio);
	void *entry;
	int target;

	entry = xa_load(&ms->history, idx);
	if (!entry && !young)
		return;
	if (entry)
		hist = xa_to_value(entry) & KMMSCAND_HIST_MASK;
	nhist = kmmscand_history_update(hist, young, w->hist_n);

	if (kmmscand_history_hot(nhist, w->hot_k) && folio != w->last_queued) {
		target = kmmscand_target(w, nid);
		if (target == NUMA_NO_NODE || kmmscand_backed_off(ms, target)) {
			/* Keep the history: it may become promotable later. */
		} else if (w->detect_only) {
			w->candidates++;
			nhist = 0;
		} else if (kmmscand_queue_folio(folio, ms->slot.mm, target,
						folio_nr_pages(folio))) {
			w->candidates++;
			w->last_queued = folio;
			nhist = 0;
		} else {
			w->drops++;
			trace_kmmscand_candidate_drop(folio_pfn(folio), nid,
						      KMMSCAND_DROP_FULL);
		}
	}
	if (nhist != hist || entry)
		kmmscand_hist_store(ms, idx, nhist);
}

/*
 * A PMD-mapped THP; called with the PMD lock held.  It is one candidate of
 * HPAGE_PMD_NR pages and is never split.  Returns true if it was young.
 */
static bool kmmscand_scan_thp(pmd_t *pmd, unsigned long addr,
			      struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	pmd_t pmde = pmdp_get(pmd);
	struct folio *folio;
	bool young;

	if (!pmd_present(pmde) || !pmd_trans_huge(pmde) ||
	    is_huge_zero_pmd(pmde))
		return false;
	folio = vm_normal_folio_pmd(walk->vma, addr, pmde);
	if (!folio || !kmmscand_want_young(w, folio, 1U << PMD_ORDER))
		return false;
	young = pmdp_clear_young_notify(walk->vma, addr, pmd);
	if (young) {
		w->young++;
		w->thp_young++;
		kmmscand_keep_referenced(walk->vma, folio);
	}
	kmmscand_account(w, folio, addr & PMD_MASK, 1U << PMD_ORDER, young);
	return young;
}

static int kmmscand_pmd_entry(pmd_t *pmd, unsigned long addr,
			      unsigned long next, struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	struct vm_area_struct *vma = walk->vma;
	unsigned long start = addr, end = next;
	bool cleared = false;
	pte_t *start_pte, *pte;
	spinlock_t *ptl;	/* PMD lock or PTE table lock */
	pmd_t pmde;

	if (!w->budget || kthread_should_stop() ||
	    mmap_lock_is_contended(walk->mm)) {
		w->stop_addr = addr;
		return KMMSCAND_WALK_STOP;
	}
	cond_resched();

	pmde = pmdp_get_lockless(pmd);
	if (IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) && pmd_trans_huge(pmde)) {
		/*
		 * pmd_lock() and a recheck rather than pmd_trans_huge_lock(),
		 * whose conditionally held lock sparse cannot follow.
		 */
		ptl = pmd_lock(walk->mm, pmd);
		pmde = pmdp_get(pmd);
		if (pmd_trans_huge(pmde) || is_swap_pmd(pmde) ||
		    pmd_devmap(pmde)) {
			cleared = kmmscand_scan_thp(pmd, addr, walk);
			spin_unlock(ptl);
			w->scanned++;
			w->budget--;
			if (cleared && w->tlb_flush)
				flush_tlb_range(vma, addr, next);
			return 0;
		}
		spin_unlock(ptl);
		/* Split or zapped under us: look at the PTEs instead. */
	}

	/*
	 * PMD-first: the non-leaf PMD Accessed bit is set by the page walker
	 * whenever it translates through this PTE table.  If it is still
	 * clear since we cleared it in the last pass, no PTE below can have
	 * become young, so skip the table without mapping it.  Only at a
	 * table boundary (a visit resumed mid-table already cleared it) and
	 * only without mmu notifiers (a secondary MMU does not set it).
	 */
	if (IS_ENABLED(CONFIG_ARCH_HAS_NONLEAF_PMD_YOUNG) && w->pmd_skip &&
	    arch_has_hw_nonleaf_pmd_young() && !(addr & ~PMD_MASK) &&
	    !mm_has_notifiers(walk->mm) && pmd_present(pmde) &&
	    !pmd_leaf(pmde)) {
		if (!pmd_young(pmde)) {
			w->pmd_skipped++;
			w->budget--;
			kmmscand_age_range(w, addr, next);
			return 0;
		}
		ptl = pmd_lock(walk->mm, pmd);
		pmde = pmdp_get(pmd);
		if (pmd_present(pmde) && !pmd_leaf(pmde))
			pmdp_test_and_clear_young(vma, addr, pmd);
		spin_unlock(ptl);
	}

	/* Do not examine more PTEs than the budget allows. */
	if ((end - start) >> PAGE_SHIFT > w->budget) {
		end = start + (w->budget << PAGE_SHIFT);
		w->stop_addr = end;
	}

	start_pte = pte_offset_map_lock(walk->mm, pmd, addr, &ptl);
	if (!start_pte) {
		/*
		 * Raced with a THP collapse or a page table being freed.  If
		 * the budget clipped this table, the next visit resumes here
		 * rather than past a range that was never looked at.
		 */
		w->budget--;
		if (w->stop_addr) {
			w->stop_addr = addr;
			return KMMSCAND_WALK_STOP;
		}
		return 0;
	}
	w->last_queued = NULL;
	for (pte = start_pte; addr != end; pte++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);
		struct folio *folio;
		bool young;

		if (!pte_present(ptent))
			continue;
		folio = vm_normal_folio(vma, addr, ptent);
		if (!folio || folio_is_zone_device(folio) ||
		    !kmmscand_want_young(w, folio, 1))
			continue;
		young = ptep_clear_young_notify(vma, addr, pte);
		if (young) {
			w->young++;
			cleared = true;
			kmmscand_keep_referenced(vma, folio);
		}
		kmmscand_account(w, folio, addr, 1, young);
	}
	pte_unmap_unlock(start_pte, ptl);

	/* One flush per PTE table with cleared A bits, never per PTE. */
	if (cleared && w->tlb_flush)
		flush_tlb_range(vma, start, end);

	w->scanned += (end - start) >> PAGE_SHIFT;
	w->budget -= min(w->budget, (end - start) >> PAGE_SHIFT);
	return w->stop_addr ? KMMSCAND_WALK_STOP : 0;
}

static const struct mm_walk_ops kmmscand_walk_ops = {
	.pmd_entry	= kmmscand_pmd_entry,
	.test_walk	= kmmscand_test_walk,
	.walk_lock	= PGWALK_RDLOCK,
};

/* Erase history entries the pass that just ended did not touch. */
static void kmmscand_hist_sweep(struct kmmscand_mm_slot *ms)
{
	unsigned long idx;
	void *entry;

	xa_for_each(&ms->history, idx, entry) {
		if (((xa_to_value(entry) >> KMMSCAND_SEQ_SHIFT) &
		     KMMSCAND_SEQ_MASK) != ms->seq)
			xa_erase(&ms->history, idx);
		cond_resched();
	}
}

/* Forget everything about an mm that opted out; it restarts from scratch. */
static void kmmscand_slot_reset(struct kmmscand_mm_slot *ms)
{
	xa_destroy(&ms->history);
	ms->cursor = 0;
	ms->cand_cur = 0;
	ms->next_scan = jiffies + msecs_to_jiffies(ms->period_ms);
}

static void kmmscand_pass_end(struct kmmscand_mm_slot *ms)
{
	struct mm_struct *mm = ms->slot.mm;
	unsigned int pmin = READ_ONCE(kmmscand_scan_period_min_ms);
	unsigned int pmax = READ_ONCE(kmmscand_scan_period_max_ms);

	ms->period_ms = kmmscand_next_period(ms->period_ms, ms->cand_last,
					     ms->cand_cur, pmin, pmax);
	ms->budget = kmmscand_next_budget(ms->budget, ms->cand_last,
					  ms->cand_cur,
					  READ_ONCE(kmmscand_scan_size));
	kmmscand_hist_sweep(ms);
	count_vm_event(KMMSCAND_MM_SCAN);
	trace_kmmscand_scan_end(mm, ms->scanned, ms->pmd_skipped, ms->young,
				ms->cand_cur, ms->period_ms, ms->budget);

	memcpy(ms->footprint + nr_node_ids, ms->footprint,
	       nr_node_ids * sizeof(*ms->footprint));
	ms->cand_last = ms->cand_cur;
	ms->passes++;
	ms->cursor = 0;
	ms->next_scan = jiffies + msecs_to_jiffies(ms->period_ms);
}

static void kmmscand_pass_start(struct kmmscand_mm_slot *ms)
{
	ms->seq++;
	ms->cand_cur = 0;
	ms->scanned = 0;
	ms->pmd_skipped = 0;
	ms->young = 0;
	memset(ms->footprint, 0, nr_node_ids * sizeof(*ms->footprint));
	trace_kmmscand_scan_start(ms->slot.mm, ms->period_ms, ms->budget);
}

static void kmmscand_prepare_walk(struct kmmscand_walk *w,
				  struct kmmscand_mm_slot *ms)
{
	int nid;

	/* A changed scan_size applies from this visit on. */
	ms->budget = kmmscand_clamp_budget(ms->budget,
					   READ_ONCE(kmmscand_scan_size));
	w->ms = ms;
	w->budget = ms->budget;
	w->stop_addr = 0;
	w->hist_n = READ_ONCE(kmmscand_hot_history);
	w->hot_k = min(READ_ONCE(kmmscand_hot_threshold), w->hist_n);
	/*
	 * MGLRU's page table walk (walk_pmd_range()) skips PTE tables whose
	 * non-leaf PMD Accessed bit is clear: clearing it would hide the
	 * table from reclaim.  Leave those bits to MGLRU.
	 */
	w->pmd_skip = READ_ONCE(kmmscand_pmd_skip) && !lru_gen_enabled();
	w->tlb_flush = READ_ONCE(kmmscand_tlb_flush);
	w->detect_only = !READ_ONCE(kmmscand_promote_rate_mbps);
	w->target_override = READ_ONCE(kmmscand_target_node);
	w->last_queued = NULL;
	w->scanned = 0;
	w->pmd_skipped = 0;
	w->young = 0;
	w->thp_young = 0;
	w->candidates = 0;
	w->drops = 0;
	nodes_clear(w->toptier);
	for_each_node_state(nid, N_MEMORY)
		if (node_is_toptier(nid))
			node_set(nid, w->toptier);
	kmmscand_owner_nodes(ms->slot.mm, &w->owner_allowed);
}

static void kmmscand_flush_counts(struct kmmscand_walk *w)
{
	struct kmmscand_mm_slot *ms = w->ms;

	ms->scanned += w->scanned;
	ms->pmd_skipped += w->pmd_skipped;
	ms->young += w->young;
	ms->cand_cur += w->candidates;
	count_vm_events(KMMSCAND_PTE_SCANNED, w->scanned);
	count_vm_events(KMMSCAND_PMD_SKIPPED, w->pmd_skipped);
	count_vm_events(KMMSCAND_YOUNG, w->young);
	count_vm_events(KMMSCAND_THP_YOUNG, w->thp_young);
	count_vm_events(KMMSCAND_CANDIDATE, w->candidates);
	count_vm_events(KMMSCAND_CANDIDATE_DROP, w->drops);
}

/*
 * One visit: examine at most ms->budget PTE slots of the mm from its
 * cursor.  Returns true if candidates were queued.
 */
static bool kmmscand_visit(struct kmmscand_mm_slot *ms)
{
	struct kmmscand_walk *w = &kmmscand_walk_state;
	struct mm_struct *mm = ms->slot.mm;
	bool queued = false;
	int err;

	/* Pins the address space: __kmmscand_exit() cannot run meanwhile. */
	if (!mmget_not_zero(mm))
		return false;

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
	    test_bit(MMF_KMMSCAND_OFF, &mm->flags))
		goto out_unlock;

	kmmscand_prepare_walk(w, ms);
	if (!ms->cursor)
		kmmscand_pass_start(ms);
	err = walk_page_range(mm, ms->cursor, mm->task_size,
			      &kmmscand_walk_ops, w);
	kmmscand_flush_counts(w);
	queued = w->candidates && !w->detect_only;

	if (err == KMMSCAND_WALK_STOP && w->stop_addr < mm->task_size) {
		/* Budget used up or lock contended: continue here next time. */
		ms->cursor = max(w->stop_addr, 1UL);
	} else {
		kmmscand_pass_end(ms);
	}
out_unlock:
	mmap_read_unlock(mm);
out:
	/* The final put may run __mmput(); keep that off this thread. */
	mmput_async(mm);
	return queued;
}

/* Free the slot if its mm is gone.  Called with kmmscand_mm_lock held. */
static bool kmmscand_collect(struct kmmscand_mm_slot *ms)
{
	lockdep_assert_held(&kmmscand_mm_lock);

	if (atomic_read(&ms->slot.mm->mm_users))
		return false;
	hash_del(&ms->slot.hash);
	list_del(&ms->slot.mm_node);
	return true;
}

/*
 * Free a slot taken out of the registry by kmmscand_collect().  Its mm may
 * not have reached __kmmscand_exit() yet, and will find it unregistered:
 * drop its candidates and trace the exit here.
 */
static void kmmscand_release(struct kmmscand_mm_slot *ms)
{
	struct mm_struct *mm = ms->slot.mm;

	kmmscand_queue_purge(mm, KMMSCAND_DROP_EXIT);
	trace_kmmscand_mm_exit(mm);
	clear_bit(MMF_VM_KMMSCAND, &mm->flags);
	kmmscand_slot_free(ms);
	mmdrop(mm);
}

static bool kmmscand_due(struct kmmscand_mm_slot *ms)
{
	/* A pass in progress continues on every round. */
	return ms->cursor || time_after_eq(jiffies, ms->next_scan);
}

/* Is there a node with memory below the top tier, i.e. anything to promote? */
static bool kmmscand_have_slow_tier(void)
{
	int nid;

	for_each_node_state(nid, N_MEMORY)
		if (!node_is_toptier(nid))
			return true;
	return false;
}

/*
 * One round: visit every due mm once, in list order, up to the last mm
 * registered before the round started.  Returns the number of jiffies
 * until the next mm is due.
 */
static unsigned long kmmscand_round(void)
{
	unsigned long min_sleep = msecs_to_jiffies(KMMSCAND_SLEEP_MIN_MS);
	unsigned long max_sleep =
		msecs_to_jiffies(READ_ONCE(kmmscand_scan_period_min_ms));
	unsigned long sleep = max_sleep;
	struct kmmscand_mm_slot *ms, *next;
	struct mm_slot *slot;
	unsigned long round;
	bool queued = false;

	/*
	 * Every node with memory is in the top tier: nothing can be promoted,
	 * so do not touch any page table.  Look again after the longest scan
	 * period, in case a slow tier came online.
	 */
	if (!kmmscand_have_slow_tier())
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

		if (kmmscand_due(ms))
			queued |= kmmscand_visit(ms);
		/* Also between mms that are not due: the list may be long. */
		cond_resched();
		if (ms->cursor)
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
		if (kmmscand_collect(ms)) {
			/* Keep @next from being freed while we drop the lock. */
			kmmscand_scan.mm_slot = next;
			spin_unlock(&kmmscand_mm_lock);
			kmmscand_release(ms);
			spin_lock(&kmmscand_mm_lock);
		}
		ms = next;
		if (kthread_should_stop() || !READ_ONCE(kmmscand_enabled))
			break;
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

static bool kmmscand_should_run(void)
{
	return READ_ONCE(kmmscand_enabled) || kthread_should_stop();
}

static bool kmmscand_wake_early(void)
{
	return kthread_should_stop() || READ_ONCE(kmmscand_kick) ||
	       !READ_ONCE(kmmscand_enabled);
}

static int kmmscand(void *unused)
{
	unsigned long sleep;

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
		if (READ_ONCE(kmmscand_kick)) {
			WRITE_ONCE(kmmscand_kick, false);
			kmmscand_apply_tunables();
		}
		sleep = kmmscand_round();
		wait_event_freezable_timeout(kmmscand_wait,
					     kmmscand_wake_early(), sleep);
	}
	return 0;
}

/**
 * kmmscand_prctl_set - PR_SET_KMMSCAND for the calling process's mm
 * @mm: current->mm
 * @on: 1 to be scanned (the default), 0 to opt out
 *
 * The state lives in MMF_KMMSCAND_OFF, which is in MMF_INIT_MASK: it is
 * inherited over fork and kept over exec.  Opting out waits for a visit of
 * the scanner in progress (mmap_lock), drops the mm's queued candidates and
 * waits for a promotion batch in flight.
 *
 * Context: process context, from prctl(); sleeps (mmap_lock, batch mutex).
 *
 * Return: 0, or -EINTR if a fatal signal interrupted the wait for mmap_lock.
 */
int kmmscand_prctl_set(struct mm_struct *mm, unsigned long on)
{
	if (mmap_write_lock_killable(mm))
		return -EINTR;
	if (on)
		clear_bit(MMF_KMMSCAND_OFF, &mm->flags);
	else
		set_bit(MMF_KMMSCAND_OFF, &mm->flags);
	mmap_write_unlock(mm);

	if (on)
		__kmmscand_enter(mm);	/* no-op if still registered */
	else
		kmmscand_queue_purge(mm, KMMSCAND_DROP_OPTOUT);
	return 0;
}

/**
 * kmmscand_promo_wmark_active - should kswapd reclaim up to WMARK_PROMO
 *
 * While kmmscand may promote, kswapd on a top-tier node keeps free memory
 * up to the promotion watermark, as it does for NUMA balancing's tiering
 * mode; otherwise the migrator's watermark guard could defer forever.
 *
 * Context: any context (kswapd); lockless, never sleeps.
 *
 * Return: true if kmmscand started, is enabled with a nonzero promotion
 * rate, and a node with memory is below the top tier.
 */
bool kmmscand_promo_wmark_active(void)
{
	if (!READ_ONCE(kmmscand_ready) || !READ_ONCE(kmmscand_enabled) ||
	    !READ_ONCE(kmmscand_promote_rate_mbps))
		return false;
	/* Only where there is a slow tier to promote from. */
	return kmmscand_have_slow_tier();
}

/* sysfs: /sys/kernel/mm/kmmscand/ */

static void kmmscand_tunables_changed(void)
{
	WRITE_ONCE(kmmscand_kick, true);
	wake_up_interruptible(&kmmscand_wait);
	kmmscand_migrate_wake(true);
}

static ssize_t kmmscand_store_uint(const char *buf, size_t count,
				   unsigned int *var, unsigned int min,
				   unsigned int max)
{
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || val < min || val > max)
		return -EINVAL;
	WRITE_ONCE(*var, val);
	return count;
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(kmmscand_enabled));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || val > 1)
		return -EINVAL;
	mutex_lock(&kmmscand_mutex);
	WRITE_ONCE(kmmscand_enabled, val);
	mutex_unlock(&kmmscand_mutex);
	kmmscand_tunables_changed();
	return count;
}

static struct kobj_attribute enabled_attr = __ATTR_RW_MODE(enabled, 0644);

static ssize_t scan_period_min_ms_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kmmscand_scan_period_min_ms));
}

static ssize_t scan_period_min_ms_store(struct kobject *kobj,
					struct kobj_attribute *attr,
					const char *buf, size_t count)
{
	ssize_t ret;

	mutex_lock(&kmmscand_mutex);
	ret = kmmscand_store_uint(buf, count, &kmmscand_scan_period_min_ms,
				  KMMSCAND_PERIOD_FLOOR_MS,
				  kmmscand_scan_period_max_ms);
	mutex_unlock(&kmmscand_mutex);
	if (ret > 0)
		kmmscand_tunables_changed();
	return ret;
}

static struct kobj_attribute scan_period_min_ms_attr =
	__ATTR_RW_MODE(scan_period_min_ms, 0644);

static ssize_t scan_period_max_ms_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kmmscand_scan_period_max_ms));
}

static ssize_t scan_period_max_ms_store(struct kobject *kobj,
					struct kobj_attribute *attr,
					const char *buf, size_t count)
{
	ssize_t ret;

	mutex_lock(&kmmscand_mutex);
	ret = kmmscand_store_uint(buf, count, &kmmscand_scan_period_max_ms,
				  kmmscand_scan_period_min_ms,
				  KMMSCAND_PERIOD_CEIL_MS);
	mutex_unlock(&kmmscand_mutex);
	if (ret > 0)
		kmmscand_tunables_changed();
	return ret;
}

static struct kobj_attribute scan_period_max_ms_attr =
	__ATTR_RW_MODE(scan_period_max_ms, 0644);

static ssize_t scan_size_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kmmscand_scan_size));
}

static ssize_t scan_size_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	ssize_t ret;

	mutex_lock(&kmmscand_mutex);
	ret = kmmscand_store_uint(buf, count, &kmmscand_scan_size,
				  KMMSCAND_SCAN_SIZE_MIN, KMMSCAND_SCAN_SIZE_MAX);
	mutex_unlock(&kmmscand_mutex);
	if (ret > 0)
		kmmscand_tunables_changed();
	return ret;
}

static struct kobj_attribute scan_size_attr = __ATTR_RW_MODE(scan_size, 0644);

static ssize_t hot_history_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kmmscand_hot_history));
}

static ssize_t hot_history_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	ssize_t ret;

	mutex_lock(&kmmscand_mutex);
	ret = kmmscand_store_uint(buf, count, &kmmscand_hot_history,
				  max(kmmscand_hot_threshold, 1U),
				  KMMSCAND_HISTORY_MAX);
	mutex_unlock(&kmmscand_mutex);
	if (ret > 0)
		kmmscand_tunables_changed();
	return ret;
}

static struct kobj_attribute hot_history_attr =
	__ATTR_RW_MODE(hot_history, 0644);

static ssize_t hot_threshold_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kmmscand_hot_threshold));
}

static ssize_t hot_threshold_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	ssize_t ret;

	mutex_lock(&kmmscand_mutex);
	ret = kmmscand_store_uint(buf, count, &kmmscand_hot_threshold, 1,
				  kmmscand_hot_history);
	mutex_unlock(&kmmscand_mutex);
	if (ret > 0)
		kmmscand_tunables_changed();
	return ret;
}

static struct kobj_attribute hot_threshold_attr =
	__ATTR_RW_MODE(hot_threshold, 0644);

static ssize_t kmmscand_store_bool(const char *buf, size_t count, bool *var)
{
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || val > 1)
		return -EINVAL;
	WRITE_ONCE(*var, val);
	kmmscand_tunables_changed();
	return count;
}

static ssize_t pmd_skip_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(kmmscand_pmd_skip));
}

static ssize_t pmd_skip_store(struct kobject *kobj,
			      struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	return kmmscand_store_bool(buf, count, &kmmscand_pmd_skip);
}

static struct kobj_attribute pmd_skip_attr = __ATTR_RW_MODE(pmd_skip, 0644);

static ssize_t tlb_flush_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(kmmscand_tlb_flush));
}

static ssize_t tlb_flush_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	return kmmscand_store_bool(buf, count, &kmmscand_tlb_flush);
}

static struct kobj_attribute tlb_flush_attr = __ATTR_RW_MODE(tlb_flush, 0644);

static ssize_t migrate_batch_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kmmscand_migrate_batch));
}

static ssize_t migrate_batch_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	ssize_t ret;

	ret = kmmscand_store_uint(buf, count, &kmmscand_migrate_batch, 1,
				  KMMSCAND_BATCH_MAX);
	if (ret > 0)
		kmmscand_tunables_changed();
	return ret;
}

static struct kobj_attribute migrate_batch_attr =
	__ATTR_RW_MODE(migrate_batch, 0644);

static ssize_t promote_rate_limit_mbps_show(struct kobject *kobj,
					    struct kobj_attribute *attr,
					    char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kmmscand_promote_rate_mbps));
}

static ssize_t promote_rate_limit_mbps_store(struct kobject *kobj,
					     struct kobj_attribute *attr,
					     const char *buf, size_t count)
{
	ssize_t ret;

	ret = kmmscand_store_uint(buf, count, &kmmscand_promote_rate_mbps, 0,
				  KMMSCAND_RATE_MAX_MBPS);
	if (ret > 0)
		kmmscand_tunables_changed();
	return ret;
}

static struct kobj_attribute promote_rate_limit_mbps_attr =
	__ATTR_RW_MODE(promote_rate_limit_mbps, 0644);

static ssize_t target_node_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(kmmscand_target_node));
}

static ssize_t target_node_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	int nid;

	if (kstrtoint(buf, 10, &nid))
		return -EINVAL;
	if (nid != NUMA_NO_NODE &&
	    (nid < 0 || nid >= nr_node_ids || !node_online(nid) ||
	     !node_state(nid, N_MEMORY) || !node_is_toptier(nid)))
		return -EINVAL;
	WRITE_ONCE(kmmscand_target_node, nid);
	kmmscand_tunables_changed();
	return count;
}

static struct kobj_attribute target_node_attr =
	__ATTR_RW_MODE(target_node, 0644);

static struct attribute *kmmscand_attrs[] = {
	&enabled_attr.attr,
	&scan_period_min_ms_attr.attr,
	&scan_period_max_ms_attr.attr,
	&scan_size_attr.attr,
	&hot_history_attr.attr,
	&hot_threshold_attr.attr,
	&pmd_skip_attr.attr,
	&tlb_flush_attr.attr,
	&migrate_batch_attr.attr,
	&promote_rate_limit_mbps_attr.attr,
	&target_node_attr.attr,
	NULL,
};

static const struct attribute_group kmmscand_attr_group = {
	.attrs = kmmscand_attrs,
	.name = "kmmscand",
};

static int __init kmmscand_init(void)
{
	int err;

	kmmscand_slot_cache = KMEM_CACHE(kmmscand_mm_slot, 0);
	if (!kmmscand_slot_cache) {
		err = -ENOMEM;
		goto err_off;
	}

	err = kmmscand_migrate_init();
	if (err)
		goto err_cache;

	err = sysfs_create_group(mm_kobj, &kmmscand_attr_group);
	if (err) {
		pr_err("failed to register sysfs group: %d\n", err);
		goto err_migrate;
	}
	kmmscand_thread = kthread_run(kmmscand, NULL, "kmmscand");
	if (IS_ERR(kmmscand_thread)) {
		err = PTR_ERR(kmmscand_thread);
		kmmscand_thread = NULL;
		pr_err("failed to start kthread: %d\n", err);
		goto err_sysfs;
	}
	WRITE_ONCE(kmmscand_ready, true);
	return 0;

	/* No mm was registered (kmmscand_ready is false): nothing to undo there. */
err_sysfs:
	sysfs_remove_group(mm_kobj, &kmmscand_attr_group);
err_migrate:
	kmmscand_migrate_exit();
err_cache:
	kmem_cache_destroy(kmmscand_slot_cache);
	kmmscand_slot_cache = NULL;
err_off:
	/* Fully off: in particular kswapd's WMARK_PROMO hook stays inactive. */
	WRITE_ONCE(kmmscand_enabled, false);
	return err;
}
subsys_initcall(kmmscand_init);

#include "tests/kmmscand-kunit.h"
