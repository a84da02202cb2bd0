// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_walk: the page-table walk of one visit of the scanner to an mm.
 *
 * A visit walks at most a budget of PTE slots from the mm's cursor, under
 * mmap_read_trylock(), and test-and-clears the Accessed bits of slow-tier
 * pages (mmu-notifier aware; top-tier pages are only counted, their bits
 * are left to reclaim).  What it finds goes to the history
 * (mm/kmmscand_history.c).
 *
 * PTE tables whose non-leaf PMD Accessed bit stayed clear since the last
 * pass are skipped without being mapped (x86 sets that bit on a page walk
 * through the PMD).  MGLRU uses the same bit for the same purpose, so with
 * MGLRU enabled kmmscand leaves it alone and maps every table.  PMD-mapped
 * THPs are handled in .pmd_entry under the PMD lock and never split.
 */

#include <linux/hugetlb.h>
#include <linux/kthread.h>
#include <linux/memory-tiers.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mmu_notifier.h>
#include <linux/pagewalk.h>
#include <linux/page_idle.h>
#include <linux/secretmem.h>
#include <linux/swap.h>
#include <linux/vmstat.h>

#include <asm/tlbflush.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"

static int kmmscand_test_walk(unsigned long start, unsigned long end,
			      struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	struct vm_area_struct *vma = walk->vma;

	/* Within a PTE table this visit skipped: nothing to do here either. */
	if (end <= w->skip_end)
		return 1;
	if (!kmmscand_vma_nodes(vma, vma->vm_start, &w->owner_cpuset,
				&w->owner_allowed, w->owner_mof, &w->allowed))
		return 1;

	/* Nothing in this VMA may go to a top-tier node: do not touch it. */
	if (!nodes_intersects(w->allowed, w->toptier))
		return 1;
	return 0;
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
		/* A PTE table's top-tier page (kmmscand_note_table()). */
		if (nr == 1)
			w->top_seen = true;
		return false;
	}
	w->slow_seen = true;
	return !is_zero_folio(folio) && !folio_test_ksm(folio) &&
	       !folio_test_hugetlb(folio) && !folio_maybe_dma_pinned(folio) &&
	       !(folio->mapping && !folio_test_anon(folio) &&
		 secretmem_mapping(folio->mapping));
}

/*
 * We just cleared an Accessed bit that others would have found: hand the
 * access on as page_idle_clear_pte_refs_one() does.  Idle page tracking
 * and DAMON count a page as accessed when its Accessed bit is set or its
 * idle flag is clear, so the idle flag goes, whatever the VMA: without
 * that, every slow-tier page kmmscand found young since it was marked
 * idle would look idle to them (and DAMON-based reclaim would pick the
 * hot ones).  Reclaim reads the young flag, which folio_referenced()
 * counts as a referenced mapping, and only where the VMA's accesses
 * count for reclaim: so a slow-tier page kmmscand looked at keeps its
 * place in reclaim and demotion order, and no LRU batch of the scanner's
 * CPU holds a reference to it (folio_mark_accessed() may, through
 * folio_activate(), and a reference there makes the folio's migration
 * fail).
 */
static void kmmscand_keep_referenced(struct vm_area_struct *vma,
				     struct folio *folio)
{
	folio_clear_idle(folio);
	if (vma_has_recency(vma))
		folio_set_young(folio);
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
	unsigned int i;
	bool young;

	/*
	 * A THP on the top tier only counts, from the pfn of the entry read
	 * without the lock: should it be split or zapped meanwhile, the
	 * footprint is off by one THP for one pass.
	 */
	pmde = pmdp_get_lockless(pmd);
	if (pmd_trans_huge(pmde) && !is_huge_zero_pmd(pmde)) {
		i = kmmscand_pfn_span(w, pmd_pfn(pmde));
		if (i < w->nr_spans) {
			w->ms->footprint[w->span[i].nid] += HPAGE_PMD_NR;
			w->scanned++;
			w->budget--;
			return true;
		}
	}

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
	if (young && w->tlb_flush) {
		flush_tlb_range(walk->vma, haddr, haddr + HPAGE_PMD_SIZE);
		w->tlb_flushes++;
	}
	return true;
}

