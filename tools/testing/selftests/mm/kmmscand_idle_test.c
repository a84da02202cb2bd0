// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand and the other users of the Accessed bit.  When kmmscand
 * test-and-clears the Accessed bit of a slow-tier page, the access must
 * stay visible to idle page tracking (and so to DAMON, which reads the
 * same page flag): a page accessed after it was marked idle must read
 * as not idle from /sys/kernel/mm/page_idle/bitmap, whether kmmscand
 * looked at it in between or not; and reclaim must still count it as
 * referenced, so that kmmscand's scan does not get a page that is in use
 * swapped out before the pages that are not.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND and CONFIG_IDLE_PAGE_TRACKING; the reclaim test a zram
 * device (CONFIG_ZRAM, CONFIG_SWAP) for swap.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/swap.h>

#include "kmmscand_harness.h"

#ifndef MADV_COLD
#define MADV_COLD		20
#endif

#define PAGE_IDLE_BITMAP	"/sys/kernel/mm/page_idle/bitmap"
#define ZRAM_SYSFS		"/sys/block/zram0/"
#define ZRAM_DEV		"/dev/zram0"
#define ZRAM_MB			512
#define HOT_EVERY		4	/* one page in this many is read */
#define RECLAIM_STEP_MB		8	/* pressure added per step ... */
#define RECLAIM_MAX_MB		256	/* ... up to this beyond node 1's free */

FIXTURE(idle) {
	struct kmm_env env;
};

FIXTURE_SETUP(idle)
{
	kmm_env_setup(_metadata, &self->env);
	if (access(PAGE_IDLE_BITMAP, R_OK | W_OK))
		SKIP(return, "no %s (CONFIG_IDLE_PAGE_TRACKING=n)",
		     PAGE_IDLE_BITMAP);
}

FIXTURE_TEARDOWN_PARENT(idle)
{
	kmm_env_restore(&self->env);
}

/*
 * Wait until kmmscand has found (and cleared) @want young Accessed bits
 * since @s0, or SHORT_DEADLINE_MS passed; @s1 is the last snapshot.
 * Returns the time waited in ms.
 */
static long long await_young(const struct kmm_stats *s0, struct kmm_stats *s1,
			     unsigned long want)
{
	long long t0 = now_ms();

	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(s1);
	} while (D(s0, s1, S_YOUNG) < want &&
		 now_ms() - t0 < SHORT_DEADLINE_MS);
	return now_ms() - t0;
}

/* Set (@mark) or read the idle bit of @pfn; returns the bit, or -errno. */
static int idle_bit(int fd, unsigned long pfn, bool mark)
{
	off_t off = (pfn / 64) * sizeof(uint64_t);
	uint64_t word = 1ULL << (pfn % 64);

	if (mark)
		return pwrite(fd, &word, sizeof(word), off) == sizeof(word) ?
		       1 : -errno;
	if (pread(fd, &word, sizeof(word), off) != sizeof(word))
		return -errno;
	return !!(word & (1ULL << (pfn % 64)));
}

/*
 * Pages of a slow-tier region are marked idle, then read once (so their
 * Accessed bits are set), then kmmscand scans them (detect only: the
 * pages must stay on node 1, where kmmscand clears the bits).  Every page
 * that was idle must now read as accessed.  Without handing the access
 * on, each page kmmscand found young reads idle.
 */
