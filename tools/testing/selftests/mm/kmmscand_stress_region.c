// SPDX-License-Identifier: GPL-2.0
/* The regions of the race test, declared in kmmscand_stress_region.h. */

#include "kmmscand_stress_region.h"

/*
 * Fault the range in on the slow node, then drop the VMA policy: kmmscand
 * (like NUMA balancing) leaves memory with an explicit policy where the
 * policy put it, so only default-policy memory on node 1 is promotable.
 * MADV_POPULATE_WRITE keeps what a shared mapping already holds.
 */
static int place_promotable(char *addr, unsigned long len)
{
	if (mbind_mask(addr, len, MPOL_PREFERRED, 1UL << 1, 0))
		return -1;
	madvise(addr, len, MADV_POPULATE_WRITE);
	return mbind_mask(addr, len, MPOL_DEFAULT, 0, 0);
}

static int region_policy(struct worker_ctx *c, char *addr, unsigned long len)
{
	/* Mostly slow tier but promotable (preferred 1), the rest mixed. */
	switch (rnd(&c->rs, 8)) {
	case 0:
		return mbind_mask(addr, len, MPOL_BIND, 1UL << 1, 0);	/* pinned to slow */
	case 1:
		return mbind_mask(addr, len, MPOL_BIND, 1UL << 0, 0);
	case 2:
		return mbind_mask(addr, len, MPOL_PREFERRED, 1UL << 0, 0);
	case 3:
		return 0;						/* local = node 0 */
	default:
		return place_promotable(addr, len);
	}
}

