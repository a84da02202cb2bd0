// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_target: whether and where a slow-tier folio that a source found
 * hot is promoted.
 *
 * Every source offers its evidence to one step, kmmscand_offer(): a
 * target, what the source's hotness rule says with and without room to
 * spare there, and the folio.  The step refuses a folio with no target,
 * one whose mm backs off that target, one not hot enough for the room
 * the target has, and one that cannot migrate in its present state
 * (kmmscand_folio_promotable()); it queues the others for the migration
 * thread, or only counts them while promotion is off.  So the rules that
 * are not about evidence (the back-off, the ample-room floor, what may
 * move) hold for every source alike.
 *
 * The target differs by what the source knows.  The scanner knows the
 * mm's footprint: kmmscand_target() takes the node that holds most of the
 * mm's top-tier pages (kmmscand_choose_target(), mm/kmmscand_policy.h),
 * with node masks prepared once per walk.  A hint fault knows the node of
 * the accessing CPU: kmmscand_target_for_access() prefers it.  Both keep
 * within the nodes the owner's cpuset and memory policies allow.  When
 * the promotions of an mm to a node keep failing, the migration thread
 * reports it here and the mm's folios are not offered to that node for a
 * while.
 */

#include <linux/cpuset.h>
#include <linux/jiffies.h>
#include <linux/memory-tiers.h>
#include <linux/mempolicy.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/secretmem.h>
#include <linux/vmstat.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"
#include "kmmscand_sources.h"

#include <trace/events/kmmscand.h>

/* Skip a target for this long after it kept failing for an mm (ms). */
#define KMMSCAND_BACKOFF_MS		5000
/* Failed batches in a row before a target is backed off. */
#define KMMSCAND_BACKOFF_STREAK		3

/**
 * kmmscand_target_failed - note that promotions of an mm to a node failed
 * @mm: the mm, used only as a hash key (it may have exited; a queued
 *	candidate holds it, so it was not freed and reused)
 * @nid: the target node
 *
 * Called by the migration thread when a whole batch towards @nid failed.
 * After KMMSCAND_BACKOFF_STREAK such batches, each within
 * KMMSCAND_BACKOFF_MS of the previous one, the scanner stops queueing
 * that mm's candidates for @nid for KMMSCAND_BACKOFF_MS.  Failures further
 * apart start a new streak, so that occasional failures never add up.
 *
 * Context: process context, never sleeps; takes kmmscand_mm_lock.  If
 * @mm was unregistered meanwhile, nothing is found.
 */