TEST_F_TIMEOUT(idle, scanned_access_not_idle, 120)
{
	const size_t len = 16 * MB;
	unsigned long i, marked = 0, still_idle = 0, first_idle = 0;
	unsigned long *pfn;
	struct kmm_stats s0, s1;
	struct node_count nc;
	long long t0;
	struct region r;
	int fd, pm;
	int ret;

	/* Detect only: kmmscand scans and records but promotes nothing. */
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 0));
	ASSERT_EQ(0, region_on_node1(&r, len, 0, 0x1d1e));
	pfn = calloc(r.npages, sizeof(*pfn));
	ASSERT_NE(NULL, pfn);
	pm = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, pm) TH_LOG("/proc/self/pagemap: %s", strerror(errno));
	fd = open(PAGE_IDLE_BITMAP, O_RDWR);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", PAGE_IDLE_BITMAP, strerror(errno));

	for (i = 0; i < r.npages; i++) {
		pfn[i] = pagemap_get_pfn(pm, r.base + i * psize());
		ASSERT_NE(-1UL, pfn[i]) TH_LOG("no pfn for page %lu", i);
	}
	/*
	 * Mark every page idle.  Only LRU pages can be marked (a page still
	 * in a per-CPU LRU batch cannot): the pages that read idle now are
	 * the ones the check below is about.
	 */
	for (i = 0; i < r.npages; i++)
		ASSERT_EQ(1, idle_bit(fd, pfn[i], true));
	for (i = 0; i < r.npages; i++) {
		ret = idle_bit(fd, pfn[i], false);
		ASSERT_LE(0, ret);
		if (ret)
			marked++;
		else
			pfn[i] = -1UL;
	}
	ksft_print_msg("%lu of %lu pages marked idle\n", marked, r.npages);
	ASSERT_LE(r.npages / 2, marked)
		TH_LOG("most pages must be on the LRU to be marked idle");

	/*
	 * Marking cleared the Accessed bits without a TLB flush; drop the
	 * cached translations so that the reads below set the bits again.
	 */
	ASSERT_EQ(0, mprotect(r.base, r.len, PROT_READ));
	ASSERT_EQ(0, mprotect(r.base, r.len, PROT_READ | PROT_WRITE));
	kmm_stats_read(&s0);
	for (i = 0; i < r.npages; i++) {
		uint64_t v = *(uint64_t *)(r.base + i * psize() + 8);

		/* a real load of every page, which sets its Accessed bit */
		asm volatile("" : : "r"(v) : "memory");
	}

	t0 = await_young(&s0, &s1, marked);
	ksft_print_msg("kmmscand: young +%llu, passes +%llu in %lld ms\n",
		       D(&s0, &s1, S_YOUNG), D(&s0, &s1, S_MM_SCAN), t0);
	ASSERT_LE(marked, D(&s0, &s1, S_YOUNG))
		TH_LOG("kmmscand did not scan the region within %d ms",
		       SHORT_DEADLINE_MS);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	ASSERT_EQ(r.npages, nc.n[1]) TH_LOG("pages left node 1 in detect-only mode");

	for (i = 0; i < r.npages; i++) {
		if (pfn[i] == -1UL)
			continue;
		ret = idle_bit(fd, pfn[i], false);
		ASSERT_LE(0, ret);
		if (ret && !still_idle++)
			first_idle = i;
	}
	ksft_print_msg("after the scan: %lu of %lu accessed pages read idle (first: page %lu)\n",
		       still_idle, marked, first_idle);
	EXPECT_EQ(0UL, still_idle)
		TH_LOG("accessed pages read idle after kmmscand cleared their Accessed bits");

	close(fd);
	close(pm);
	free(pfn);
	region_unmap(&r);
}

int main(int argc, char **argv)
{
	return kmm_test_main(argc, argv);
}

/* ---- reclaim ------------------------------------------------------------ */

/*
 * Give zram0 @mb of space and swap on it.  Returns 0, or -errno with the
 * step that failed in @why.
 */
