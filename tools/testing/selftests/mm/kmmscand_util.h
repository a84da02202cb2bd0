/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kmmscand selftests: sysfs knobs, plain files,
 * memory tiers and kthreads, and time.  kmmscand_numa.h adds NUMA system
 * calls and the memory counters, kmmscand_promote.h what the tests that
 * watch promotion share.  Each header declares what its kmmscand_*.c
 * defines; the selftests' Makefile links those files into every kmmscand
 * test, as it links vm_util.c into every mm test.
 */
#ifndef __KMMSCAND_UTIL_H
#define __KMMSCAND_UTIL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#include "../kselftest.h"
#include "vm_util.h"

#define KMMSCAND_SYSFS		"/sys/kernel/mm/kmmscand/"
#define MEMTIER_SYSFS		"/sys/devices/virtual/memory_tiering/"
#define NODE_SYSFS		"/sys/devices/system/node/"
#define NUMA_BALANCING_SYSCTL	"/proc/sys/kernel/numa_balancing"
#define DEMOTION_SYSFS		"/sys/kernel/mm/numa/demotion_enabled"
#define BOOST_SYSCTL		"/proc/sys/vm/watermark_boost_factor"
#define SCALE_SYSCTL		"/proc/sys/vm/watermark_scale_factor"
#define MIN_ADDR_SYSCTL		"/proc/sys/vm/mmap_min_addr"
#define PF_KTHREAD_FLAG		0x00200000UL
#define MB			(1024UL * 1024)

#ifndef PR_SET_KMMSCAND
#define PR_SET_KMMSCAND		82
#define PR_GET_KMMSCAND		83
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

/* ---- sysfs knobs ------------------------------------------------------ */

enum kmm_knob {
	KNOB_ENABLED,
	KNOB_SCAN_PERIOD_MIN_MS,
	KNOB_SCAN_PERIOD_MAX_MS,
	KNOB_SCAN_SIZE,
	KNOB_HOT_HISTORY,
	KNOB_HOT_THRESHOLD,
	KNOB_PMD_SKIP,
	KNOB_TLB_FLUSH,
	KNOB_MIGRATE_BATCH,
	KNOB_PROMOTE_RATE_LIMIT_MBPS,
	KNOB_TARGET_NODE,
	NR_KNOBS
};

struct kmm_knob_desc {
	const char *name;
	long long def;
	long long min;		/* static bounds from the contract */
	long long max;
};

extern const struct kmm_knob_desc kmm_knobs[NR_KNOBS];

/* Read a knob as a signed number. Returns 0 or -errno. */
int knob_read(const char *name, long long *val);

/* One write(2) of @len bytes. Returns what write(2) returned, or -errno. */
ssize_t knob_write_raw(const char *name, const char *buf, size_t len);

ssize_t knob_write_str(const char *name, const char *str);

/* Write "@val\n". Returns 0 or -errno. */
int knob_write_num(const char *name, long long val);

int knob_get(enum kmm_knob k, long long *val);

int knob_set(enum kmm_knob k, long long val);

struct kmm_knob_state {
	long long val[NR_KNOBS];
	bool valid;
};

int knobs_save(struct kmm_knob_state *st);

/*
 * Write back every saved knob, in an order that the cross-checks between
 * the knobs (min <= max, threshold <= history) always accept: open each
 * pair to its widest legal setting first. Returns 0 or the first error.
 */
int knobs_restore(const struct kmm_knob_state *st);

bool kmmscand_present(void);

/* ---- plain files ------------------------------------------------------ */

int kmm_read_file(const char *path, char *buf, size_t size);

int read_long(const char *path, long *val);

/*
 * Write @str to @path in one write(2), truncating (which clears a trace
 * buffer). Returns 0 or -errno.
 */
int write_str(const char *path, const char *str);

/* write_str() to @dir/@rel. */
int write_str_at(const char *dir, const char *rel, const char *str);

int write_long(const char *path, long val);

/*
 * The value of the "Kmmscand:" line of /proc/<pid>/status: 1 registered
 * and not opted out, 0 not, -1 no such line or process, -2 another value.
 */
int kmmscand_status(pid_t pid);

/* ---- nodes, tiers, kthreads ------------------------------------------- */

bool node_online(int nid);

/* Does a nodelist such as "0", "0-1" or "0,2-3" contain @nid? */
bool nodelist_has(const char *list, int nid);

/*
 * The id of the memory tier that lists @nid (a bigger id is a slower
 * tier), -ENOENT when no tier lists it, or another -errno.
 */
int memtier_of(int nid);

/*
 * Is the machine laid out as the promotion tests need it: node 0 top tier,
 * node 1 online in a slower tier? Fills @why when it is not.
 */
bool two_tiers(char *why, size_t len);

/*
 * Find the task called @comm. Returns its pid, or 0 if there is none.
 * *@kthread tells whether PF_KTHREAD is set in /proc/<pid>/stat.
 */
pid_t find_task(const char *comm, bool *kthread);

/* ---- time ------------------------------------------------------------- */

long long now_ms(void);

void sleep_ms(long ms);

/* @part as a percentage of @whole, rounded down; 0 when @whole is 0. */
unsigned long pct(unsigned long part, unsigned long whole);

#endif /* __KMMSCAND_UTIL_H */
