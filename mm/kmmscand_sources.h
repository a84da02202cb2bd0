/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules of kmmscand's hotness sources, as pure functions: the syntax
 * of the sources file, the record of what each source saw of a page, and
 * how the sources combine into the hotness rule of mm/kmmscand_policy.h.
 * No locking, no global state: callers pass in the tunables and the time,
 * and KUnit tests them (mm/tests/kmmscand_sources_kunit.c).
 */
#ifndef _MM_KMMSCAND_SOURCES_H
#define _MM_KMMSCAND_SOURCES_H

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kmmscand.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/string.h>
#include <linux/types.h>

#include "kmmscand_policy.h"

/*
 * Several sources of hotness.
 *
 * The scanner sees an access as a young Accessed bit at the end of a pass:
 * a coarse observation ("used at least once since the last pass"), one per
 * pass.  A NUMA hint fault is a precise one: the page is being used now,
 * by a CPU of a known node, after NUMA balancing last sampled it (made it
 * PROT_NONE).  Both count in the same currency, windows in which the page
 * was seen used, K (hot_threshold) of which make it hot:
 *
 *  - a hint fault counts for the current window (the pass in progress);
 *  - the earlier windows are the scanner's last N - 1 complete passes, or
 *    the earlier hint faults still remembered, whichever saw more: a hint
 *    fault leaves the Accessed bit set (the fault handler maps the page
 *    young), so the scanner's next pass finds the very access the fault
 *    reported; adding the two would count it twice;
 *  - with room to spare on the target (as for the scanner), one hint fault
 *    is enough: it is an access after a sample cleared the page's state.
 *
 * The scanner's own rule needs nothing from the faults, for the same
 * reason: every hint fault shows up as a young Accessed bit in its next
 * pass.  What the faults add is timeliness (a page becomes hot at the
 * fault, not at the next pass) and the accessing node.
 *
 * Hint faults cannot be remembered per pass (there may be no passes), so
 * they are remembered in time: for N windows of scan_period_max_ms, as
 * long as the scanner remembers a young pass at its slowest.  Each hint
 * fault needs a new NUMA balancing sample of the mapping (at most one per
 * NUMA scan period), so every fault counts, not every window.
 *
 * The evidence of a page is kept in one 64-bit record of a lossy table
 * indexed by PFN (mm/kmmscand_record.c):
 *
 *   bits  0..23  tag: the PFN above the table index
 *   bit  24      valid
 *   bits 25..27  hint faults remembered (saturating at 7)
 *   bits 28..31  young passes among the scanner's last N - 1
 *   bits 32..45  time of the last hint fault, in 128 ms ticks (mod 2^14)
 *   bits 46..59  time of the scanner's last update, same unit
 */
#define KMMSCAND_REC_TAG_BITS		24
#define KMMSCAND_REC_TAG_MASK		((1U << KMMSCAND_REC_TAG_BITS) - 1)
#define KMMSCAND_REC_VALID		BIT_ULL(24)
#define KMMSCAND_REC_FAULT_SHIFT	25
#define KMMSCAND_REC_FAULT_MAX		7U
#define KMMSCAND_REC_COARSE_SHIFT	28
#define KMMSCAND_REC_COARSE_MAX		15U
#define KMMSCAND_REC_TF_SHIFT		32
#define KMMSCAND_REC_TA_SHIFT		46
#define KMMSCAND_REC_TIME_BITS		14
#define KMMSCAND_REC_TIME_MASK		((1U << KMMSCAND_REC_TIME_BITS) - 1)
/* A tick is 2^7 = 128 ms. */
#define KMMSCAND_REC_TICK_SHIFT		7

/**
 * struct kmmscand_rec - the unpacked record of one page
 * @tag: the page's PFN above the table index
 * @valid: the slot holds a record
 * @faults: hint faults remembered
 * @coarse: young passes among the scanner's last N - 1
 * @t_fault: tick of the last hint fault
 * @t_abit: tick of the scanner's last update
 */
struct kmmscand_rec {
	u32 tag;
	bool valid;
	unsigned int faults;
	unsigned int coarse;
	unsigned int t_fault;
	unsigned int t_abit;
};

/**
 * kmmscand_rec_unpack - decode a record
 * @v: the record as stored
 * @r: the decoded record
 */
