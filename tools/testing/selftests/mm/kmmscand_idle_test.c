// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand and the other users of the Accessed bit.  When kmmscand
 * test-and-clears the Accessed bit of a slow-tier page, the access must
 * stay visible to idle page tracking (and so to DAMON, which reads the
 * same page flag): a page accessed after it was marked idle must read
 * as not idle from /sys/kernel/mm/page_idle/bitmap, whether kmmscand
 * looked at it in between or not.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND and CONFIG_IDLE_PAGE_TRACKING.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_promote.h"

#define PAGE_IDLE_BITMAP	"/sys/kernel/mm/page_idle/bitmap"

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

	/* Wait until kmmscand has found (and cleared) that many young bits. */
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
	} while (D(&s0, &s1, S_YOUNG) < marked &&
		 now_ms() - t0 < SHORT_DEADLINE_MS);
	ksft_print_msg("kmmscand: young +%llu, passes +%llu in %lld ms\n",
		       D(&s0, &s1, S_YOUNG), D(&s0, &s1, S_MM_SCAN),
		       now_ms() - t0);
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
