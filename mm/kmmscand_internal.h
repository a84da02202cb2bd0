/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the files of kmmscand.  Not for use outside mm/.
 *
 * The parts, each of which calls only parts listed before it:
 *
 *   kmmscand_trace.c     the tracepoints
 *   kmmscand_queue.c     the queue of promotion candidates and the batch
 *                        the migration thread works on
 *   kmmscand_mm.c        the tunables, the registry of mms and the
 *                        scanner's wake-up (kmmscand_scanner_wake())
 *   kmmscand_target.c    whether and where a folio a source found hot is
 *                        promoted: the target node, the step every
 *                        source offers its folios to (kmmscand_offer()),
 *                        and backing off a target that keeps failing
 *   kmmscand_throttle.c  the rate limit and the guards of the target node
 *   kmmscand_migrate.c   the migration thread
 *   kmmscand_record.c    the record of accesses reported by other sources
 *                        than the scanner (NUMA hint faults)
 *   kmmscand_history.c   the per-page access history and the hotness rule
 *   kmmscand_walk.c      the page-table walk of one visit to an mm
 *   kmmscand_sysfs.c     /sys/kernel/mm/kmmscand/
 *   kmmscand.c           the scanner thread, its passes and rounds, init
 *
 * So the scanner and the other sources feed the migrator through
 * kmmscand_offer() and the queue, and never the other way round: the
 * migrator reports a target that failed for an mm to kmmscand_target.c,
 * which keeps the back-off in the mm's registry slot.  The scanner tells
 * the record what its passes saw; the record never calls the scanner.
 *
 * Lock order: kmmscand_batch_mutex, then mmap_lock, the PTL,
 * kmmscand_queue_lock, kmmscand_mm_lock.
 */
#ifndef _MM_KMMSCAND_INTERNAL_H
#define _MM_KMMSCAND_INTERNAL_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/jump_label.h>
#include <linux/kmmscand.h>	/* enum kmmscand_drop_reason, _source */
#include <linux/nodemask.h>
#include <linux/pgtable.h>
#include <linux/rbtree_types.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "mm_slot.h"

struct folio;
struct mm_struct;
struct mm_walk_ops;
struct vm_area_struct;

/* Tunables (mm/kmmscand_mm.c), written from sysfs, read with READ_ONCE(). */
extern bool kmmscand_enabled;
extern unsigned int kmmscand_scan_period_min_ms;
extern unsigned int kmmscand_scan_period_max_ms;
extern unsigned int kmmscand_scan_size;
extern unsigned int kmmscand_hot_history;
extern unsigned int kmmscand_hot_threshold;
extern bool kmmscand_pmd_skip;
extern bool kmmscand_tlb_flush;
extern unsigned int kmmscand_migrate_batch;
extern unsigned int kmmscand_promote_rate_mbps;
extern int kmmscand_target_node;
/* BIT(enum kmmscand_source) of the sources selected in sysfs */
extern unsigned int kmmscand_sources;

static inline bool kmmscand_source_on(enum kmmscand_source src)
{
	return READ_ONCE(kmmscand_sources) & BIT(src);
}

/* Capacity of the scanner -> migrator queue, in folios. */
#define KMMSCAND_QUEUE_LEN	8192
/* Largest migrate_batch, in folios (and pages). */
#define KMMSCAND_BATCH_MAX	4096

/* One young bitmap: a bit per page of a PTE table. */
#define KMMSCAND_PLANE_LONGS	BITS_TO_LONGS(PTRS_PER_PTE)
#define KMMSCAND_PLANE_BYTES	(KMMSCAND_PLANE_LONGS * sizeof(unsigned long))

