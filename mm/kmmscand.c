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
 * last N passes is hot: it is queued as (mm, address, pfn), without a folio
 * reference, for the "kmmscand_migrate" thread (mm/kmmscand_migrate.c),
 * which revalidates it and promotes it to a top-tier node.
 *
 * PTE tables whose non-leaf PMD Accessed bit stayed clear since the last
 * pass are skipped without being mapped (x86 sets that bit on a page walk
 * through the PMD).  MGLRU uses the same bit for the same purpose, so with
 * MGLRU enabled kmmscand leaves it alone and maps every table.  PMD-mapped
 * THPs are handled in .pmd_entry under the PMD lock and never split.
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
#include <linux/memcontrol.h>
#include <linux/memory-tiers.h>
#include <linux/mempolicy.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mmu_notifier.h>
#include <linux/oom.h>
#include <linux/pagewalk.h>
#include <linux/page_idle.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/secretmem.h>
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
 * dense, up to 576 bytes for an isolated one.  An mm tracks at most
 * KMMSCAND_HIST_MAX pages (4 GB of young 4 KB pages); past that, pages
 * seen young for the first time are not tracked until entries decay, so
 * the history of one mm never exceeds about 9 MB when dense.
 */
#define KMMSCAND_HIST_MAX	BIT(20)
#define KMMSCAND_HIST_MASK	0xffUL
#define KMMSCAND_SEQ_SHIFT	8
#define KMMSCAND_SEQ_MASK	0xffUL

/**
 * struct kmmscand_mm_slot - kmmscand state of one registered mm
 * @slot: hash lookup from mm to mm_slot (embeds the list node)
 * @next_scan: jiffies at which the next pass may start
 * @next_full: jiffies at which the next full pass is due; passes before
 *	it are quick ones, over @slow_tables only
 * @cursor: page-aligned address where the next visit continues, valid
 *	while @in_pass
 * @in_pass: a pass has started and not ended yet
 * @quick: the pass in progress is a quick one
 * @watch: quick passes are cheap for this mm (PMD Accessed bits usable),
 *	so its slow-tier tables are watched at the shortest period
 * @period_ms: current scan period (adaptive)
 * @budget: PTE slots examined per visit at most (adaptive)
 * @passes: complete passes so far
 * @seq: low byte of the pass number, stamped into history entries
 * @cand_last: candidates found in the previous complete pass (X)
 * @cand_cur: candidates found in the pass in progress (Y)
 * @scanned: PTEs and THPs examined in the pass in progress
 * @pmd_skipped: PTE tables skipped in the pass in progress
 * @young: young entries found in the pass in progress
 * @warm: slow-tier pages found young for the first time in the pass in
 *	progress (no history yet): a confirming pass should follow soon
 * @footprint: pages per node, [0, nr_node_ids) = pass in progress,
 *	[nr_node_ids, 2 * nr_node_ids) = last complete pass
 * @history: per-page access history (see above)
 * @nr_history: entries in @history
 * @slow_tables: PTE tables (and THPs) that held slow-tier pages, indexed by
 *	address >> PMD_SHIFT, stamped like @history
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
	unsigned long next_full;
	unsigned long cursor;
	bool in_pass;
	bool quick;
	bool watch;
	unsigned int period_ms;
	unsigned int budget;
	unsigned long passes;
	u8 seq;
	unsigned long cand_last;
	unsigned long cand_cur;
	unsigned long scanned;
	unsigned long pmd_skipped;
	unsigned long young;
	unsigned long warm;
	unsigned long *footprint;
	struct xarray history;
	unsigned long nr_history;
	struct xarray slow_tables;
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
/* The scanner saw a slow tier in its last round (kmmscand_register_all()). */
static bool kmmscand_tiered;

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
	bool quick;			/* a quick pass: slow-tier tables only */
	bool slow_seen;			/* the current table held slow pages */
	bool queue_full;		/* the migrator's queue is full: stop */
	bool pmd_cleared;		/* non-leaf PMD A bits were cleared */
	bool owner_mof;			/* owner's task policy allows moving */
	int target_override;
	nodemask_t toptier;		/* top-tier nodes with memory */
	nodemask_t ample;		/* top-tier nodes with room to spare */
	nodemask_t owner_cpuset;	/* cpuset of the owner */
	nodemask_t owner_allowed;	/* cpuset and task policy of the owner */
	nodemask_t allowed;		/* the above & policy of the VMA */
	struct folio *last_queued;	/* dedup PTE-mapped large folios */
	unsigned int nr_spans;		/* see kmmscand_prepare_spans() */
	struct {
		unsigned long start, end;
		int nid;
	} span[4];
	unsigned long scanned;
	unsigned long pmd_skipped;
	unsigned long young;
	unsigned long thp_young;
	unsigned long warm;
	unsigned long candidates;
	unsigned long drops;
};

static struct kmmscand_walk kmmscand_walk_state;

#define KMMSCAND_WALK_STOP	1

