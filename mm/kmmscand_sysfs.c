// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_sysfs: the tunables in /sys/kernel/mm/kmmscand/.
 *
 * One descriptor per file says which variable (mm/kmmscand_mm.c) it shows
 * and sets, its type and its range; a bad value fails with -EINVAL and
 * changes nothing.  A change wakes both threads.  See
 * Documentation/ABI/testing/sysfs-kernel-mm-kmmscand for each file.
 */

#define pr_fmt(fmt) "kmmscand: " fmt

#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/memory-tiers.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/sysfs.h>
#include <linux/wait.h>

#include "kmmscand_internal.h"
#include "kmmscand_policy.h"
#include "kmmscand_sources.h"

/* Limits of the sysfs tunables (see the ABI document). */
#define KMMSCAND_PERIOD_FLOOR_MS	100	/* scan_period_min_ms >= */
#define KMMSCAND_PERIOD_CEIL_MS		60000	/* scan_period_max_ms <= */
#define KMMSCAND_SCAN_SIZE_MIN		512
#define KMMSCAND_SCAN_SIZE_MAX		4194304
#define KMMSCAND_RATE_MAX_MBPS		1048576	/* 1 TB/s */

static DEFINE_MUTEX(kmmscand_mutex);	/* serialises sysfs stores */

static void kmmscand_tunables_changed(void)
{
	kmmscand_scanner_wake(KMMSCAND_EV_TUNABLES);
	kmmscand_migrate_wake(true);
}

/*
 * One descriptor per tunable: where it lives, its type and its range.  A
 * bound may be another tunable (scan_period_min_ms <= scan_period_max_ms,
 * hot_threshold <= hot_history), read under kmmscand_mutex, which every
 * store holds, so two stores can never leave the pair inverted.
 */
enum kmmscand_tunable_type {
	KMMSCAND_T_UINT,
	KMMSCAND_T_BOOL,
	KMMSCAND_T_NODE,	/* -1 or a top-tier node with memory */
	KMMSCAND_T_SOURCES,	/* names of sources, BIT(enum kmmscand_source) */
};

struct kmmscand_tunable {
	struct kobj_attribute attr;
	void *var;
	enum kmmscand_tunable_type type;
	unsigned int min, max;
	const unsigned int *min_var, *max_var;
};

#define KMMSCAND_UINT(_name, _var, _min, _max, _min_var, _max_var)	\
	{								\
		.attr = __ATTR(_name, 0644, kmmscand_tunable_show,	\
			       kmmscand_tunable_store),			\
		.var = &(_var), .type = KMMSCAND_T_UINT,		\
		.min = (_min), .max = (_max),				\
		.min_var = (_min_var), .max_var = (_max_var),		\
	}

#define KMMSCAND_BOOL(_name, _var)					\
	{								\
		.attr = __ATTR(_name, 0644, kmmscand_tunable_show,	\
			       kmmscand_tunable_store),			\
		.var = &(_var), .type = KMMSCAND_T_BOOL, .max = 1,	\
	}

/* The selected sources by name, separated by spaces. */
static ssize_t kmmscand_sources_show(unsigned int mask, char *buf)
{
	unsigned int src;
	int len = 0;

	for (src = 0; src < KMMSCAND_NR_SOURCES; src++)
		if (mask & BIT(src))
			len += sysfs_emit_at(buf, len, "%s%s", len ? " " : "",
					     kmmscand_source_name(src));
	return len + sysfs_emit_at(buf, len, "\n");
}

static ssize_t kmmscand_tunable_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	struct kmmscand_tunable *t =
		container_of(attr, struct kmmscand_tunable, attr);

	switch (t->type) {
	case KMMSCAND_T_SOURCES:
		return kmmscand_sources_show(READ_ONCE(*(unsigned int *)t->var),
					     buf);
	case KMMSCAND_T_BOOL:
		return sysfs_emit(buf, "%d\n", READ_ONCE(*(bool *)t->var));
	case KMMSCAND_T_NODE:
		return sysfs_emit(buf, "%d\n", READ_ONCE(*(int *)t->var));
	default:
		return sysfs_emit(buf, "%u\n",
				  READ_ONCE(*(unsigned int *)t->var));
	}
}

static bool kmmscand_valid_target(int nid)
{
	return nid == NUMA_NO_NODE ||
	       (nid >= 0 && nid < nr_node_ids && node_online(nid) &&
		node_state(nid, N_MEMORY) && node_is_toptier(nid));
}

