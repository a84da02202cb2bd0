// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_record: hotness reported by other sources than the scanner.
 *
 * NUMA balancing's tiering mode samples slow-tier pages by making them
 * PROT_NONE, and migrates a page in the faulting task when its hint fault
 * comes soon enough after the sample.  With the "fault" source selected in
 * /sys/kernel/mm/kmmscand/sources, kmmscand takes those hint faults over:
 * numa_migrate_check() (mm/memory.c, shared by the PTE and the PMD hint
 * fault handlers) offers a hint fault on a slow-tier folio here before it
 * asks mpol_misplaced(); the fault records the access and returns, and the
 * task migrates nothing.  NUMA balancing's hot threshold and promotion rate
 * limit (should_numa_migrate_memory(), called from mpol_misplaced()) are
 * thereby skipped: kmmscand's hotness rule, token bucket, watermark guard,
 * ping-pong check and target rules apply instead, once.  A folio the access
 * makes hot is queued for the migration thread like one the scanner found.
 *
 * When kmmscand cannot take a hint fault (kmmscand disabled, the mm opted
 * out or not registered) it returns it to NUMA balancing, which handles it
 * exactly as without kmmscand (counted in kmmscand_fault_fallback).
 *
 * A folio already queued for promotion needs no further samples: while the
 * source is on, NUMA balancing's scan leaves it accessible
 * (kmmscand_numa_skip_sample()), so that the task takes no second hint
 * fault on a folio that is about to move anyway.
 *
 * The evidence per page is one 64-bit record (layout and combination rule:
 * mm/kmmscand_sources.h) in a table allocated when the source is first
 * selected, direct mapped by PFN and updated with cmpxchg: recording the
 * access never sleeps, allocates or takes a lock.  Queueing a folio found
 * hot does: it takes kmmscand_queue_lock, a global spinlock, and may
 * allocate an xarray node with GFP_NOWAIT.  The record is lossy: a hint
 * fault takes the slot of any other page, the scanner never takes the slot
 * of a page with live evidence, and an update that keeps losing against
 * concurrent ones is dropped; each loss is counted in kmmscand_record_lost.
 */

#define pr_fmt(fmt) "kmmscand: " fmt

#include <linux/atomic.h>
#include <linux/cpuset.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/kmmscand.h>
#include <linux/log2.h>
#include <linux/memory-tiers.h>
#include <linux/mempolicy.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/vmstat.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"
#include "kmmscand_sources.h"

#include <trace/events/kmmscand.h>

/* One slot per this many slow-tier pages when the table is allocated. */
#define KMMSCAND_REC_PAGES_PER_SLOT	8
/* Table size, in bits of the index: 128 KB to 32 MB. */
#define KMMSCAND_REC_BITS_MIN		14
#define KMMSCAND_REC_BITS_MAX		22
/* cmpxchg attempts before an update is given up as lost. */
#define KMMSCAND_REC_TRIES		4

DEFINE_STATIC_KEY_FALSE(kmmscand_fault_source);

/* The record table; never freed once allocated (lockless readers). */
static u64 *kmmscand_rec __read_mostly;
static unsigned int kmmscand_rec_bits __read_mostly;

static unsigned int kmmscand_rec_now(void)
{
	return kmmscand_rec_tick(jiffies_to_msecs(jiffies));
}

static unsigned int kmmscand_rec_span_now(void)
{
	return kmmscand_rec_span(READ_ONCE(kmmscand_hot_history),
				 READ_ONCE(kmmscand_scan_period_max_ms));
}

/*
 * The slot of @folio's pfn in @rec and the tag that identifies the folio
 * there.  The record outlives the folio: nothing clears it when the page
 * is freed.  So the tag is not the pfn alone but a hash of it with the
 * folio's mapping (an anon folio's anon_vma, a file folio's address space)
 * and index, which a page reused by another process or file, or at
 * another place of the same one, does not share: its new owner does not
 * inherit the windows of the old one (a page touched once would otherwise
 * be promoted on the evidence of whoever used the page before).  The
 * folio is stable: the callers hold its page table lock.
 */
