/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kmmscand

#if !defined(_TRACE_KMMSCAND_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_KMMSCAND_H

#include <linux/kmmscand.h>
#include <linux/migrate_mode.h>
#include <linux/tracepoint.h>

/*
 * Every event identifies an address space only by its mm pointer, printed
 * hashed (%p) so that events of one mm can be correlated without leaking
 * kernel addresses.  No task names: the mm outlives its tasks and comm is
 * meaningless from a kernel thread.
 */

DECLARE_EVENT_CLASS(kmmscand_mm,

	TP_PROTO(struct mm_struct *mm),

	TP_ARGS(mm),

	TP_STRUCT__entry(
		__field(const void *, mm)
	),

	TP_fast_assign(
		__entry->mm = mm;
	),

	TP_printk("mm=%p", __entry->mm)
);

DEFINE_EVENT(kmmscand_mm, kmmscand_mm_enter,
	TP_PROTO(struct mm_struct *mm),
	TP_ARGS(mm)
);

DEFINE_EVENT(kmmscand_mm, kmmscand_mm_exit,
	TP_PROTO(struct mm_struct *mm),
	TP_ARGS(mm)
);

TRACE_EVENT(kmmscand_scan_start,

	TP_PROTO(struct mm_struct *mm, unsigned int period_ms,
		 unsigned int budget),

	TP_ARGS(mm, period_ms, budget),

	TP_STRUCT__entry(
		__field(const void *, mm)
		__field(unsigned int, period_ms)
		__field(unsigned int, budget)
	),

	TP_fast_assign(
		__entry->mm = mm;
		__entry->period_ms = period_ms;
		__entry->budget = budget;
	),

	TP_printk("mm=%p period_ms=%u budget=%u",
		  __entry->mm, __entry->period_ms, __entry->budget)
);

TRACE_EVENT(kmmscand_scan_end,

	TP_PROTO(struct mm_struct *mm, unsigned long scanned,
		 unsigned long pmd_skipped, unsigned long young,
		 unsigned long candidates, unsigned int period_ms,
		 unsigned int budget),

	TP_ARGS(mm, scanned, pmd_skipped, young, candidates, period_ms, budget),

	TP_STRUCT__entry(
		__field(const void *, mm)
		__field(unsigned long, scanned)
		__field(unsigned long, pmd_skipped)
		__field(unsigned long, young)
		__field(unsigned long, candidates)
		__field(unsigned int, period_ms)
		__field(unsigned int, budget)
	),

	TP_fast_assign(
		__entry->mm = mm;
		__entry->scanned = scanned;
		__entry->pmd_skipped = pmd_skipped;
		__entry->young = young;
		__entry->candidates = candidates;
		__entry->period_ms = period_ms;
		__entry->budget = budget;
	),

	TP_printk("mm=%p scanned=%lu pmd_skipped=%lu young=%lu candidates=%lu period_ms=%u budget=%u",
		  __entry->mm, __entry->scanned, __entry->pmd_skipped,
		  __entry->young, __entry->candidates, __entry->period_ms,
		  __entry->budget)
);

/*
 * The reasons printed by name: export their values to user space so that
 * tools parsing the format files can decode them.
 */
TRACE_DEFINE_ENUM(KMMSCAND_DROP_FULL);
TRACE_DEFINE_ENUM(KMMSCAND_DROP_EXIT);
TRACE_DEFINE_ENUM(KMMSCAND_DROP_OPTOUT);
TRACE_DEFINE_ENUM(KMMSCAND_DROP_OFF);
TRACE_DEFINE_ENUM(KMMSCAND_DROP_DEFER);
TRACE_DEFINE_ENUM(KMMSCAND_DROP_POLICY);
TRACE_DEFINE_ENUM(KMMSCAND_THROTTLE_RATELIMIT);
TRACE_DEFINE_ENUM(KMMSCAND_THROTTLE_WATERMARK);
TRACE_DEFINE_ENUM(KMMSCAND_THROTTLE_DEMOTION);
TRACE_DEFINE_ENUM(MR_KMMSCAND);
TRACE_DEFINE_ENUM(KMMSCAND_SRC_ABIT);
TRACE_DEFINE_ENUM(KMMSCAND_SRC_FAULT);

/* The names, each list once, for the events that print them. */
#define kmmscand_show_drop_reason(reason)				\
	__print_symbolic(reason,					\
			 { KMMSCAND_DROP_FULL, "queue_full" },		\
			 { KMMSCAND_DROP_EXIT, "exit" },		\
			 { KMMSCAND_DROP_OPTOUT, "opt_out" },		\
			 { KMMSCAND_DROP_OFF, "off" },			\
			 { KMMSCAND_DROP_DEFER, "defer_full" },		\
			 { KMMSCAND_DROP_POLICY, "policy" })

