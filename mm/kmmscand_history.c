// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_history: what the scanner remembers of the slow-tier pages it
 * found young, and which of them it calls hot.
 *
 * A slow-tier page young in K of the last N passes is hot (the rule is
 * kmmscand_is_hot() in mm/kmmscand_policy.h): it is queued for promotion
 * to its target node (mm/kmmscand_target.c).
 *
 * The memory is one record per PTE table (2 MB on x86) that held slow-tier
 * pages, in an rbtree per mm by address (struct kmmscand_table): the pass
 * that last visited the table, the last pass that found slow-tier pages in
 * it, how long it has been idle, and, only while one of its pages was
 * young in the last N visits, N bitmaps of one bit per page of the table
 * (64 bytes each), one per visit.  A page's history is its bit in each of
 * them.  A table is handed over in fragments when two VMAs share it or
 * when a visit runs out of budget in it: each fragment writes the bits of
 * its own pages into the bitmap of the pass, so the record of a pass is
 * what all of its fragments saw.  Quick passes visit only the tables that
 * held slow-tier pages.
 *
 * A table whose PTEs a full pass examined and found only top-tier pages
 * in keeps (or gets) a record without bitmaps, marked @top: the young
 * tables of a hot set already promoted, which a full pass would otherwise
 * map and read in full each time, however long nothing changes there.
 * Full passes visit such a table in turn, backing off as for an idle
 * slow-tier table (kmmscand_table_skip()), and every one of them when the
 * slow tier changed: a top-only table can only gain a slow-tier page by a
 * page being mapped there (a fault, a migration, a demotion), so a full
 * pass that begins after pages were demoted or the slow tier's mapped
 * pages changed visits them all (kmmscand_mm_slot.top_wake).  Records of
 * either kind that a full pass no longer finds go.
 *
 * Cost, on 64-bit with 4 KB pages: a record is 56 bytes, and its bitmaps
 * are N * 64 bytes (kmalloc'ed; 128 bytes for the default N = 2, 512 for
 * N = 8), so a table costs at most 56 + N * 64 bytes, about 0.36 byte per
 * page of the table for N = 2 and 1.1 for N = 8, whatever the layout of the
 * young pages in it.  Where tables hold few slow-tier pages, the budget
 * does the bounding: an mm keeps at most one byte per slow-tier page it
 * maps, or KMMSCAND_HIST_FLOOR if more (kmmscand_hist_budget()); past
 * that, tables are not tracked until records go.  Top-only records take
 * at most half of that budget, and go at the next full pass as soon as a
 * slow-tier table finds no room.  All of it is charged to
 * the mm's memory cgroup, given back to the history shrinker under memory
 * pressure (the pages just need to be seen young again), and freed in
 * process context without interrupts disabled.
 */

#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"

#include <trace/events/kmmscand.h>

static struct shrinker *kmmscand_hist_shrinker __ro_after_init;

static unsigned long *kmmscand_plane(const struct kmmscand_table *t,
				     unsigned int i)
{
	return t->planes + i * KMMSCAND_PLANE_LONGS;
}

static void kmmscand_charge(struct kmmscand_mm_slot *ms, long bytes)
{
	ms->hist_bytes += bytes;
	atomic_long_add(bytes, &kmmscand_hist_total);
}

/* May @ms take @bytes more of history? */
static bool kmmscand_hist_room(struct kmmscand_mm_slot *ms, size_t bytes)
{
	if (ms->hist_bytes + bytes <=
	    kmmscand_hist_budget(ms->slow_pages_last, ms->slow_pages))
		return true;
	/* Slow-tier tables come first: the next full pass sheds the others. */
	if (ms->nr_top)
		ms->shed_top = true;
	return false;
}

/* May @ms keep one more record of a top-only table? */
static bool kmmscand_top_room(const struct kmmscand_mm_slot *ms)
{
	return !ms->shed_top &&
	       ms->hist_bytes + kmmscand_table_size() <=
	       kmmscand_hist_budget(ms->slow_pages_last, ms->slow_pages) / 2;
}

static void kmmscand_table_set_top(struct kmmscand_mm_slot *ms,
				   struct kmmscand_table *t, bool top)
{
	if (t->top == top)
		return;
	t->top = top;
	t->full = ms->full;
	if (top) {
		ms->nr_top++;
	} else {
		ms->nr_top--;
		/* It has slow-tier pages again, new ones: not idle. */
		t->idle = 0;
	}
}

