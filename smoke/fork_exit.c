// SPDX-License-Identifier: GPL-2.0
/*
 * fork_exit -- microseconds per fork() + _exit() + waitpid() of a process
 * mapping MB of touched anonymous memory, median of REPEATS runs of N
 * iterations.  Run on kernels with and without CONFIG_KMMSCAND to see what
 * the mm registry costs fork and exit (smoke/fork-cost.sh).
 *
 *   fork_exit N REPEATS MB
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A decimal number, or -1. */
static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v >= 0 ? v : -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n, reps, mb, i, r;
	double *us;
	char *p;

	if (argc != 4) {
		fprintf(stderr, "usage: fork_exit N REPEATS MB\n");
		return 2;
	}
	n = num(argv[1]);
	reps = num(argv[2]);
	mb = num(argv[3]);
	if (n <= 0 || reps <= 0 || mb < 0) {
		fprintf(stderr, "usage: fork_exit N REPEATS MB\n");
		return 2;
	}
	us = calloc(reps, sizeof(*us));
	if (!us)
		return 1;
	if (mb) {
		p = mmap(NULL, mb << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		memset(p, 1, mb << 20);
	}
	for (r = 0; r < reps; r++) {
		double t0 = now();

		for (i = 0; i < n; i++) {
			pid_t pid = fork();
			int st;

			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (!pid)
				_exit(0);
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
				fprintf(stderr, "child %d did not exit cleanly\n", pid);
				return 1;
			}
		}
		us[r] = (now() - t0) * 1e6 / n;
	}
	qsort(us, reps, sizeof(*us), cmp);
	printf("fork_exit mb=%ld n=%ld repeats=%ld median_us=%.1f min_us=%.1f max_us=%.1f\n",
	       mb, n, reps, us[reps / 2], us[0], us[reps - 1]);
	return 0;
}