static u64 *kmmscand_rec_slot(u64 *rec, struct folio *folio, u32 *tag)
{
	unsigned long pfn = folio_pfn(folio);
	unsigned long owner = (unsigned long)READ_ONCE(folio->mapping) ^
			      hash_long(folio->index, BITS_PER_LONG);

	*tag = hash_long((pfn >> kmmscand_rec_bits) ^ owner, 32) &
	       KMMSCAND_REC_TAG_MASK;
	return &rec[pfn & (BIT(kmmscand_rec_bits) - 1)];
}

/* Does @v hold live evidence of a page other than @tag's? */
static bool kmmscand_rec_other(u64 v, u32 tag, unsigned int now,
			       unsigned int span)
{
	struct kmmscand_rec r;

	kmmscand_rec_unpack(v, &r);
	return r.valid && r.tag != tag && kmmscand_rec_live(v, now, span);
}

/* Record a hint fault on @tag's page in @slot; @consumed: it was queued. */
static void kmmscand_rec_fault(u64 *slot, u32 tag, unsigned int now,
			       unsigned int span, bool consumed)
{
	u64 old = READ_ONCE(*slot), new;
	int i;

	for (i = 0; i < KMMSCAND_REC_TRIES; i++) {
		bool evict = kmmscand_rec_other(old, tag, now, span);

		new = kmmscand_rec_add_fault(old, tag, now, span, consumed);
		if (try_cmpxchg(slot, &old, new)) {
			if (evict)
				count_vm_event(KMMSCAND_RECORD_LOST);
			return;
		}
	}
	count_vm_event(KMMSCAND_RECORD_LOST);
}

/**
 * __kmmscand_record_abit - keep the scanner's view of a page for hint faults
 * @folio: a slow-tier folio the scanner just looked at, under the PTL
 * @history: its history after this pass, bit 0 = this pass
 * @n: hot_history (N) of the pass
 *
 * Stores how many of the last N - 1 passes found the folio young, the
 * earlier windows of a hint fault that comes before the next pass.  Called
 * through kmmscand_record_abit(), only while the hint-fault source is on.
 *
 * Context: atomic (the scanner holds the page table lock); never sleeps.
 */
void __kmmscand_record_abit(struct folio *folio, unsigned int history,
			    unsigned int n)
{
	unsigned int coarse, now, span;
	u64 *rec, *slot, old, new;
	u32 tag;
	int i;

	/* Pairs with kmmscand_rec_alloc(): the table after its size. */
	rec = smp_load_acquire(&kmmscand_rec);
	if (!rec)
		return;
	coarse = kmmscand_history_prior(history, n);
	now = kmmscand_rec_now();
	span = kmmscand_rec_span_now();
	slot = kmmscand_rec_slot(rec, folio, &tag);
	old = READ_ONCE(*slot);
	for (i = 0; i < KMMSCAND_REC_TRIES; i++) {
		if (coarse && kmmscand_rec_other(old, tag, now, span))
			break;		/* another page's evidence stays */
		new = kmmscand_rec_set_coarse(old, tag, coarse, now, span);
		if (new == old || try_cmpxchg(slot, &old, new)) {
			/* A young page's pass is now evidence for its faults. */
			if (history & 1)
				count_vm_event(KMMSCAND_ABIT_RECORDED);
			return;
		}
	}
	count_vm_event(KMMSCAND_RECORD_LOST);
}

