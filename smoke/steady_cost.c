// SPDX-License-Identifier: GPL-2.0
/*
 * Idle cost and re-detection with a scattered hot set.
 *
 *   make smoke NAME=steady-cost ARGS="512 20 45 60"
 *
 *   ./steady_cost TOTAL_MB QUIET1_S QUIET2_S QUIET3_S
 *
 * Maps TOTAL_MB of anonymous memory in base pages on the slow node 1 and
 * keeps one page in ten hot (pages i % 10 == 0: every PTE table holds hot
 * and cold pages).  Once 90 % of the hot set is on node 0 (t90), it waits
 * QUIET1_S seconds with nothing new to promote, moves the hot set to the
 * pages i % 10 == 5, reports that set's t90, waits QUIET2_S, moves it to
 * i % 10 == 3, reports its t90, and waits QUIET3_S.  For every quiet
 * spell it prints the scanner's CPU per GB mapped per second (in 10 s
 * windows and in all), the PTEs it examined and the history bytes.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kthread_cpu.h"

#define MPOL_MF_MOVE	(1 << 1)

static long page_size;
static char *base;
static unsigned long npages;
static volatile int phase;

static long history_bytes(void)
{
	FILE *f = fopen("/sys/kernel/mm/kmmscand/history_bytes", "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long scan_ms(void)
{
	return kthread_ticks("kmmscand") * 1000 / sysconf(_SC_CLK_TCK);
}

static void *toucher(void *arg)
{
	unsigned long i;

	for (;;) {
		int p = phase;

		for (i = p; i < npages; i += 10)
			(*(volatile long *)(base + i * page_size))++;
	}
	return NULL;
}

/* Share (%) of the pages i % 10 == @p on node 0. */
static int on_node0(int p)
{
	unsigned long n = 0, i, on0 = 0;
	static void **addrs;
	static int *status;

	if (!addrs) {
		addrs = calloc(npages / 10 + 1, sizeof(*addrs));
		status = calloc(npages / 10 + 1, sizeof(*status));
	}
	for (i = p; i < npages; i += 10)
		addrs[n++] = base + i * page_size;
	if (syscall(SYS_move_pages, 0, n, addrs, NULL, status, 0) < 0)
		return -1;
	for (i = 0; i < n; i++)
		on0 += status[i] == 0;
	return on0 * 100 / n;
}

static double t90(int p)
{
	double t0 = now_s();

	while (on_node0(p) < 90) {
		if (now_s() - t0 > 60)
			return -1;
		usleep(100000);
	}
	return now_s() - t0;
}

static void quiet(int secs, const char *what)
{
	double gb = (double)npages * page_size / (1 << 30);
	long long c0 = scan_ms(), c, cl = c0;
	unsigned long long p0 = vmstat("kmmscand_pte_scanned");
	int s;

	for (s = 10; s <= secs; s += 10) {
		sleep(10);
		c = scan_ms();
		printf("  %s %3d s: scanner %4lld ms in 10 s = %.1f ms/GB/s, history %ld B\n",
		       what, s, c - cl, (c - cl) / 10.0 / gb, history_bytes());
		cl = c;
	}
	if (secs % 10)
		sleep(secs % 10);
	c = scan_ms();
	printf("RESULT %s secs=%d scan_cpu_ms=%lld cpu_ms_per_gb_s=%.2f pte_scanned=%llu history_bytes=%ld\n",
	       what, secs, c - c0, (c - c0) / (double)secs / gb,
	       vmstat("kmmscand_pte_scanned") - p0, history_bytes());
}

int main(int argc, char **argv)
{
	unsigned long i;
	void **addrs;
	int *nodes, *status;
	pthread_t tid;
	size_t len;

	if (argc != 5) {
		fprintf(stderr, "usage: %s TOTAL_MB QUIET1_S QUIET2_S QUIET3_S\n",
			argv[0]);
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	len = (size_t)atol(argv[1]) << 20;
	npages = len / page_size;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	madvise(base, len, MADV_NOHUGEPAGE);
	for (i = 0; i < npages; i++)
		base[i * page_size] = 1;
	addrs = calloc(npages, sizeof(*addrs));
	nodes = calloc(npages, sizeof(*nodes));
	status = calloc(npages, sizeof(*status));
	for (i = 0; i < npages; i++) {
		addrs[i] = base + i * page_size;
		nodes[i] = 1;
	}
	if (syscall(SYS_move_pages, 0, npages, addrs, nodes, status,
		    MPOL_MF_MOVE) < 0)
		return 3;
	free(addrs);
	free(nodes);
	free(status);

	phase = 0;
	pthread_create(&tid, NULL, toucher, NULL);
	printf("RESULT first t90=%.2f history_bytes=%ld\n", t90(0),
	       history_bytes());
	quiet(atoi(argv[2]), "quiet1");
	phase = 5;
	printf("RESULT moved_after_quiet1 t90=%.2f\n", t90(5));
	quiet(atoi(argv[3]), "quiet2");
	phase = 3;
	printf("RESULT moved_after_quiet2 t90=%.2f\n", t90(3));
	quiet(atoi(argv[4]), "quiet3");
	return 0;
}