/**
 * struct kmmscand_table - what the scanner knows of one PTE table
 * @node: in the mm's kmmscand_mm_slot.tables, ordered by @idx
 * @idx: the table's address >> PMD_SHIFT
 * @planes: NULL, or @n bitmaps of PTRS_PER_PTE bits, one per visit: the
 *	pages of the table found young in that visit
 * @seq: the last pass that visited the table; @planes[@head] is its bitmap,
 *	@planes[@head - 1] the one of the visit before (modulo @n), ...
 * @slow_seq: the last pass that found slow-tier pages in the table
 * @n: bitmaps in @planes
 * @head: see @seq
 * @idle: visits in a row that examined the PTEs and found no young
 *	slow-tier page, up to KMMSCAND_IDLE_MAX
 * @flags: KMMSCAND_T_* of the visit in pass @seq
 * @top: the table held only top-tier pages when last examined: quick
 *	passes leave it alone and full passes visit it in turn
 * @full: for a @top record, kmmscand_mm_slot.full (truncated) of its last
 *	visit
 *
 * Made and used by mm/kmmscand_history.c; both are kmalloc()ed, so that
 * the registry can free the records of an mm that goes away
 * (kmmscand_tables_free()).  While pass @seq visits the table, the bitmap
 * of that pass is written only at the end of each fragment
 * (kmmscand_note_table()): until then @planes[@head] still holds the
 * oldest visit, the last bit of a page's history before the pass.
 */
struct kmmscand_table {
	struct rb_node node;
	unsigned long idx;
	unsigned long *planes;
	unsigned int seq;
	unsigned int slow_seq;
	u8 n;
	u8 head;
	u8 idle;
	u8 flags;
	bool top;
	u16 full;
};

#define KMMSCAND_T_MAPPED	BIT(0)	/* the PTEs were examined */
#define KMMSCAND_T_YOUNG	BIT(1)	/* a young slow-tier page was found */
#define KMMSCAND_T_TOP		BIT(2)	/* top-tier PTEs were found */

/* Bytes a table record and its @n bitmaps take. */
static inline size_t kmmscand_table_size(void)
{
	return kmalloc_size_roundup(sizeof(struct kmmscand_table));
}

static inline size_t kmmscand_planes_size(unsigned int n)
{
	return kmalloc_size_roundup(n * KMMSCAND_PLANE_BYTES);
}

/**
 * struct kmmscand_mm_slot - kmmscand state of one registered mm
 * @slot: hash lookup from mm to mm_slot (embeds the list node)
 * @next_scan: jiffies at which the next pass may start
 * @next_full: jiffies at which the next full pass is due; passes before
 *	it are quick ones, over the tables in @tables only
 * @cursor: page-aligned address where the next visit continues, valid
 *	while @in_pass
 * @in_pass: a pass has started and not ended yet
 * @quick: the pass in progress is a quick one
 * @watch: quick passes are cheap for this mm (PMD Accessed bits usable),
 *	so its slow-tier tables are watched by quick passes
 * @quick_ms: interval to the next quick pass that only watches (see
 *	kmmscand_next_quick()); 0 until the first pass ends
 * @period_ms: current scan period (adaptive)
 * @budget: PTE slots examined per visit at most (adaptive)
 * @passes: complete passes so far
 * @seq: the pass number (wrapping), stamped into the table records
 * @cand_last: candidates found in the previous complete pass (X)
 * @cand_cur: candidates found in the pass in progress (Y)
 * @scanned: PTEs and THPs examined in the pass in progress
 * @pmd_skipped: PTE tables skipped in the pass in progress
 * @young: young entries found in the pass in progress
 * @warm: slow-tier pages found young for the first time in the pass in
 *	progress (no history yet): a confirming pass should follow soon
 * @footprint: pages per node, [0, nr_node_ids) = pass in progress,
 *	[nr_node_ids, 2 * nr_node_ids) = last complete pass
 * @tables: one record per PTE table (or PMD-mapped THP) that held
 *	slow-tier pages, with the access history of its pages, and per
 *	PTE table that held only top-tier pages, by address (see
 *	mm/kmmscand_history.c)
 * @nr_tables: records in @tables
 * @nr_top: of them, records of tables that held only top-tier pages
 *	(see kmmscand_table_skip())
 * @shed_top: a slow-tier table found no room in the history budget while
 *	@nr_top records held some: the next full pass drops them
 * @full: the full pass number (wrapping), for the turns of @top records
 * @top_wake: the full pass in progress visits every @top record: pages
 *	were demoted, or the slow tier's mapped pages changed, since this
 *	mm's last full pass
 * @demoted_mark: pages demoted, system wide, when the last full pass began
 * @mapped_mark: pages mapped on the slow tier then
 * @hist_bytes: bytes of memory the records in @tables use
 * @slow_pages: slow-tier pages examined in the pass in progress
 * @slow_pages_last: slow-tier pages examined in the last complete full pass
 * @wake_seq: the last pass that found a young slow-tier page in a table
 *	that was backing off; tables not visited since are visited again
 * @backoff_nid: target node that kept failing for this mm
 * @backoff_until: jiffies until which @backoff_nid is not used
 * @fail_streak: failed promotion batches towards @backoff_nid, each less
 *	than KMMSCAND_BACKOFF_MS after the one before
 * @fail_last: jiffies of the last failed batch counted in @fail_streak
 * @round: value of kmmscand_scan.round when the mm was (re)registered; a
 *	round ends before the slots added after it started
 * @cleared: address ranges of the PTE tables whose PMD Accessed bit the
 *	pass in progress cleared, to flush from the TLB when it ends
 * @nr_cleared: ranges in @cleared
 * @owner: without CONFIG_MEMCG (no mm->owner), the thread group that
 *	registered the mm, whose cpuset and task policy apply to it
 *
 * Everything except the @backoff_* and @fail_* fields belongs to the
 * scanner thread; those four are written for the migrator, by
 * kmmscand_target_failed() under kmmscand_mm_lock, and read locklessly by
 * the scanner.  The history shrinker may take @tables (with @nr_tables,
 * @nr_top and @hist_bytes) away under kmmscand_mm_lock from a slot the scanner
 * is not on (kmmscand_scan.mm_slot).
 */