static inline void kmmscand_rec_unpack(u64 v, struct kmmscand_rec *r)
{
	r->tag = v & KMMSCAND_REC_TAG_MASK;
	r->valid = v & KMMSCAND_REC_VALID;
	r->faults = (v >> KMMSCAND_REC_FAULT_SHIFT) & KMMSCAND_REC_FAULT_MAX;
	r->coarse = (v >> KMMSCAND_REC_COARSE_SHIFT) & KMMSCAND_REC_COARSE_MAX;
	r->t_fault = (v >> KMMSCAND_REC_TF_SHIFT) & KMMSCAND_REC_TIME_MASK;
	r->t_abit = (v >> KMMSCAND_REC_TA_SHIFT) & KMMSCAND_REC_TIME_MASK;
}

/**
 * kmmscand_rec_pack - encode a record
 * @r: the record; fields are cut to their width
 *
 * Return: the record as stored; 0 for an invalid one.
 */
static inline u64 kmmscand_rec_pack(const struct kmmscand_rec *r)
{
	if (!r->valid)
		return 0;
	return (r->tag & KMMSCAND_REC_TAG_MASK) | KMMSCAND_REC_VALID |
	       ((u64)min(r->faults, KMMSCAND_REC_FAULT_MAX) <<
		KMMSCAND_REC_FAULT_SHIFT) |
	       ((u64)min(r->coarse, KMMSCAND_REC_COARSE_MAX) <<
		KMMSCAND_REC_COARSE_SHIFT) |
	       ((u64)(r->t_fault & KMMSCAND_REC_TIME_MASK) <<
		KMMSCAND_REC_TF_SHIFT) |
	       ((u64)(r->t_abit & KMMSCAND_REC_TIME_MASK) <<
		KMMSCAND_REC_TA_SHIFT);
}

/**
 * kmmscand_rec_tick - the record clock
 * @msecs: a time in milliseconds
 *
 * Return: @msecs in 128 ms ticks, modulo 2^14 (about 35 minutes).
 */
static inline unsigned int kmmscand_rec_tick(unsigned int msecs)
{
	return (msecs >> KMMSCAND_REC_TICK_SHIFT) & KMMSCAND_REC_TIME_MASK;
}

/**
 * kmmscand_rec_span - how long evidence is remembered
 * @n: hot_history (N)
 * @period_max_ms: scan_period_max_ms
 *
 * Return: N * @period_max_ms in ticks, rounded up, within [1, 2^13 - 1]
 * so that the age of a live record is never ambiguous.
 */
static inline unsigned int kmmscand_rec_span(unsigned int n,
					     unsigned int period_max_ms)
{
	u64 ms = (u64)clamp_t(unsigned int, n, 1, KMMSCAND_HISTORY_MAX) *
		 period_max_ms;
	u64 ticks = DIV_ROUND_UP_ULL(ms, 1U << KMMSCAND_REC_TICK_SHIFT);

	return clamp_t(u64, ticks, 1, (KMMSCAND_REC_TIME_MASK >> 1));
}

/**
 * kmmscand_rec_fresh - is a time stamp within the remembered span?
 * @t: the stamp (ticks)
 * @now: the current tick
 * @span: kmmscand_rec_span()
 *
 * Return: true if @t is at most @span ticks before @now.
 */
static inline bool kmmscand_rec_fresh(unsigned int t, unsigned int now,
				      unsigned int span)
{
	return ((now - t) & KMMSCAND_REC_TIME_MASK) <= span;
}

/**
 * kmmscand_rec_evidence - what a slot remembers about a page
 * @v: the slot
 * @tag: the page's tag
 * @now: the current tick
 * @span: kmmscand_rec_span()
 * @faults: hint faults remembered
 * @coarse: young passes of the scanner remembered
 *
 * Evidence of another page (another tag) or older than @span is none.
 */
static inline void kmmscand_rec_evidence(u64 v, u32 tag, unsigned int now,
					 unsigned int span,
					 unsigned int *faults,
					 unsigned int *coarse)
{
	struct kmmscand_rec r;

	kmmscand_rec_unpack(v, &r);
	*faults = 0;
	*coarse = 0;
	if (!r.valid || r.tag != (tag & KMMSCAND_REC_TAG_MASK))
		return;
	if (kmmscand_rec_fresh(r.t_fault, now, span))
		*faults = r.faults;
	if (kmmscand_rec_fresh(r.t_abit, now, span))
		*coarse = r.coarse;
}

