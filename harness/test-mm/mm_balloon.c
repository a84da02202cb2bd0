// SPDX-License-Identifier: GPL-2.0
/*
 * mm_balloon -- hold a NUMA node's free memory at its low watermark, so
 * that other processes' allocations under the default memory policy fall
 * back to the next node (the slow tier) while the node itself stays usable
 * for promotion once kswapd demotes (the balloon's pages are ordinary,
 * demotable anonymous memory).
 *
 * Usage: mm_balloon [-n NODE] [-a PAGES] CMD_FIFO ACK_FIFO
 *
 * Binds itself (only itself) to NODE (default 0) and opts out of kmmscand,
 * then serves commands, one per line, read from CMD_FIFO:
 *   topup   grow or shrink the balloon until the free pages of NODE's
 *           largest zone are within a few pages of its low watermark
 *           + PAGES (default 16); answer "ok held_kb=H free=F low=L high=H
 *           promo=P" on ACK_FIFO, or "err why"
 *   quit    release everything and exit
 * The free count moves under the balloon's feet (kswapd, other tasks), so
 * a top-up converges in a bounded number of rounds and reports where it
 * ended rather than promising an exact value.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
/* kmmscand's opt-out (include/uapi/linux/prctl.h of the patched kernel). */
#ifndef PR_SET_KMMSCAND
#define PR_SET_KMMSCAND 0x4b4d5301
#endif

#define MAX_CHUNKS	4096
#define ROUNDS		64

struct zone_stat {
	long free, min, low, high, promo, managed;
};

struct chunk {
	char *p;
	size_t len;
};

static struct chunk chunks[MAX_CHUNKS];
static int nchunks;
static size_t held;	/* bytes */
static long page_size;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("mm_balloon: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The largest zone of @node in /proc/zoneinfo (DMA32 in the test VM). */
static int read_zone(int node, struct zone_stat *out)
{
	char line[256], hdr[64];
	struct zone_stat z = { 0 };
	int in = 0, found = 0;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	snprintf(hdr, sizeof(hdr), "Node %d, zone", node);
	memset(out, 0, sizeof(*out));
	while (fgets(line, sizeof(line), f)) {
		char key[32];
		long v;

		if (!strncmp(line, "Node ", 5)) {
			if (in && z.managed > out->managed) {
				*out = z;
				found = 1;
			}
			in = !strncmp(line, hdr, strlen(hdr));
			memset(&z, 0, sizeof(z));
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, " pages free %ld", &v) == 1)
			z.free = v;
		else if (sscanf(line, " %31s %ld", key, &v) == 2) {
			if (!strcmp(key, "min"))
				z.min = v;
			else if (!strcmp(key, "low"))
				z.low = v;
			else if (!strcmp(key, "high"))
				z.high = v;
			else if (!strcmp(key, "promo"))
				z.promo = v;
			else if (!strcmp(key, "managed"))
				z.managed = v;
		}
	}
	if (in && z.managed > out->managed) {
		*out = z;
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

static int grow(long pages)
{
	size_t len = (size_t)pages * page_size;
	char *p;
	size_t i;

	if (nchunks == MAX_CHUNKS)
		return -1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise(p, len, MADV_NOHUGEPAGE);
	/* Distinct non-zero contents: real pages, nothing for KSM to share. */
	for (i = 0; i < len; i += page_size)
		*(unsigned long *)(p + i) = (unsigned long)(p + i) | 1;
	chunks[nchunks].p = p;
	chunks[nchunks].len = len;
	nchunks++;
	held += len;
	return 0;
}

static void shrink(long pages)
{
	size_t want = (size_t)pages * page_size;

	while (want && nchunks) {
		struct chunk *c = &chunks[nchunks - 1];
		size_t cut = want < c->len ? want : c->len;

		munmap(c->p + c->len - cut, cut);
		c->len -= cut;
		held -= cut;
		want -= cut;
		if (!c->len)
			nchunks--;
	}
}

static void topup(int node, long above, FILE *ack)
{
	struct zone_stat z;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		long target, diff;

		if (read_zone(node, &z)) {
			fprintf(ack, "err cannot read node %d in /proc/zoneinfo\n", node);
			return;
		}
		target = z.low + above;
		diff = z.free - target;
		if (diff > 32) {
			/* Approach from above: per-CPU lists hide some pages. */
			if (grow(diff > 1024 ? diff * 3 / 4 : diff)) {
				fprintf(ack, "err mmap: %s\n", strerror(errno));
				return;
			}
		} else if (diff < -256) {
			shrink(-diff);
		} else {
			break;
		}
	}
	fprintf(ack, "ok held_kb=%zu free=%ld low=%ld high=%ld promo=%ld rounds=%d\n",
		held / 1024, z.free, z.low, z.high, z.promo, round);
}

int main(int argc, char **argv)
{
	unsigned long mask;
	long above = 16;
	int node = 0, opt, fd;
	FILE *cmd, *ack;
	char line[64];

	while ((opt = getopt(argc, argv, "n:a:")) != -1) {
		switch (opt) {
		case 'n':
			node = atoi(optarg);
			break;
		case 'a':
			above = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || node < 0 || node >= 64 || above < 0)
		goto usage;
	page_size = sysconf(_SC_PAGESIZE);
	mask = 1UL << node;
	if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask, 64))
		die("set_mempolicy(MPOL_BIND, node %d): %s", node, strerror(errno));
	/* Demoted balloon pages must not be promoted back. */
	if (prctl(PR_SET_KMMSCAND, 0, 0, 0, 0))
		fprintf(stderr, "mm_balloon: prctl(PR_SET_KMMSCAND, 0): %s (ignored)\n",
			strerror(errno));
	/* O_RDWR: no EOF when the writer closes, no blocking open. */
	fd = open(argv[optind], O_RDWR);
	if (fd < 0 || !(cmd = fdopen(fd, "r")))
		die("%s: %s", argv[optind], strerror(errno));
	fd = open(argv[optind + 1], O_RDWR);
	if (fd < 0 || !(ack = fdopen(fd, "w")))
		die("%s: %s", argv[optind + 1], strerror(errno));
	setvbuf(ack, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), cmd)) {
		if (!strcmp(line, "topup\n"))
			topup(node, above, ack);
		else if (!strcmp(line, "quit\n"))
			break;
		else
			fprintf(ack, "err unknown command\n");
	}
	shrink(held / page_size);
	fprintf(ack, "bye\n");
	return 0;
usage:
	fprintf(stderr, "usage: mm_balloon [-n NODE] [-a PAGES] CMD_FIFO ACK_FIFO\n");
	return 2;
}
