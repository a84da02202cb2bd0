// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_queue: the promotion candidates on their way from the scanner to
 * the migration thread.
 *
 * The scanner and the hint-fault source (mm/kmmscand_record.c) hand
 * candidates over through a bounded ring: the PFN of a folio and what
 * identifies it (mapping and index), the mm and address it was found at,
 * the target node, its size and the source.  A queued candidate holds no
 * folio reference, only one on the mm_struct (mmgrab()), so that the
 * migrator can recheck the mm's memory policy before it moves the folio.
 * Neither source blocks: when the ring is full the scanner stops its visit
 * and resumes there later, and a hint fault drops its candidate.
 *
 * The migration thread takes a batch of candidates out of the ring at a
 * time (kmmscand_batch_get()), puts back the ones it defers
 * (kmmscand_requeue()) and releases the batch (kmmscand_batch_put()).  An
 * mm that exits leaves its candidates queued: exit costs nothing here, and
 * the migrator finds the mm without users.  An mm that opts out, or
 * kmmscand disabled, marks the candidates concerned, in the ring and in
 * the batch (kmmscand_queue_purge()); the migrator discards them.  Work
 * proportional to the queue (sorting a batch, releasing it) is done
 * outside kmmscand_queue_lock, which hint faults take.
 */

#include <linux/kmmscand.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/vmstat.h>
#include <linux/xarray.h>

#include "kmmscand_internal.h"

#include <trace/events/kmmscand.h>

/*
 * The ring of queued candidates and the batch in flight.  Both under
 * kmmscand_queue_lock; the batch contents other than @gone also belong to
 * the migrator, which holds kmmscand_batch_mutex while a batch is out.
 *
 * Lock order: kmmscand_batch_mutex, then mmap_lock, the PTL,
 * kmmscand_queue_lock, kmmscand_mm_lock (mm/kmmscand_mm.c).
 */
static struct kmmscand_cand *kmmscand_ring;
static unsigned int kmmscand_ring_head;
static unsigned int kmmscand_ring_len;
static unsigned long kmmscand_ring_pages;
static struct kmmscand_cand *kmmscand_batch;
static unsigned int kmmscand_batch_len;
/* ring + batch entries; read locklessly to skip purging an empty queue */
static unsigned int kmmscand_nr_held;
/* Candidates in the ring per target node (kmmscand_queue_elsewhere()). */
static unsigned int kmmscand_node_queued[MAX_NUMNODES];
/* Candidates one batch_get() moves behind the others at most. */
#define KMMSCAND_SKIP_MAX	1024
DEFINE_SPINLOCK(kmmscand_queue_lock);
/*
 * The PFNs held by the ring or the batch, so that a folio is queued once:
 * a folio shared by several mms, or found hot again while its batch was
 * deferred, is not queued (and looked up, and tried) twice.  Looked up and
 * stored under kmmscand_queue_lock; erased outside it when a batch is
 * released, which only makes a folio look queued a moment longer.  A
 * failed insertion only allows a duplicate.
 */
static DEFINE_XARRAY(kmmscand_queued);
static DEFINE_MUTEX(kmmscand_batch_mutex);

static inline struct kmmscand_cand *kmmscand_ring_at(unsigned int i)
{
	return &kmmscand_ring[(kmmscand_ring_head + i) % KMMSCAND_QUEUE_LEN];
}

/**
 * kmmscand_queue_folio - offer a hot folio for promotion
 * @folio: the folio; the caller holds the PTL of a mapping of it
 * @mm: the mm it was found in
 * @addr: the address of @folio in @mm (of the page that was found hot)
 * @nid: target node
 * @nr: pages in @folio
 * @source: the source that found it hot
 *
 * Never blocks and takes no folio reference: the candidate is recorded by
 * PFN and identity (mapping, index) and looked up again at batch time.  It
 * holds a reference on the mm_struct (mmgrab()), dropped when it leaves
 * the queue.  A folio that is already queued is not queued again.
 * Nothing is queued for an mm that opted out: checked under the queue
 * lock, which the opt-out's purge takes after setting the flag, so that a
 * source that does not hold mmap_lock (a hint fault under the VMA lock)
 * cannot queue behind it.
 *
 * Context: atomic, under the page table lock; takes kmmscand_queue_lock.
 * @mm is alive (the caller maps @folio in it).
 *
 * Return: true if queued (now or before) or not wanted, false if the
 * queue is full.
 */
bool kmmscand_queue_folio(struct folio *folio, struct mm_struct *mm,
			  unsigned long addr, int nid, unsigned int nr,
			  enum kmmscand_source source)
{
	unsigned long pfn = folio_pfn(folio);
	struct kmmscand_cand *e;

