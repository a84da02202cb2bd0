// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_history: what the scanner remembers of the slow-tier pages it
 * found young, and which of them it calls hot.
 *
 * A slow-tier page young in K of the last N passes is hot (the rule is
 * kmmscand_is_hot() in mm/kmmscand_policy.h): it is queued for promotion
 * to its target node (mm/kmmscand_target.c).
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

#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/xarray.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"

#include <trace/events/kmmscand.h>

#define KMMSCAND_HIST_MAX	BIT(20)
#define KMMSCAND_HIST_MASK	0xffUL
#define KMMSCAND_SEQ_SHIFT	8
#define KMMSCAND_SEQ_MASK	0xffUL

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

/**
 * kmmscand_age_range - age the history of pages under a skipped PTE table
 * @w: the walk in progress
 * @start: first address of the table's range
 * @end: end of the range
 *
 * Shifts an idle pass into every history entry of [@start, @end): a PTE
 * table skipped because its PMD Accessed bit stayed clear.  That is only
 * right because the bit is reliable: kmmscand_visit() flushes the TLB
 * after clearing PMD Accessed bits, so no CPU keeps translating through a
 * cached copy of the entry without setting the bit again.
 *
 * Context: the scanner thread, under mmap_read_lock().
 */
void kmmscand_age_range(struct kmmscand_walk *w, unsigned long start,
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

/**
 * kmmscand_account - record one examined mapping of a slow-tier folio
 * @w: the walk in progress
 * @folio: the folio
 * @addr: the address of the mapping (the first address of a THP)
 * @nr: the pages the mapping covers
 * @young: whether its Accessed bit was set
 *
 * Updates the page's history and queues the folio for promotion when the
 * history makes it hot.  A full queue stops the walk (@w->queue_full).
 *
 * Context: the scanner thread, under the page table lock, so the folio is
 * stable and mapped.
 */
void kmmscand_account(struct kmmscand_walk *w, struct folio *folio,
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
						folio_nr_pages(folio),
						KMMSCAND_SRC_ABIT)) {
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
	kmmscand_record_abit(folio, nhist, w->hist_n);
}

/**
 * kmmscand_note_table - remember whether a PTE table held slow-tier pages
 * @w: the walk in progress, @w->slow_seen set for the table
 * @addr: an address in the table (or THP)
 *
 * For the quick passes, which only look at such tables.
 *
 * Context: the scanner thread, under mmap_read_lock().
 */
void kmmscand_note_table(struct kmmscand_walk *w, unsigned long addr)
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

/**
 * kmmscand_xa_sweep - forget what the last pass did not see again
 * @xa: an mm's history or table record
 * @seq: the stamp of the pass that ended
 *
 * Erases the entries of @xa whose pass stamp is not @seq.
 *
 * Context: the scanner thread; may sleep.
 *
 * Return: the number of entries erased.
 */
unsigned long kmmscand_xa_sweep(struct xarray *xa, u8 seq)
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

#include "tests/kmmscand-kunit.h"
#include "tests/kmmscand-sources-kunit.h"