static int zram_swapon(unsigned int mb, const char **why)
{
	const long pg = psize();
	char size[32], *hdr;
	uint32_t *info;
	int fd, ret = 0;

	snprintf(size, sizeof(size), "%uM", mb);
	*why = ZRAM_SYSFS "disksize";
	if (write_str(ZRAM_SYSFS "disksize", size))
		return -errno;
	/* What mkswap writes: the magic, version 1, the last page. */
	*why = ZRAM_DEV;
	hdr = calloc(1, pg);
	if (!hdr)
		return -ENOMEM;
	info = (uint32_t *)(hdr + 1024);
	info[0] = 1;
	info[1] = (uint32_t)((unsigned long)mb * MB / pg - 1);
	memcpy(hdr + pg - 10, "SWAPSPACE2", 10);
	fd = open(ZRAM_DEV, O_WRONLY);
	if (fd < 0 || pwrite(fd, hdr, pg, 0) != pg || fsync(fd))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	free(hdr);
	if (ret)
		return ret;
	*why = "swapon";
	return swapon(ZRAM_DEV, 0) ? -errno : 0;
}

static void zram_swapoff(void)
{
	swapoff(ZRAM_DEV);
	write_str(ZRAM_SYSFS "reset", "1");
}

/*
 * A child that asks node 1 for memory (MPOL_BIND through its VMA, so that
 * zram's own allocations are not bound): reclaim on node 1 has to make
 * the room.  It first faults in @first bytes, then RECLAIM_STEP_MB more
 * each time the parent writes a byte on @cmd, up to @len in all.  After
 * each step it writes a byte on @rep: 0 done, 1 failed, 2 nothing left
 * to add.  Killed by the parent.
 */
static void node1_hog(size_t first, size_t len, int cmd, int rep)
{
	const size_t step = RECLAIM_STEP_MB * MB;
	unsigned long one = 2UL;
	size_t done = 0, n = first;
	char *p, c = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_KMMSCAND, 0, 0, 0, 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED ||
	    sys_mbind(p, len, MPOL_BIND, &one, sizeof(one) * 8, 0))
		c = 1;
	for (;;) {
		if (!c && done >= len)
			c = 2;
		if (!c && madvise(p + done, n, MADV_POPULATE_WRITE))
			c = 1;
		done += n;
		if (write(rep, &c, 1) != 1 || c || read(cmd, &c, 1) != 1)
			break;
		c = 0;
		n = done + step > len ? len - done : step;
	}
	pause();
	_exit(0);
}

/*
 * Pages of @r swapped out, read ones (one in HOT_EVERY) and the rest,
 * from one read of /proc/self/pagemap.  Not vm_util's
 * pagemap_is_swapped(): it cross-checks each page against PAGEMAP_SCAN
 * and exits when they differ, which they do when kswapd swaps the page
 * out between the two.  Returns 0 or -errno.
 */
static int count_swapped(int pm, const struct region *r,
			 unsigned long *hot_sw, unsigned long *cold_sw)
{
	const size_t sz = r->npages * sizeof(uint64_t);
	off_t off = (uintptr_t)r->base / psize() * sizeof(uint64_t);
	uint64_t *ent = malloc(sz);
	unsigned long i;

	*hot_sw = *cold_sw = 0;
	if (!ent)
		return -ENOMEM;
	if (pread(pm, ent, sz, off) != (ssize_t)sz) {
		free(ent);
		return -EIO;
	}
	for (i = 0; i < r->npages; i++) {
		bool sw = ent[i] & (1ULL << 62);	/* PM_SWAP */

		if (i % HOT_EVERY)
			*cold_sw += sw;
		else
			*hot_sw += sw;
	}
	free(ent);
	return 0;
}

/*
 * Reclaim order: pages kmmscand found young keep their reference for
 * reclaim.  128 MB on node 1, all made cold with MADV_COLD (no Accessed
 * bit, no PG_young, inactive); then one page in HOT_EVERY is read, and
 * kmmscand (detect only) finds those young and clears their bits.  A
 * process then asks node 1 for all it has free, with zram swap on, and
 * then for RECLAIM_STEP_MB more at a time until reclaim has swapped out
 * a quarter of the cold pages (how much it takes depends on how reclaim
 * splits the work between them and the process's own pages).  The pages
 * read must be swapped out much less than the others: at most half their
 * share.  If kmmscand consumed their Accessed
 * bits without handing the access on (PG_young), reclaim would see them
 * exactly as the cold ones.
 */