/*
 * Remember that the PMD Accessed bit of the PTE table at [@start, @end)
 * was cleared, for the flush at the end of the pass
 * (kmmscand_flush_cleared()) and for the table's later VMAs
 * (kmmscand_cleared_in_pass()).  The walk goes up in address order, so
 * adjacent tables extend the last range; when all ranges are taken the
 * last one grows over the gap: a flush of more than was cleared costs
 * more but misses nothing.
 */
static void kmmscand_note_cleared(struct kmmscand_mm_slot *ms,
				  unsigned long start, unsigned long end)
{
	unsigned int n = ms->nr_cleared;

	if (n && (ms->cleared[n - 1].end == start ||
		  n == ARRAY_SIZE(ms->cleared))) {
		ms->cleared[n - 1].end = end;
		return;
	}
	ms->cleared[n].start = start;
	ms->cleared[n].end = end;
	ms->nr_cleared++;
}

/**
 * kmmscand_walk_pmd_bit - may the walk trust PMD Accessed bits in an mm?
 * @w: the walk, set up for the visit
 * @mm: the mm it visits
 *
 * Only where the hardware sets the non-leaf bit, pmd_skip is on, MGLRU
 * does not use the bit (@w->pmd_skip), and no secondary MMU maps @mm (it
 * would not set the bit).
 *
 * Context: the scanner thread.
 *
 * Return: true if a clear bit means the table was not used.
 */
bool kmmscand_walk_pmd_bit(const struct kmmscand_walk *w, struct mm_struct *mm)
{
	return IS_ENABLED(CONFIG_ARCH_HAS_NONLEAF_PMD_YOUNG) && w->pmd_skip &&
	       arch_has_hw_nonleaf_pmd_young() && !mm_has_notifiers(mm);
}

/*
 * Did this pass clear the PMD Accessed bit of the PTE table at @addr
 * already?  It notes the whole table's range when it does
 * (kmmscand_note_cleared()), and goes up in address order, so only the
 * last range noted can hold @addr, and does when @addr is below its end.
 */
static bool kmmscand_cleared_in_pass(const struct kmmscand_mm_slot *ms,
				     unsigned long addr)
{
	unsigned int n = ms->nr_cleared;

	return n && addr < ms->cleared[n - 1].end;
}

/*
 * PMD-first: the non-leaf PMD Accessed bit is set by the page walker
 * whenever it translates through this PTE table.  If it is still clear
 * since a full pass cleared it (and flushed the TLB when that pass ended,
 * see kmmscand_flush_cleared() in mm/kmmscand.c), no PTE below was used
 * since, so skip the part of the table in this VMA without mapping it
 * and age the history below it.  Not once this pass cleared the bit
 * itself: the table's PTEs in a later VMA, or past where a visit stopped,
 * have not been examined yet.  And only without mmu notifiers (a
 * secondary MMU does not set the bit).  A table shared by many small
 * VMAs thus costs one load per VMA when unused.  Returns true if the
 * part was skipped.
 */
static bool kmmscand_pmd_skip_table(pmd_t *pmd, pmd_t pmde, unsigned long addr,
				    unsigned long next, struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	spinlock_t *ptl;	/* the PMD lock */

	if (!kmmscand_walk_pmd_bit(w, walk->mm) || !pmd_present(pmde) ||
	    pmd_leaf(pmde) || kmmscand_cleared_in_pass(w->ms, addr))
		return false;
	if (!pmd_young(pmde)) {
		w->pmd_skipped++;
		w->budget--;
		kmmscand_age_range(w, addr, next);
		return true;
	}
	/*
	 * Only full passes clear the bit (and flush the cleared ranges once
	 * when the pass ends, see kmmscand_flush_cleared()); a quick pass
	 * reads it, so that it skips the tables nobody used since the last
	 * full pass without a flush of its own.
	 */
	if (w->quick)
		return false;
	ptl = pmd_lock(walk->mm, pmd);
	pmde = pmdp_get(pmd);
	if (pmd_present(pmde) && !pmd_leaf(pmde) &&
	    pmdp_test_and_clear_young(walk->vma, addr, pmd))
		kmmscand_note_cleared(w->ms, addr & PMD_MASK,
				      (addr & PMD_MASK) + PMD_SIZE);
	spin_unlock(ptl);
	return false;
}