static ssize_t kmmscand_tunable_store(struct kobject *kobj,
				      struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	struct kmmscand_tunable *t =
		container_of(attr, struct kmmscand_tunable, attr);
	unsigned int val = 0, lo = t->min, hi = t->max;
	int nid = NUMA_NO_NODE, err;

	if (t->type == KMMSCAND_T_NODE) {
		if (kstrtoint(buf, 10, &nid) || !kmmscand_valid_target(nid))
			return -EINVAL;
	} else if (t->type == KMMSCAND_T_SOURCES) {
		if (kmmscand_sources_parse(buf, count, &val))
			return -EINVAL;
	} else if (kstrtouint(buf, 10, &val)) {
		return -EINVAL;
	}

	mutex_lock(&kmmscand_mutex);
	if (t->type == KMMSCAND_T_SOURCES) {
		/* Not a number: its own setter, which may fail. */
		err = kmmscand_sources_set(val);
		mutex_unlock(&kmmscand_mutex);
		if (err)
			return err;
		kmmscand_tunables_changed();
		return count;
	}
	if (t->min_var)
		lo = max(lo, *t->min_var);
	if (t->max_var)
		hi = min(hi, *t->max_var);
	if (t->type != KMMSCAND_T_NODE && (val < lo || val > hi)) {
		mutex_unlock(&kmmscand_mutex);
		return -EINVAL;
	}
	switch (t->type) {
	case KMMSCAND_T_BOOL:
		WRITE_ONCE(*(bool *)t->var, val);
		break;
	case KMMSCAND_T_NODE:
		WRITE_ONCE(*(int *)t->var, nid);
		break;
	default:
		WRITE_ONCE(*(unsigned int *)t->var, val);
	}
	mutex_unlock(&kmmscand_mutex);
	kmmscand_tunables_changed();
	return count;
}

/* See Documentation/ABI/testing/sysfs-kernel-mm-kmmscand for each file. */
static struct kmmscand_tunable kmmscand_tunables[] = {
	KMMSCAND_BOOL(enabled, kmmscand_enabled),
	KMMSCAND_UINT(scan_period_min_ms, kmmscand_scan_period_min_ms,
		      KMMSCAND_PERIOD_FLOOR_MS, KMMSCAND_PERIOD_CEIL_MS,
		      NULL, &kmmscand_scan_period_max_ms),
	KMMSCAND_UINT(scan_period_max_ms, kmmscand_scan_period_max_ms,
		      KMMSCAND_PERIOD_FLOOR_MS, KMMSCAND_PERIOD_CEIL_MS,
		      &kmmscand_scan_period_min_ms, NULL),
	KMMSCAND_UINT(scan_size, kmmscand_scan_size, KMMSCAND_SCAN_SIZE_MIN,
		      KMMSCAND_SCAN_SIZE_MAX, NULL, NULL),
	KMMSCAND_UINT(hot_history, kmmscand_hot_history, 1,
		      KMMSCAND_HISTORY_MAX, &kmmscand_hot_threshold, NULL),
	KMMSCAND_UINT(hot_threshold, kmmscand_hot_threshold, 1,
		      KMMSCAND_HISTORY_MAX, NULL, &kmmscand_hot_history),
	KMMSCAND_BOOL(pmd_skip, kmmscand_pmd_skip),
	KMMSCAND_BOOL(tlb_flush, kmmscand_tlb_flush),
	KMMSCAND_UINT(migrate_batch, kmmscand_migrate_batch, 1,
		      KMMSCAND_BATCH_MAX, NULL, NULL),
	KMMSCAND_UINT(promote_rate_limit_mbps, kmmscand_promote_rate_mbps, 0,
		      KMMSCAND_RATE_MAX_MBPS, NULL, NULL),
	{
		.attr = __ATTR(target_node, 0644, kmmscand_tunable_show,
			       kmmscand_tunable_store),
		.var = &kmmscand_target_node, .type = KMMSCAND_T_NODE,
	},
	{
		.attr = __ATTR(sources, 0644, kmmscand_tunable_show,
			       kmmscand_tunable_store),
		.var = &kmmscand_sources, .type = KMMSCAND_T_SOURCES,
	},
};

/* Read only: the memory the access history of every mm takes now. */
static ssize_t history_bytes_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", kmmscand_history_bytes());
}

static struct kobj_attribute kmmscand_history_bytes_attr =
	__ATTR_RO(history_bytes);

/* Read only: the candidates waiting for the migration thread now. */
static ssize_t queued_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", kmmscand_queue_held());
}

static struct kobj_attribute kmmscand_queued_attr = __ATTR_RO(queued);

static struct attribute *kmmscand_attrs[ARRAY_SIZE(kmmscand_tunables) + 3];

static const struct attribute_group kmmscand_attr_group = {
	.attrs = kmmscand_attrs,
	.name = "kmmscand",
};

/**
 * kmmscand_sysfs_init - create /sys/kernel/mm/kmmscand/
 *
 * Context: process context, at boot; sleeps.
 *
 * Return: 0 or a negative errno.
 */
int __init kmmscand_sysfs_init(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(kmmscand_tunables); i++)
		kmmscand_attrs[i] = &kmmscand_tunables[i].attr.attr;
	kmmscand_attrs[i++] = &kmmscand_history_bytes_attr.attr;
	kmmscand_attrs[i] = &kmmscand_queued_attr.attr;
	err = sysfs_create_group(mm_kobj, &kmmscand_attr_group);
	if (err) {
		pr_err("failed to register sysfs group: %d\n", err);
		return err;
	}
	return 0;
}

/**
 * kmmscand_sysfs_exit - remove /sys/kernel/mm/kmmscand/ again
 *
 * For a kmmscand_init() that failed after kmmscand_sysfs_init() succeeded.
 *
 * Context: process context, at boot.
 */
void __init kmmscand_sysfs_exit(void)
{
	sysfs_remove_group(mm_kobj, &kmmscand_attr_group);
}