/**
 * kmmscand_history_bytes - the memory the history of every mm uses
 *
 * Context: any.
 *
 * Return: bytes.
 */
unsigned long kmmscand_history_bytes(void)
{
	long bytes = atomic_long_read(&kmmscand_hist_total);

	return bytes > 0 ? bytes : 0;
}

static struct kmmscand_table *kmmscand_table_find(struct kmmscand_mm_slot *ms,
						  unsigned long idx)
{
	struct rb_node *node = ms->tables.rb_node;

	while (node) {
		struct kmmscand_table *t =
			rb_entry(node, struct kmmscand_table, node);

		if (idx < t->idx)
			node = node->rb_left;
		else if (idx > t->idx)
			node = node->rb_right;
		else
			return t;
	}
	return NULL;
}

/*
 * A record for table @idx, which has none, of a top-only table if @top;
 * NULL if over budget or no memory.
 */
static struct kmmscand_table *kmmscand_table_new(struct kmmscand_mm_slot *ms,
						 unsigned long idx, bool top)
{
	struct rb_node **link = &ms->tables.rb_node, *parent = NULL;
	struct kmmscand_table *t;

	if (top ? !kmmscand_top_room(ms) :
		  !kmmscand_hist_room(ms, kmmscand_table_size()))
		return NULL;
	while (*link) {
		parent = *link;
		t = rb_entry(parent, struct kmmscand_table, node);
		link = idx < t->idx ? &parent->rb_left : &parent->rb_right;
	}
	/*
	 * Under the PTL: no sleeping allocation; losing history is harmless.
	 * Charged to the mm's memcg, which the scanner makes the active one
	 * for the visit.
	 */
	t = kzalloc(sizeof(*t), GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!t)
		return NULL;
	t->idx = idx;
	t->seq = ms->seq;
	t->slow_seq = top ? ms->seq - 1 : ms->seq;
	rb_link_node(&t->node, parent, link);
	rb_insert_color(&t->node, &ms->tables);
	ms->nr_tables++;
	kmmscand_table_set_top(ms, t, top);
	atomic_long_inc(&kmmscand_tables_total);
	kmmscand_charge(ms, kmmscand_table_size());
	return t;
}

static void kmmscand_planes_free(struct kmmscand_mm_slot *ms,
				 struct kmmscand_table *t)
{
	if (!t->planes)
		return;
	kfree(t->planes);
	t->planes = NULL;
	kmmscand_charge(ms, -(long)kmmscand_planes_size(t->n));
}

static void kmmscand_table_drop(struct kmmscand_mm_slot *ms,
				struct kmmscand_table *t)
{
	rb_erase(&t->node, &ms->tables);
	kmmscand_planes_free(ms, t);
	kmmscand_table_set_top(ms, t, false);
	kfree(t);
	ms->nr_tables--;
	atomic_long_dec(&kmmscand_tables_total);
	kmmscand_charge(ms, -(long)kmmscand_table_size());
}

/*
 * Bring a record to the pass in progress: the passes since its last visit
 * did not see its pages young, and its last visit decides how idle it is.
 */
static void kmmscand_table_advance(struct kmmscand_walk *w,
				   struct kmmscand_table *t)
{
	struct kmmscand_mm_slot *ms = w->ms;
	unsigned int d = ms->seq - t->seq, k;

	if (!d)
		return;
	if (t->flags & KMMSCAND_T_YOUNG)
		t->idle = 0;
	else if ((t->flags & KMMSCAND_T_MAPPED) && t->idle < KMMSCAND_IDLE_MAX)
		t->idle++;
	t->flags = 0;
	t->seq = ms->seq;
	if (!t->planes)
		return;
	if (t->n != w->hist_n) {
		/* hot_history changed: start over. */
		kmmscand_planes_free(ms, t);
		return;
	}
	if (d > t->n) {
		bitmap_zero(t->planes, t->n * PTRS_PER_PTE);
		return;
	}
	/* Clear the passes that did not visit; keep the oldest one in place. */
	for (k = 1; k < d; k++)
		bitmap_zero(kmmscand_plane(t, (t->head + k) % t->n),
			    PTRS_PER_PTE);
	t->head = (t->head + d) % t->n;
}

