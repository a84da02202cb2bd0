// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_mm: the registry of the mms that kmmscand scans.
 *
 * Every user mm is registered at fork and exec (khugepaged style: struct
 * mm_slot hash + list under one spinlock) unless its process opted out,
 * and leaves the registry in __mmput(), or when the scanner finds it gone
 * (kmmscand_collect()).  Its queued promotion candidates stay queued: the
 * migration thread drops them when it finds the mm without users.
 * Nothing is registered before kmmscand_init() succeeded, while kmmscand
 * is disabled, nor on a machine without a slow tier; the scanner thread
 * catches up (kmmscand_register_all()) when kmmscand is enabled or memory
 * comes online.
 *
 * The tunables are defined here too: the registry is the first to read
 * them (a new mm's scan period and budget).  Their sysfs files are in
 * mm/kmmscand_sysfs.c.
 */

#define pr_fmt(fmt) "kmmscand: " fmt

#include <linux/init.h>
#include <linux/kmmscand.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/memory-tiers.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/oom.h>
#include <linux/rbtree.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "mm_slot.h"
#include "kmmscand_internal.h"

#include <trace/events/kmmscand.h>

/* Scan period of a new mm, before the first adaptation (ms). */
#define KMMSCAND_PERIOD_INIT_MS		2000

#define KMMSCAND_HASH_BITS		10

/*
 * Tunables: see Documentation/admin-guide/mm/kmmscand.rst.  Off at boot
 * unless CONFIG_KMMSCAND_DEFAULT_ON or kmmscand=on says otherwise.
 */
bool kmmscand_enabled __read_mostly = IS_ENABLED(CONFIG_KMMSCAND_DEFAULT_ON);
unsigned int kmmscand_scan_period_min_ms __read_mostly = 500;
unsigned int kmmscand_scan_period_max_ms __read_mostly = 5000;
unsigned int kmmscand_scan_size __read_mostly = 65536;
unsigned int kmmscand_hot_history __read_mostly = 2;
unsigned int kmmscand_hot_threshold __read_mostly = 2;
bool kmmscand_pmd_skip __read_mostly = true;
bool kmmscand_tlb_flush __read_mostly;
unsigned int kmmscand_migrate_batch __read_mostly = 512;
unsigned int kmmscand_promote_rate_mbps __read_mostly = 256;
int kmmscand_target_node __read_mostly = NUMA_NO_NODE;
unsigned int kmmscand_sources __read_mostly = BIT(KMMSCAND_SRC_ABIT);

struct kmmscand_scan kmmscand_scan = {
	.mm_head = LIST_HEAD_INIT(kmmscand_scan.mm_head),
};

DEFINE_SPINLOCK(kmmscand_mm_lock);
static DEFINE_READ_MOSTLY_HASHTABLE(kmmscand_slots_hash, KMMSCAND_HASH_BITS);
static struct kmem_cache *kmmscand_slot_cache __ro_after_init;
/* Set once kmmscand_init() succeeded; until then no mm is registered. */
static bool kmmscand_ready __read_mostly;

DECLARE_WAIT_QUEUE_HEAD(kmmscand_wait);
unsigned long kmmscand_events;

atomic_long_t kmmscand_hist_total = ATOMIC_LONG_INIT(0);
atomic_long_t kmmscand_tables_total = ATOMIC_LONG_INIT(0);

/**
 * kmmscand_scanner_wake - end the scanner's sleep and say why
 * @ev: what changed
 *
 * The scanner applies the tunables, registers the mms it may have missed
 * (kmmscand just enabled, or memory onlined that may be a new slow tier)
 * or visits the first mm of an empty list, then goes on with its round.
 * The change must be stored before the call: the barrier orders it
 * before the event, for the scanner that consumes the event.
 *
 * Context: any; does not sleep.
 */
void kmmscand_scanner_wake(enum kmmscand_event ev)
{
	/* The change before the event: see kmmscand_catch_up(). */
	smp_mb__before_atomic();
	set_bit(ev, &kmmscand_events);
	wake_up_interruptible(&kmmscand_wait);
}

/**
 * kmmscand_tables_free - free the table records of an mm
 * @root: records that nobody else can reach any more (see struct
 *	kmmscand_table); left empty
 *
 * One record at a time, with interrupts on and rescheduling between them:
 * a large sparse mm may have many.
 *
 * Context: process context, no spinlock held; may sleep.
 */
void kmmscand_tables_free(struct rb_root *root)
{
	struct kmmscand_table *t, *tmp;
	long bytes = 0, nr = 0;

	rbtree_postorder_for_each_entry_safe(t, tmp, root, node) {
		if (t->planes) {
			bytes += kmmscand_planes_size(t->n);
			kfree(t->planes);
		}
		bytes += kmmscand_table_size();
		nr++;
		kfree(t);
		cond_resched();
	}
	*root = RB_ROOT;
	atomic_long_sub(bytes, &kmmscand_hist_total);
	atomic_long_sub(nr, &kmmscand_tables_total);
}

/* kmmscand=on|off on the kernel command line: enabled at boot or not. */
static int __init kmmscand_setup(char *str)
{
	bool on;

	if (!str || kstrtobool(str, &on)) {
		pr_warn("kmmscand=%s: neither on nor off, ignored (kmmscand is %s)\n",
			str ?: "", kmmscand_enabled ? "on" : "off");
		return 0;
	}
	kmmscand_enabled = on;
	return 0;
}
early_param("kmmscand", kmmscand_setup);

static void kmmscand_slot_free(struct kmmscand_mm_slot *ms)
{
	kmmscand_tables_free(&ms->tables);
	kfree(ms->footprint);
#ifndef CONFIG_MEMCG
	put_pid(ms->owner);
#endif
	mm_slot_free(kmmscand_slot_cache, ms);
}

/**
 * kmmscand_have_slow_tier - is there anything to promote at all?
 *
 * Context: any; node states may change right after.
 *
 * Return: true if a node with memory is below the top tier.
 */
bool kmmscand_have_slow_tier(void)
{
	int nid;

	for_each_node_state(nid, N_MEMORY)
		if (!node_is_toptier(nid))
			return true;
	return false;
}

/**
 * __kmmscand_enter - register an mm with kmmscand
 * @mm: a new user mm (from fork or exec), or current->mm opting back in
 * @owner: a task of the process that uses @mm; without CONFIG_MEMCG its
 *	thread group stands for mm->owner (kmmscand_mm_owner())
 *
 * Takes a reference on the mm_struct (mmgrab) that is dropped when the
 * slot is freed.  Allocation failure only means the mm is not scanned.
 * While kmmscand is disabled, and on a machine without a slow tier,
 * nothing is registered, so fork, exec and exit take no lock and allocate
 * nothing more than without kmmscand.  When kmmscand is enabled or a slow
 * tier comes online, the scanner registers the mms that exist then
 * (kmmscand_register_all()).
 *
 * Context: process context; may sleep (GFP_KERNEL allocation).
 */
void __kmmscand_enter(struct mm_struct *mm, struct task_struct *owner)
{
	struct kmmscand_mm_slot *ms;
	struct mm_slot *slot;
	unsigned int period, pmin;
	bool wakeup;

	/*
	 * Pairs with the barrier in kmmscand_catch_up_wanted(): either this
	 * sees kmmscand enabled and the slow tier, or the registration
	 * round that follows the change finds this mm's task on the task
	 * list (fork calls here once the child is on it, exec once the
	 * task's ->mm is the new mm).
	 */
	smp_mb();
	if (!READ_ONCE(kmmscand_ready) || !READ_ONCE(kmmscand_enabled) ||
	    !kmmscand_have_slow_tier() ||
	    test_and_set_bit(MMF_VM_KMMSCAND, &mm->flags))
		return;

	ms = mm_slot_alloc(kmmscand_slot_cache);
	if (!ms) {
		clear_bit(MMF_VM_KMMSCAND, &mm->flags);
		return;
	}
	ms->tables = RB_ROOT;
	pmin = READ_ONCE(kmmscand_scan_period_min_ms);
	period = clamp(KMMSCAND_PERIOD_INIT_MS, pmin,
		       READ_ONCE(kmmscand_scan_period_max_ms));
	ms->period_ms = period;
	ms->budget = READ_ONCE(kmmscand_scan_size);
	/*
	 * The first pass only clears Accessed bits, the second can find hot
	 * pages: start after the shortest period, which also lets
	 * short-lived tasks go away unscanned.
	 */
	ms->next_scan = jiffies + msecs_to_jiffies(pmin);
	ms->next_full = ms->next_scan;
	ms->backoff_nid = NUMA_NO_NODE;
#ifndef CONFIG_MEMCG
	ms->owner = get_task_pid(owner, PIDTYPE_TGID);
#endif

	slot = &ms->slot;
	/*
	 * The reference the slot holds, taken before the slot is published:
	 * once it is on the list, the scanner may collect and release it.
	 */
	mmgrab(mm);
	spin_lock(&kmmscand_mm_lock);
	mm_slot_insert(kmmscand_slots_hash, mm, slot);
	ms->round = kmmscand_scan.round;
	wakeup = list_empty(&kmmscand_scan.mm_head);
	list_add_tail(&slot->mm_node, &kmmscand_scan.mm_head);
	spin_unlock(&kmmscand_mm_lock);

	trace_kmmscand_mm_enter(mm);
	/*
	 * With nothing registered the scanner may be in a long sleep: one
	 * that started before the slow tier was known (at boot, before the
	 * memory tiers of CPU-less nodes are set up) lasts
	 * scan_period_max_ms.  End it, so that the first mm is visited
	 * after scan_period_min_ms like every other.
	 */
	if (wakeup)
		kmmscand_scanner_wake(KMMSCAND_EV_FIRST_MM);
}

/**
 * __kmmscand_fork - register the mm of a new child
 * @p: the child, on the task list and not yet running, with an mm of its
 *	own (no CLONE_VM) unless it is a kernel thread
 *
 * Context: process context, the parent in copy_process(); may sleep.
 */
void __kmmscand_fork(struct task_struct *p)
{
	if (p->mm && !test_bit(MMF_KMMSCAND_OFF, &p->mm->flags))
		__kmmscand_enter(p->mm, p);
}

/**
 * __kmmscand_exit - unregister an mm whose last user is gone
 * @mm: the mm, from __mmput() before exit_mmap()
 *
 * O(1): the mm's queued candidates stay queued, each holding the
 * mm_struct, and the migrator drops them when it finds the mm without
 * users.  If the scanner is positioned on this mm's slot, the slot is
 * left for the scanner to free (kmmscand_release()):
 * it cannot be walking the page tables, because it only does so holding an
 * mm_users reference (mmget_not_zero()), and mm_users is already 0 here.
 * Whoever takes the slot out of the registry traces kmmscand_mm_exit, so
 * every registration is matched by exactly one such event.
 *
 * Context: process context; may sleep (freeing the mm's access history).
 */
void __kmmscand_exit(struct mm_struct *mm)
{
	struct kmmscand_mm_slot *ms = NULL;
	struct mm_slot *slot;
	bool free = false;

	spin_lock(&kmmscand_mm_lock);
	slot = mm_slot_lookup(kmmscand_slots_hash, mm);
	if (slot) {
		ms = mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
		if (kmmscand_scan.mm_slot != ms) {
			hash_del(&slot->hash);
			list_del(&slot->mm_node);
			free = true;
		}
	}
	spin_unlock(&kmmscand_mm_lock);

	if (free) {
		trace_kmmscand_mm_exit(mm);
		clear_bit(MMF_VM_KMMSCAND, &mm->flags);
		kmmscand_slot_free(ms);
		mmdrop(mm);
	}
}

/**
 * kmmscand_slot_lookup - the registry slot of an mm
 * @mm: the mm, used only as a key
 *
 * Context: the caller holds kmmscand_mm_lock.
 *
 * Return: the slot, or NULL if @mm is not registered.
 */
struct kmmscand_mm_slot *kmmscand_slot_lookup(struct mm_struct *mm)
{
	struct mm_slot *slot;

	lockdep_assert_held(&kmmscand_mm_lock);
	slot = mm_slot_lookup(kmmscand_slots_hash, mm);
	if (!slot)
		return NULL;
	return mm_slot_entry(slot, struct kmmscand_mm_slot, slot);
}

/**
 * kmmscand_collect - take a slot out of the registry if its mm is gone
 * @ms: the slot the scanner is on
 *
 * Context: the scanner thread, holding kmmscand_mm_lock.
 *
 * Return: true if taken out; the caller then frees it with
 * kmmscand_release() after dropping the lock.
 */
bool kmmscand_collect(struct kmmscand_mm_slot *ms)
{
	lockdep_assert_held(&kmmscand_mm_lock);

	if (atomic_read(&ms->slot.mm->mm_users))
		return false;
	hash_del(&ms->slot.hash);
	list_del(&ms->slot.mm_node);
	return true;
}

/**
 * kmmscand_release - free a slot taken out of the registry
 * @ms: a slot kmmscand_collect() took out
 *
 * Its mm may not have reached __kmmscand_exit() yet, and will find it
 * unregistered: trace the exit here.
 *
 * Context: process context; may sleep (freeing the mm's access history).
 */
void kmmscand_release(struct kmmscand_mm_slot *ms)
{
	struct mm_struct *mm = ms->slot.mm;

	trace_kmmscand_mm_exit(mm);
	clear_bit(MMF_VM_KMMSCAND, &mm->flags);
	kmmscand_slot_free(ms);
	mmdrop(mm);
}

/* Processes the task-list walk collects before it registers them. */
#define KMMSCAND_REGISTER_BATCH		16

/* An mm to register, with a reference on it and on its process. */
struct kmmscand_newcomer {
	struct mm_struct *mm;
	struct task_struct *task;
};

/*
 * Collect from @p on, in task-list order, up to KMMSCAND_REGISTER_BATCH
 * user mms that are neither registered nor opted out, each with an
 * mm_users reference and a reference on the thread that holds it.  Any
 * thread of a process may hold its mm: the thread-group leader may have
 * exited while the others run on.  Returns the next process to look at,
 * or &init_task at the end.
 */
static struct task_struct *
kmmscand_collect_mms(struct task_struct *p, struct kmmscand_newcomer *batch,
		     unsigned int *n)
{
	for (*n = 0; p != &init_task && *n < KMMSCAND_REGISTER_BATCH;
	     p = next_task(p)) {
		struct task_struct *t;
		struct mm_struct *mm;

		if (p->flags & PF_KTHREAD)
			continue;
		t = find_lock_task_mm(p);
		if (!t)
			continue;
		mm = t->mm;
		if (!test_bit(MMF_VM_KMMSCAND, &mm->flags) &&
		    !test_bit(MMF_KMMSCAND_OFF, &mm->flags) &&
		    mmget_not_zero(mm)) {
			get_task_struct(t);
			batch[*n].mm = mm;
			batch[(*n)++].task = t;
		}
		task_unlock(t);
	}
	return p;
}

/**
 * kmmscand_register_all - register the mms that exist now
 *
 * kmmscand was enabled, or a slow tier came online, after processes were
 * created unregistered: register every user mm that is neither registered
 * nor opted out.  The walk of the task list collects a few mms under RCU,
 * registers them outside it (registration allocates), and goes on from
 * where it stopped if that process is still on the list (the way
 * kernel/hung_task.c breaks its walk), so each process is looked at once:
 * O(processes), not a restart from the first process every few
 * registrations.  It starts over only if that process exited meanwhile.
 *
 * Context: the scanner thread; sleeps.
 *
 * Return: the number of mms registered.
 */
unsigned long kmmscand_register_all(void)
{
	struct kmmscand_newcomer batch[KMMSCAND_REGISTER_BATCH];
	unsigned long registered = 0;
	struct task_struct *p;
	unsigned int i, n, done;

	rcu_read_lock();
	p = next_task(&init_task);
	while (p != &init_task) {
		p = kmmscand_collect_mms(p, batch, &n);
		if (p != &init_task)
			get_task_struct(p);
		rcu_read_unlock();

		for (i = 0, done = 0; i < n; i++) {
			__kmmscand_enter(batch[i].mm, batch[i].task);
			done += test_bit(MMF_VM_KMMSCAND, &batch[i].mm->flags);
			mmput_async(batch[i].mm);
			put_task_struct(batch[i].task);
		}
		registered += done;
		cond_resched();

		rcu_read_lock();
		if (p != &init_task) {
			/* Still on the task list: its successor is valid. */
			bool linked = pid_alive(p);

			put_task_struct(p);
			if (!linked)
				p = next_task(&init_task);
		}
		/* Out of memory, or switched off: do not go on. */
		if ((n && !done) || kthread_should_stop() ||
		    !READ_ONCE(kmmscand_enabled))
			break;
	}
	rcu_read_unlock();
	return registered;
}

/**
 * kmmscand_prctl_set - PR_SET_KMMSCAND for the calling process's mm
 * @mm: current->mm
 * @on: 1 to be scanned (the default), 0 to opt out
 *
 * The state lives in MMF_KMMSCAND_OFF, which is in MMF_INIT_MASK: it is
 * inherited over fork and kept over exec.  Opting out waits for a visit of
 * the scanner in progress (mmap_lock), drops the mm's queued candidates and
 * waits for a promotion batch in flight.
 *
 * Context: process context, from prctl(); sleeps (mmap_lock, batch mutex).
 *
 * Return: 0, or -EINTR if a fatal signal interrupted the wait for mmap_lock.
 */
int kmmscand_prctl_set(struct mm_struct *mm, unsigned long on)
{
	if (mmap_write_lock_killable(mm))
		return -EINTR;
	if (on)
		clear_bit(MMF_KMMSCAND_OFF, &mm->flags);
	else
		set_bit(MMF_KMMSCAND_OFF, &mm->flags);
	mmap_write_unlock(mm);

	if (on)
		__kmmscand_enter(mm, current);	/* no-op if still registered */
	else
		kmmscand_queue_purge(mm, KMMSCAND_DROP_OPTOUT);
	return 0;
}

/**
 * kmmscand_registry_init - create the cache of registry slots
 *
 * Context: process context, at boot; sleeps.
 *
 * Return: 0 or -ENOMEM.
 */
int __init kmmscand_registry_init(void)
{
	kmmscand_slot_cache = KMEM_CACHE(kmmscand_mm_slot, 0);
	return kmmscand_slot_cache ? 0 : -ENOMEM;
}

/**
 * kmmscand_registry_free - undo kmmscand_registry_init()
 *
 * Context: process context, at boot, before kmmscand_registry_open().
 */
void __init kmmscand_registry_free(void)
{
	kmem_cache_destroy(kmmscand_slot_cache);
	kmmscand_slot_cache = NULL;
}

/**
 * kmmscand_registry_open - let mms register from now on
 *
 * Context: process context, at boot, once kmmscand is up.
 */
void __init kmmscand_registry_open(void)
{
	WRITE_ONCE(kmmscand_ready, true);
}