struct kmmscand_mm_slot {
	struct mm_slot slot;
	unsigned long next_scan;
	unsigned long next_full;
	unsigned long cursor;
	bool in_pass;
	bool quick;
	bool watch;
	unsigned int quick_ms;
	unsigned int period_ms;
	unsigned int budget;
	unsigned long passes;
	unsigned int seq;
	unsigned long cand_last;
	unsigned long cand_cur;
	unsigned long scanned;
	unsigned long pmd_skipped;
	unsigned long young;
	unsigned long warm;
	unsigned long *footprint;
	struct rb_root tables;
	unsigned long nr_tables;
	unsigned long nr_top;
	bool shed_top;
	bool top_wake;
	unsigned int full;
	unsigned long demoted_mark;
	unsigned long mapped_mark;
	unsigned long hist_bytes;
	unsigned long slow_pages;
	unsigned long slow_pages_last;
	unsigned int wake_seq;
	int backoff_nid;
	unsigned long backoff_until;
	unsigned int fail_streak;
	unsigned long fail_last;
	unsigned long round;
	struct {
		unsigned long start, end;
	} cleared[4];
	unsigned int nr_cleared;
#ifndef CONFIG_MEMCG
	struct pid *owner;
#endif
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

/* The registry (mm/kmmscand_mm.c). */
extern struct kmmscand_scan kmmscand_scan;
extern spinlock_t kmmscand_mm_lock;
/*
 * The scanner sleeps on kmmscand_wait; kmmscand_scanner_wake() ends the
 * sleep and says why in kmmscand_events.  They live with the registry,
 * below everything that wakes the scanner: the registry itself, sysfs
 * and the memory hotplug callback.
 */
enum kmmscand_event {
	KMMSCAND_EV_TUNABLES,	/* a sysfs store */
	KMMSCAND_EV_MEMORY,	/* memory came online: maybe a new slow tier */
	KMMSCAND_EV_FIRST_MM,	/* an mm registered while the list was empty */
};

extern wait_queue_head_t kmmscand_wait;
extern unsigned long kmmscand_events;
void kmmscand_scanner_wake(enum kmmscand_event ev);

int kmmscand_registry_init(void);
void kmmscand_registry_free(void);
void kmmscand_registry_open(void);
bool kmmscand_have_slow_tier(void);
struct kmmscand_mm_slot *kmmscand_slot_lookup(struct mm_struct *mm);
bool kmmscand_collect(struct kmmscand_mm_slot *ms);
/* Bytes and records of history of every mm (mm/kmmscand_history.c). */
extern atomic_long_t kmmscand_hist_total;
extern atomic_long_t kmmscand_tables_total;
void kmmscand_tables_free(struct rb_root *root);
void kmmscand_release(struct kmmscand_mm_slot *ms);
unsigned long kmmscand_register_all(void);

/* Per-walk state.  The scanner is a single thread, so one static copy. */
struct kmmscand_walk {
	struct kmmscand_mm_slot *ms;
	unsigned long budget;		/* PTE slots left in this visit */
	unsigned long stop_addr;	/* where the walk stopped early */
	unsigned long skip_end;		/* end of the last PTE table skipped */
	unsigned int hist_n;
	unsigned int hot_k;
	bool pmd_skip;
	bool tlb_flush;
	bool detect_only;		/* promotion rate 0: count, do not queue */
	bool quick;			/* a quick pass: slow-tier tables only */
	bool slow_seen;			/* the current table held slow pages */
	bool top_seen;			/* ... and top-tier pages were examined */
	bool top_wake;			/* see kmmscand_mm_slot.top_wake */
	bool queue_full;		/* the migrator's queue is full: stop */
	bool owner_mof;			/* owner's task policy allows moving */
	bool frag_young;		/* a young slow-tier page in the table */
	bool tbl_skipped;		/* the table was skipped unmapped */
	int target_override;
	nodemask_t toptier;		/* top-tier nodes with memory */
	nodemask_t ample;		/* top-tier nodes with room to spare */
	nodemask_t owner_cpuset;	/* cpuset of the owner */
	nodemask_t owner_allowed;	/* cpuset and task policy of the owner */
	nodemask_t allowed;		/* the above & policy of the VMA */
	struct folio *last_queued;	/* dedup PTE-mapped large folios */
	struct kmmscand_table *tbl;	/* record of the table being examined */
	unsigned long tbl_idx;		/* its address >> PMD_SHIFT, or ULONG_MAX */
	/* The pages of that table found young in this fragment of it. */
	unsigned long young_map[BITS_TO_LONGS(PTRS_PER_PTE)];
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
	unsigned long tlb_flushes;
};

/* kmmscand_walk_ops: stop the walk here, the visit goes on later. */
#define KMMSCAND_WALK_STOP	1

/*
 * The index in @w->span of the top-tier node span that holds @pfn, or
 * @w->nr_spans if @pfn may be in a slow-tier node.
 */
static inline unsigned int kmmscand_pfn_span(const struct kmmscand_walk *w,
					     unsigned long pfn)
{
	unsigned int i;

	for (i = 0; i < w->nr_spans; i++)
		if (pfn >= w->span[i].start && pfn < w->span[i].end)
			break;
	return i;
}

/*
 * The top-tier node whose memory holds @pfn, found from the node spans
 * alone (no struct page is read), or NUMA_NO_NODE if @pfn may be in a
 * slow-tier node.  Only used when no top-tier span overlaps a slow-tier
 * one (w->nr_spans is 0 otherwise).
 */
static inline int kmmscand_pfn_toptier(const struct kmmscand_walk *w,
				       unsigned long pfn)
{
	unsigned int i = kmmscand_pfn_span(w, pfn);

	return i < w->nr_spans ? w->span[i].nid : NUMA_NO_NODE;
}

/* In-flight entry still to be processed (see struct kmmscand_cand.gone). */
#define KMMSCAND_ALIVE		(-1)

/**
 * struct kmmscand_cand - a queued promotion candidate
 * @pfn: the first page frame of the folio
 * @mapping: folio->mapping when it was queued (anon_vma or address_space)
 * @index: folio->index when it was queued
 * @mm: the mm it was found in, with a reference (mmgrab()) while queued
 * @addr: the address it was found at in @mm
 * @nid: the target node chosen by the scanner
 * @src: the node the folio was on when it was queued (for tracing)
 * @nr: pages in the folio when it was queued
 * @source: the source that found it hot (enum kmmscand_source)
 * @gone: KMMSCAND_ALIVE, or why it is to be discarded: the mm opted out
 *	or kmmscand was disabled (kmmscand_queue_purge()), or, found by the
 *	migrator's recheck, the mm exited or its policy no longer allows
 *	the target
 * @requeued: in the in-flight batch: put back to the ring, whose copy now
 *	holds the PFN's place in the set of queued PFNs
 * @tried: in the in-flight batch: handed to migrate_pages()
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
	unsigned long addr;
	int nid;
	int src;
	unsigned int nr;
	int source;
	int gone;
	bool requeued;
	bool tried;
};

/* The queue (mm/kmmscand_queue.c). */
extern spinlock_t kmmscand_queue_lock;

int kmmscand_queue_init(void);
void kmmscand_queue_free(void);
bool kmmscand_queue_folio(struct folio *folio, struct mm_struct *mm,
			  unsigned long addr, int nid, unsigned int nr,
			  enum kmmscand_source source);
bool kmmscand_pfn_queued(unsigned long pfn);
void kmmscand_queue_purge(struct mm_struct *mm, enum kmmscand_drop_reason why);
unsigned int kmmscand_queue_held(void);
unsigned long kmmscand_queue_want(unsigned int batch);
struct kmmscand_cand *kmmscand_batch_get(unsigned long want,
					 const nodemask_t *skip,
					 unsigned int *nr);
bool kmmscand_queue_elsewhere(const nodemask_t *nodes);
void kmmscand_batch_put(unsigned int n);
void kmmscand_requeue(struct kmmscand_cand *e, bool tail);

/* Target node (mm/kmmscand_target.c). */
void kmmscand_target_failed(struct mm_struct *mm, int nid);
bool kmmscand_backed_off(struct kmmscand_mm_slot *ms, int nid);
bool kmmscand_vma_nodes(struct vm_area_struct *vma, unsigned long addr,
			const nodemask_t *cpuset, const nodemask_t *owner,
			bool owner_mof, nodemask_t *allowed);
void kmmscand_owner_nodes(struct mm_struct *mm, nodemask_t *cpuset,
			  nodemask_t *nodes, bool *mof);
int kmmscand_target(struct kmmscand_walk *w, int src);
int kmmscand_target_for_access(struct folio *folio, struct vm_area_struct *vma,
			       unsigned long addr, int nid);
bool kmmscand_node_ample(int nid);
bool kmmscand_folio_promotable(struct folio *folio);

/*
 * A slow-tier folio a source found hot, offered for promotion: the
 * source's target for it and its hotness rule's verdicts, without and
 * with room to spare at the target (kmmscand_offer()).
 */
struct kmmscand_offer {
	struct folio *folio;		/* stable: its page table lock is held */
	struct mm_struct *mm;		/* the mm it was found in */
	unsigned long addr;		/* where (a THP: its first address) */
	enum kmmscand_source src;
	int target;			/* a top-tier node, or NUMA_NO_NODE */
	bool hot;			/* hot with the top tier tight */
	bool hot_ample;			/* hot if @target has room to spare */
	bool detect_only;		/* promotion off: count, do not queue */
	const nodemask_t *ample;	/* nodes with room to spare; NULL: ask */
	struct kmmscand_mm_slot *ms;	/* back off @target for it; or NULL */
};

/* What kmmscand_offer() did with a folio. */
enum kmmscand_offered {
	KMMSCAND_OFFER_KEEP,		/* not now: the source keeps its evidence */
	KMMSCAND_OFFER_DETECTED,	/* a candidate, counted, not queued */
	KMMSCAND_OFFER_QUEUED,		/* a candidate, queued */
	KMMSCAND_OFFER_FULL,		/* a candidate the full queue dropped */
};

enum kmmscand_offered kmmscand_offer(const struct kmmscand_offer *o);

/* Throttle (mm/kmmscand_throttle.c); kmmscand_node_throttle() else: */
#define KMMSCAND_THROTTLE_NONE	(-1)

int kmmscand_throttle_init(void);
void kmmscand_throttle_free(void);
long kmmscand_rate_take(u64 now, unsigned int rate, unsigned int batch,
			unsigned long want);
void kmmscand_rate_return(unsigned long pages);
int kmmscand_node_throttle(int nid, unsigned long pages, u64 now);
void kmmscand_node_promoted(int nid, unsigned long pages);
unsigned long kmmscand_node_demoted(int nid);

/* Migration thread (mm/kmmscand_migrate.c). */
void kmmscand_migrate_wake(bool tunables);
void kmmscand_migrate_nudge(void);
int kmmscand_migrate_init(void);
void kmmscand_migrate_exit(void);

/* Record of the other sources (mm/kmmscand_record.c). */
int kmmscand_sources_set(unsigned int mask);
void __kmmscand_record_abit(struct folio *folio, unsigned int history,
			    unsigned int n);

/*
 * The scanner's view of a slow-tier folio it looked at (@history after the
 * pass, of @n passes), for the hint-fault source; nobody else reads it, so
 * it is only kept while that source is on.
 */
static inline void kmmscand_record_abit(struct folio *folio,
					unsigned int history, unsigned int n)
{
	if (static_branch_unlikely(&kmmscand_fault_source))
		__kmmscand_record_abit(folio, history, n);
}

/* History (mm/kmmscand_history.c). */
int kmmscand_history_init(void);
void kmmscand_history_exit(void);
unsigned long kmmscand_history_bytes(void);
bool kmmscand_table_skip(struct kmmscand_walk *w, unsigned long addr);
bool kmmscand_table_slow(struct kmmscand_walk *w, unsigned long addr);
struct kmmscand_table *kmmscand_table_next_slow(struct kmmscand_mm_slot *ms,
						struct kmmscand_table *t);
#if IS_ENABLED(CONFIG_KUNIT)
/* Static but for the KUnit tests (mm/tests/kmmscand_policy_kunit.c). */
unsigned int kmmscand_table_hist(const struct kmmscand_table *t,
				 unsigned int bit);
struct kmmscand_table *kmmscand_table_cur(struct kmmscand_walk *w,
					  unsigned long addr);
#endif
bool kmmscand_table_tracked(struct kmmscand_walk *w, unsigned long addr);
void kmmscand_age_range(struct kmmscand_walk *w, unsigned long start,
			unsigned long end);
void kmmscand_account(struct kmmscand_walk *w, struct folio *folio,
		      unsigned long addr, unsigned int nr, bool young);
void kmmscand_note_table(struct kmmscand_walk *w, unsigned long start,
			 unsigned long end);
void kmmscand_history_sweep(struct kmmscand_mm_slot *ms);
void kmmscand_history_free(struct kmmscand_mm_slot *ms);

/* Page-table walk (mm/kmmscand_walk.c). */
extern const struct mm_walk_ops kmmscand_walk_ops;

void kmmscand_prepare_walk(struct kmmscand_walk *w, struct kmmscand_mm_slot *ms,
			   unsigned long round_budget);
void kmmscand_flush_counts(struct kmmscand_walk *w);
bool kmmscand_walk_pmd_bit(const struct kmmscand_walk *w, struct mm_struct *mm);
bool kmmscand_walk_idle(struct kmmscand_walk *w, struct kmmscand_mm_slot *ms,
			unsigned long *used);

/* sysfs (mm/kmmscand_sysfs.c). */

int kmmscand_sysfs_init(void);
void kmmscand_sysfs_exit(void);

#endif /* _MM_KMMSCAND_INTERNAL_H */