/**
 * kmmscand_table_hist - the history of one page of a table
 * @t: the table's record
 * @bit: the page's index in the table
 *
 * Static but for the KUnit tests.
 *
 * Return: the page's history before the pass in progress, bit 0 = the
 * last visit, as kmmscand_history_update() builds it.
 */
VISIBLE_IF_KUNIT unsigned int
kmmscand_table_hist(const struct kmmscand_table *t, unsigned int bit)
{
	unsigned int j, hist = 0;

	if (!t || !t->planes)
		return 0;
	for (j = 1; j <= t->n; j++)
		if (test_bit(bit, kmmscand_plane(t, (t->head + t->n - j) % t->n)))
			hist |= 1U << (j - 1);
	return hist;
}

/**
 * kmmscand_table_cur - the record of the table that maps an address
 * @w: the walk
 * @addr: an address in the table
 *
 * Static but for the KUnit tests.
 *
 * Return: the record, brought to this pass, or NULL.
 */
VISIBLE_IF_KUNIT struct kmmscand_table *
kmmscand_table_cur(struct kmmscand_walk *w, unsigned long addr)
{
	unsigned long idx = addr >> PMD_SHIFT;

	if (w->tbl_idx != idx) {
		w->tbl_idx = idx;
		w->tbl = kmmscand_table_find(w->ms, idx);
		if (w->tbl)
			kmmscand_table_advance(w, w->tbl);
	}
	return w->tbl;
}

/**
 * kmmscand_table_skip - may this pass leave a PTE table alone?
 * @w: the walk in progress
 * @addr: an address in the table
 *
 * A quick pass visits only the tables that have a record of a slow-tier
 * table (they held slow-tier pages in the last full pass).  Any pass
 * visits an idle table (see kmmscand_table_interval()) only in its turn,
 * unless a young slow-tier page was found since its last visit in another
 * idle table of the mm: a hot set that moved is looked for everywhere.  A
 * table skipped for being idle keeps its record.  A top-only table is
 * idle the same way (it has no young slow-tier page) and takes its turns
 * among the full passes, unless the slow tier changed since the mm's last
 * full pass (@w->top_wake).
 *
 * Context: the scanner thread, under mmap_read_lock().
 *
 * Return: true if the walk should not look at the table.
 */
bool kmmscand_table_skip(struct kmmscand_walk *w, unsigned long addr)
{
	struct kmmscand_mm_slot *ms = w->ms;
	struct kmmscand_table *t = kmmscand_table_find(ms, addr >> PMD_SHIFT);
	unsigned int idle;

	if (!t)
		return w->quick;
	if (t->top && w->quick)
		return true;
	/* Visited in this pass already (another fragment), or woken. */
	if (t->seq == ms->seq ||
	    (t->top ? w->top_wake : (int)(t->seq - ms->wake_seq) <= 0))
		return false;
	/* The visit of pass t->seq, not accounted for yet: see advance(). */
	idle = t->idle;
	if (t->flags & KMMSCAND_T_YOUNG)
		idle = 0;
	else if (t->flags & KMMSCAND_T_MAPPED)
		idle++;
	/* A top-only table takes its turns among the full passes. */
	if (t->top)
		return !kmmscand_table_due(ms->full, t->idx, idle);
	if (kmmscand_table_due(ms->seq, t->idx, idle))
		return false;
	/* Still a slow-tier table as far as we know. */
	t->slow_seq = ms->seq;
	return true;
}

/**
 * kmmscand_table_next_slow - the next record of a slow-tier table
 * @ms: the mm's slot
 * @t: a record of @ms, or NULL for the first one
 *
 * The records a quick pass may visit, in address order, for
 * kmmscand_walk_idle().
 *
 * Context: the scanner thread, on @ms.
 *
 * Return: the first record after @t that is not top-only, or NULL.
 */
struct kmmscand_table *kmmscand_table_next_slow(struct kmmscand_mm_slot *ms,
						struct kmmscand_table *t)
{
	struct rb_node *node = t ? rb_next(&t->node) : rb_first(&ms->tables);

	for (; node; node = rb_next(node)) {
		t = rb_entry(node, struct kmmscand_table, node);
		if (!t->top)
			return t;
	}
	return NULL;
}