bool stress_region_create(struct worker_ctx *c, struct region *r)
{
	unsigned long np;
	char *p;
	int kind = rnd(&c->rs, NR_KINDS);

	memset(r, 0, sizeof(*r));
	r->memfd = -1;
	if (kind == R_THP)
		np = (THP_SIZE / psize()) * (1 + rnd(&c->rs, 2));
	else
		np = 16 + rnd(&c->rs, 512);
	r->cap = np * 2;
	r->gen = calloc(r->cap, sizeof(*r->gen));
	r->hole = calloc(r->cap, 1);
	if (!r->gen || !r->hole)
		goto fail;
	if (kind == R_SHM) {
		r->memfd = memfd_create("kmmscand_stress", 0);
		if (r->memfd < 0 || ftruncate(r->memfd, r->cap * psize()))
			goto fail;
		p = mmap(NULL, np * psize(), PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->memfd, 0);
	} else if (kind == R_THP) {
		/* Over-allocate, then trim to a THP-aligned range. */
		char *raw = mmap(NULL, np * psize() + THP_SIZE,
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned long a;

		if (raw == MAP_FAILED)
			goto fail;
		a = ((unsigned long)raw + THP_SIZE - 1) & ~(THP_SIZE - 1);
		if (a > (unsigned long)raw)
			munmap(raw, a - (unsigned long)raw);
		munmap((char *)a + np * psize(),
		       (unsigned long)raw + THP_SIZE - a);
		p = (char *)a;
		if (!madvise(p, np * psize(), MADV_HUGEPAGE))
			stat_add(&stress->madv_hugepage, 1);
	} else {
		p = mmap(NULL, np * psize(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED)
		goto fail;
	region_policy(c, p, np * psize());
	r->addr = p;
	r->npages = np;
	r->kind = kind;
	r->id = ((uint32_t)c->wid << 24) | ((uint32_t)c->tid << 16) |
		(++c->seq & 0xffff);
	r->next_gen = 1;
	stat_add(&stress->mmaps, 1);
	return true;
fail:
	if (r->memfd >= 0)
		close(r->memfd);
	free(r->gen);
	free(r->hole);
	memset(r, 0, sizeof(*r));
	return false;
}

bool stress_region_verify(struct worker_ctx *c, struct region *r,
			  unsigned long a, unsigned long b)
{
	bool ok = true;
	unsigned long i;

	for (i = a; i < b; i++)
		if (!r->hole[i] &&
		    !page_check(c->who, r->addr + i * psize(), r->id, i, r->gen[i]))
			ok = false;
	return ok;
}

void stress_region_destroy(struct worker_ctx *c, struct region *r)
{
	unsigned long i, j;

	if (!r->addr)
		return;
	stress_region_verify(c, r, 0, r->npages);
	/*
	 * Unmap the mapped runs only: another thread's mapping may have
	 * landed in a hole left by a partial munmap.
	 */
	for (i = 0; i < r->npages; i = j) {
		for (j = i; j < r->npages && r->hole[j] == r->hole[i]; j++)
			;
		if (!r->hole[i])
			munmap(r->addr + i * psize(), (j - i) * psize());
	}
	if (r->memfd >= 0)
		close(r->memfd);
	free(r->gen);
	free(r->hole);
	memset(r, 0, sizeof(*r));
	stat_add(&stress->munmaps, 1);
}

static uint32_t gen_next(struct region *r)
{
	uint32_t g = r->next_gen++;

	if (r->next_gen > GEN_MAX)
		r->next_gen = 1;
	return g;
}

bool stress_pick_range(struct worker_ctx *c, struct region *r,
		       unsigned long maxlen, unsigned long *a, unsigned long *b)
{
	int tries;

	for (tries = 0; tries < 4; tries++) {
		unsigned long s = rnd(&c->rs, r->npages);
		unsigned long len = 1 + rnd(&c->rs, maxlen);
		unsigned long e = s + len > r->npages ? r->npages : s + len, i;

		for (i = s; i < e && !r->hole[i]; i++)
			;
		if (i > s) {
			*a = s;
			*b = i;
			return true;
		}
	}
	return false;
}

bool stress_region_has_holes(struct region *r)
{
	unsigned long i;

	for (i = 0; i < r->npages; i++)
		if (r->hole[i])
			return true;
	return false;
}

void stress_op_write(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b, i;

	if (!stress_pick_range(c, r, 64, &a, &b))
		return;
	for (i = a; i < b; i++) {
		uint32_t g = gen_next(r);

		r->gen[i] = g;
		page_fill(r->addr + i * psize(), r->id, i, g);
	}
}

void stress_op_munmap_partial(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b, i;

	if (r->npages < 4 || !stress_pick_range(c, r, r->kind == R_THP ? 8 : 32, &a, &b))
		return;
	if (a == 0)
		a = 1;		/* keep the start: the region is found by it */
	if (a >= b)
		return;
	if (!stress_region_verify(c, r, a, b))
		return;
	if (munmap(r->addr + a * psize(), (b - a) * psize()))
		return;
	for (i = a; i < b; i++)
		r->hole[i] = 1;
	stat_add(&stress->partial_munmaps, 1);
}

void stress_op_refill_holes(struct worker_ctx *c, struct region *r)
{
	unsigned long i, j;

	for (i = 0; i < r->npages; i = j) {
		char *p;

		for (j = i; j < r->npages && r->hole[j] == r->hole[i]; j++)
			;
		if (!r->hole[i])
			continue;
		if (r->kind == R_SHM)
			p = mmap(r->addr + i * psize(), (j - i) * psize(),
				 PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED_NOREPLACE, r->memfd,
				 i * psize());
		else
			p = mmap(r->addr + i * psize(), (j - i) * psize(),
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				 -1, 0);
		if (p == MAP_FAILED)
			continue;
		if (p != r->addr + i * psize()) {	/* old kernel: hint only */
			munmap(p, (j - i) * psize());
			continue;
		}
		region_policy(c, p, (j - i) * psize());
		memset(r->hole + i, 0, j - i);
		/* shmem keeps its contents, fresh anonymous memory is zero. */
		if (r->kind != R_SHM)
			memset(r->gen + i, 0, (j - i) * sizeof(*r->gen));
		stat_add(&stress->hole_refills, 1);
	}
}

/* True if [addr, addr + len) is one VMA (mremap() cannot span VMAs). */
static bool single_vma(const char *addr, unsigned long len)
{
	unsigned long a = (unsigned long)addr, start, end;
	char line[512];
	bool ok = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (start <= a && a < end) {
			ok = a + len <= end;
			break;
		}
	}
	fclose(f);
	return ok;
}

/*
 * Shrink, grow or move the region.  Careful with mremap()'s side effects
 * on failure: a MREMAP_FIXED call unmaps the destination and the shrunk
 * tail before it checks the source VMA, so a failed call may already have
 * unmapped both (and another thread may map something there right after).
 * So: shrink in place first (always succeeds), only move a range that is
 * one VMA, and never munmap() the destination after a failure.
 */
void stress_op_mremap(struct worker_ctx *c, struct region *r)
{
	unsigned long np = r->npages, i;
	char *p, *dst;

	if (stress_region_has_holes(r))
		return;
	switch (rnd(&c->rs, 3)) {
	case 0:		/* grow */
		np = r->npages + 1 + rnd(&c->rs, r->cap - r->npages);
		if (np > r->cap)
			np = r->cap;
		break;
	case 1:		/* shrink */
		if (r->npages > 2)
			np = r->npages - 1 - rnd(&c->rs, r->npages / 2);
		break;
	default:	/* move */
		break;
	}
	if (np < r->npages) {
		p = mremap(r->addr, r->npages * psize(), np * psize(), 0);
		if (p == MAP_FAILED) {
			stat_add(&stress->mremap_fail, 1);
			return;
		}
		/* The tail is gone: anonymous pages come back as zeros. */
		if (r->kind != R_SHM)
			for (i = np; i < r->npages; i++)
				r->gen[i] = 0;
		r->npages = np;
		stat_add(&stress->mremaps, 1);
	}
	if (!single_vma(r->addr, r->npages * psize())) {
		stat_add(&stress->mremap_fail, 1);
		return;
	}
	/* Move (even at the same size) to a range reserved for it. */
	dst = mmap(NULL, np * psize(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (dst == MAP_FAILED)
		return;
	p = mremap(r->addr, r->npages * psize(), np * psize(),
		   MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (p == MAP_FAILED) {
		msg("mremap of one VMA failed: %s\n", strerror(errno));
		stat_add(&stress->mremap_fail, 1);
		return;
	}
	/* Anonymous growth is zero; shmem shows the file's contents. */
	for (i = r->npages; i < np; i++)
		r->hole[i] = 0;
	r->addr = p;
	r->npages = np;
	stat_add(&stress->mremaps, 1);
	stress_region_verify(c, r, 0, r->npages);
}

void stress_op_mprotect(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b;
	int prot = rnd(&c->rs, 2) ? PROT_READ : PROT_NONE;

	if (!stress_pick_range(c, r, 32, &a, &b))
		return;
	if (mprotect(r->addr + a * psize(), (b - a) * psize(), prot))
		return;
	stat_add(&stress->mprotects, 1);
	if (prot == PROT_READ)
		stress_region_verify(c, r, a, b);
	else
		sched_yield();
	if (mprotect(r->addr + a * psize(), (b - a) * psize(),
		     PROT_READ | PROT_WRITE)) {
		msg("mprotect restore failed: %s\n", strerror(errno));
		stat_add(&stress->mismatches, 1);
	}
}