/*
 * Examine the PTEs of [start, end), both page aligned and within one PTE
 * table.  Returns the address up to which the PTEs were examined (@end
 * unless the queue filled up), or 0 if the table went away under us.
 *
 * Most PTEs of a table the walk cannot skip need nothing: a top-tier page
 * is only counted, and a slow-tier page whose Accessed bit is clear only
 * ages its history.  So the loop decides from the PTE value alone before
 * it does more: the tier from the pfn (kmmscand_pfn_span(), no struct
 * page read), counted per table; then the Accessed bit of the value read,
 * so that a clear one costs no atomic test-and-clear and no mmu notifier
 * call, and, in a table with no history to age, no folio lookup either.
 * Those shortcuts are only taken for an mm without mmu notifiers:
 * a secondary MMU (KVM) keeps Accessed bits of its own which the PTE does
 * not show, and ptep_clear_young_notify() is what asks it, so in an mm
 * with notifiers every eligible slow-tier PTE still goes through it.
 */
static unsigned long kmmscand_scan_ptes(pmd_t *pmd, unsigned long start,
					unsigned long end, struct mm_walk *walk)
{
	struct kmmscand_walk *w = walk->private;
	struct vm_area_struct *vma = walk->vma;
	unsigned int top[ARRAY_SIZE(w->span)] = { };
	bool notify = mm_has_notifiers(walk->mm);
	pte_t *start_pte, *pte;
	unsigned long addr;
	bool cleared = false, tracked;
	spinlock_t *ptl;	/* the PTE table lock */
	unsigned int i;

	tracked = kmmscand_table_tracked(w, start);
	start_pte = pte_offset_map_lock(walk->mm, pmd, start, &ptl);
	if (!start_pte)
		return 0;
	w->last_queued = NULL;
	for (pte = start_pte, addr = start; addr < end;
	     pte++, addr += PAGE_SIZE) {
		pte_t ptent = ptep_get(pte);
		struct folio *folio;
		bool young;

		if (!pte_present(ptent))
			continue;
		/* Top-tier pages only count: skip the struct page. */
		i = kmmscand_pfn_span(w, pte_pfn(ptent));
		if (i < w->nr_spans) {
			top[i]++;
			continue;
		}
		/*
		 * A slow-tier page with a clear Accessed bit in a table with
		 * no history: there is nothing to age and nothing to clear,
		 * so only count it.
		 */
		if (!notify && !tracked && !pte_young(ptent)) {
			w->slow_seen = true;
			w->ms->slow_pages++;
			continue;
		}
		folio = vm_normal_folio(vma, addr, ptent);
		if (!folio || folio_is_zone_device(folio) ||
		    !kmmscand_want_young(w, folio, 1))
			continue;
		young = (notify || pte_young(ptent)) &&
			ptep_clear_young_notify(vma, addr, pte);
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
	for (i = 0; i < w->nr_spans; i++) {
		w->ms->footprint[w->span[i].nid] += top[i];
		if (top[i])
			w->top_seen = true;
	}

	/* One flush per PTE table with cleared A bits, never per PTE. */
	if (cleared && w->tlb_flush) {
		flush_tlb_range(vma, start, addr);
		w->tlb_flushes++;
	}
	return addr;
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

	/*
	 * Quick passes: tables with slow-tier pages; idle ones, and tables
	 * with only top-tier pages, in turn.
	 */
	if (kmmscand_table_skip(w, addr)) {
		w->budget--;
		w->skip_end = (addr & PMD_MASK) + PMD_SIZE;
		return 0;
	}
	w->slow_seen = false;
	w->top_seen = false;

	pmde = pmdp_get_lockless(pmd);
	if (IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) && pmd_trans_huge(pmde) &&
	    kmmscand_pmd_huge(pmd, addr, next, walk))
		goto out;

	if (kmmscand_pmd_skip_table(pmd, pmde, addr, next, walk)) {
		/* Still a slow-tier table as far as we know. */
		w->slow_seen = kmmscand_table_slow(w, addr);
		/* The table's later VMAs are skipped with it: record them. */
		w->skip_end = (addr & PMD_MASK) + PMD_SIZE;
		next = w->skip_end;
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
		kmmscand_note_table(w, addr, done);
		return KMMSCAND_WALK_STOP;
	}
out:
	kmmscand_note_table(w, addr, next);
	if (w->queue_full) {
		w->stop_addr = next;
		return KMMSCAND_WALK_STOP;
	}
	return 0;
}

