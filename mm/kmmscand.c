// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand: find hot slow-tier pages by scanning page-table Accessed bits
 * from a kernel thread, so that the tasks owning them do not pay for it.
 */

#define pr_fmt(fmt) "kmmscand: " fmt

#include <linux/freezer.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sysfs.h>
#include <linux/wait.h>

static struct task_struct *kmmscand_thread __read_mostly;
static DECLARE_WAIT_QUEUE_HEAD(kmmscand_wait);
static DEFINE_MUTEX(kmmscand_mutex);
static bool kmmscand_enabled __read_mostly = true;

static bool kmmscand_should_run(void)
{
	return READ_ONCE(kmmscand_enabled) || kthread_should_stop();
}

static int kmmscand(void *unused)
{
	set_freezable();
	while (!kthread_should_stop()) {
		wait_event_freezable(kmmscand_wait, kmmscand_should_run());
		if (kthread_should_stop())
			break;
		/* Scanning arrives with the mm registry. */
		wait_event_freezable_timeout(kmmscand_wait,
					     kthread_should_stop() ||
					     !READ_ONCE(kmmscand_enabled),
					     msecs_to_jiffies(1000));
	}
	return 0;
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(kmmscand_enabled));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool val;
	unsigned int v;
	int err;

	err = kstrtouint(buf, 10, &v);
	if (err || v > 1)
		return -EINVAL;
	val = v;
	mutex_lock(&kmmscand_mutex);
	WRITE_ONCE(kmmscand_enabled, val);
	mutex_unlock(&kmmscand_mutex);
	wake_up_interruptible(&kmmscand_wait);
	return count;
}

static struct kobj_attribute enabled_attr = __ATTR_RW_MODE(enabled, 0644);

static struct attribute *kmmscand_attrs[] = {
	&enabled_attr.attr,
	NULL,
};

static const struct attribute_group kmmscand_attr_group = {
	.attrs = kmmscand_attrs,
	.name = "kmmscand",
};

static int __init kmmscand_init(void)
{
	int err;

	err = sysfs_create_group(mm_kobj, &kmmscand_attr_group);
	if (err) {
		pr_err("failed to register sysfs group: %d\n", err);
		return err;
	}
	kmmscand_thread = kthread_run(kmmscand, NULL, "kmmscand");
	if (IS_ERR(kmmscand_thread)) {
		err = PTR_ERR(kmmscand_thread);
		kmmscand_thread = NULL;
		sysfs_remove_group(mm_kobj, &kmmscand_attr_group);
		pr_err("failed to start kthread: %d\n", err);
		return err;
	}
	return 0;
}
subsys_initcall(kmmscand_init);
