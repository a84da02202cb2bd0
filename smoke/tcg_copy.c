// SPDX-License-Identifier: GPL-2.0
/*
 * tcg_copy -- how fast does the VM copy a page, by how far apart the
 * source and the destination lie?
 *
 *   tcg_copy [MB] [REPEAT]
 *
 * Copies MB (default 16) of a buffer to another place of the same
 * mapping with `rep movsb` (the kernel's page copy on a CPU with ERMS,
 * copy_mc_enhanced_fast_string) and with `rep movsq`, page by page, the
 * destination DIST bytes above the source, for DIST from 256 KB to 64 MB
 * in powers of two (source and destination pages then share their low
 * address bits) and 32 MB plus 4 KB, 8 KB and 60 KB.  Prints the best and the worst of
 * REPEAT (default 5) copies in MB/s per DIST.  On hardware every row is
 * the same; an emulator whose TLB is indexed by the low address bits may
 * not be.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void copy_movsb(char *dst, const char *src, unsigned long n)
{
	asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void copy_movsq(char *dst, const char *src, unsigned long n)
{
	n /= 8;
	asm volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

int main(int argc, char **argv)
{
	static const unsigned long dists[] = {
		2UL << 20, 4UL << 20, 8UL << 20, 16UL << 20, 32UL << 20,
		64UL << 20, 1UL << 20, 512UL << 10, 256UL << 10,
		(32UL << 20) + 4096, (32UL << 20) + 8192,
		(32UL << 20) + 61440,
	};
	unsigned long mb = argc > 1 ? strtoul(argv[1], NULL, 0) : 16;
	int rep = argc > 2 ? atoi(argv[2]) : 5;
	unsigned long len = mb << 20, span = len + (64UL << 20) + 65536;
	char *buf;
	int m, d, r;

	if (!mb || mb > 1024 || rep < 1 || rep > 100) {
		fprintf(stderr, "usage: tcg_copy [MB 1..1024] [REPEAT 1..100]\n");
		return 2;
	}
	buf = mmap(NULL, span, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(buf, span, MADV_NOHUGEPAGE);
	memset(buf, 1, span);
	for (m = 0; m < 2; m++) {
		for (d = 0; d < (int)(sizeof(dists) / sizeof(dists[0])); d++) {
			double best = 0, worst = 1e30;

			for (r = 0; r < rep; r++) {
				double t = now(), mbps;
				unsigned long off;

				for (off = 0; off < len; off += 4096) {
					if (m == 0)
						copy_movsb(buf + dists[d] + off, buf + off, 4096);
					else
						copy_movsq(buf + dists[d] + off, buf + off, 4096);
				}
				mbps = mb / (now() - t);
				if (mbps > best)
					best = mbps;
				if (mbps < worst)
					worst = mbps;
			}
			printf("copy=%s dist_kb=%lu best_mbps=%.0f worst_mbps=%.0f\n",
			       m ? "movsq" : "movsb", dists[d] >> 10, best, worst);
		}
	}
	return 0;
}
