// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bw: copy MB megabytes from a buffer on node 1 to a buffer on
 * node 0, best of five, and print the bandwidth. It is the yardstick for
 * kmmscand's promotion throughput (smoke/promote-rate.sh): promoting a page
 * is at least this copy.  Then move MB megabytes of node 1 to node 0 with
 * move_pages(2), 4096 pages per call, the kernel's own migration of the
 * same pages without any detection: the most a promoter built on
 * migrate_pages() can reach in this machine.
 *
 *   memcpy_bw [MB]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_BIND	2

static char *alloc_on(size_t len, int node)
{
	unsigned long mask = 1UL << node;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (syscall(SYS_mbind, p, len, MPOL_BIND, &mask, 64, 0))
		return NULL;
	memset(p, 0x5a, len);
	return p;
}

#define MOVE_CHUNK	4096
#define MPOL_MF_MOVE	(1 << 1)

/* move_pages() @len bytes at @p to node 0; print the rate. */
static int move_bw(char *p, size_t len)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t n = len / psz, i, j, moved = 0;
	void *addr[MOVE_CHUNK];
	int node[MOVE_CHUNK], status[MOVE_CHUNK];
	struct timespec a, b;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i += MOVE_CHUNK) {
		size_t m = n - i < MOVE_CHUNK ? n - i : MOVE_CHUNK;

		for (j = 0; j < m; j++) {
			addr[j] = p + (i + j) * psz;
			node[j] = 0;
		}
		if (syscall(SYS_move_pages, 0, m, addr, node, status,
			    MPOL_MF_MOVE)) {
			perror("memcpy_bw: move_pages");
			return -1;
		}
		for (j = 0; j < m; j++)
			moved += status[j] == 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("move_pages node1->node0: %zu of %zu pages in %.2f s, %.0f MB/s\n",
	       moved, n, s, (double)moved * psz / (1 << 20) / s);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], NULL, 0) : 256, len = mb << 20;
	double best = 0;
	char *src, *dst;
	int i;

	if (!mb) {
		fprintf(stderr, "usage: memcpy_bw [MB]\n");
		return 2;
	}
	src = alloc_on(len, 1);
	dst = alloc_on(len, 0);
	if (!src || !dst) {
		perror("memcpy_bw: allocating on nodes 1 and 0");
		return 1;
	}
	for (i = 0; i < 5; i++) {
		struct timespec a, b;
		double s;

		clock_gettime(CLOCK_MONOTONIC, &a);
		memcpy(dst, src, len);
		clock_gettime(CLOCK_MONOTONIC, &b);
		s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		if (mb / s > best)
			best = mb / s;
	}
	printf("memcpy node1->node0: %zu MB, best %.0f MB/s\n", mb, best);
	munmap(dst, len);
	return move_bw(src, len) ? 1 : 0;
}
