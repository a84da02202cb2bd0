// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bw: copy MB megabytes from a buffer on node 1 to a buffer on
 * node 0, best of five, and print the bandwidth. It is the yardstick for
 * kmmscand's promotion throughput (smoke/promote-rate.sh): promoting a page
 * is at least this copy.
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
	return 0;
}