/**
 * kmmscand_table_slow - did a PTE table hold slow-tier pages?
 * @w: the walk in progress
 * @addr: an address in the table
 *
 * For a table skipped without being mapped (kmmscand_age_range()).
 *
 * Context: the scanner thread, under mmap_read_lock().
 *
 * Return: true if the table has a record of a slow-tier table.
 */
bool kmmscand_table_slow(struct kmmscand_walk *w, unsigned long addr)
{
	struct kmmscand_table *t = kmmscand_table_cur(w, addr);

	return t && !t->top;
}

/**
 * kmmscand_table_tracked - does a PTE table keep young bitmaps?
 * @w: the walk in progress
 * @addr: an address in the table
 *
 * Without them no page of the table has a history, so a page found not
 * young has nothing to age (kmmscand_account() would only count it).
 *
 * Context: the scanner thread, under mmap_read_lock().
 *
 * Return: true if some page of the table was young in the last N passes.
 */
bool kmmscand_table_tracked(struct kmmscand_walk *w, unsigned long addr)
{
	struct kmmscand_table *t = kmmscand_table_cur(w, addr);

	return t && t->planes;
}

/**
 * kmmscand_age_range - note a PTE table skipped for its PMD Accessed bit
 * @w: the walk in progress
 * @start: first address of the table's range
 * @end: end of the range
 *
 * No page of the table was used since the last full pass: the visit finds
 * none of them young (kmmscand_note_table() writes the empty bitmap).
 * That is only right because the bit is reliable: kmmscand_visit()
 * flushes the TLB after clearing PMD Accessed bits, so no CPU keeps
 * translating through a cached copy of the entry without setting the bit
 * again.  Such a table costs one load per pass, so it is never idle: the
 * next pass that finds the bit set maps it at once.
 *
 * Context: the scanner thread, under mmap_read_lock().
 */
void kmmscand_age_range(struct kmmscand_walk *w, unsigned long start,
			unsigned long end)
{
	struct kmmscand_table *t = kmmscand_table_cur(w, start);

	w->tbl_skipped = true;
	if (t)
		t->idle = 0;
}

/**
 * kmmscand_account - record one examined mapping of a slow-tier folio
 * @w: the walk in progress
 * @folio: the folio
 * @addr: the address of the mapping (the first address of a THP)
 * @nr: the pages the mapping covers
 * @young: whether its Accessed bit was set
 *
 * Offers the folio for promotion (kmmscand_offer()) when its history makes
 * it hot, and marks it in the young bitmap of the fragment
 * (kmmscand_note_table() stores it).  A full queue stops the walk
 * (@w->queue_full).
 *
 * Context: the scanner thread, under the page table lock, so the folio is
 * stable and mapped.
 */
void kmmscand_account(struct kmmscand_walk *w, struct folio *folio,
		      unsigned long addr, unsigned int nr, bool young)
{
	struct kmmscand_mm_slot *ms = w->ms;
	unsigned int bit = (addr >> PAGE_SHIFT) & (PTRS_PER_PTE - 1);
	struct kmmscand_table *t = kmmscand_table_cur(w, addr);
	unsigned int hist = kmmscand_table_hist(t, bit), nhist;
	bool hot;

	ms->slow_pages += nr;
	if (!young && !hist)
		return;
	if (young) {
		w->frag_young = true;
		if (!hist)
			w->warm++;
	}
	nhist = kmmscand_history_update(hist, young, w->hist_n);

	hot = kmmscand_is_hot(hist, nhist, w->hot_k, false);
	if (young && folio != w->last_queued &&
	    (hot || (hist && !nodes_empty(w->ample)))) {
		struct kmmscand_offer o = {
			.folio = folio,
			.mm = ms->slot.mm,
			.addr = addr,
			.src = KMMSCAND_SRC_ABIT,
			.target = kmmscand_target(w, folio_nid(folio)),
			.hot = hot,
			.hot_ample = kmmscand_is_hot(hist, nhist, w->hot_k, true),
			.detect_only = w->detect_only,
			.ample = &w->ample,
			.ms = ms,
		};

		switch (kmmscand_offer(&o)) {
		case KMMSCAND_OFFER_KEEP:
			/* Keep the history: it may become promotable later. */
			break;
		case KMMSCAND_OFFER_DETECTED:
			w->candidates++;
			nhist = 0;
			break;
		case KMMSCAND_OFFER_QUEUED:
			/*
			 * The history stays: should this attempt fail, the
			 * next pass that finds the page young queues it again.
			 */
			w->candidates++;
			w->last_queued = folio;
			break;
		case KMMSCAND_OFFER_FULL:
			/* Queue full: stop here, resume after this page. */
			w->queue_full = true;
			break;
		}
	}
	if (nhist & 1) {
		__set_bit(bit, w->young_map);
	} else if (young && t && t->planes) {
		/* Counted as a candidate without being queued: start over. */
		unsigned int i;

		for (i = 0; i < t->n; i++)
			__clear_bit(bit, kmmscand_plane(t, i));
	}
	kmmscand_record_abit(folio, nhist, w->hist_n);
}

