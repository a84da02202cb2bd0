// SPDX-License-Identifier: GPL-2.0
/*
 * tierdemo: put a working set on the slow tier (node 1), keep a hot part of
 * it busy, and print once a second where the hot and cold pages are and what
 * kmmscand's counters say. Runs in the harness VM (make demo) or anywhere
 * with two memory tiers.
 *
 * usage: tierdemo [-m total_MB] [-H hot_MB] [-t seconds] [-n slow_node]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_DEFAULT	0
#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)

static long page_size;
static char *base;
static size_t hot_pages, total_pages;
static atomic_int stop;

static long sys_mbind(void *addr, size_t len, int mode, unsigned long *mask,
		      unsigned long maxnode, unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

static long sys_move_pages(size_t count, void **pages, int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, NULL, status, 0);
}

static void *hot_loop(void *arg)
{
	unsigned long x = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (size_t i = 0; i < hot_pages; i++)
			x += ++*(volatile unsigned long *)(base + i * page_size);
	}
	return (void *)x;
}

/* Count pages of [first, first + n) per node: on0, on1, other. */
static void where(size_t first, size_t n, size_t *on0, size_t *on1)
{
	enum { CHUNK = 4096 };
	void *pages[CHUNK];
	int status[CHUNK];

	*on0 = *on1 = 0;
	for (size_t done = 0; done < n; done += CHUNK) {
		size_t c = n - done < CHUNK ? n - done : CHUNK;

		for (size_t i = 0; i < c; i++)
			pages[i] = base + (first + done + i) * page_size;
		if (sys_move_pages(c, pages, status))
			return;
		for (size_t i = 0; i < c; i++) {
			*on0 += status[i] == 0;
			*on1 += status[i] == 1;
		}
	}
}

static long long vmstat(const char *name)
{
	char key[128];
	long long v;
	FILE *f = fopen("/proc/vmstat", "r");
	long long r = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%127s %lld", key, &v) == 2)
		if (!strcmp(key, name)) {
			r = v;
			break;
		}
	fclose(f);
	return r;
}

int main(int argc, char **argv)
{
	long total_mb = 64, hot_mb = 8, secs = 20, slow = 1;
	unsigned long mask;
	pthread_t th;
	size_t h0, h1, c0, c1;
	int opt, have_kmmscand;
	double t_half = -1, t_90 = -1;

	while ((opt = getopt(argc, argv, "m:H:t:n:")) != -1) {
		char *end;
		long v = strtol(optarg, &end, 10);

		if (*end || v <= 0 || v > 1 << 20) {
			fprintf(stderr, "tierdemo: bad value '%s' for -%c\n", optarg, opt);
			return 2;
		}
		switch (opt) {
		case 'm': total_mb = v; break;
		case 'H': hot_mb = v; break;
		case 't': secs = v; break;
		case 'n': slow = v; break;
		default: goto usage;
		}
	}
	if (optind != argc || hot_mb > total_mb || slow >= 64)
		goto usage;

	page_size = sysconf(_SC_PAGESIZE);
	total_pages = (size_t)total_mb << 20 >> __builtin_ctzl(page_size);
	hot_pages = (size_t)hot_mb << 20 >> __builtin_ctzl(page_size);
	base = mmap(NULL, total_pages * page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* Fault everything in on the slow node, then let the policy go. */
	mask = 1UL << slow;
	if (sys_mbind(base, total_pages * page_size, MPOL_BIND, &mask, 64, 0)) {
		perror("mbind(MPOL_BIND) -- is there a node 1?");
		return 1;
	}
	for (size_t i = 0; i < total_pages; i++)
		base[i * page_size] = 1;
	if (sys_mbind(base, total_pages * page_size, MPOL_DEFAULT, NULL, 0, 0)) {
		perror("mbind(MPOL_DEFAULT)");
		return 1;
	}
	have_kmmscand = access("/sys/kernel/mm/kmmscand/enabled", F_OK) == 0;
	printf("tierdemo: %ld MB on node %ld, %ld MB of it hot, %ld s\n",
	       total_mb, slow, hot_mb, secs);
	if (!have_kmmscand)
		printf("tierdemo: this kernel has no /sys/kernel/mm/kmmscand: nothing will promote\n");
	else if (vmstat("kmmscand_promote_success") < 0)
		printf("tierdemo: kmmscand is present but has no promotion counters yet "
		       "(scanner/migrator not in this kernel): expect no promotion\n");
	fflush(stdout);
	if (pthread_create(&th, NULL, hot_loop, NULL)) {
		perror("pthread_create");
		return 1;
	}
	printf("%4s %10s %10s %10s %10s %12s %12s %12s\n", "sec", "hot@node0",
	       "hot@node1", "cold@node0", "cold@node1", "candidates", "promoted",
	       "pte_scanned");
	for (long s = 1; s <= secs; s++) {
		sleep(1);
		where(0, hot_pages, &h0, &h1);
		where(hot_pages, total_pages - hot_pages, &c0, &c1);
		printf("%4ld %10zu %10zu %10zu %10zu %12lld %12lld %12lld\n", s, h0, h1,
		       c0, c1, vmstat("kmmscand_candidate"),
		       vmstat("kmmscand_promote_success"),
		       vmstat("kmmscand_pte_scanned"));
		fflush(stdout);
		if (t_half < 0 && h0 * 2 >= hot_pages)
			t_half = s;
		if (t_90 < 0 && h0 * 10 >= hot_pages * 9)
			t_90 = s;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("summary: hot set %zu pages, %zu (%.1f%%) on node 0 at the end; "
	       "cold set %zu pages, %zu (%.2f%%) promoted\n",
	       hot_pages, h0, 100.0 * h0 / hot_pages, total_pages - hot_pages, c0,
	       100.0 * c0 / (total_pages - hot_pages));
	if (t_half >= 0)
		printf("summary: 50%% of the hot set on node 0 after %.0f s", t_half);
	else
		printf("summary: 50%% of the hot set never reached node 0");
	if (t_90 >= 0)
		printf(", 90%% after %.0f s\n", t_90);
	else
		printf(", 90%% never\n");
	return 0;
usage:
	fprintf(stderr, "usage: tierdemo [-m total_MB] [-H hot_MB] [-t seconds] [-n slow_node]\n");
	return 2;
}