#define kmmscand_show_throttle_reason(reason)				\
	__print_symbolic(reason,					\
			 { KMMSCAND_THROTTLE_RATELIMIT, "ratelimit" },	\
			 { KMMSCAND_THROTTLE_WATERMARK, "watermark" },	\
			 { KMMSCAND_THROTTLE_DEMOTION, "demotion" })

#define kmmscand_show_source(source)					\
	__print_symbolic(source,					\
			 { KMMSCAND_SRC_ABIT, "abit" },			\
			 { KMMSCAND_SRC_FAULT, "fault" })

TRACE_EVENT(kmmscand_candidate_drop,

	TP_PROTO(unsigned long pfn, int nid, int reason),

	TP_ARGS(pfn, nid, reason),

	TP_STRUCT__entry(
		__field(unsigned long, pfn)
		__field(int, nid)
		__field(int, reason)
	),

	TP_fast_assign(
		__entry->pfn = pfn;
		__entry->nid = nid;
		__entry->reason = reason;
	),

	TP_printk("pfn=0x%lx nid=%d reason=%s", __entry->pfn, __entry->nid,
		  kmmscand_show_drop_reason(__entry->reason))
);

/*
 * The migrations of one batch towards one node of candidates from one
 * source.  @nr, @succeeded and @failed are all in base pages (a PMD-mapped
 * THP counts HPAGE_PMD_NR), @succeeded + @failed == @nr.
 */
TRACE_EVENT(kmmscand_migrate_batch,

	TP_PROTO(unsigned int nr, unsigned int succeeded, unsigned int failed,
		 int target_nid, int reason, int source),

	TP_ARGS(nr, succeeded, failed, target_nid, reason, source),

	TP_STRUCT__entry(
		__field(unsigned int, nr)
		__field(unsigned int, succeeded)
		__field(unsigned int, failed)
		__field(int, target_nid)
		__field(int, reason)
		__field(int, source)
	),

	TP_fast_assign(
		__entry->nr = nr;
		__entry->succeeded = succeeded;
		__entry->failed = failed;
		__entry->target_nid = target_nid;
		__entry->reason = reason;
		__entry->source = source;
	),

	TP_printk("nr=%u succeeded=%u failed=%u target_nid=%d reason=%s source=%s",
		  __entry->nr, __entry->succeeded, __entry->failed,
		  __entry->target_nid,
		  __print_symbolic(__entry->reason,
				   { MR_KMMSCAND, "kmmscand" }),
		  kmmscand_show_source(__entry->source))
);

/*
 * An access reported by a source other than the scanner (a hint fault),
 * in the context that took it.  @nid is the node of the accessing CPU,
 * @target_nid where the folio would go (-1: nowhere allowed), @faults and
 * @coarse the evidence remembered before this access (hint faults, young
 * passes of the scanner), @hot whether it made the folio a candidate.
 */
TRACE_EVENT(kmmscand_record,

	TP_PROTO(unsigned long pfn, int nid, int target_nid, int source,
		 unsigned int faults, unsigned int coarse, bool hot),

	TP_ARGS(pfn, nid, target_nid, source, faults, coarse, hot),

	TP_STRUCT__entry(
		__field(unsigned long, pfn)
		__field(int, nid)
		__field(int, target_nid)
		__field(int, source)
		__field(unsigned int, faults)
		__field(unsigned int, coarse)
		__field(bool, hot)
	),

	TP_fast_assign(
		__entry->pfn = pfn;
		__entry->nid = nid;
		__entry->target_nid = target_nid;
		__entry->source = source;
		__entry->faults = faults;
		__entry->coarse = coarse;
		__entry->hot = hot;
	),

	TP_printk("pfn=0x%lx nid=%d target_nid=%d source=%s faults=%u coarse=%u hot=%d",
		  __entry->pfn, __entry->nid, __entry->target_nid,
		  kmmscand_show_source(__entry->source),
		  __entry->faults, __entry->coarse, __entry->hot)
);

TRACE_EVENT(kmmscand_throttle,

	TP_PROTO(int reason, int target_nid, unsigned int nr),

	TP_ARGS(reason, target_nid, nr),

	TP_STRUCT__entry(
		__field(int, reason)
		__field(int, target_nid)
		__field(unsigned int, nr)
	),

	TP_fast_assign(
		__entry->reason = reason;
		__entry->target_nid = target_nid;
		__entry->nr = nr;
	),

	TP_printk("reason=%s target_nid=%d nr=%u",
		  kmmscand_show_throttle_reason(__entry->reason),
		  __entry->target_nid, __entry->nr)
);

#endif /* _TRACE_KMMSCAND_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
