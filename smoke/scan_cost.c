// SPDX-License-Identifier: GPL-2.0
/*
 * Scanner cost against mapped memory and process count.
 *
 *   gcc -O2 -static -o scan_cost smoke/scan_cost.c
 *   ./scan_cost NPROC TOTAL_MB SLOW_MB SECONDS
 *
 * Starts NPROC processes that together map TOTAL_MB of anonymous memory
 * (each TOTAL_MB / NPROC), SLOW_MB of it (split the same way) moved to the
 * slow node 1 and the rest left on node 0, all written once and then left
 * alone except one page in 64 of each process's slow part, which is kept
 * hot.  After a 10 s warm-up it samples, over SECONDS, the CPU time of the
 * two kmmscand kthreads and the kmmscand_pte_scanned and _pmd_skipped
 * counters, and prints one line:
 *
 *   RESULT nproc=N mapped_mb=M slow_mb=S secs=T scan_cpu_ms=C migrate_cpu_ms=D
 *          pte_scanned=P pmd_skipped=K cpu_ms_per_gb_s=X
 *
 * cpu_ms_per_gb_s is the scanner's CPU milliseconds per second of wall
 * time per GB of mapped memory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
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

#define MPOL_MF_MOVE	(1 << 1)
#define MAX_PROC	256

static long page_size;

/* utime + stime in ms of the kthread named @comm, -1 if absent. */
static long long kthread_ms(const char *comm)
{
	long long t = kthread_ticks(comm);

	return t < 0 ? t : t * 1000 / sysconf(_SC_CLK_TCK);
}

static void child(size_t len, size_t slow, int ready)
{
	unsigned long i, npages = len / page_size, nslow = slow / page_size;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **addrs;
	int *nodes, *status;

	if (p == MAP_FAILED)
		_exit(2);
	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < npages; i++)
		p[i * page_size] = 1;
	addrs = calloc(nslow + 1, sizeof(*addrs));
	nodes = calloc(nslow + 1, sizeof(*nodes));
	status = calloc(nslow + 1, sizeof(*status));
	if (!addrs || !nodes || !status)
		_exit(2);
	for (i = 0; i < nslow; i++) {
		addrs[i] = p + i * page_size;
		nodes[i] = 1;
	}
	if (nslow && syscall(SYS_move_pages, 0, nslow, addrs, nodes, status,
			     MPOL_MF_MOVE) < 0)
		_exit(3);
	if (write(ready, "r", 1) != 1)
		_exit(4);
	for (;;) {
		for (i = 0; i < nslow; i += 64)
			p[i * page_size]++;
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	long long s0, m0, s1, m1;
	unsigned long long pte0, pmd0, pte1, pmd1;
	int nproc, secs, fds[2], i;
	size_t total, slow;
	pid_t pids[MAX_PROC];
	char c;

	page_size = sysconf(_SC_PAGESIZE);
	if (argc != 5 || (nproc = atoi(argv[1])) < 1 || nproc > MAX_PROC ||
	    (secs = atoi(argv[4])) < 1 || atol(argv[2]) < 1 ||
	    atol(argv[3]) < 0 || atol(argv[3]) > atol(argv[2])) {
		fprintf(stderr, "usage: %s NPROC(1-%d) TOTAL_MB SLOW_MB(<=TOTAL) SECONDS\n",
			argv[0], MAX_PROC);
		return 2;
	}
	total = (size_t)atol(argv[2]) << 20;
	slow = (size_t)atol(argv[3]) << 20;
	if (pipe(fds))
		return 1;
	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return 1;
		if (!pids[i])
			child(total / nproc, slow / nproc, fds[1]);
	}
	for (i = 0; i < nproc; i++)
		if (read(fds[0], &c, 1) != 1)
			return 1;
	sleep(10);
	s0 = kthread_ms("kmmscand");
	m0 = kthread_ms("kmmscand_migrate");
	pte0 = vmstat("kmmscand_pte_scanned");
	pmd0 = vmstat("kmmscand_pmd_skipped");
	sleep(secs);
	s1 = kthread_ms("kmmscand");
	m1 = kthread_ms("kmmscand_migrate");
	pte1 = vmstat("kmmscand_pte_scanned");
	pmd1 = vmstat("kmmscand_pmd_skipped");
	for (i = 0; i < nproc; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	printf("RESULT nproc=%d mapped_mb=%zu slow_mb=%zu secs=%d scan_cpu_ms=%lld migrate_cpu_ms=%lld pte_scanned=%llu pmd_skipped=%llu cpu_ms_per_gb_s=%.2f\n",
	       nproc, total >> 20, slow >> 20, secs, s1 - s0, m1 - m0,
	       pte1 - pte0, pmd1 - pmd0,
	       (double)(s1 - s0) / secs / ((double)total / (1UL << 30)));
	return 0;
}