/**
 * kmmscand_rec_live - does a slot hold evidence still remembered?
 * @v: the slot
 * @now: the current tick
 * @span: kmmscand_rec_span()
 *
 * Return: true if overwriting @v for another page loses evidence.
 */
static inline bool kmmscand_rec_live(u64 v, unsigned int now,
				     unsigned int span)
{
	struct kmmscand_rec r;

	kmmscand_rec_unpack(v, &r);
	return r.valid &&
	       ((r.faults && kmmscand_rec_fresh(r.t_fault, now, span)) ||
		(r.coarse && kmmscand_rec_fresh(r.t_abit, now, span)));
}

/**
 * kmmscand_rec_add_fault - the slot after a hint fault on a page
 * @v: the slot
 * @tag: the page's tag
 * @now: the current tick
 * @span: kmmscand_rec_span()
 * @consumed: the page was queued: forget its evidence
 *
 * A hint fault always takes the slot: it is the newest and the precise
 * evidence.  The faults remembered grow by one (from zero when they were
 * too old, or of another page); the scanner's evidence of the same page is
 * kept.  A queued page starts again from nothing, so that a page that
 * later reuses the frame inherits no evidence.
 *
 * Return: the new slot value.
 */
static inline u64 kmmscand_rec_add_fault(u64 v, u32 tag, unsigned int now,
					 unsigned int span, bool consumed)
{
	struct kmmscand_rec r;
	unsigned int faults, coarse;

	kmmscand_rec_evidence(v, tag, now, span, &faults, &coarse);
	kmmscand_rec_unpack(v, &r);
	if (!r.valid || r.tag != (tag & KMMSCAND_REC_TAG_MASK))
		r.t_abit = now;
	r.tag = tag;
	r.valid = true;
	r.faults = consumed ? 0 : min(faults + 1, KMMSCAND_REC_FAULT_MAX);
	r.coarse = consumed ? 0 : coarse;
	r.t_fault = now;
	return kmmscand_rec_pack(&r);
}

/**
 * kmmscand_rec_set_coarse - the slot after the scanner looked at a page
 * @v: the slot
 * @tag: the page's tag
 * @coarse: young passes among the scanner's last N - 1
 * @now: the current tick
 * @span: kmmscand_rec_span()
 *
 * The scanner never takes the slot of another page whose evidence is still
 * remembered (hint faults are the precise source), and takes no free slot
 * just to say that a page was not used.
 *
 * Return: the new slot value (@v when nothing changes).
 */
static inline u64 kmmscand_rec_set_coarse(u64 v, u32 tag, unsigned int coarse,
					  unsigned int now, unsigned int span)
{
	struct kmmscand_rec r;

	kmmscand_rec_unpack(v, &r);
	if (!r.valid || r.tag != (tag & KMMSCAND_REC_TAG_MASK)) {
		if (!coarse || kmmscand_rec_live(v, now, span))
			return v;
		r.tag = tag;
		r.valid = true;
		r.faults = 0;
		r.t_fault = now;
	}
	r.coarse = coarse;
	r.t_abit = now;
	return kmmscand_rec_pack(&r);
}

/**
 * kmmscand_history_prior - young passes before the one in progress
 * @history: the scanner's history of a page, bit 0 = last complete pass
 * @n: hot_history (N)
 *
 * Return: how many of the last N - 1 complete passes found the page young,
 * the earlier windows of a hint fault that comes before the next pass.
 */
static inline unsigned int kmmscand_history_prior(unsigned int history,
						  unsigned int n)
{
	n = clamp_t(unsigned int, n, 1, KMMSCAND_HISTORY_MAX);
	return hweight32(history & ((1U << (n - 1)) - 1));
}