/**
 * kmmscand_note_table - store what a fragment of a PTE table showed
 * @w: the walk in progress, @w->slow_seen set if the fragment held
 *	slow-tier pages
 * @start: first address of the fragment
 * @end: its end, within the same table
 *
 * Writes the young bitmap of the fragment into the table's bitmap of this
 * pass, stamps the table as holding slow-tier pages if this fragment did,
 * gives a table a top-only record if a full pass found only top-tier
 * pages in the fragment (@w->top_seen),
 * and never undoes what another fragment of the table stored in this
 * pass: a table shared by two VMAs, or cut by the end of a visit's
 * budget, is recorded as the sum of its fragments.
 *
 * Context: the scanner thread, under mmap_read_lock().
 */
void kmmscand_note_table(struct kmmscand_walk *w, unsigned long start,
			 unsigned long end)
{
	struct kmmscand_mm_slot *ms = w->ms;
	struct kmmscand_table *t = kmmscand_table_cur(w, start);
	bool young = !bitmap_empty(w->young_map, PTRS_PER_PTE);
	unsigned int first = (start >> PAGE_SHIFT) & (PTRS_PER_PTE - 1);
	unsigned int nbits = (end - start) >> PAGE_SHIFT;
	unsigned long *cur;

	if (!t && (w->slow_seen || young)) {
		t = kmmscand_table_new(ms, start >> PMD_SHIFT, false);
		w->tbl = t;
	} else if (!t && w->top_seen && !w->quick) {
		t = kmmscand_table_new(ms, start >> PMD_SHIFT, true);
		w->tbl = t;
	}
	if (!t)
		goto out;
	if (w->slow_seen) {
		t->slow_seq = ms->seq;
		kmmscand_table_set_top(ms, t, false);
	} else if (t->top) {
		t->full = ms->full;
	}
	if (!w->tbl_skipped)
		t->flags |= KMMSCAND_T_MAPPED;
	if (w->top_seen)
		t->flags |= KMMSCAND_T_TOP;
	if (w->frag_young) {
		/* An idle table has young pages again: look everywhere. */
		if (t->idle >= KMMSCAND_IDLE_GRACE)
			ms->wake_seq = ms->seq;
		t->flags |= KMMSCAND_T_YOUNG;
		t->idle = 0;
	}
	if (young && !t->planes &&
	    kmmscand_hist_room(ms, kmmscand_planes_size(w->hist_n))) {
		t->planes = kzalloc(w->hist_n * KMMSCAND_PLANE_BYTES,
				    GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT);
		if (t->planes) {
			t->n = w->hist_n;
			t->head = 0;
			kmmscand_charge(ms, kmmscand_planes_size(t->n));
		}
	}
	if (t->planes) {
		cur = kmmscand_plane(t, t->head);
		bitmap_clear(cur, first,
			     min_t(unsigned int, nbits, PTRS_PER_PTE - first));
		bitmap_or(cur, cur, w->young_map, PTRS_PER_PTE);
		if (bitmap_empty(t->planes, t->n * PTRS_PER_PTE))
			kmmscand_planes_free(ms, t);
	}
out:
	if (young)
		bitmap_zero(w->young_map, PTRS_PER_PTE);
	w->frag_young = false;
	w->tbl_skipped = false;
}

/**
 * kmmscand_history_sweep - a pass over an mm ended
 * @ms: the mm's slot
 *
 * After a full pass, goes over the records of the tables in which it found
 * no slow-tier page: one whose PTEs it examined and found top-tier pages
 * in becomes a top-only record (its bitmaps go: its pages are on the top
 * tier now); the others go (unmapped, VMA no longer eligible), as does a
 * top-only record not visited in 2 * 2^KMMSCAND_IDLE_SHIFT_MAX full
 * passes (its turn comes at least every 2^KMMSCAND_IDLE_SHIFT_MAX, so its
 * table is gone), or every top-only record if a slow-tier table lacked
 * room.  Then takes the slow-tier pages it counted as the mm's budget for
 * the next passes.
 *
 * Context: the scanner thread, on @ms; may sleep.
 */