static void kmmscand_slot_free(struct kmmscand_mm_slot *ms)
{
	xa_destroy(&ms->history);
	xa_destroy(&ms->slow_tables);
	kfree(ms->footprint);
	mm_slot_free(kmmscand_slot_cache, ms);
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

/**
 * __kmmscand_enter - register an mm with kmmscand
 * @mm: a new user mm (from fork or exec), or current->mm opting back in
 *
 * Takes a reference on the mm_struct (mmgrab) that is dropped when the
 * slot is freed.  Allocation failure only means the mm is not scanned.
 * On a machine without a slow tier nothing is registered, so fork, exec
 * and exit cost nothing more than without kmmscand; should a slow tier
 * come online later, the scanner registers the mms that exist then
 * (kmmscand_register_all()).
 *
 * Context: process context; may sleep (GFP_KERNEL allocation).
 */
void __kmmscand_enter(struct mm_struct *mm)
{
	struct kmmscand_mm_slot *ms;
	struct mm_slot *slot;
	unsigned int period, pmin;
	bool wakeup;

	if (!READ_ONCE(kmmscand_ready) || !kmmscand_have_slow_tier() ||
	    test_and_set_bit(MMF_VM_KMMSCAND, &mm->flags))
		return;

	ms = mm_slot_alloc(kmmscand_slot_cache);
	if (!ms) {
		clear_bit(MMF_VM_KMMSCAND, &mm->flags);
		return;
	}
	xa_init(&ms->history);
	xa_init(&ms->slow_tables);
	pmin = READ_ONCE(kmmscand_scan_period_min_ms);
	period = clamp(KMMSCAND_PERIOD_INIT_MS, pmin,
		       READ_ONCE(kmmscand_scan_period_max_ms));
	ms->period_ms = period;
	ms->budget = READ_ONCE(kmmscand_scan_size);
	/*
	 * The first pass only clears Accessed bits, the second can find hot
	 * pages: start after the shortest period, which also lets
	 * short-lived tasks go away unscanned.
	 */
	ms->next_scan = jiffies + msecs_to_jiffies(pmin);
	ms->next_full = ms->next_scan;
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

/*
 * Memory policies follow NUMA balancing's rule (vma_policy_mof()): pages
 * under an explicit policy stay where the policy put them unless the
 * policy asks to be optimised (MPOL_F_MOF, set by MPOL_F_NUMA_BALANCING
 * on MPOL_BIND and MPOL_PREFERRED_MANY).  The default policy and the
 * per-node preferred policies carry MPOL_F_MOF.  A policy that may move
 * keeps its pages within its nodes.
 */
static bool kmmscand_policy_moves(const struct mempolicy *pol)
{
	return !pol || (pol->flags & MPOL_F_MOF);
}

static void kmmscand_policy_nodes(const struct mempolicy *pol,
				  nodemask_t *nodes)
{
	if (pol && (pol->mode == MPOL_BIND ||
		    pol->mode == MPOL_PREFERRED_MANY))
		nodes_and(*nodes, *nodes, pol->nodes);
}

/*
 * Nodes the owner of @mm may allocate from (its cpuset's mems_allowed and
 * the nodes of a movable task mempolicy), and whether its task mempolicy
 * lets its pages move at all.  mm->owner only exists with CONFIG_MEMCG;
 * without it every node with memory is allowed and the task policy is
 * taken as the default one (the VMA policy still applies).
 */
static void kmmscand_owner_nodes(struct mm_struct *mm, nodemask_t *cpuset,
				 nodemask_t *nodes, bool *mof)
{
	*cpuset = node_states[N_MEMORY];
	*nodes = *cpuset;
	*mof = true;
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
		nodes_and(*cpuset, *cpuset, p->mems_allowed);
		*nodes = *cpuset;
		*mof = kmmscand_policy_moves(p->mempolicy);
		kmmscand_policy_nodes(p->mempolicy, nodes);
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
	if (!vma_is_accessible(vma) || vma_is_secretmem(vma))
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
	bool moves;
	pgoff_t ilx;

	if (!kmmscand_vma_eligible(vma))
		return 1;

	w->allowed = w->owner_allowed;
	/*
	 * The policy at the start of the VMA stands for the whole VMA, as in
	 * vma_policy_mof(); a shared (shmem) policy may differ by offset.
	 * Without a VMA policy the owner's task policy applies.
	 */
	pol = __get_vma_policy(vma, vma->vm_start, &ilx);
	if (pol) {
		moves = kmmscand_policy_moves(pol);
		w->allowed = w->owner_cpuset;
		kmmscand_policy_nodes(pol, &w->allowed);
	} else {
		moves = w->owner_mof;
	}
	mpol_cond_put(pol);
	if (!moves)
		return 1;

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
	void *old;

	if (!hist) {
		if (xa_erase(&ms->history, idx))
			ms->nr_history--;
		return;
	}
	/* Under the PTL: no sleeping allocation; losing history is harmless. */
	old = xa_store(&ms->history, idx,
		       xa_mk_value(kmmscand_hist_val(hist, ms->seq)),
		       GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!old)
		ms->nr_history++;
}

/*
 * Whether a page with history @entry (NULL: none) found @young needs an
 * entry: pages never seen young need none, and an mm at KMMSCAND_HIST_MAX
 * entries takes no new page until older ones decay.
 */
static bool kmmscand_hist_track(const struct kmmscand_mm_slot *ms,
				const void *entry, bool young)
{
	if (entry)
		return true;
	return young && ms->nr_history < KMMSCAND_HIST_MAX;
}

/*
 * Shift an idle pass into every history entry of [start, end): a PTE table
 * skipped because its PMD Accessed bit stayed clear.  That is only right
 * because the bit is reliable: kmmscand_visit() flushes the TLB after
 * clearing PMD Accessed bits, so no CPU keeps translating through a cached
 * copy of the entry without setting the bit again.
 */
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
 * The top-tier node whose memory holds @pfn, found from the node spans
 * alone (no struct page is read), or NUMA_NO_NODE if @pfn may be in a
 * slow-tier node.  Only used when no top-tier span overlaps a slow-tier
 * one (w->nr_spans is 0 otherwise).
 */
static int kmmscand_pfn_toptier(const struct kmmscand_walk *w,
				unsigned long pfn)
{
	unsigned int i;

	for (i = 0; i < w->nr_spans; i++)
		if (pfn >= w->span[i].start && pfn < w->span[i].end)
			return w->span[i].nid;
	return NUMA_NO_NODE;
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
	w->slow_seen = true;
	return !is_zero_folio(folio) && !folio_test_ksm(folio) &&
	       !folio_test_hugetlb(folio) && !folio_maybe_dma_pinned(folio) &&
	       !(folio->mapping && !folio_test_anon(folio) &&
		 secretmem_mapping(folio->mapping));
}

/*
 * We just cleared an Accessed bit that reclaim would have found: hand the
 * access on the way page idle tracking and DAMON do, with the folio's young
 * flag, which folio_referenced() counts as a referenced mapping.  So a
 * slow-tier page that kmmscand looked at keeps its place in reclaim and
 * demotion order, and no LRU batch of the scanner's CPU holds a reference
 * to it (folio_mark_accessed() may, through folio_activate(), and a
 * reference there makes the folio's migration fail).
 */
static void kmmscand_keep_referenced(struct vm_area_struct *vma,
				     struct folio *folio)
{
	if (vma_has_recency(vma))
		folio_set_young(folio);
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
	if (!kmmscand_hist_track(ms, entry, young))
		return;
	if (entry)
		hist = xa_to_value(entry) & KMMSCAND_HIST_MASK;
	else
		w->warm++;
	nhist = kmmscand_history_update(hist, young, w->hist_n);

	if (young && folio != w->last_queued &&
	    (kmmscand_is_hot(hist, nhist, w->hot_k, false) ||
	     (hist && !nodes_empty(w->ample)))) {
		target = kmmscand_target(w, nid);
		if (target == NUMA_NO_NODE || kmmscand_backed_off(ms, target) ||
		    !kmmscand_is_hot(hist, nhist, w->hot_k,
				     node_isset(target, w->ample)) ||
		    !kmmscand_folio_promotable(folio)) {
			/* Keep the history: it may become promotable later. */
		} else if (w->detect_only) {
			w->candidates++;
			nhist = 0;
		} else if (kmmscand_queue_folio(folio, ms->slot.mm, target,
						folio_nr_pages(folio))) {
			/*
			 * The history stays: should this attempt fail, the
			 * next pass that finds the page young queues it again.
			 */
			w->candidates++;
			w->last_queued = folio;
		} else {
			/* Queue full: stop here, resume after this page. */
			w->queue_full = true;
			w->drops++;
			trace_kmmscand_candidate_drop(folio_pfn(folio), nid,
						      KMMSCAND_DROP_FULL);
		}
	}
	if (nhist != hist || entry)
		kmmscand_hist_store(ms, idx, nhist);
}

/*
 * A PMD-mapped THP at @haddr; called with the PMD lock held.  It is one
 * candidate of HPAGE_PMD_NR pages and is never split.  Returns true if it
 * was young.
 */
static bool kmmscand_scan_thp(pmd_t *pmd, unsigned long haddr,
			      struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	pmd_t pmde = pmdp_get(pmd);
	struct folio *folio;
	bool young;

	if (!pmd_present(pmde) || !pmd_trans_huge(pmde) ||
	    is_huge_zero_pmd(pmde))
		return false;
	folio = vm_normal_folio_pmd(walk->vma, haddr, pmde);
	if (!folio || !kmmscand_want_young(w, folio, 1U << PMD_ORDER))
		return false;
	young = pmdp_clear_young_notify(walk->vma, haddr, pmd);
	if (young) {
		w->young++;
		w->thp_young++;
		kmmscand_keep_referenced(walk->vma, folio);
	}
	kmmscand_account(w, folio, haddr, 1U << PMD_ORDER, young);
	return young;
}

/*
 * The PMD maps a THP (or did a moment ago).  Returns true if it was dealt
 * with, false if it was split or zapped under us and the PTE table should
 * be looked at instead.
 */
static bool kmmscand_pmd_huge(pmd_t *pmd, unsigned long addr,
			      unsigned long next, struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	unsigned long haddr = addr & HPAGE_PMD_MASK;
	spinlock_t *ptl;	/* the PMD lock */
	pmd_t pmde;
	bool young;

	/*
	 * pmd_lock() and a recheck rather than pmd_trans_huge_lock(), whose
	 * conditionally held lock sparse cannot follow.
	 */
	ptl = pmd_lock(walk->mm, pmd);
	pmde = pmdp_get(pmd);
	if (!pmd_trans_huge(pmde) && !is_swap_pmd(pmde) && !pmd_devmap(pmde)) {
		spin_unlock(ptl);
		return false;
	}
	young = kmmscand_scan_thp(pmd, haddr, walk);
	spin_unlock(ptl);
	w->scanned++;
	w->budget--;
	if (young && w->tlb_flush)
		flush_tlb_range(walk->vma, haddr, haddr + HPAGE_PMD_SIZE);
	return true;
}

/*
 * PMD-first: the non-leaf PMD Accessed bit is set by the page walker
 * whenever it translates through this PTE table.  If it is still clear
 * since a full pass cleared it (and flushed the TLB, see kmmscand_visit()),
 * no PTE below was used since, so skip the table without mapping it and
 * age the history below it.  Only at a table boundary (a visit resumed
 * mid-table already cleared it) and only without mmu notifiers (a
 * secondary MMU does not set it).  Returns true if the table was skipped.
 */
static bool kmmscand_pmd_skip_table(pmd_t *pmd, pmd_t pmde, unsigned long addr,
				    unsigned long next, struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	spinlock_t *ptl;	/* the PMD lock */

	if (!IS_ENABLED(CONFIG_ARCH_HAS_NONLEAF_PMD_YOUNG) || !w->pmd_skip ||
	    !arch_has_hw_nonleaf_pmd_young() || (addr & ~PMD_MASK) ||
	    mm_has_notifiers(walk->mm) || !pmd_present(pmde) || pmd_leaf(pmde))
		return false;
	if (!pmd_young(pmde)) {
		w->pmd_skipped++;
		w->budget--;
		kmmscand_age_range(w, addr, next);
		return true;
	}
	/*
	 * Only full passes clear the bit (and flush once per visit, see
	 * kmmscand_visit()); a quick pass reads it, so that it skips the
	 * tables nobody used since the last full pass without a flush of
	 * its own.
	 */
	if (w->quick)
		return false;
	ptl = pmd_lock(walk->mm, pmd);
	pmde = pmdp_get(pmd);
	if (pmd_present(pmde) && !pmd_leaf(pmde) &&
	    pmdp_test_and_clear_young(walk->vma, addr, pmd))
		w->pmd_cleared = true;
	spin_unlock(ptl);
	return false;
}

/*
 * Examine the PTEs of [start, end), both page aligned and within one PTE
 * table.  Returns the address up to which the PTEs were examined (@end
 * unless the queue filled up), or 0 if the table went away under us.
 */
static unsigned long kmmscand_scan_ptes(pmd_t *pmd, unsigned long start,
					unsigned long end, struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	struct vm_area_struct *vma = walk->vma;
	pte_t *start_pte, *pte;
	unsigned long addr;
	bool cleared = false;
	spinlock_t *ptl;	/* the PTE table lock */

	start_pte = pte_offset_map_lock(walk->mm, pmd, start, &ptl);
	if (!start_pte)
		return 0;
	w->last_queued = NULL;
	for (pte = start_pte, addr = start; addr < end;
	     pte++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);
		struct folio *folio;
		bool young;
		int nid;

		if (!pte_present(ptent))
			continue;
		if (w->nr_spans) {
			/* Top-tier pages only count: skip the struct page. */
			nid = kmmscand_pfn_toptier(w, pte_pfn(ptent));
			if (nid != NUMA_NO_NODE) {
				w->ms->footprint[nid]++;
				continue;
			}
		}
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
		if (w->queue_full) {
			addr += PAGE_SIZE;
			break;
		}
	}
	pte_unmap_unlock(start_pte, ptl);

	/* One flush per PTE table with cleared A bits, never per PTE. */
	if (cleared && w->tlb_flush)
		flush_tlb_range(vma, start, addr);
	return addr;
}

/*
 * Remember whether the PTE table (or THP) at @addr held slow-tier pages,
 * for the quick passes, which only look at such tables.
 */
static void kmmscand_note_table(struct kmmscand_walk *w, unsigned long addr)
{
	struct xarray *xa = &w->ms->slow_tables;
	unsigned long idx = addr >> PMD_SHIFT;

	if (!w->slow_seen) {
		if (xa_load(xa, idx))
			xa_erase(xa, idx);
		return;
	}
	/* Stamped like a history entry, for kmmscand_xa_sweep(). */
	xa_store(xa, idx, xa_mk_value(kmmscand_hist_val(1, w->ms->seq)),
		 GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
}

static int kmmscand_pmd_entry(pmd_t *pmd, unsigned long addr,
			      unsigned long next, struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	unsigned long end = next, done;
	pmd_t pmde;

	if (!w->budget || kthread_should_stop() ||
	    mmap_lock_is_contended(walk->mm)) {
		w->stop_addr = addr;
		return KMMSCAND_WALK_STOP;
	}
	cond_resched();

	/* A quick pass only looks at tables that held slow-tier pages. */
	if (w->quick && !xa_load(&w->ms->slow_tables, addr >> PMD_SHIFT)) {
		w->budget--;
		return 0;
	}
	w->slow_seen = false;

	pmde = pmdp_get_lockless(pmd);
	if (IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) && pmd_trans_huge(pmde) &&
	    kmmscand_pmd_huge(pmd, addr, next, walk))
		goto out;

	if (kmmscand_pmd_skip_table(pmd, pmde, addr, next, walk)) {
		/* Still a slow-tier table as far as we know. */
		w->slow_seen = !!xa_load(&w->ms->slow_tables,
					 addr >> PMD_SHIFT);
		goto out;
	}

	/* Do not examine more PTEs than the budget allows. */
	if ((end - addr) >> PAGE_SHIFT > w->budget)
		end = addr + (w->budget << PAGE_SHIFT);

	done = kmmscand_scan_ptes(pmd, addr, end, walk);
	if (!done) {
		/*
		 * Raced with a THP collapse or a page table being freed.
		 * If the budget clipped this table, the next visit resumes
		 * here rather than past a range that was never looked at.
		 */
		w->budget--;
		if (end != next) {
			w->stop_addr = addr;
			return KMMSCAND_WALK_STOP;
		}
		return 0;
	}
	w->scanned += (done - addr) >> PAGE_SHIFT;
	w->budget -= min(w->budget, (done - addr) >> PAGE_SHIFT);
	if (done != next) {
		w->stop_addr = done;
		kmmscand_note_table(w, addr);
		return KMMSCAND_WALK_STOP;
	}
out:
	kmmscand_note_table(w, addr);
	if (w->queue_full) {
		w->stop_addr = next;
		return KMMSCAND_WALK_STOP;
	}
	return 0;
}

static const struct mm_walk_ops kmmscand_walk_ops = {
	.pmd_entry	= kmmscand_pmd_entry,
	.test_walk	= kmmscand_test_walk,
	.walk_lock	= PGWALK_RDLOCK,
};

/* Erase entries of @xa whose pass stamp is not @seq; returns how many. */
static unsigned long kmmscand_xa_sweep(struct xarray *xa, u8 seq)
{
	unsigned long idx, erased = 0;
	void *entry;

	xa_for_each(xa, idx, entry) {
		if (((xa_to_value(entry) >> KMMSCAND_SEQ_SHIFT) &
		     KMMSCAND_SEQ_MASK) != seq && xa_erase(xa, idx))
			erased++;
		cond_resched();
	}
	return erased;
}

/* Forget everything about an mm that opted out; it restarts from scratch. */
static void kmmscand_slot_reset(struct kmmscand_mm_slot *ms)
{
	xa_destroy(&ms->history);
	ms->nr_history = 0;
	xa_destroy(&ms->slow_tables);
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
 * the full passes have backed off to scan_period_max_ms.
 */
static void kmmscand_pass_end(struct kmmscand_mm_slot *ms)
{
	struct mm_struct *mm = ms->slot.mm;
	unsigned int pmin = READ_ONCE(kmmscand_scan_period_min_ms);
	unsigned int pmax = READ_ONCE(kmmscand_scan_period_max_ms);
	unsigned long now = jiffies;

	ms->nr_history -= kmmscand_xa_sweep(&ms->history, ms->seq);
	if (!ms->quick) {
		kmmscand_xa_sweep(&ms->slow_tables, ms->seq);
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
	/* Confirm what this pass found young, and watch slow-tier tables. */
	if (ms->warm || ms->cand_cur ||
	    (ms->watch && !xa_empty(&ms->slow_tables)))
		ms->next_scan = min_t(unsigned long, ms->next_scan,
				      now + msecs_to_jiffies(pmin));
	if (!ms->quick) {
		ms->cand_cur = 0;
		ms->warm = 0;
	}
}

static void kmmscand_pass_start(struct kmmscand_mm_slot *ms)
{
	ms->in_pass = true;
	ms->cursor = 0;
	ms->quick = ms->passes && time_before(jiffies, ms->next_full);
	ms->seq++;
	ms->scanned = 0;
	ms->pmd_skipped = 0;
	ms->young = 0;
	if (!ms->quick)
		memset(ms->footprint, 0, nr_node_ids * sizeof(*ms->footprint));
	trace_kmmscand_scan_start(ms->slot.mm, ms->period_ms, ms->budget);
}

/*
 * Is there room on @nid for promotion to skip the K-of-N confirmation?
 * As NUMA balancing's pgdat_free_space_enough(): free memory above the
 * promotion watermark of some zone beyond a sixteenth of the node.
 */
static bool kmmscand_node_ample(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long enough = pgdat->node_present_pages >> 4;
	int z;

	for (z = pgdat->nr_zones - 1; z >= 0; z--) {
		struct zone *zone = pgdat->node_zones + z;

		if (managed_zone(zone) &&
		    zone_watermark_ok(zone, 0, promo_wmark_pages(zone) + enough,
				      ZONE_MOVABLE, 0))
			return true;
	}
	return false;
}

/*
 * The pfn spans of the top-tier nodes, so that top-tier pages can be
 * counted without reading their struct page.  Left empty when a top-tier
 * span overlaps a slow-tier one (interleaved node memory) or there are
 * more top-tier nodes than fit.
 */
static void kmmscand_prepare_spans(struct kmmscand_walk *w)
{
	int nid, other;

	w->nr_spans = 0;
	for_each_node_mask(nid, w->toptier) {
		unsigned long start = node_start_pfn(nid);
		unsigned long end = node_end_pfn(nid);

		for_each_node_state(other, N_MEMORY) {
			if (node_isset(other, w->toptier))
				continue;
			if (start < node_end_pfn(other) &&
			    node_start_pfn(other) < end)
				goto none;
		}
		if (w->nr_spans == ARRAY_SIZE(w->span))
			goto none;
		w->span[w->nr_spans].start = start;
		w->span[w->nr_spans].end = end;
		w->span[w->nr_spans].nid = nid;
		w->nr_spans++;
	}
	return;
none:
	w->nr_spans = 0;
}

static void kmmscand_prepare_walk(struct kmmscand_walk *w,
				  struct kmmscand_mm_slot *ms,
				  unsigned long round_budget)
{
	unsigned int k = READ_ONCE(kmmscand_hot_threshold);
	int nid;

	/* A changed scan_size applies from this visit on. */
	ms->budget = kmmscand_clamp_budget(ms->budget,
					   READ_ONCE(kmmscand_scan_size));
	w->ms = ms;
	w->budget = min_t(unsigned long, ms->budget, round_budget);
	w->stop_addr = 0;
	w->quick = ms->quick;
	w->hist_n = READ_ONCE(kmmscand_hot_history);
	w->hot_k = min(k, w->hist_n);
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
	w->queue_full = false;
	w->pmd_cleared = false;
	w->scanned = 0;
	w->pmd_skipped = 0;
	w->young = 0;
	w->thp_young = 0;
	w->warm = 0;
	w->candidates = 0;
	w->drops = 0;
	nodes_clear(w->toptier);
	nodes_clear(w->ample);
	for_each_node_state(nid, N_MEMORY) {
		if (!node_is_toptier(nid))
			continue;
		node_set(nid, w->toptier);
		/*
		 * With room to spare on the target, a page found young again
		 * after a pass cleared it is hot: the K-of-N rule rations
		 * promotion only when the top tier is tight.  An mm's first
		 * pass only clears: anything it finds young may be a page
		 * touched once when it was set up.
		 */
		if (ms->passes && k > 1 && kmmscand_node_ample(nid))
			node_set(nid, w->ample);
	}
	kmmscand_prepare_spans(w);
	kmmscand_owner_nodes(ms->slot.mm, &w->owner_cpuset, &w->owner_allowed,
			     &w->owner_mof);
}

static void kmmscand_flush_counts(struct kmmscand_walk *w)
{
	struct kmmscand_mm_slot *ms = w->ms;

	ms->scanned += w->scanned;
	ms->pmd_skipped += w->pmd_skipped;
	ms->young += w->young;
	ms->warm += w->warm;
	ms->cand_cur += w->candidates;
	count_vm_events(KMMSCAND_PTE_SCANNED, w->scanned);
	count_vm_events(KMMSCAND_PMD_SKIPPED, w->pmd_skipped);
	count_vm_events(KMMSCAND_YOUNG, w->young);
	count_vm_events(KMMSCAND_THP_YOUNG, w->thp_young);
	count_vm_events(KMMSCAND_CANDIDATE, w->candidates);
	count_vm_events(KMMSCAND_CANDIDATE_DROP, w->drops);
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

	/* The history of this mm's pages is charged to its memcg. */
	memcg = get_mem_cgroup_from_mm(mm);
	old_memcg = set_active_memcg(memcg);
	if (!ms->in_pass)
		kmmscand_pass_start(ms);
	kmmscand_prepare_walk(w, ms, round_budget);
	err = walk_page_range(mm, ms->cursor, mm->task_size,
			      &kmmscand_walk_ops, w);
	kmmscand_flush_counts(w);
	*queued |= w->candidates && !w->detect_only;
	ms->watch = w->pmd_skip && arch_has_hw_nonleaf_pmd_young() &&
		    !mm_has_notifiers(mm);
	used = min_t(unsigned long, ms->budget, round_budget) - w->budget;

	if (err == KMMSCAND_WALK_STOP && w->stop_addr < mm->task_size) {
		/* Budget used up, lock contended or queue full: go on later. */
		ms->cursor = PAGE_ALIGN(w->stop_addr);
	} else {
		ended = true;
	}
	/*
	 * Clearing a non-leaf PMD Accessed bit without an invalidation
	 * leaves the CPU free to keep using a cached copy of the entry,
	 * and then only the PTE Accessed bits get set: a later pass would
	 * skip a table with young PTEs.  One flush of the mm per visit that
	 * cleared any (only full passes do) makes the next walk through the
	 * table set it again.
	 */
	if (w->pmd_cleared)
		flush_tlb_mm(mm);
	mmap_read_unlock(mm);
	if (ended)
		kmmscand_pass_end(ms);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
out:
	/* The final put may run __mmput(); keep that off this thread. */
	mmput_async(mm);
	return used;
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
	return ms->in_pass || time_after_eq(jiffies, ms->next_scan);
}

/*
 * A slow tier came online after processes were created unregistered:
 * register every user mm that is neither registered nor opted out, a few
 * at a time (registration allocates, which the RCU walk of the task list
 * cannot do).
 */
static void kmmscand_register_all(void)
{
	struct mm_struct *batch[16];
	unsigned int i, n, done;
	struct task_struct *p;

	do {
		n = 0;
		rcu_read_lock();
		for_each_process(p) {
			struct mm_struct *mm;

			if (p->flags & PF_KTHREAD)
				continue;
			task_lock(p);
			mm = p->mm;
			if (mm && !test_bit(MMF_VM_KMMSCAND, &mm->flags) &&
			    !test_bit(MMF_KMMSCAND_OFF, &mm->flags) &&
			    mmget_not_zero(mm))
				batch[n++] = mm;
			task_unlock(p);
			if (n == ARRAY_SIZE(batch))
				break;
		}
		rcu_read_unlock();
		for (i = 0, done = 0; i < n; i++) {
			__kmmscand_enter(batch[i]);
			done += test_bit(MMF_VM_KMMSCAND, &batch[i]->flags);
			mmput_async(batch[i]);
		}
		cond_resched();
		/* Stop when out of memory rather than retry the same mms. */
	} while (n == ARRAY_SIZE(batch) && done && !kthread_should_stop());
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
	 * period, in case a slow tier came online.
	 */
	if (!kmmscand_have_slow_tier()) {
		kmmscand_tiered = false;
		return max(msecs_to_jiffies(READ_ONCE(kmmscand_scan_period_max_ms)),
			   min_sleep);
	}
	if (!kmmscand_tiered) {
		kmmscand_tiered = true;
		kmmscand_register_all();
	}

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

/* sysfs: /sys/kernel/mm/kmmscand/ */

static void kmmscand_tunables_changed(void)
{
	WRITE_ONCE(kmmscand_kick, true);
	wake_up_interruptible(&kmmscand_wait);
	kmmscand_migrate_wake(true);
}

/*
 * One descriptor per tunable: where it lives, its type and its range.  A
 * bound may be another tunable (scan_period_min_ms <= scan_period_max_ms,
 * hot_threshold <= hot_history), read under kmmscand_mutex, which every
 * store holds, so two stores can never leave the pair inverted.
 */
enum kmmscand_tunable_type {
	KMMSCAND_T_UINT,
	KMMSCAND_T_BOOL,
	KMMSCAND_T_NODE,	/* -1 or a top-tier node with memory */
};

struct kmmscand_tunable {
	struct kobj_attribute attr;
	void *var;
	enum kmmscand_tunable_type type;
	unsigned int min, max;
	const unsigned int *min_var, *max_var;
};

#define KMMSCAND_UINT(_name, _var, _min, _max, _min_var, _max_var)	\
	{								\
		.attr = __ATTR(_name, 0644, kmmscand_tunable_show,	\
			       kmmscand_tunable_store),			\
		.var = &(_var), .type = KMMSCAND_T_UINT,		\
		.min = (_min), .max = (_max),				\
		.min_var = (_min_var), .max_var = (_max_var),		\
	}

#define KMMSCAND_BOOL(_name, _var)					\
	{								\
		.attr = __ATTR(_name, 0644, kmmscand_tunable_show,	\
			       kmmscand_tunable_store),			\
		.var = &(_var), .type = KMMSCAND_T_BOOL, .max = 1,	\
	}

static ssize_t kmmscand_tunable_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	struct kmmscand_tunable *t =
		container_of(attr, struct kmmscand_tunable, attr);

	switch (t->type) {
	case KMMSCAND_T_BOOL:
		return sysfs_emit(buf, "%d\n", READ_ONCE(*(bool *)t->var));
	case KMMSCAND_T_NODE:
		return sysfs_emit(buf, "%d\n", READ_ONCE(*(int *)t->var));
	default:
		return sysfs_emit(buf, "%u\n",
				  READ_ONCE(*(unsigned int *)t->var));
	}
}

static bool kmmscand_valid_target(int nid)
{
	return nid == NUMA_NO_NODE ||
	       (nid >= 0 && nid < nr_node_ids && node_online(nid) &&
		node_state(nid, N_MEMORY) && node_is_toptier(nid));
}

static ssize_t kmmscand_tunable_store(struct kobject *kobj,
				      struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	struct kmmscand_tunable *t =
		container_of(attr, struct kmmscand_tunable, attr);
	unsigned int val = 0, lo = t->min, hi = t->max;
	int nid = NUMA_NO_NODE;

	if (t->type == KMMSCAND_T_NODE) {
		if (kstrtoint(buf, 10, &nid) || !kmmscand_valid_target(nid))
			return -EINVAL;
	} else if (kstrtouint(buf, 10, &val)) {
		return -EINVAL;
	}

	mutex_lock(&kmmscand_mutex);
	if (t->min_var)
		lo = max(lo, *t->min_var);
	if (t->max_var)
		hi = min(hi, *t->max_var);
	if (t->type != KMMSCAND_T_NODE && (val < lo || val > hi)) {
		mutex_unlock(&kmmscand_mutex);
		return -EINVAL;
	}
	switch (t->type) {
	case KMMSCAND_T_BOOL:
		WRITE_ONCE(*(bool *)t->var, val);
		break;
	case KMMSCAND_T_NODE:
		WRITE_ONCE(*(int *)t->var, nid);
		break;
	default:
		WRITE_ONCE(*(unsigned int *)t->var, val);
	}
	mutex_unlock(&kmmscand_mutex);
	kmmscand_tunables_changed();
	return count;
}

/* See Documentation/ABI/testing/sysfs-kernel-mm-kmmscand for each file. */
static struct kmmscand_tunable kmmscand_tunables[] = {
	KMMSCAND_BOOL(enabled, kmmscand_enabled),
	KMMSCAND_UINT(scan_period_min_ms, kmmscand_scan_period_min_ms,
		      KMMSCAND_PERIOD_FLOOR_MS, KMMSCAND_PERIOD_CEIL_MS,
		      NULL, &kmmscand_scan_period_max_ms),
	KMMSCAND_UINT(scan_period_max_ms, kmmscand_scan_period_max_ms,
		      KMMSCAND_PERIOD_FLOOR_MS, KMMSCAND_PERIOD_CEIL_MS,
		      &kmmscand_scan_period_min_ms, NULL),
	KMMSCAND_UINT(scan_size, kmmscand_scan_size, KMMSCAND_SCAN_SIZE_MIN,
		      KMMSCAND_SCAN_SIZE_MAX, NULL, NULL),
	KMMSCAND_UINT(hot_history, kmmscand_hot_history, 1,
		      KMMSCAND_HISTORY_MAX, &kmmscand_hot_threshold, NULL),
	KMMSCAND_UINT(hot_threshold, kmmscand_hot_threshold, 1,
		      KMMSCAND_HISTORY_MAX, NULL, &kmmscand_hot_history),
	KMMSCAND_BOOL(pmd_skip, kmmscand_pmd_skip),
	KMMSCAND_BOOL(tlb_flush, kmmscand_tlb_flush),
	KMMSCAND_UINT(migrate_batch, kmmscand_migrate_batch, 1,
		      KMMSCAND_BATCH_MAX, NULL, NULL),
	KMMSCAND_UINT(promote_rate_limit_mbps, kmmscand_promote_rate_mbps, 0,
		      KMMSCAND_RATE_MAX_MBPS, NULL, NULL),
	{
		.attr = __ATTR(target_node, 0644, kmmscand_tunable_show,
			       kmmscand_tunable_store),
		.var = &kmmscand_target_node, .type = KMMSCAND_T_NODE,
	},
};

static struct attribute *kmmscand_attrs[ARRAY_SIZE(kmmscand_tunables) + 1];

static const struct attribute_group kmmscand_attr_group = {
	.attrs = kmmscand_attrs,
	.name = "kmmscand",
};

static int __init kmmscand_init(void)
{
	unsigned int i;
	int err;

	kmmscand_slot_cache = KMEM_CACHE(kmmscand_mm_slot, 0);
	if (!kmmscand_slot_cache) {
		err = -ENOMEM;
		goto err_off;
	}

	err = kmmscand_migrate_init();
	if (err)
		goto err_cache;

	for (i = 0; i < ARRAY_SIZE(kmmscand_tunables); i++)
		kmmscand_attrs[i] = &kmmscand_tunables[i].attr.attr;
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
