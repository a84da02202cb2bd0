/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_KMMSCAND_H
#define _LINUX_KMMSCAND_H

#include <linux/jump_label.h>
#include <linux/sched/coredump.h>	/* MMF_VM_KMMSCAND, MMF_KMMSCAND_OFF */
#include <linux/types.h>
#include <asm/current.h>
#include <uapi/linux/sched.h>		/* CLONE_VM */

struct folio;
struct mm_struct;
struct pglist_data;
struct task_struct;
struct vm_area_struct;
struct vm_fault;

/*
 * Where kmmscand learns of an access (sysfs "sources", tracepoints, the
 * kmmscand_<source>_* counters).  The scanner's Accessed bits are a coarse
 * source (used at least once per pass); the others report single accesses.
 */
enum kmmscand_source {
	KMMSCAND_SRC_ABIT,	/* the scanner thread: page table Accessed bits */
	KMMSCAND_SRC_FAULT,	/* NUMA balancing hint faults (tiering mode) */
	KMMSCAND_NR_SOURCES,
};

/* Why a candidate left the queue without being migrated (tracepoint). */
enum kmmscand_drop_reason {
	KMMSCAND_DROP_FULL,	/* queue full when the scanner offered it */
	KMMSCAND_DROP_EXIT,	/* the mm exited before its batch ran */
	KMMSCAND_DROP_OPTOUT,	/* the mm opted out (PR_SET_KMMSCAND 0) */
	KMMSCAND_DROP_OFF,	/* kmmscand disabled or promotion rate 0 */
	KMMSCAND_DROP_DEFER,	/* no room to put a deferred batch back */
	KMMSCAND_DROP_POLICY,	/* policy or cpuset forbid it at batch time */
};

/* Why the promotion thread held back a batch (tracepoint). */
enum kmmscand_throttle_reason {
	KMMSCAND_THROTTLE_RATELIMIT,
	KMMSCAND_THROTTLE_WATERMARK,
	KMMSCAND_THROTTLE_DEMOTION,
};

#ifdef CONFIG_KMMSCAND
void __kmmscand_enter(struct mm_struct *mm, struct task_struct *owner);
void __kmmscand_fork(struct task_struct *p);
void __kmmscand_exit(struct mm_struct *mm);
int kmmscand_prctl_set(struct mm_struct *mm, unsigned long on);
bool kmmscand_promo_wmark_active(struct pglist_data *pgdat);
bool kmmscand_record_access(struct folio *folio, struct vm_area_struct *vma,
			    unsigned long addr, int nid,
			    enum kmmscand_source src);
bool __kmmscand_numa_hint_fault(struct folio *folio, struct vm_fault *vmf,
				unsigned long addr);
bool __kmmscand_numa_queued(struct folio *folio);

/* On while the hint-fault source is selected (mm/kmmscand_record.c). */
DECLARE_STATIC_KEY_FALSE(kmmscand_fault_source);

/**
 * kmmscand_numa_hint_fault - offer a NUMA hint fault to kmmscand
 * @folio: the folio that faulted, mapped under the page table lock held
 * @vmf: the fault
 * @addr: the faulting address (the start of a PMD-mapped THP)
 *
 * With the hint-fault source selected, kmmscand takes the hint faults on
 * slow-tier folios in NUMA balancing's tiering mode: it records the access
 * and promotes the folio from its migration thread if that makes it hot.
 * Otherwise, and always while the source is not selected (a static key),
 * the fault is NUMA balancing's alone.
 *
 * Context: atomic, the page table lock of @vmf held.
 *
 * Return: true if kmmscand took the fault: the caller must not migrate.
 */
static inline bool kmmscand_numa_hint_fault(struct folio *folio,
					    struct vm_fault *vmf,
					    unsigned long addr)
{
	if (!static_branch_unlikely(&kmmscand_fault_source))
		return false;
	return __kmmscand_numa_hint_fault(folio, vmf, addr);
}

/**
 * kmmscand_numa_skip_sample - may NUMA balancing's scan skip a folio?
 * @folio: the folio about to be made PROT_NONE, mapped under the page
 *	table lock held
 *
 * With the hint-fault source selected, a slow-tier folio that kmmscand
 * already queued for promotion is left accessible: another hint fault on
 * it would cost the task a fault and tell kmmscand nothing new.  While the
 * source is not selected (a static key) every folio is sampled as before.
 *
 * Context: atomic, the page table lock held.
 *
 * Return: true if the caller should not sample @folio.
 */
static inline bool kmmscand_numa_skip_sample(struct folio *folio)
{
	if (!static_branch_unlikely(&kmmscand_fault_source))
		return false;
	return __kmmscand_numa_queued(folio);
}

/*
 * A new mm (fork or exec) starts without MMF_VM_KMMSCAND: mmf_init_flags()
 * clears it, so an mm whose fork or exec fails before this hook is never
 * unregistered.  MMF_KMMSCAND_OFF is inherited on purpose.
 */
static inline void kmmscand_new_mm(struct mm_struct *mm)
{
	if (!test_bit(MMF_KMMSCAND_OFF, &mm->flags))
		__kmmscand_enter(mm, current);
}

/*
 * A child with an mm of its own, called once it is on the task list: a
 * registration round that starts after this point finds the child there
 * (see __kmmscand_enter()).  It is scanned unless its parent opted out
 * (MMF_INIT_MASK).
 */
static inline void kmmscand_fork(struct task_struct *p, u64 clone_flags)
{
	if (!(clone_flags & CLONE_VM))
		__kmmscand_fork(p);
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
static inline void kmmscand_fork(struct task_struct *p, u64 clone_flags)
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

static inline bool kmmscand_record_access(struct folio *folio,
					  struct vm_area_struct *vma,
					  unsigned long addr, int nid,
					  enum kmmscand_source src)
{
	return false;
}

static inline bool kmmscand_numa_hint_fault(struct folio *folio,
					    struct vm_fault *vmf,
					    unsigned long addr)
{
	return false;
}

static inline bool kmmscand_numa_skip_sample(struct folio *folio)
{
	return false;
}
#endif /* CONFIG_KMMSCAND */

#endif /* _LINUX_KMMSCAND_H */