TEST_F_TIMEOUT(idle, reclaim_keeps_scanned_young, 180)
{
	const size_t len = 128 * MB;
	unsigned long i, hot_n = 0, cold_n = 0, hot_sw = 0, cold_sw = 0;
	struct kmm_stats s0, s1;
	long long t0, free_kb;
	const char *why = "";
	struct region r;
	int pm, rep[2], cmd[2], ret, sw_ret = 0;
	unsigned int steps;
	pid_t hog;
	char c;

	if (access(ZRAM_SYSFS "disksize", W_OK))
		SKIP(return, "no zram0 (CONFIG_ZRAM=n or CONFIG_SWAP=n)");
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 0));
	ASSERT_EQ(0, region_on_node1(&r, len, 0, 0x5a5a));
	pm = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, pm);

	zram_swapoff();		/* in case an earlier run died with it on */
	ret = zram_swapon(ZRAM_MB, &why);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", why, strerror(-ret));

	/* All cold: no Accessed bit, no PG_young, on the inactive list. */
	ASSERT_EQ(0, madvise(r.base, r.len, MADV_COLD));
	kmm_stats_read(&s0);
	for (i = 0; i < r.npages; i += HOT_EVERY) {
		uint64_t v = *(uint64_t *)(r.base + i * psize() + 8);

		asm volatile("" : : "r"(v) : "memory");
		hot_n++;
	}
	cold_n = r.npages - hot_n;
	t0 = await_young(&s0, &s1, hot_n);
	ksft_print_msg("kmmscand: young +%llu of %lu read, in %lld ms\n",
		       D(&s0, &s1, S_YOUNG), hot_n, t0);
	if (D(&s0, &s1, S_YOUNG) < hot_n)
		zram_swapoff();
	ASSERT_LE(hot_n, D(&s0, &s1, S_YOUNG))
		TH_LOG("kmmscand did not find the pages read young");

	free_kb = node_meminfo_kb(1, "MemFree:");
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(cmd));
	fflush(stdout);
	fflush(stderr);
	hog = fork();
	if (!hog) {
		close(rep[0]);
		close(cmd[1]);
		node1_hog((size_t)free_kb * 1024,
			  (size_t)free_kb * 1024 + RECLAIM_MAX_MB * MB,
			  cmd[0], rep[1]);
	}
	close(rep[1]);
	close(cmd[0]);
	/* Add pressure until a quarter of the cold pages are out. */
	for (steps = 0;; steps++) {
		if (read(rep[0], &c, 1) != 1)
			c = 1;
		sw_ret = count_swapped(pm, &r, &hot_sw, &cold_sw);
		if (c || sw_ret || cold_n <= 4 * cold_sw ||
		    write(cmd[1], "", 1) != 1)
			break;
	}
	ret = c == 1 ? -1 : 0;
	close(rep[0]);
	close(cmd[1]);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	ksft_print_msg("node 1: %lld MB free +%u MB; swapped: read %lu/%lu, cold %lu/%lu\n",
		       free_kb / 1024, steps * RECLAIM_STEP_MB, hot_sw, hot_n,
		       cold_sw, cold_n);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, 0)) TH_LOG("pages corrupt");
	region_unmap(&r);
	close(pm);
	zram_swapoff();

	ASSERT_EQ(0, ret) TH_LOG("the process asking node 1 for memory failed");
	ASSERT_EQ(0, sw_ret) TH_LOG("reading /proc/self/pagemap: %s",
				    strerror(-sw_ret));
	ASSERT_LE(cold_n, 4 * cold_sw)
		TH_LOG("reclaim swapped out too few cold pages to compare");
	/* hot_sw / hot_n <= (cold_sw / cold_n) / 2 */
	EXPECT_LE(2 * hot_sw * cold_n, cold_sw * hot_n)
		TH_LOG("the pages kmmscand found young were swapped out like the cold ones");
}