	spin_lock(&kmmscand_queue_lock);
	if (unlikely(test_bit(MMF_KMMSCAND_OFF, &mm->flags))) {
		spin_unlock(&kmmscand_queue_lock);
		return true;
	}
	if (xa_load(&kmmscand_queued, pfn)) {
		/* Already on its way: nothing to add. */
		spin_unlock(&kmmscand_queue_lock);
		return true;
	}
	if (kmmscand_ring_len >= KMMSCAND_QUEUE_LEN) {
		spin_unlock(&kmmscand_queue_lock);
		return false;
	}
	xa_store(&kmmscand_queued, pfn, xa_mk_value(0), GFP_NOWAIT);
	e = kmmscand_ring_at(kmmscand_ring_len);
	e->pfn = pfn;
	e->mapping = READ_ONCE(folio->mapping);
	e->index = folio->index;
	mmgrab(mm);
	e->mm = mm;
	e->addr = addr;
	e->nid = nid;
	e->src = folio_nid(folio);
	e->nr = nr;
	e->source = source;
	e->gone = KMMSCAND_ALIVE;
	e->requeued = false;
	WRITE_ONCE(kmmscand_node_queued[nid], kmmscand_node_queued[nid] + 1);
	kmmscand_ring_len++;
	kmmscand_ring_pages += nr;
	WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held + 1);
	spin_unlock(&kmmscand_queue_lock);
	return true;
}

/**
 * kmmscand_pfn_queued - is a folio on its way to the migrator?
 * @pfn: the folio's first page frame
 *
 * Context: any; lockless (RCU), a snapshot that may be stale at once.
 *
 * Return: true if a candidate for @pfn is in the ring or the batch.
 */
bool kmmscand_pfn_queued(unsigned long pfn)
{
	return READ_ONCE(kmmscand_nr_held) && xa_load(&kmmscand_queued, pfn);
}

/**
 * kmmscand_queue_purge - drop the queued candidates of an mm
 * @mm: the mm, or NULL for all
 * @why: KMMSCAND_DROP_OPTOUT or KMMSCAND_DROP_OFF
 *
 * Marks the candidates, in the ring and in the batch in flight, so that
 * the migrator discards them when it comes to them; the ring keeps their
 * places until then.  For an opt-out, also waits until a batch in flight
 * has finished, so that no page of the mm is promoted after this returns.
 * A batch that is being sorted is not seen here: the migrator checks the
 * opt-out flag of each mm after it has published the batch, before it
 * promotes a candidate or puts one back.
 *
 * Context: process context; for an opt-out sleeps (kmmscand_batch_mutex).
 */
void kmmscand_queue_purge(struct mm_struct *mm, enum kmmscand_drop_reason why)
{
	unsigned int i;

	/* An opt-out always locks: see kmmscand_queue_folio(). */
	if (why != KMMSCAND_DROP_OPTOUT && !READ_ONCE(kmmscand_nr_held))
		goto wait;

	spin_lock(&kmmscand_queue_lock);
	for (i = 0; i < kmmscand_ring_len; i++) {
		struct kmmscand_cand *e = kmmscand_ring_at(i);

		if ((mm && e->mm != mm) || e->gone != KMMSCAND_ALIVE)
			continue;
		e->gone = why;
		trace_kmmscand_candidate_drop(e->pfn, e->src, why);
	}
	/* The migrator marks batch entries too, without the lock. */
	for (i = 0; i < kmmscand_batch_len; i++) {
		struct kmmscand_cand *e = &kmmscand_batch[i];

		if ((!mm || e->mm == mm) &&
		    cmpxchg(&e->gone, KMMSCAND_ALIVE, why) == KMMSCAND_ALIVE)
			trace_kmmscand_candidate_drop(e->pfn, e->src, why);
	}
	spin_unlock(&kmmscand_queue_lock);
wait:
	if (why == KMMSCAND_DROP_OPTOUT) {
		mutex_lock(&kmmscand_batch_mutex);
		mutex_unlock(&kmmscand_batch_mutex);
	}
}

/**
 * kmmscand_requeue - put a candidate of the batch in flight back
 * @e: an entry of the batch in flight
 * @tail: behind every candidate queued (its target node is throttled:
 *	candidates for other nodes go first), or else in front of them
 *	(it waits for nothing but a lock)
 *
 * A candidate of an mm that was purged, has exited or has opted out
 * meanwhile, or one that finds the ring full, is dropped instead and
 * marked KMMSCAND_DROP_DEFER: the batch is done with it.
 *
 * Context: the migration thread, holding the batch; takes
 * kmmscand_queue_lock.
 */