const struct mm_walk_ops kmmscand_walk_ops = {
	.pmd_entry	= kmmscand_pmd_entry,
	.test_walk	= kmmscand_test_walk,
	.walk_lock	= PGWALK_RDLOCK,
};

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

/* What every visit starts from, whether it walks or not. */
static void kmmscand_walk_begin(struct kmmscand_walk *w,
				struct kmmscand_mm_slot *ms)
{
	w->ms = ms;
	w->stop_addr = 0;
	w->skip_end = 0;
	w->quick = ms->quick;
	w->top_wake = ms->top_wake;
	w->top_seen = false;
	w->slow_seen = false;
	w->hist_n = READ_ONCE(kmmscand_hot_history);
	/*
	 * MGLRU's page table walk (walk_pmd_range()) skips PTE tables whose
	 * non-leaf PMD Accessed bit is clear: clearing it would hide the
	 * table from reclaim.  Leave those bits to MGLRU.
	 */
	w->pmd_skip = READ_ONCE(kmmscand_pmd_skip) && !lru_gen_enabled();
	w->last_queued = NULL;
	w->tbl = NULL;
	w->tbl_idx = ULONG_MAX;
	bitmap_zero(w->young_map, PTRS_PER_PTE);
	w->frag_young = false;
	w->tbl_skipped = false;
	w->queue_full = false;
	w->scanned = 0;
	w->pmd_skipped = 0;
	w->young = 0;
	w->thp_young = 0;
	w->warm = 0;
	w->candidates = 0;
	w->tlb_flushes = 0;
}

/**
 * kmmscand_prepare_walk - set up the walk of one visit
 * @w: the walk state
 * @ms: the slot of the mm to visit
 * @round_budget: PTE slots left in the round
 *
 * Takes a snapshot of the tunables and of the top tier for the visit, and
 * of the nodes the mm's owner may use.
 *
 * Context: the scanner thread, holding a reference on the mm.
 */
