// SPDX-License-Identifier: GPL-2.0
/*
 * collapse_vs_migration -- MADV_COLLAPSE fails with EAGAIN while another
 * thread migrates pages of the range (mainline 6.12), kmmscand disabled.
 *
 * hpage_collapse_scan_pmd() gives up on the first page that is off the LRU
 * or holds a reference besides its mappings (SCAN_PAGE_LRU,
 * SCAN_PAGE_COUNT), and madvise_collapse() turns that into -EAGAIN without
 * a retry.  A page in the middle of a migration is both: isolated, and
 * referenced by the migration.  madvise(2) documents EAGAIN as a transient
 * failure; khugepaged.c's collapse tests treat it as a failure, so whatever
 * migrates the test's pages at that moment -- kmmscand promoting them,
 * kswapd demoting them, NUMA balancing, compaction, or as here a plain
 * move_pages(2) -- makes "Collapse ..." fail.
 *
 * A thread moves the 512 pages of a 2 MB range back and forth between
 * nodes 0 and 1 while the main thread faults the range in and collapses
 * it, up to ATTEMPTS times.
 *
 * Exit status: 0 reproduced (EAGAIN seen); 1 not within ATTEMPTS; 4 cannot
 * run here (one node, no MADV_COLLAPSE, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#define MPOL_MF_MOVE	(1 << 1)
#define PMD_SIZE	(2UL << 20)
#define ATTEMPTS	400

static unsigned long page_size, npages;
static char *volatile area;
static int stop;

static long move_pages(unsigned long n, void **pages, const int *nodes,
		       int *status)
{
	return syscall(SYS_move_pages, 0, n, pages, nodes, status,
		       MPOL_MF_MOVE);
}

static void *mover(void *arg)
{
	void **pages = calloc(npages, sizeof(*pages));
	int *nodes = calloc(npages, sizeof(*nodes));
	int *status = calloc(npages, sizeof(*status));
	unsigned long i, round = 0;

	(void)arg;
	if (!pages || !nodes || !status)
		return NULL;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		char *base = area;

		for (i = 0; i < npages; i++) {
			pages[i] = base + i * page_size;
			nodes[i] = (round + i) & 1;
		}
		/* The range may be unmapped meanwhile: errors are fine. */
		move_pages(npages, pages, nodes, status);
		round++;
	}
	free(pages);
	free(nodes);
	free(status);
	return NULL;
}

static char *map_aligned(void)
{
	char *p = mmap(NULL, 2 * PMD_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + PMD_SIZE, p + 2 * PMD_SIZE - (a + PMD_SIZE));
	return a;
}

int main(void)
{
	int eagain = 0, ok = 0, other = 0, i, rc;
	pthread_t tid;
	char *a;

	page_size = sysconf(_SC_PAGESIZE);
	npages = PMD_SIZE / page_size;
	if (access("/sys/devices/system/node/node1", F_OK)) {
		printf("# SKIP: no node 1\n");
		return 4;
	}
	a = map_aligned();
	if (!a)
		return 4;
	/* Small pages first, so that there is something to collapse. */
	if (madvise(a, PMD_SIZE, MADV_NOHUGEPAGE)) {
		printf("# SKIP: madvise: %s\n", strerror(errno));
		return 4;
	}
	memset(a, 1, PMD_SIZE);
	area = a;
	if (pthread_create(&tid, NULL, mover, NULL))
		return 4;
	for (i = 0; i < ATTEMPTS && !eagain; i++) {
		if (madvise(a, PMD_SIZE, MADV_HUGEPAGE)) {
			printf("# SKIP: MADV_HUGEPAGE: %s\n", strerror(errno));
			rc = 4;
			goto out;
		}
		if (!madvise(a, PMD_SIZE, MADV_COLLAPSE)) {
			ok++;
			/* Back to 512 small pages for the next attempt. */
			if (madvise(a, PMD_SIZE, MADV_NOHUGEPAGE) ||
			    madvise(a, PMD_SIZE, MADV_DONTNEED)) {
				rc = 4;
				goto out;
			}
			memset(a, 1, PMD_SIZE);
		} else if (errno == EAGAIN) {
			eagain++;
		} else if (errno == EINVAL && !i) {
			printf("# SKIP: MADV_COLLAPSE not supported\n");
			rc = 4;
			goto out;
		} else {
			other++;
		}
	}
	rc = eagain ? 0 : 1;
out:
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	printf("collapse attempts %d: ok %d, EAGAIN %d, other errors %d\n",
	       i, ok, eagain, other);
	if (!rc)
		printf("reproduced: MADV_COLLAPSE returned EAGAIN while move_pages() migrated the range\n");
	return rc;
}
