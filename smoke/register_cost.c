// SPDX-License-Identifier: GPL-2.0
/*
 * register_cost N: what it costs kmmscand to register N processes that
 * exist when it is enabled (kmmscand_register_all()).  Forks N children
 * that sleep, with kmmscand disabled; checks that none is registered;
 * enables kmmscand and polls the "Kmmscand:" line of the last child
 * (the task-list walk reaches it last) until it reads 1.  Prints the time
 * that took and the CPU time of the kmmscand thread over it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kthread_cpu.h"
#include "kmmscand_util.h"	/* kmmscand_status() */

#define ENABLED "/sys/kernel/mm/kmmscand/enabled"

static int put(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(s, f) < 0;
	return fclose(f) || ret ? -1 : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0, i, before = 0;
	long long k0, k1;
	double t0, t;
	pid_t *pids;
	int st = -1;

	(void)vmstat;	/* kthread_cpu.h's, unused here */
	if (n <= 0) {
		fprintf(stderr, "usage: register_cost N (N > 0 processes)\n");
		return 2;
	}
	pids = calloc(n, sizeof(*pids));
	if (!pids || put(ENABLED, "0")) {
		perror("register_cost: " ENABLED);
		return 1;
	}
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
		if (pids[i] < 0) {
			perror("fork");
			n = i;
			break;
		}
	}
	for (i = 0; i < n; i++)
		before += kmmscand_status(pids[i]) == 1;
	k0 = kthread_ticks("kmmscand");
	t0 = now();
	if (put(ENABLED, "1")) {
		perror(ENABLED);
		return 1;
	}
	do {
		st = kmmscand_status(pids[n - 1]);
		t = now() - t0;
	} while (st != 1 && t < 60);
	k1 = kthread_ticks("kmmscand");
	printf("processes %ld, registered while disabled %ld, last registered after %.3f s (status %d), kmmscand CPU %.2f s\n",
	       n, before, t, st, (k1 - k0) / (double)sysconf(_SC_CLK_TCK));
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return st == 1 && !before ? 0 : 1;
}
