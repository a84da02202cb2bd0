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
 * Prefers NODE (default 0) for itself (only itself), opts out of kmmscand
 * and of the OOM killer, then serves commands, one per line, read from CMD_FIFO:
 *   topup   drop the balloon's pages that were moved off NODE (demoted),
 *           then grow or shrink it until the free pages of NODE's largest
 *           zone are a little above its low watermark + PAGES (default
 *           128), never below it; answer "ok held_kb=H dropped_kb=D
 *           free=F low=L high=H promo=P rounds=R" on ACK_FIFO, or
 *           "err why"
 *   release give everything back (answer "ok released")
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
#include <linux/prctl.h>

#ifndef MPOL_PREFERRED
#define MPOL_PREFERRED 1
#endif
/*
 * kmmscand's opt-out comes from include/uapi/linux/prctl.h of the patched
 * kernel (harness/test-mm.sh builds with -isystem on its exported headers);
 * a number of our own could silently differ from the kernel's.
 */
#ifndef PR_SET_KMMSCAND
#error "PR_SET_KMMSCAND missing: build against the patched kernel's uapi headers"
#endif

#define MAX_CHUNKS	16384
#define QUERY_BATCH	4096
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

/*
 * Drop the balloon's pages that are no longer on @node (kswapd demoted
 * them to make room for promotion): they would pile up on the slow tier,
 * and the next top-up refills @node anyway. Returns the pages dropped.
 */
static long release_moved(int node)
{
	static void *addr[QUERY_BATCH];
	static int status[QUERY_BATCH];
	long dropped = 0;
	int c;

	for (c = 0; c < nchunks; c++) {
		size_t off = 0;

		while (off < chunks[c].len) {
			size_t n = (chunks[c].len - off) / page_size, i;

			if (n > QUERY_BATCH)
				n = QUERY_BATCH;
			for (i = 0; i < n; i++)
				addr[i] = chunks[c].p + off + i * page_size;
			if (syscall(SYS_move_pages, 0, n, addr, NULL, status, 0))
				return dropped;
			for (i = 0; i < n; i++) {
				/* -ENOENT: dropped before, nothing mapped there. */
				if (status[i] == node || status[i] == -ENOENT)
					continue;
				madvise(addr[i], page_size, MADV_DONTNEED);
				dropped++;
			}
			off += n * page_size;
		}
	}
	held -= dropped * page_size;
	return dropped;
}

static void topup(int node, long above, FILE *ack)
{
	struct zone_stat z;
	long dropped = release_moved(node);
	int round;

	for (round = 0; round < ROUNDS; round++) {
		long target, diff;

		if (read_zone(node, &z)) {
			fprintf(ack, "err cannot read node %d in /proc/zoneinfo\n", node);
			return;
		}
		target = z.low + above;
		diff = z.free - target;
		if (diff > 64) {
			/*
			 * Approach from above and stay above the low watermark:
			 * going below it would wake kswapd, which would demote
			 * (and so migrate) pages in the "off" pass too.
			 */
			if (grow(diff > 1024 ? diff * 3 / 4 : diff / 2)) {
				fprintf(ack, "err mmap: %s\n", strerror(errno));
				return;
			}
		} else if (diff < -(above / 2 + 256)) {
			shrink(-diff);
		} else {
			break;
		}
	}
	dropped += release_moved(node);
	fprintf(ack, "ok held_kb=%zu dropped_kb=%ld free=%ld low=%ld high=%ld promo=%ld rounds=%d\n",
		held / 1024, dropped * page_size / 1024, z.free, z.low, z.high, z.promo, round);
}

int main(int argc, char **argv)
{
	unsigned long mask;
	long above = 128;
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
	/*
	 * Preferred, not bound: a bound allocation that finds the node at its
	 * low watermark (per-CPU lists make the last ones overshoot) enters
	 * the slow path and wakes the node's kswapd, which would demote pages
	 * in the "off" pass; a preferred one falls back to the next node, and
	 * release_moved() drops what landed there.
	 */
	if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, &mask, 64))
		die("set_mempolicy(MPOL_PREFERRED, node %d): %s", node, strerror(errno));
	/*
	 * The biggest process in the VM: a test that exhausts memory (e.g.
	 * compaction_test mlocks 80% of MemFree) must not get it OOM-killed.
	 */
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd < 0 || write(fd, "-1000", 5) != 5)
		die("oom_score_adj: %s", strerror(errno));
	close(fd);
	/*
	 * Demoted balloon pages must not be promoted back: a balloon that
	 * kmmscand scans would compete with the tests in the "on" pass.
	 */
	if (prctl(PR_SET_KMMSCAND, 0, 0, 0, 0))
		die("prctl(PR_SET_KMMSCAND, 0): %s", strerror(errno));
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
		else if (!strcmp(line, "release\n")) {
			shrink(held / page_size);
			nchunks = 0;
			held = 0;
			fprintf(ack, "ok released\n");
		} else if (!strcmp(line, "quit\n"))
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