/**
 * kmmscand_fault_hot - the hotness rule at a hint fault
 * @coarse: young passes among the scanner's last N - 1 (remembered)
 * @faults: earlier hint faults remembered
 * @n: hot_history (N)
 * @k: hot_threshold (K)
 * @ample: the target node has room to spare
 *
 * The fault counts for the current window; the earlier windows are those
 * of the source that saw more of them, at most N - 1 (see above).
 *
 * Room to spare on the target lowers the bar to two windows, as for the
 * scanner (kmmscand_is_hot()): the fault and one earlier window of either
 * source.  A page touched once (one fault and nothing before it) is never
 * hot, however empty the top tier: NUMA balancing promotes on the first
 * hint fault while pgdat_free_space_enough() holds; kmmscand does not.
 *
 * Return: true if 1 + min(max(@coarse, @faults), N - 1) >= K, or if
 * @ample and @coarse or @faults is not zero.
 */
static inline bool kmmscand_fault_hot(unsigned int coarse, unsigned int faults,
				      unsigned int n, unsigned int k,
				      bool ample)
{
	unsigned int prior;

	if (ample && (coarse || faults))
		return true;
	n = clamp_t(unsigned int, n, 1, KMMSCAND_HISTORY_MAX);
	prior = min(max(coarse, faults), n - 1);
	return prior + 1 >= max(k, 1U);
}

/**
 * kmmscand_access_target - the target of a page whose accessor is known
 * @nid: the node of the CPU that accessed the page, or NUMA_NO_NODE
 * @allowed: nodes the accessing task may use (cpuset, policy)
 * @toptier: nodes in the top memory tier that have memory
 * @src: the node the page is on now
 * @override: the target_node tunable, -1 for automatic
 * @distance: node distance callback
 *
 * Rule, in order: @override if it is an allowed top-tier node; @nid if it
 * is one; the allowed top-tier node nearest to @nid (to @src when @nid is
 * not known), ties to the lowest id; NUMA_NO_NODE if none is allowed.
 *
 * Return: the target node id or NUMA_NO_NODE.
 */
static inline int kmmscand_access_target(int nid, const nodemask_t *allowed,
					 const nodemask_t *toptier, int src,
					 int override,
					 kmmscand_distance_fn distance)
{
	bool ovr = override >= 0 && override < MAX_NUMNODES &&
		   node_isset(override, *allowed) &&
		   node_isset(override, *toptier);

	if (nid < 0 || nid >= MAX_NUMNODES)
		nid = NUMA_NO_NODE;
	if (!ovr && nid != NUMA_NO_NODE && node_isset(nid, *allowed) &&
	    node_isset(nid, *toptier))
		return nid;
	return kmmscand_choose_target(NULL, 0, allowed, toptier,
				      nid != NUMA_NO_NODE ? nid : src,
				      override, distance);
}

/**
 * kmmscand_source_name - the name of a source in the sources file
 * @src: the source
 *
 * Return: its name, or NULL for a value that is no source.
 */
static inline const char *kmmscand_source_name(unsigned int src)
{
	switch (src) {
	case KMMSCAND_SRC_ABIT:
		return "abit";
	case KMMSCAND_SRC_FAULT:
		return "fault";
	default:
		return NULL;
	}
}

/**
 * kmmscand_sources_parse - parse a write to the sources file
 * @buf: the text written (need not be NUL-terminated)
 * @len: its length in bytes
 * @mask: the sources, BIT(enum kmmscand_source) each, on success
 *
 * The text is one or more distinct source names ("abit", "fault")
 * separated by single spaces, optionally followed by one newline.
 *
 * Return: 0, or -EINVAL with @mask untouched.
 */
static inline int kmmscand_sources_parse(const char *buf, size_t len,
					 unsigned int *mask)
{
	unsigned int set = 0, src;
	size_t i = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	if (!len)
		return -EINVAL;
	while (i < len) {
		size_t end = i;
		const char *name;

		while (end < len && buf[end] != ' ')
			end++;
		for (src = 0; src < KMMSCAND_NR_SOURCES; src++) {
			name = kmmscand_source_name(src);
			if (strlen(name) == end - i && !memcmp(buf + i, name, end - i))
				break;
		}
		if (src == KMMSCAND_NR_SOURCES || (set & BIT(src)))
			return -EINVAL;
		set |= BIT(src);
		if (end == len)
			break;
		/* exactly one space, and a name after it */
		i = end + 1;
		if (i == len)
			return -EINVAL;
	}
	*mask = set;
	return 0;
}

#endif /* _MM_KMMSCAND_SOURCES_H */
