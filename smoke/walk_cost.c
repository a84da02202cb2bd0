// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of the scanner's page-table walk per PTE, on the layout where it
 * cannot skip tables: a hot set scattered among cold slow-tier pages and
 * already promoted, so every PTE table holds young top-tier pages next to
 * cold slow-tier ones.
 *
 *   make smoke NAME=walk-cost ARGS="TOTAL_MB HOT_EVERY SECS WINDOWS [CMD...]"
 *
 * Maps TOTAL_MB of anonymous 4 KB pages on node 1, keeps one page in
 * HOT_EVERY of them hot (scattered evenly), waits until 90 % of the hot
 * pages are on node 0 (60 s at most), then prints one line per window of
 * SECS seconds:
 *
 *   WINDOW n=I secs=S scan_cpu_ms=C pte_scanned=P pmd_skipped=K
 *          tlb_flush=F ns_per_pte=X flush_per_s=Y
 *
 * and a last line with the sums.  CMD, if given, is started when the
 * first window starts (perf record, say).  With SWITCH=FILE:V1,V2,...
 * in the environment, V1, V2, ... are written to FILE in turn before each
 * window (a tunable compared window by window in one boot), and each
 * line says which value it ran with (sw=V).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kthread_cpu.h"

#define MPOL_DEFAULT	0
#define MPOL_BIND	2

static char *hot_p;
static unsigned long hot_n, hot_every;
static long hot_psz;

/* Keeps one page in hot_every hot. */
static void *touch(void *unused)
{
	unsigned long i;

	for (;;) {
		for (i = 0; i < hot_n; i += hot_every)
			hot_p[i * hot_psz]++;
		usleep(1000);
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct sample {
	long long cpu_ms;
	unsigned long long pte, pmd, flush;
	double t;
};

static void sample(struct sample *s)
{
	s->cpu_ms = kthread_ticks("kmmscand") * 1000 / sysconf(_SC_CLK_TCK);
	s->pte = vmstat("kmmscand_pte_scanned");
	s->pmd = vmstat("kmmscand_pmd_skipped");
	s->flush = vmstat("kmmscand_tlb_flush");
	s->t = now();
}

static char sw_val[32];

/* Writes the next value of $SWITCH (FILE:V1,V2,...) before window @w. */
static void set_switch(int w)
{
	char *env = getenv("SWITCH"), *c, *v, buf[256];
	int k = 0, nv = 1;
	FILE *f;

	if (!env || strlen(env) >= sizeof(buf))
		return;
	strcpy(buf, env);
	c = strchr(buf, ':');
	if (!c)
		return;
	*c++ = 0;
	for (v = c; *v; v++)
		nv += *v == ',';
	for (v = strtok(c, ","); v && k != (w - 1) % nv; v = strtok(NULL, ","))
		k++;
	if (!v)
		return;
	f = fopen(buf, "w");
	if (!f || fprintf(f, "%s\n", v) < 0 || fclose(f)) {
		perror(buf);
		exit(1);
	}
	snprintf(sw_val, sizeof(sw_val), "%s", v);
}

static void report(const char *tag, int n, struct sample *a, struct sample *b)
{
	double secs = b->t - a->t;
	unsigned long long pte = b->pte - a->pte;

	printf("%s n=%d sw=%s secs=%.1f scan_cpu_ms=%lld pte_scanned=%llu pmd_skipped=%llu tlb_flush=%llu ns_per_pte=%.0f flush_per_s=%.1f\n",
	       tag, n, sw_val[0] ? sw_val : "-", secs, b->cpu_ms - a->cpu_ms, pte, b->pmd - a->pmd,
	       b->flush - a->flush,
	       pte ? (b->cpu_ms - a->cpu_ms) * 1e6 / pte : 0.0,
	       (b->flush - a->flush) / secs);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned long mask = 2, i, n, nhot, every;
	int secs, windows, w, *status, *nodes;
	struct sample first, prev, cur;
	double t0, deadline;
	void **addrs;
	size_t len;
	char *p;
	pthread_t toucher;

	if (argc < 5 || atol(argv[1]) < 2 || atol(argv[2]) < 1 ||
	    (secs = atoi(argv[3])) < 1 || (windows = atoi(argv[4])) < 1) {
		fprintf(stderr, "usage: %s TOTAL_MB HOT_EVERY SECS WINDOWS [CMD...]\n",
			argv[0]);
		return 2;
	}
	len = (size_t)atol(argv[1]) << 20;
	every = atol(argv[2]);
	n = len / psz;
	nhot = (n + every - 1) / every;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	if (syscall(SYS_mbind, p, len, MPOL_BIND, &mask, 64, 0)) {
		perror("mbind node 1");
		return 1;
	}
	memset(p, 1, len);
	if (syscall(SYS_mbind, p, len, MPOL_DEFAULT, NULL, 0, 0)) {
		perror("mbind default");
		return 1;
	}
	hot_p = p;
	hot_n = n;
	hot_every = every;
	hot_psz = psz;
	if (pthread_create(&toucher, NULL, touch, NULL))
		return 1;
	addrs = calloc(nhot, sizeof(*addrs));
	status = calloc(nhot, sizeof(*status));
	nodes = calloc(nhot, sizeof(*nodes));
	if (!addrs || !status || !nodes)
		return 1;
	for (i = 0; i < nhot; i++)
		addrs[i] = p + i * every * psz;
	t0 = now();
	deadline = t0 + 60;
	for (;;) {
		unsigned long on0 = 0;

		if (syscall(SYS_move_pages, 0, nhot, addrs, NULL, status, 0)) {
			perror("move_pages");
			break;
		}
		for (i = 0; i < nhot; i++)
			on0 += status[i] == 0;
		if (on0 * 10 >= nhot * 9 || now() > deadline) {
			printf("HOT %lu/%lu on node 0 after %.1f s\n", on0,
			       nhot, now() - t0);
			break;
		}
		usleep(250000);
	}
	sleep(2);
	sample(&first);
	prev = first;
	if (argc > 5) {
		pid_t cmd = fork();

		if (!cmd) {
			execvp(argv[5], argv + 5);
			perror("exec");
			_exit(127);
		}
	}
	for (w = 1; w <= windows; w++) {
		set_switch(w);
		sample(&prev);
		sleep(secs);
		sample(&cur);
		report("WINDOW", w, &prev, &cur);
		prev = cur;
	}
	sw_val[0] = 0;
	report("TOTAL", windows, &first, &cur);
	while (wait(NULL) > 0)
		;
	return 0;
}
