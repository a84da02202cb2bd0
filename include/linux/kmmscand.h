/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_KMMSCAND_H
#define _LINUX_KMMSCAND_H

#include <linux/sched/coredump.h>	/* MMF_VM_KMMSCAND, MMF_KMMSCAND_OFF */

struct mm_struct;
struct pglist_data;

/* Why a candidate left the queue without being migrated (tracepoint). */
enum kmmscand_drop_reason {
	KMMSCAND_DROP_FULL,	/* queue full when the scanner offered it */
	KMMSCAND_DROP_EXIT,	/* the mm exited */
	KMMSCAND_DROP_OPTOUT,	/* the mm opted out (PR_SET_KMMSCAND 0) */
	KMMSCAND_DROP_OFF,	/* kmmscand disabled or promotion rate 0 */
	KMMSCAND_DROP_DEFER,	/* no room to put a deferred batch back */
};

/* Why the promotion thread held back a batch (tracepoint). */
enum kmmscand_throttle_reason {
	KMMSCAND_THROTTLE_RATELIMIT,
	KMMSCAND_THROTTLE_WATERMARK,
	KMMSCAND_THROTTLE_DEMOTION,
};

#ifdef CONFIG_KMMSCAND
void __kmmscand_enter(struct mm_struct *mm);
void __kmmscand_exit(struct mm_struct *mm);
int kmmscand_prctl_set(struct mm_struct *mm, unsigned long on);
bool kmmscand_promo_wmark_active(struct pglist_data *pgdat);

/*
 * A new mm (fork or exec) starts without MMF_VM_KMMSCAND: mmf_init_flags()
 * clears it, so an mm whose fork or exec fails before this hook is never
 * unregistered.  MMF_KMMSCAND_OFF is inherited on purpose.
 */
static inline void kmmscand_new_mm(struct mm_struct *mm)
{
	if (!test_bit(MMF_KMMSCAND_OFF, &mm->flags))
		__kmmscand_enter(mm);
}

/* A child mm is scanned unless its parent opted out (MMF_INIT_MASK). */
static inline void kmmscand_fork(struct mm_struct *mm, struct mm_struct *oldmm)
{
	kmmscand_new_mm(mm);
}

/* The mm installed by execve(); the opt-out survives exec. */
static inline void kmmscand_execve(struct mm_struct *mm)
{
	kmmscand_new_mm(mm);
}

/* Called from __mmput() before exit_mmap(). */
static inline void kmmscand_exit(struct mm_struct *mm)
{
	if (test_bit(MMF_VM_KMMSCAND, &mm->flags))
		__kmmscand_exit(mm);
}

static inline int kmmscand_prctl_get(struct mm_struct *mm)
{
	return !test_bit(MMF_KMMSCAND_OFF, &mm->flags);
}

/* For /proc/<pid>/status: registered and not opted out. */
static inline int kmmscand_scanned(struct mm_struct *mm)
{
	return test_bit(MMF_VM_KMMSCAND, &mm->flags) &&
	       !test_bit(MMF_KMMSCAND_OFF, &mm->flags);
}
#else
static inline void kmmscand_fork(struct mm_struct *mm, struct mm_struct *oldmm)
{
}

static inline void kmmscand_execve(struct mm_struct *mm)
{
}

static inline void kmmscand_exit(struct mm_struct *mm)
{
}

static inline bool kmmscand_promo_wmark_active(struct pglist_data *pgdat)
{
	return false;
}
#endif /* CONFIG_KMMSCAND */

#endif /* _LINUX_KMMSCAND_H */