/**
 * kmmscand_record_access - record an access to a slow-tier folio
 * @folio: the folio, mapped through @vma; the caller holds the page table
 *	lock of that mapping (so the folio is stable)
 * @vma: the mapping the access went through
 * @addr: the address of the access (the start of a PMD-mapped THP)
 * @nid: the node of the accessing CPU, or NUMA_NO_NODE if not known
 * @src: the source; a source that reports single, sampled accesses
 *	(KMMSCAND_SRC_FAULT).  The scanner feeds its passes otherwise.
 *
 * Records the access in kmmscand's record of the folio and offers the
 * folio for promotion (kmmscand_offer(), as the scanner does) with what
 * the record says under the rule of mm/kmmscand_sources.h (this access
 * counts for the current window, on top of what the scanner or earlier
 * accesses saw) and a target chosen by the scanner's rules, preferring
 * @nid: then the same throttles, watermark guard and counters apply as to
 * the scanner's candidates.
 *
 * Nothing is recorded, and false returned, if @src is not selected in the
 * sources file, the folio is in the top tier, kmmscand is disabled, or the
 * mm is not scanned (opted out with PR_SET_KMMSCAND, or not registered);
 * the caller then handles the access as it would without kmmscand.
 *
 * Context: any context that holds the page table lock of the mapping
 * (a page fault handler); never sleeps.  Queueing a hot folio takes
 * kmmscand_queue_lock, a global spinlock, and may allocate with
 * GFP_NOWAIT (kmmscand_queue_folio()).
 *
 * Return: true if kmmscand took the access over (the caller must not
 * migrate the folio itself), false otherwise.
 */
bool kmmscand_record_access(struct folio *folio, struct vm_area_struct *vma,
			    unsigned long addr, int nid,
			    enum kmmscand_source src)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned int n, k, now, span, faults, coarse;
	struct kmmscand_offer offer;
	bool hot = false, queued = false;
	u64 *rec, *slot;
	int target;
	u32 tag;

	if (src != KMMSCAND_SRC_FAULT || !kmmscand_source_on(src) ||
	    node_is_toptier(folio_nid(folio)))
		return false;
	/* Pairs with kmmscand_rec_alloc(): the table after its size. */
	rec = smp_load_acquire(&kmmscand_rec);
	if (!rec || !READ_ONCE(kmmscand_enabled) || !kmmscand_scanned(mm)) {
		count_vm_event(KMMSCAND_FAULT_FALLBACK);
		return false;
	}
	count_vm_event(KMMSCAND_FAULT_RECORDED);

	n = READ_ONCE(kmmscand_hot_history);
	k = min(READ_ONCE(kmmscand_hot_threshold), n);
	now = kmmscand_rec_now();
	span = kmmscand_rec_span_now();
	slot = kmmscand_rec_slot(rec, folio, &tag);
	kmmscand_rec_evidence(READ_ONCE(*slot), tag, now, span, &faults,
			      &coarse);

	target = kmmscand_target_for_access(folio, vma, addr, nid);
	offer = (struct kmmscand_offer) {
		.folio = folio,
		.mm = mm,
		.addr = addr,
		.src = src,
		.target = target,
		.hot = kmmscand_fault_hot(coarse, faults, n, k, false),
		.hot_ample = kmmscand_fault_hot(coarse, faults, n, k, true),
		/* promote_rate_limit_mbps=0: detect only, queue nothing */
		.detect_only = !READ_ONCE(kmmscand_promote_rate_mbps),
		/* room to spare: kmmscand_node_ample(); no back-off */
	};
	switch (kmmscand_offer(&offer)) {
	case KMMSCAND_OFFER_KEEP:
		break;
	case KMMSCAND_OFFER_QUEUED:
		kmmscand_migrate_nudge();
		fallthrough;
	case KMMSCAND_OFFER_DETECTED:
		queued = true;
		fallthrough;
	case KMMSCAND_OFFER_FULL:
		hot = true;
		break;
	}
	kmmscand_rec_fault(slot, tag, now, span, queued);
	trace_kmmscand_record(folio_pfn(folio), nid, target, src, faults,
			      coarse, hot);
	return true;
}

