// SPDX-License-Identifier: GPL-2.0
/* workload/workload_util.c - time, random numbers, NUMA system calls. */
#include "workload.h"

void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "workload: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (%s)\n", strerror(errno));
	exit(2);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}


uint64_t rng_state;
void rnd_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ULL + 0x1234567; if (!rng_state) rng_state = 1; for (int i = 0; i < 8; i++) rnd(); }

long sys_mbind(void *addr, unsigned long len, int mode, int node)
{
	unsigned long mask[2] = { 0, 0 };

	if (mode == MPOL_DEFAULT_)
		return syscall(SYS_mbind, addr, len, mode, NULL, 0, 0);
	mask[node / 64] = 1UL << (node % 64);
	return syscall(SYS_mbind, addr, len, mode, mask, 128, 0);
}

long sys_set_mempolicy(int mode, int node)
{
	unsigned long mask[2] = { 0, 0 };

	if (mode == MPOL_DEFAULT_)
		return syscall(SYS_set_mempolicy, mode, NULL, 0);
	mask[node / 64] = 1UL << (node % 64);
	return syscall(SYS_set_mempolicy, mode, mask, 128);
}

long sys_move_pages(int pid, unsigned long n, void **pages, int *status)
{
	return syscall(SYS_move_pages, pid, n, pages, NULL, status, 0);
}

long sys_move_pages_to(unsigned long n, void **pages, const int *nodes, int *status)
{
	return syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE_);
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p)
		die("out of memory (%s)", "calloc");
	return p;
}

int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}