void kmmscand_requeue(struct kmmscand_cand *e, bool tail)
{
	bool kept = false;
	int gone, why;

	spin_lock(&kmmscand_queue_lock);
	gone = e->gone;
	why = gone;
	/* The candidate holds the mm_struct: its fields can be read. */
	if (why == KMMSCAND_ALIVE && !atomic_read(&e->mm->mm_users))
		why = KMMSCAND_DROP_EXIT;
	else if (why == KMMSCAND_ALIVE &&
		 test_bit(MMF_KMMSCAND_OFF, &e->mm->flags))
		why = KMMSCAND_DROP_OPTOUT;
	if (why == KMMSCAND_ALIVE &&
	    kmmscand_ring_len < KMMSCAND_QUEUE_LEN) {
		if (tail) {
			*kmmscand_ring_at(kmmscand_ring_len) = *e;
		} else {
			kmmscand_ring_head = (kmmscand_ring_head +
					      KMMSCAND_QUEUE_LEN - 1) %
					     KMMSCAND_QUEUE_LEN;
			*kmmscand_ring_at(0) = *e;
		}
		WRITE_ONCE(kmmscand_node_queued[e->nid],
			   kmmscand_node_queued[e->nid] + 1);
		kmmscand_ring_len++;
		kmmscand_ring_pages += e->nr;
		WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held + 1);
		kept = true;
	} else {
		WRITE_ONCE(e->gone, KMMSCAND_DROP_DEFER);
	}
	spin_unlock(&kmmscand_queue_lock);
	/* The ring's copy keeps the PFN queued and the mm held. */
	if (kept) {
		e->requeued = true;
		return;
	}
	/* A purge traced the candidates it marked. */
	if (gone == KMMSCAND_ALIVE)
		trace_kmmscand_candidate_drop(e->pfn, e->src,
					      why == KMMSCAND_ALIVE ?
					      KMMSCAND_DROP_DEFER : why);
	if (why == KMMSCAND_ALIVE)
		count_vm_event(KMMSCAND_CANDIDATE_DROP);
	else
		count_vm_event(why == KMMSCAND_DROP_EXIT ?
			       KMMSCAND_FAIL_EXIT : KMMSCAND_FAIL_STALE);
}

/**
 * kmmscand_queue_held - candidates in the ring and the batch in flight
 *
 * Context: any; a lockless snapshot.
 *
 * Return: the number of candidates held.
 */
unsigned int kmmscand_queue_held(void)
{
	return READ_ONCE(kmmscand_nr_held);
}

/**
 * kmmscand_queue_want - pages the next batch takes out of the ring
 * @batch: the migrate_batch tunable
 *
 * A batch holds at least one folio, even a THP larger than @batch.
 *
 * Context: takes kmmscand_queue_lock.
 *
 * Return: the pages wanted, 0 if the ring is empty.
 */
unsigned long kmmscand_queue_want(unsigned int batch)
{
	unsigned long want = 0;

	spin_lock(&kmmscand_queue_lock);
	if (kmmscand_ring_len)
		want = min_t(unsigned long, kmmscand_ring_pages,
			     max_t(unsigned long, batch,
				   kmmscand_ring_at(0)->nr));
	spin_unlock(&kmmscand_queue_lock);
	return want;
}

static int kmmscand_cand_cmp(const void *a, const void *b)
{
	const struct kmmscand_cand *x = a, *y = b;

	if (x->nid != y->nid)
		return x->nid < y->nid ? -1 : 1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	if (x->mm != y->mm)
		return (unsigned long)x->mm < (unsigned long)y->mm ? -1 : 1;
	return 0;
}

/**
 * kmmscand_queue_elsewhere - are candidates waiting for other nodes?
 * @nodes: the target nodes to leave out
 *
 * Context: any; a lockless look at the ring.
 *
 * Return: true if the ring holds a candidate whose target is not in @nodes.
 */
bool kmmscand_queue_elsewhere(const nodemask_t *nodes)
{
	int nid;

	for_each_node(nid)
		if (!node_isset(nid, *nodes) &&
		    READ_ONCE(kmmscand_node_queued[nid]))
			return true;
	return false;
}

/**
 * kmmscand_batch_get - take the next batch out of the ring
 * @want: pages wanted (kmmscand_queue_want())
 * @skip: target nodes whose candidates wait (throttled), or NULL
 * @nr: set to the number of candidates in the batch
 *
 * Moves candidates from the head of the ring into the batch, up to
 * @want pages but at least one candidate, and sorts them by target node,
 * source and mm.  Candidates for a node in @skip met on the way go to the
 * tail of the ring instead, KMMSCAND_SKIP_MAX at most, so that a
 * throttled node does not hold back the others; the batch may then be
 * empty.  The sort runs outside kmmscand_queue_lock, before the
 * batch is published to kmmscand_queue_purge().
 *
 * Context: the migration thread; sleeps.  Returns holding
 * kmmscand_batch_mutex, which kmmscand_batch_put() releases.
 *
 * Return: the batch, whose entries the migrator may change (but for
 * @gone, which kmmscand_queue_purge() may set) until kmmscand_batch_put().
 */
