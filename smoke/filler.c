// SPDX-License-Identifier: GPL-2.0
/* filler MB SECS: occupy MB of node 0 with cold anonymous memory for SECS. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t len = (size_t)atol(argv[1]) << 20;
	unsigned long node0 = 1;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	/* MPOL_PREFERRED: fill node 0, spill if it must */
	syscall(SYS_mbind, p, len, 1, &node0, 64, 0);
	memset(p, 7, len);
	syscall(SYS_mbind, p, len, 0, NULL, 0, 0);
	fprintf(stderr, "filler: %zu MB written\n", len >> 20);
	sleep(atoi(argv[2]));
	return 0;
}
