// SPDX-License-Identifier: GPL-2.0
/* workload/workload_balloon.c - the balloon that fills the fast node. */
#include "workload.h"

long node_free_mb(int node)
{
	char path[96], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "MemFree:");

		if (p) {
			kb = strtol(p + 8, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

pid_t start_balloon(long *mb_out)
{
	int pfd[2];
	long free_mb = node_free_mb(o.fast_node), mb;
	pid_t pid;
	char c;

	mb = free_mb - o.balloon_leave_mb;
	*mb_out = mb > 0 ? mb : 0;
	if (mb <= 0)
		return 0;
	if (pipe(pfd))
		die("pipe %s", "");
	pid = fork();
	if (pid < 0)
		die("fork %s", "");
	if (pid == 0) {
		unsigned long len = (unsigned long)mb << 20;
		char *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		close(pfd[0]);
		if (b == MAP_FAILED)
			_exit(5);
		/* THP-backed: 512x fewer faults, fills fast even under TCG */
		madvise(b, len, MADV_HUGEPAGE);
		if (sys_mbind(b, len, MPOL_BIND_, o.fast_node))
			_exit(6);
		for (unsigned long i = 0; i < len; i += PAGE_SZ)
			b[i] = 1;
		sys_mbind(b, len, MPOL_DEFAULT_, 0);
		if (o.balloon_lock && mlock(b, len))
			fprintf(stderr, "workload: balloon mlock failed: %s\n", strerror(errno));
		c = 'b';
		if (write(pfd[1], &c, 1) != 1)
			_exit(7);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		fprintf(stderr, "workload: balloon failed to start\n");
	close(pfd[0]);
	return pid;
}