void kmmscand_history_sweep(struct kmmscand_mm_slot *ms)
{
	struct rb_node *node, *next;

	if (!ms->quick) {
		bool shed = ms->shed_top;

		ms->shed_top = false;
		for (node = rb_first(&ms->tables); node; node = next) {
			struct kmmscand_table *t =
				rb_entry(node, struct kmmscand_table, node);

			next = rb_next(node);
			cond_resched();
			if (t->slow_seq == ms->seq)
				continue;
			if (t->top) {
				if (shed || (u16)(ms->full - t->full) >
				    (2U << KMMSCAND_IDLE_SHIFT_MAX))
					kmmscand_table_drop(ms, t);
				continue;
			}
			if (!shed && t->seq == ms->seq &&
			    (t->flags & KMMSCAND_T_TOP)) {
				kmmscand_planes_free(ms, t);
				if (kmmscand_top_room(ms)) {
					kmmscand_table_set_top(ms, t, true);
					continue;
				}
			}
			kmmscand_table_drop(ms, t);
		}
		ms->slow_pages_last = ms->slow_pages;
	}
	ms->slow_pages = 0;
}

/**
 * kmmscand_history_free - forget the history of an mm
 * @ms: the mm's slot, which the scanner is on or which left the registry
 *
 * Context: process context, no spinlock held; may sleep.
 */
void kmmscand_history_free(struct kmmscand_mm_slot *ms)
{
	kmmscand_tables_free(&ms->tables);
	ms->nr_tables = 0;
	ms->nr_top = 0;
	ms->shed_top = false;
	ms->hist_bytes = 0;
}

static unsigned long kmmscand_hist_count(struct shrinker *shrink,
					 struct shrink_control *sc)
{
	long nr = atomic_long_read(&kmmscand_tables_total);

	return nr > 0 ? nr : SHRINK_EMPTY;
}

/*
 * Memory is short: free the records of whole mms, except the one the
 * scanner is on.  Their pages only need to be seen young again.
 */
static unsigned long kmmscand_hist_scan(struct shrinker *shrink,
					struct shrink_control *sc)
{
	unsigned long freed = 0;

	while (freed < sc->nr_to_scan) {
		struct rb_root root = RB_ROOT;
		struct kmmscand_mm_slot *ms;
		struct mm_slot *slot;
		unsigned long nr = 0;

		spin_lock(&kmmscand_mm_lock);
		list_for_each_entry(slot, &kmmscand_scan.mm_head, mm_node) {
			ms = mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
			if (ms == kmmscand_scan.mm_slot || !ms->nr_tables)
				continue;
			root = ms->tables;
			nr = ms->nr_tables;
			ms->tables = RB_ROOT;
			ms->nr_tables = 0;
			ms->nr_top = 0;
			ms->hist_bytes = 0;
			break;
		}
		spin_unlock(&kmmscand_mm_lock);
		if (!nr)
			break;
		kmmscand_tables_free(&root);
		freed += nr;
	}
	return freed ?: SHRINK_STOP;
}

/**
 * kmmscand_history_init - register the shrinker of the history
 *
 * Context: process context, at boot; sleeps.
 *
 * Return: 0 or -ENOMEM.
 */
int __init kmmscand_history_init(void)
{
	kmmscand_hist_shrinker = shrinker_alloc(0, "kmmscand-history");
	if (!kmmscand_hist_shrinker)
		return -ENOMEM;
	kmmscand_hist_shrinker->count_objects = kmmscand_hist_count;
	kmmscand_hist_shrinker->scan_objects = kmmscand_hist_scan;
	shrinker_register(kmmscand_hist_shrinker);
	return 0;
}

/**
 * kmmscand_history_exit - undo kmmscand_history_init()
 *
 * Context: process context, at boot, before any mm was registered.
 */
void __init kmmscand_history_exit(void)
{
	shrinker_free(kmmscand_hist_shrinker);
	kmmscand_hist_shrinker = NULL;
}