void kmmscand_prepare_walk(struct kmmscand_walk *w, struct kmmscand_mm_slot *ms,
			   unsigned long round_budget)
{
	unsigned int k = READ_ONCE(kmmscand_hot_threshold);
	int nid;

	/*
	 * A changed scan_size applies from this visit on; a pass that woke
	 * the idle tables (kmmscand_note_table()) goes on at full budget.
	 */
	ms->budget = kmmscand_visit_budget(ms->budget,
					   READ_ONCE(kmmscand_scan_size),
					   ms->wake_seq == ms->seq);
	kmmscand_walk_begin(w, ms);
	w->budget = min_t(unsigned long, ms->budget, round_budget);
	w->hot_k = min(k, w->hist_n);
	w->tlb_flush = READ_ONCE(kmmscand_tlb_flush);
	w->detect_only = !READ_ONCE(kmmscand_promote_rate_mbps);
	w->target_override = READ_ONCE(kmmscand_target_node);
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

/* What the PMD of a recorded PTE table shows (kmmscand_pmd_use()). */
enum kmmscand_pmd_use {
	KMMSCAND_PMD_GONE,	/* no VMA or no table there: a walk skips it */
	KMMSCAND_PMD_UNUSED,	/* a PTE table, Accessed bit clear */
	KMMSCAND_PMD_USED,	/* anything else: the walk must look */
};

/*
 * The PMD of the PTE table at @start, reached from the top without walking
 * the VMAs.  Only where a VMA covers part of the table: munmap() frees
 * page tables under a downgraded mmap_lock once their range has no VMA
 * left, and a walk would not go there either.  The entry is read without
 * its lock, as kmmscand_pmd_entry() reads it first.
 */
static enum kmmscand_pmd_use kmmscand_pmd_use(struct mm_struct *mm,
					      unsigned long start)
{
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud, pudv;
	pmd_t pmde;

	if (!find_vma_intersection(mm, start, start + PMD_SIZE))
		return KMMSCAND_PMD_GONE;
	pgd = pgd_offset(mm, start);
	if (pgd_none(pgdp_get(pgd)))
		return KMMSCAND_PMD_GONE;
	if (pgd_bad(pgdp_get(pgd)))
		return KMMSCAND_PMD_USED;
	p4d = p4d_offset(pgd, start);
	if (p4d_none(p4dp_get(p4d)))
		return KMMSCAND_PMD_GONE;
	if (p4d_bad(p4dp_get(p4d)))
		return KMMSCAND_PMD_USED;
	pud = pud_offset(p4d, start);
	pudv = pudp_get(pud);
	if (pud_none(pudv))
		return KMMSCAND_PMD_GONE;
	if (!pud_present(pudv) || pud_leaf(pudv) || pud_bad(pudv))
		return KMMSCAND_PMD_USED;
	pmde = pmdp_get_lockless(pmd_offset(pud, start));
	if (pmd_none(pmde))
		return KMMSCAND_PMD_GONE;
	if (!pmd_present(pmde) || pmd_leaf(pmde) || pmd_young(pmde))
		return KMMSCAND_PMD_USED;
	return KMMSCAND_PMD_UNUSED;
}

/**
 * kmmscand_walk_idle - end a quick pass that would find nothing, unwalked
 * @w: the walk state
 * @ms: the slot of the mm, whose quick pass is starting
 * @used: set to the PMD entries read, if the pass is done
 *
 * A quick pass only looks at the tables with a record of a slow-tier
 * table; it skips those that are idle and not in their turn
 * (kmmscand_table_skip()), and those whose PMD Accessed bit stayed clear
 * since the full pass that cleared it (kmmscand_pmd_skip_table()).  When
 * one or the other holds for all of them, the walk would find nothing
 * young: go from the records to their PMDs instead, and skip or age
 * them as the walk would (its branches before kmmscand_scan_ptes() in
 * kmmscand_pmd_entry()), without setting up the walk and going through
 * every VMA of the mm: with many mms whose slow-tier tables stay unused,
 * or one with many VMAs, that is most of the scanner's work, a quick pass
 * per mm every scan_period_min_ms.
 *
 * Only where the walk itself may skip tables by the PMD bit
 * (kmmscand_walk_pmd_bit()).
 *
 * Context: the scanner thread, under mmap_read_lock().
 *
 * Return: true if the pass is done; false if it needs a walk, with
 * nothing changed.
 */
bool kmmscand_walk_idle(struct kmmscand_walk *w, struct kmmscand_mm_slot *ms,
			unsigned long *used)
{
	struct mm_struct *mm = ms->slot.mm;
	struct kmmscand_table *t;
	unsigned long start, n = 0;

	kmmscand_walk_begin(w, ms);
	if (!kmmscand_walk_pmd_bit(w, mm))
		return false;
	/* kmmscand_table_skip() only marks a skipped record: it can repeat. */
	for (t = kmmscand_table_next_slow(ms, NULL); t;
	     t = kmmscand_table_next_slow(ms, t)) {
		start = t->idx << PMD_SHIFT;
		if (kmmscand_pmd_use(mm, start) == KMMSCAND_PMD_USED &&
		    !kmmscand_table_skip(w, start))
			return false;
	}

	for (t = kmmscand_table_next_slow(ms, NULL); t;
	     t = kmmscand_table_next_slow(ms, t)) {
		start = t->idx << PMD_SHIFT;
		n++;
		if (kmmscand_pmd_use(mm, start) == KMMSCAND_PMD_GONE ||
		    kmmscand_table_skip(w, start))
			continue;
		w->pmd_skipped++;
		kmmscand_age_range(w, start, start + PMD_SIZE);
		w->slow_seen = kmmscand_table_slow(w, start);
		kmmscand_note_table(w, start, start + PMD_SIZE);
	}
	*used = max(n, 1UL);
	return true;
}

/**
 * kmmscand_flush_counts - add a visit's counts to its pass and to vmstat
 * @w: the walk state after the walk
 *
 * Context: the scanner thread.
 */
void kmmscand_flush_counts(struct kmmscand_walk *w)
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
	count_vm_events(KMMSCAND_TLB_FLUSH, w->tlb_flushes);
}
