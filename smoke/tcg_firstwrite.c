// SPDX-License-Identifier: GPL-2.0
/*
 * tcg_firstwrite -- what does the first write into a free page cost, page
 * by page, against the second?
 *
 *   tcg_firstwrite [MB] [NODE]
 *
 * Maps MB (default 512) of anonymous memory bound to NODE (default 0),
 * without THP, and touches it one 4 KB page at a time: the fault has the
 * kernel zero a page taken from the free lists, the first write into that
 * page since it was freed.  Then writes every page again with memset.
 * For both passes it prints the median time per page, how many pages took
 * over 20 times the median, the time those pages took together, and the
 * slowest page.
 *
 * On hardware both passes show a few slow pages at most.  QEMU's TCG
 * keeps the code it translated from a guest page until something writes
 * to that page, and then checks every translated block of the page on
 * each write until none is left: a free page that last held program text
 * makes its first writer pay for that, however long ago it was freed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE	4096UL
#define MPOL_BIND	2

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *pass, const double *dt, unsigned long n)
{
	double *s = malloc(n * sizeof(*s)), med, slow_t = 0, max = 0, all = 0;
	unsigned long i, slow = 0;

	if (!s) {
		perror("malloc");
		exit(1);
	}
	memcpy(s, dt, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	med = s[n / 2];
	for (i = 0; i < n; i++) {
		all += dt[i];
		if (dt[i] > max)
			max = dt[i];
		if (dt[i] > 20 * med) {
			slow++;
			slow_t += dt[i];
		}
	}
	printf("%-6s pages=%lu total_ms=%.1f median_us=%.1f ", pass, n,
	       all * 1e3, med * 1e6);
	printf("slow_pages=%lu slow_ms=%.1f max_ms=%.2f\n", slow,
	       slow_t * 1e3, max * 1e3);
	free(s);
}

int main(int argc, char **argv)
{
	unsigned long mb = argc > 1 ? strtoul(argv[1], NULL, 0) : 512;
	long node = argc > 2 ? strtol(argv[2], NULL, 0) : 0;
	unsigned long n, i, mask[16] = { 0 };
	double *dt, t;
	char *buf;

	if (argc > 3 || !mb || mb > 65536 || node < 0 || node >= 1024) {
		fprintf(stderr, "usage: tcg_firstwrite [MB 1..65536] [NODE 0..1023]\n");
		return 2;
	}
	n = (mb << 20) / PAGE;
	dt = calloc(n, sizeof(*dt));
	if (!dt) {
		perror("calloc");
		return 1;
	}
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		perror("PR_SET_THP_DISABLE (pages may be huge)");
	buf = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	mask[node / 64] = 1UL << (node % 64);
	if (syscall(SYS_mbind, buf, n * PAGE, MPOL_BIND, mask, 1024, 0)) {
		perror("mbind");
		return 1;
	}
	for (i = 0; i < n; i++) {
		t = now();
		buf[i * PAGE] = 1;
		dt[i] = now() - t;
	}
	report("first", dt, n);
	for (i = 0; i < n; i++) {
		t = now();
		memset(buf + i * PAGE, 2, PAGE);
		dt[i] = now() - t;
	}
	report("second", dt, n);
	return 0;
}