/**
 * __kmmscand_numa_hint_fault - take a NUMA hint fault if kmmscand may
 * @folio: the folio that faulted, mapped under the page table lock held
 * @vmf: the fault
 * @addr: the faulting address (the start of a PMD-mapped THP)
 *
 * Called through kmmscand_numa_hint_fault() while the hint-fault source is
 * selected.  Only faults on slow-tier folios in tiering mode are taken
 * (folio_use_access_time()); the accessing node is the faulting CPU's.
 *
 * Context: atomic, the page table lock of @vmf held.
 *
 * Return: true if kmmscand took the fault, see kmmscand_record_access().
 */
bool __kmmscand_numa_hint_fault(struct folio *folio, struct vm_fault *vmf,
				unsigned long addr)
{
	if (!folio_use_access_time(folio))
		return false;
	return kmmscand_record_access(folio, vmf->vma, addr, numa_node_id(),
				      KMMSCAND_SRC_FAULT);
}

/**
 * __kmmscand_numa_queued - is a folio NUMA balancing samples already queued?
 * @folio: a folio that NUMA balancing's scan is about to make PROT_NONE,
 *	mapped under the page table lock held
 *
 * Called through kmmscand_numa_skip_sample() while the hint-fault source is
 * selected.  A slow-tier folio in tiering mode (folio_use_access_time())
 * that waits in the promotion queue needs no sample: its hint fault would
 * only find it queued.
 *
 * Context: atomic, the page table lock held; lockless lookup.
 *
 * Return: true if the scan may leave @folio alone.
 */
bool __kmmscand_numa_queued(struct folio *folio)
{
	return folio_use_access_time(folio) &&
	       kmmscand_pfn_queued(folio_pfn(folio));
}

/* The record table, sized by the slow tier's memory at the time. */
static int kmmscand_rec_alloc(void)
{
	unsigned long pages = 0;
	unsigned int bits;
	u64 *rec;
	int nid;

	for_each_node_state(nid, N_MEMORY)
		if (!node_is_toptier(nid))
			pages += node_present_pages(nid);
	bits = order_base_2(max(pages / KMMSCAND_REC_PAGES_PER_SLOT, 1UL));
	bits = clamp_t(unsigned int, bits, KMMSCAND_REC_BITS_MIN,
		       KMMSCAND_REC_BITS_MAX);
	rec = kvcalloc(BIT(bits), sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	kmmscand_rec_bits = bits;
	/* Publish the size before the table; readers load it with acquire. */
	smp_store_release(&kmmscand_rec, rec);
	return 0;
}

/**
 * kmmscand_sources_set - select the sources of hotness
 * @mask: BIT(enum kmmscand_source) of each source, parsed and checked by
 *	the caller (kmmscand_sources_parse())
 *
 * Selecting "fault" the first time allocates the record table; the static
 * key that lets hint faults in follows the selection.  A failed allocation
 * leaves the old selection.  "abit" cannot be selected where the hardware
 * does not set Accessed bits (!arch_has_hw_pte_young()): there every bit
 * the scanner cleared would cost the task a fault on its next access, the
 * very cost kmmscand is there to take off it (MGLRU does not walk page
 * tables there either).
 *
 * Context: process context, serialised by the caller (the sysfs store's
 * mutex); sleeps (allocation, static key update).
 *
 * Return: 0, -EOPNOTSUPP for "abit" without hardware Accessed bits, or
 * -ENOMEM.
 */
int kmmscand_sources_set(unsigned int mask)
{
	unsigned int old = kmmscand_sources;
	int err;

	if ((mask & BIT(KMMSCAND_SRC_ABIT)) && !arch_has_hw_pte_young())
		return -EOPNOTSUPP;
	if ((mask & BIT(KMMSCAND_SRC_FAULT)) && !kmmscand_rec) {
		err = kmmscand_rec_alloc();
		if (err)
			return err;
	}
	WRITE_ONCE(kmmscand_sources, mask);
	if ((old ^ mask) & BIT(KMMSCAND_SRC_FAULT)) {
		if (mask & BIT(KMMSCAND_SRC_FAULT))
			static_branch_enable(&kmmscand_fault_source);
		else
			static_branch_disable(&kmmscand_fault_source);
	}
	return 0;
}