void kmmscand_target_failed(struct mm_struct *mm, int nid)
{
	struct kmmscand_mm_slot *ms;

	spin_lock(&kmmscand_mm_lock);
	ms = kmmscand_slot_lookup(mm);
	if (ms) {
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

/**
 * kmmscand_backed_off - is a target backed off for an mm?
 * @ms: the mm's slot
 * @nid: the target node
 *
 * Context: the scanner thread; lockless (kmmscand_target_failed() writes).
 *
 * Return: true while the mm's candidates must not be queued for @nid.
 */
bool kmmscand_backed_off(struct kmmscand_mm_slot *ms, int nid)
{
	return READ_ONCE(ms->backoff_nid) == nid &&
	       time_before(jiffies, READ_ONCE(ms->backoff_until));
}

/*
 * The task whose cpuset and task policy apply to @mm, with a reference, or
 * NULL.  With CONFIG_MEMCG that is mm->owner, which the kernel keeps up to
 * date.  Without it, a thread of the thread group that registered @mm
 * (struct kmmscand_mm_slot's @owner) that still uses @mm: the group
 * leader may have exited while the other threads run on.
 */
static struct task_struct *kmmscand_mm_owner(struct mm_struct *mm)
{
	struct task_struct *p = NULL;
#ifdef CONFIG_MEMCG
	rcu_read_lock();
	p = rcu_dereference(mm->owner);
	if (p)
		get_task_struct(p);
	rcu_read_unlock();
#else
	struct kmmscand_mm_slot *ms;
	struct task_struct *g, *t;
	struct pid *pid = NULL;

	spin_lock(&kmmscand_mm_lock);
	ms = kmmscand_slot_lookup(mm);
	if (ms)
		pid = get_pid(ms->owner);
	spin_unlock(&kmmscand_mm_lock);
	rcu_read_lock();
	g = pid_task(pid, PIDTYPE_TGID);
	if (g) {
		for_each_thread(g, t) {
			if (READ_ONCE(t->mm) == mm) {
				p = t;
				get_task_struct(p);
				break;
			}
		}
	}
	rcu_read_unlock();
	put_pid(pid);
#endif
	return p;
}

/**
 * kmmscand_owner_nodes - where the owner of an mm may have its pages
 * @mm: the mm, pinned by the caller
 * @cpuset: set to the nodes of the owner's cpuset (mems_allowed)
 * @nodes: set to @cpuset limited by a movable task mempolicy
 * @mof: set to whether the owner's task mempolicy lets its pages move
 *
 * The owner is mm->owner with CONFIG_MEMCG, else a task of the process
 * that registered @mm.  If there is none (it exited, or another process
 * uses @mm through CLONE_VM), every node with memory is allowed and the
 * task policy is taken as the default one (the VMA policy still applies).
 *
 * Context: process context; takes the owner's task_lock(), and without
 * CONFIG_MEMCG kmmscand_mm_lock.
 */
void kmmscand_owner_nodes(struct mm_struct *mm, nodemask_t *cpuset,
			  nodemask_t *nodes, bool *mof)
{
	struct task_struct *p;

	*cpuset = node_states[N_MEMORY];
	*nodes = *cpuset;
	*mof = true;
	p = kmmscand_mm_owner(mm);
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

/**
 * kmmscand_vma_nodes - the nodes the pages of a VMA may be promoted to
 * @vma: the VMA, under mmap_lock (or its VMA lock)
 * @addr: the address in @vma whose memory policy applies
 * @cpuset: the nodes of the owner's cpuset (kmmscand_owner_nodes())
 * @owner: @cpuset limited by the owner's task policy
 * @owner_mof: whether the owner's task policy lets pages move
 * @allowed: set to the nodes allowed, if the pages may move at all
 *
 * The policy of the VMA at @addr applies if there is one, else the owner's
 * task policy.  The scanner asks once per VMA, with the policy at its
 * start (as vma_policy_mof() does; a shared policy of shmem may differ by
 * offset); the migrator asks again for each candidate before it moves it.
 *
 * Context: process context, under the VMA's mmap_lock.
 *
 * Return: false if the pages of @vma must not move (the VMA is never
 * scanned, or its policy does not allow moving), with @allowed undefined.
 */
bool kmmscand_vma_nodes(struct vm_area_struct *vma, unsigned long addr,
			const nodemask_t *cpuset, const nodemask_t *owner,
			bool owner_mof, nodemask_t *allowed)
{
	struct mempolicy *pol;
	bool moves;
	pgoff_t ilx;

	if (!kmmscand_vma_eligible(vma))
		return false;
	*allowed = *owner;
	pol = __get_vma_policy(vma, addr, &ilx);
	if (pol) {
		moves = kmmscand_policy_moves(pol);
		*allowed = *cpuset;
		kmmscand_policy_nodes(pol, allowed);
	} else {
		moves = owner_mof;
	}
	mpol_cond_put(pol);
	return moves;
}

static int kmmscand_distance(int from, int to)
{
	return node_distance(from, to);
}

/**
 * kmmscand_target - the target node of a slow-tier page found hot
 * @w: the walk in progress, which knows the mm's footprint and the nodes
 *	allowed for the VMA
 * @src: the node the page is on
 *
 * Context: the scanner thread, under the page table lock.
 *
 * Return: a top-tier node, or NUMA_NO_NODE if none is allowed.
 */
int kmmscand_target(struct kmmscand_walk *w, int src)
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

/**
 * kmmscand_node_ample - may promotion to a node skip the K-of-N rule?
 * @nid: a top-tier node with memory
 *
 * As NUMA balancing's pgdat_free_space_enough(): free memory above the
 * promotion watermark of some zone beyond a sixteenth of the node.
 *
 * Context: any; a lockless look at the zone counters.
 *
 * Return: true if @nid has room to spare.
 */
bool kmmscand_node_ample(int nid)
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
 * The node masks of kmmscand_target_for_access(), one pair per CPU: a hint
 * fault runs on the task's stack, where two nodemask_t would take 256
 * bytes with CONFIG_NODES_SHIFT=10.
 */
struct kmmscand_access_masks {
	nodemask_t allowed;
	nodemask_t toptier;
};

static DEFINE_PER_CPU(struct kmmscand_access_masks, kmmscand_access_masks);

/**
 * kmmscand_target_for_access - the target of a folio whose accessor is known
 * @folio: the folio, on the slow tier
 * @vma: the mapping the access went through
 * @addr: the address of the access
 * @nid: the node of the accessing CPU, or NUMA_NO_NODE
 *
 * The scanner's rules (memory policy of the mapping, else of the task;
 * cpuset of the accessing task; top tier only; target_node) with @nid
 * first (kmmscand_access_target(), mm/kmmscand_sources.h).
 *
 * Context: the accessing task, under the page table lock that maps
 * @folio; never sleeps (but for a shared policy's lookup on PREEMPT_RT).
 *
 * Return: a top-tier node, or NUMA_NO_NODE if none is allowed.
 */
int kmmscand_target_for_access(struct folio *folio, struct vm_area_struct *vma,
			       unsigned long addr, int nid)
{
	struct kmmscand_access_masks *m;
	struct mempolicy *pol;
	int n, target;
	pgoff_t ilx;

	/* Before the per-CPU masks: a shared policy's lookup may sleep on RT. */
	pol = get_vma_policy(vma, addr, folio_order(folio), &ilx);
	if (!kmmscand_policy_moves(pol)) {
		mpol_cond_put(pol);
		return NUMA_NO_NODE;
	}
	m = get_cpu_ptr(&kmmscand_access_masks);
	m->allowed = cpuset_current_mems_allowed;
	kmmscand_policy_nodes(pol, &m->allowed);
	nodes_clear(m->toptier);
	for_each_node_state(n, N_MEMORY)
		if (node_is_toptier(n))
			node_set(n, m->toptier);
	target = kmmscand_access_target(nid, &m->allowed, &m->toptier,
					folio_nid(folio),
					READ_ONCE(kmmscand_target_node),
					kmmscand_distance);
	put_cpu_ptr(&kmmscand_access_masks);
	mpol_cond_put(pol);
	return target;
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

/**
 * kmmscand_offer - offer a folio a source found hot for promotion
 * @o: the folio, its mapping, the source's target and hotness verdicts
 *
 * The one step between a source's evidence and the queue: no target, a
 * target @o->ms backs off (kmmscand_backed_off()), not hot enough for the
 * room the target has (@o->hot, or @o->hot_ample if the target has room
 * to spare: in @o->ample, or kmmscand_node_ample() when that is NULL), or
 * a folio that cannot migrate now (kmmscand_folio_promotable()): the
 * folio stays where it is and the source keeps its evidence.  Otherwise
 * it is a candidate: counted and, unless @o->detect_only, queued for the
 * migration thread (which the caller wakes when it sees fit).  A full
 * queue drops it, counted and traced.
 *
 * Context: under the page table lock that maps @o->folio, so that it is
 * stable; never sleeps.  Takes kmmscand_queue_lock and may allocate with
 * GFP_NOWAIT (kmmscand_queue_folio()).
 *
 * Return: what became of the folio.
 */
enum kmmscand_offered kmmscand_offer(const struct kmmscand_offer *o)
{
	struct folio *folio = o->folio;
	bool ample;

	if (o->target == NUMA_NO_NODE ||
	    (o->ms && kmmscand_backed_off(o->ms, o->target)))
		return KMMSCAND_OFFER_KEEP;
	if (!o->hot) {
		ample = o->ample ? node_isset(o->target, *o->ample) :
				   kmmscand_node_ample(o->target);
		if (!o->hot_ample || !ample)
			return KMMSCAND_OFFER_KEEP;
	}
	if (!kmmscand_folio_promotable(folio))
		return KMMSCAND_OFFER_KEEP;
	if (o->detect_only) {
		count_vm_event(KMMSCAND_CANDIDATE);
		return KMMSCAND_OFFER_DETECTED;
	}
	if (!kmmscand_queue_folio(folio, o->mm, o->addr, o->target,
				  folio_nr_pages(folio), o->src)) {
		count_vm_event(KMMSCAND_CANDIDATE_DROP);
		trace_kmmscand_candidate_drop(folio_pfn(folio), folio_nid(folio),
					      KMMSCAND_DROP_FULL);
		return KMMSCAND_OFFER_FULL;
	}
	count_vm_event(KMMSCAND_CANDIDATE);
	return KMMSCAND_OFFER_QUEUED;
}