struct kmmscand_cand *kmmscand_batch_get(unsigned long want,
					 const nodemask_t *skip,
					 unsigned int *nr)
{
	unsigned int n = 0, skipped = 0;
	unsigned long pulled = 0;

	mutex_lock(&kmmscand_batch_mutex);
	spin_lock(&kmmscand_queue_lock);
	while (kmmscand_ring_len && n < KMMSCAND_BATCH_MAX) {
		struct kmmscand_cand *e = kmmscand_ring_at(0);

		if (skip && node_isset(e->nid, *skip) &&
		    skipped < min(kmmscand_ring_len, KMMSCAND_SKIP_MAX)) {
			/* To the tail; with a full ring that is where it is. */
			*kmmscand_ring_at(kmmscand_ring_len) = *e;
			kmmscand_ring_head = (kmmscand_ring_head + 1) %
					     KMMSCAND_QUEUE_LEN;
			skipped++;
			continue;
		}
		if (n && pulled + e->nr > want)
			break;
		WRITE_ONCE(kmmscand_node_queued[e->nid],
			   kmmscand_node_queued[e->nid] - 1);
		kmmscand_batch[n] = *e;
		kmmscand_batch[n++].tried = false;
		pulled += e->nr;
		kmmscand_ring_pages -= e->nr;
		kmmscand_ring_head = (kmmscand_ring_head + 1) % KMMSCAND_QUEUE_LEN;
		kmmscand_ring_len--;
	}
	spin_unlock(&kmmscand_queue_lock);
	/*
	 * Sort before publishing the batch: kmmscand_queue_purge() marks
	 * batch entries by index under the lock.
	 */
	sort(kmmscand_batch, n, sizeof(*kmmscand_batch), kmmscand_cand_cmp,
	     NULL);
	spin_lock(&kmmscand_queue_lock);
	kmmscand_batch_len = n;
	spin_unlock(&kmmscand_queue_lock);
	*nr = n;
	return kmmscand_batch;
}

/**
 * kmmscand_batch_put - release the batch taken by kmmscand_batch_get()
 * @n: the number of candidates it held
 *
 * The PFNs of the batch can be queued again: whatever happened to them
 * (migrated, put back to the ring or dropped), the batch is done with them.
 * The mm references of the candidates that were not put back are dropped.
 * Both outside kmmscand_queue_lock: until its PFN is erased, a folio only
 * looks queued a moment longer.
 *
 * Context: the migration thread, holding kmmscand_batch_mutex, which is
 * released.
 */
void kmmscand_batch_put(unsigned int n)
{
	unsigned int i;

	spin_lock(&kmmscand_queue_lock);
	WRITE_ONCE(kmmscand_nr_held, kmmscand_nr_held - kmmscand_batch_len);
	kmmscand_batch_len = 0;
	spin_unlock(&kmmscand_queue_lock);
	for (i = 0; i < n; i++) {
		struct kmmscand_cand *e = &kmmscand_batch[i];

		if (e->requeued)
			continue;
		xa_erase(&kmmscand_queued, e->pfn);
		mmdrop(e->mm);
		if (!(i % 64))
			cond_resched();
	}
	mutex_unlock(&kmmscand_batch_mutex);
}

/**
 * kmmscand_queue_free - free what kmmscand_queue_init() allocated
 *
 * Context: process context, at boot; the queue is empty and unused.
 */
void __init kmmscand_queue_free(void)
{
	kvfree(kmmscand_ring);
	kmmscand_ring = NULL;
	kvfree(kmmscand_batch);
	kmmscand_batch = NULL;
}

/**
 * kmmscand_queue_init - allocate the ring and the batch
 *
 * Context: process context, at boot; sleeps.
 *
 * Return: 0 or -ENOMEM, with nothing left allocated.
 */
int __init kmmscand_queue_init(void)
{
	kmmscand_ring = kvcalloc(KMMSCAND_QUEUE_LEN, sizeof(*kmmscand_ring),
				 GFP_KERNEL);
	kmmscand_batch = kvcalloc(KMMSCAND_BATCH_MAX, sizeof(*kmmscand_batch),
				  GFP_KERNEL);
	if (!kmmscand_ring || !kmmscand_batch) {
		kmmscand_queue_free();
		return -ENOMEM;
	}
	return 0;
}
