/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmmscand_stress: the regions a worker thread owns and the changes it
 * makes to their layout under the scanner: mmap (anonymous, shmem and
 * THP-aligned, placed on either node), munmap whole and partial, holes
 * mapped again, mremap (move, grow, shrink) and mprotect.  The owner
 * tracks the generation of every page it wrote (0: must read as zeros)
 * and verifies pages before and after each change.
 * Defined in kmmscand_stress_region.c, used by kmmscand_stress_worker.c.
 */
#ifndef __KMMSCAND_STRESS_REGION_H
#define __KMMSCAND_STRESS_REGION_H

#include "kmmscand_stress.h"

#define MAX_REGIONS	6

enum { R_ANON, R_SHM, R_THP, NR_KINDS };

struct region {
	char *addr;			/* NULL: slot unused */
	unsigned long npages;		/* mapped length */
	unsigned long cap;		/* gen[]/hole[] capacity (pages) */
	uint32_t id;
	uint32_t next_gen;
	int kind;
	int memfd;			/* R_SHM: the backing file */
	uint32_t *gen;			/* per page; 0 = zeros */
	unsigned char *hole;		/* per page; 1 = unmapped */
};

struct worker_ctx {
	int wid, tid;
	uint64_t rs;
	struct region r[MAX_REGIONS];
	uint32_t seq;
	bool prctl_owner;
	int prctl_state;
	char who[32];
};

bool stress_region_create(struct worker_ctx *c, struct region *r);
bool stress_region_verify(struct worker_ctx *c, struct region *r, unsigned long a,
			  unsigned long b);
void stress_region_destroy(struct worker_ctx *c, struct region *r);
/* A random hole-free page range [*a, *b) of at most @maxlen pages; false if none. */
bool stress_pick_range(struct worker_ctx *c, struct region *r, unsigned long maxlen,
		       unsigned long *a, unsigned long *b);
bool stress_region_has_holes(struct region *r);
void stress_op_write(struct worker_ctx *c, struct region *r);
void stress_op_munmap_partial(struct worker_ctx *c, struct region *r);
void stress_op_refill_holes(struct worker_ctx *c, struct region *r);
void stress_op_mremap(struct worker_ctx *c, struct region *r);
void stress_op_mprotect(struct worker_ctx *c, struct region *r);

#endif /* __KMMSCAND_STRESS_REGION_H */
