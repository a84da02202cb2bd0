// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand smoke check (not a selftest; those live in
 * tools/testing/selftests/mm/).  Places 64 MB on node 1, keeps touching the
 * first 8 MB, and reports where the pages are, what the kmmscand_* vmstat
 * counters did and how much CPU the kmmscand kthreads used.
 *
 *   gcc -O2 -static -o kmmscand_smoke kmmscand_smoke.c
 *   ./kmmscand_smoke [seconds] [total_mb] [hot_mb] [warmup_s]
 *
 * Counters and kthread CPU are sampled after warmup_s (default 0), so that
 * the first passes over freshly written memory can be left out.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kthread_cpu.h"

#define MPOL_DEFAULT	0
#define MPOL_BIND	2
#define PR_SET_KMMSCAND	82
#define PR_GET_KMMSCAND	83
#define NCOUNTERS	32

static long page_size;

struct counters {
	int n;
	char name[NCOUNTERS][64];
	unsigned long long val[NCOUNTERS];
};

static void read_vmstat(struct counters *c)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char name[64];
	unsigned long long v;

	c->n = 0;
	if (!f)
		return;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (strncmp(name, "kmmscand_", 9) || c->n >= NCOUNTERS)
			continue;
		strcpy(c->name[c->n], name);
		c->val[c->n++] = v;
	}
	fclose(f);
}

static unsigned long long counter(struct counters *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name))
			return c->val[i];
	return 0;
}


static void where(char *buf, size_t len, int *n0, int *n1, int *other)
{
	size_t n = len / page_size;
	void **pages = malloc(n * sizeof(void *));
	int *status = malloc(n * sizeof(int));

	*n0 = *n1 = *other = 0;
	for (size_t i = 0; i < n; i++)
		pages[i] = buf + i * page_size;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		perror("move_pages");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		if (status[i] == 0)
			(*n0)++;
		else if (status[i] == 1)
			(*n1)++;
		else
			(*other)++;
	}
	free(pages);
	free(status);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 30;
	size_t total = (argc > 2 ? atol(argv[2]) : 64) << 20;
	size_t hot = (argc > 3 ? atol(argv[3]) : 8) << 20;
	int warmup = argc > 4 ? atoi(argv[4]) : 0;
	int sampled = 0;
	unsigned long node1 = 2;
	struct counters before, after;
	long long t0s = -1, t0m = -1, t1s, t1m;
	int h0, h1, ho, c0, c1, co;
	double start, last = 0;
	char *buf;
	long hz = sysconf(_SC_CLK_TCK);

	page_size = sysconf(_SC_PAGESIZE);
	printf("prctl(PR_GET_KMMSCAND) = %d\n", prctl(PR_GET_KMMSCAND, 0, 0, 0, 0));
	buf = mmap(NULL, total, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return perror("mmap"), 1;
	madvise(buf, total, MADV_NOHUGEPAGE);
	if (syscall(SYS_mbind, buf, total, MPOL_BIND, &node1, 64, 0))
		return perror("mbind"), 1;
	memset(buf, 1, total);
	/* Drop the binding: a VMA bound to the slow tier is never promoted. */
	if (syscall(SYS_mbind, buf, total, MPOL_DEFAULT, NULL, 0, 0))
		return perror("mbind default"), 1;
	where(buf, hot, &h0, &h1, &ho);
	where(buf + hot, total - hot, &c0, &c1, &co);
	printf("start: hot node0=%d node1=%d; cold node0=%d node1=%d\n",
	       h0, h1, c0, c1);

	start = now();
	while (now() - start < secs) {
		if (!sampled && now() - start >= warmup) {
			read_vmstat(&before);
			t0s = kthread_ticks("kmmscand");
			t0m = kthread_ticks("kmmscand_migrate");
			sampled = 1;
		}
		for (size_t off = 0; off < hot; off += page_size)
			buf[off]++;
		if (now() - last >= 2) {
			last = now();
			where(buf, hot, &h0, &h1, &ho);
			printf("t=%4.1fs hot on node0: %d/%zu\n", last - start,
			       h0, hot / page_size);
			fflush(stdout);
		}
		usleep(1000);
	}
	read_vmstat(&after);
	t1s = kthread_ticks("kmmscand");
	t1m = kthread_ticks("kmmscand_migrate");

	where(buf, hot, &h0, &h1, &ho);
	where(buf + hot, total - hot, &c0, &c1, &co);
	printf("end:   hot node0=%d node1=%d other=%d; cold node0=%d node1=%d other=%d\n",
	       h0, h1, ho, c0, c1, co);
	printf("vmstat deltas over the last %d s:\n", secs - warmup);
	for (int i = 0; i < after.n; i++)
		printf("  %-28s %llu\n", after.name[i],
		       after.val[i] - counter(&before, after.name[i]));
	if (t0s >= 0 && t1s >= 0) {
		double cpu = (double)(t1s - t0s) / hz;
		unsigned long long ptes = counter(&after, "kmmscand_pte_scanned") -
					  counter(&before, "kmmscand_pte_scanned");

		printf("kmmscand cpu %.2f s, kmmscand_migrate cpu %.2f s\n", cpu,
		       (double)(t1m - t0m) / hz);
		if (cpu > 0)
			printf("PTEs scanned per second of kmmscand CPU: %.0f\n",
			       ptes / cpu);
	}
	printf("RESULT hot_promoted=%d%% cold_promoted=%d%%\n",
	       (int)(100LL * h0 / (hot / page_size)),
	       (int)(100LL * c0 / ((total - hot) / page_size)));
	return 0;
}
