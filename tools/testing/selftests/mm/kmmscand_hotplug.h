/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory that the kmmscand hot-remove tests take away: a hot-pluggable
 * dimm of the slow node 1 that the kernel onlined into ZONE_MOVABLE, as
 * every online ZONE_MOVABLE memory block of node 1.  Offlining a block
 * migrates every page in it elsewhere; it retries for as long as a page
 * cannot be migrated, until a signal arrives, so every write to a block's
 * state file is made from a child process with a deadline.
 */
#ifndef __KMMSCAND_HOTPLUG_H
#define __KMMSCAND_HOTPLUG_H

#include <sys/time.h>

#include "kmmscand_promote.h"

#define MEMORY_SYSFS		"/sys/devices/system/memory/"
#define OFFLINE_DEADLINE_MS	60000	/* for all blocks of the dimm together */
#define OFFLINE_GRACE_MS	10000	/* beyond it, the writer is killed */
#define MAX_BLOCKS		64

/* ---- the ZONE_MOVABLE memory blocks of node 1 ---------------------------- */

struct dimm {
	int block[MAX_BLOCKS];
	int nr;
	unsigned long block_pages;	/* pages per memory block */
};

int block_attr(int block, const char *attr, char *buf, size_t len);

/* Write @state to the state file of memory block @block; 0 or -errno. */
int block_set_state(int block, const char *state);

int cmp_int(const void *a, const void *b);

/*
 * Find the memory blocks of node 1 that are online in ZONE_MOVABLE. Returns
 * how many, or -errno; fills @why when there are none.
 */
int dimm_find(struct dimm *d, char *why, size_t len);

bool dimm_has_pfn(const struct dimm *d, unsigned long long pfn);

/*
 * How many of the @n pages at @base are present in a block of the dimm,
 * from /proc/self/pagemap (PFNs need CAP_SYS_ADMIN); *@lo and *@hi (0 on
 * entry) become the lowest and highest PFN. Returns -errno on failure,
 * -EPERM when the PFNs are hidden.
 */
long pages_on_dimm(const struct dimm *d, const char *base,
		   unsigned long n, uint64_t *lo, uint64_t *hi);

/* ---- block state changes with a deadline --------------------------------- */

struct block_op {
	int block;
	int err;		/* 0 or the errno of the write */
	long long ms;		/* how long the write took */
};

void on_alarm(int sig);

/*
 * Write @state ("offline", "online_movable") to the state file of every
 * block of @d in turn, from a child process whose timer interrupts the
 * write that is still running @deadline_ms after the start: offlining
 * retries for as long as pages cannot be migrated, until a signal. The
 * child is killed if it has not finished OFFLINE_GRACE_MS after that.
 * Fills @ops[0 .. d->nr); returns how many blocks reported, or -errno.
 */
int dimm_write_state(const struct dimm *d, const char *state,
		     long long deadline_ms, struct block_op *ops);

/* Bring back every block of the dimm that a test left offline. */
void dimm_online_all(const struct dimm *d);

/* Log what dimm_write_state() reported; returns how many blocks failed. */
int log_ops(const char *what, const struct dimm *d,
	    const struct block_op *ops, int n);

/* How many blocks of @d are in state @state. */
int dimm_count_state(const struct dimm *d, const char *state);

#endif /* __KMMSCAND_HOTPLUG_H */
