// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand among the other users of an mm: while the scanner works, 100
 * short-lived processes come and go and part of a hot range turns
 * PROT_NONE or is unmapped; pages waiting in the promotion queue can still
 * be migrated by their owner, since a queued candidate holds no reference
 * on its folio; and a visit that stops on mmap_lock contention resumes
 * correctly at a VMA at address 0.  The kernel must stay sane (the host
 * fails the run on any WARN, BUG or Oops), the data intact, and promotion
 * must still work afterwards.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_fixture.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/* A short-lived process: 1 MB on node 1, touched a few times, then exit. */
static void short_lived(unsigned int seed)
{
	const size_t len = MB;
	unsigned long i;
	int round;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	if (seed & 1)
		prctl(PR_SET_KMMSCAND, 0, 0, 0, 0);
	bind_to_node(p, len, 1);
	for (round = 0; round < 20; round++) {
		for (i = 0; i < len; i += psize())
			p[i]++;
		sleep_ms(5 + seed % 20);
	}
	_exit(0);
}

/*
 * While the scanner is busy with a hot range, 100 processes come and go,
 * and part of a second hot range becomes PROT_NONE and part is unmapped.
 * The kernel must stay sane (the host fails the run on any WARN, BUG or
 * Oops), counters must stay consistent, surviving data intact, and the
 * scanner must still promote afterwards.
 */
TEST_F_TIMEOUT(promote, churn_and_unmap, 150)
{
	const unsigned long q = (8 * MB) / psize() / 4;
	struct node_count nc, moved;
	struct kmm_stats s0, s1;
	struct hot_thread h = {}, h2 = {};
	unsigned long passes, passes2 = 0, bad;
	int i, status, failed = 0;
	struct region r, r2;
	bool kthread;
	long long t0;
	pid_t pid;

	ASSERT_EQ(0, region_on_node1(&r, 8 * MB, 0, 0x5555));
	ASSERT_EQ(0, region_on_node1(&r2, 8 * MB, 0, 0x6666));
	hot_add(&h2, r2.base, r2.npages);
	ASSERT_EQ(0, hot_start(&h2));

	kmm_stats_read(&s0);
	t0 = now_ms();
	for (i = 0; i < 100; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			short_lived(i);
			_exit(0);
		}
		/* Ten alive at a time. */
		if (i >= 9 && waitpid(-1, &status, 0) > 0 &&
		    (!WIFEXITED(status) || WEXITSTATUS(status)))
			failed++;
		/* Halfway through, pull r2 out from under the scanner. */
		if (i == 50) {
			passes2 = hot_stop(&h2);
			ASSERT_EQ(0, mprotect(r2.base + q * psize(),
					      q * psize(), PROT_NONE));
			ASSERT_EQ(0, munmap(r2.base + 2 * q * psize(),
					    q * psize()));
		}
	}
	while ((pid = waitpid(-1, &status, 0)) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	ksft_print_msg("100 processes done in %lld ms, %d failed\n",
		       now_ms() - t0, failed);
	EXPECT_EQ(0, failed);

	/* The scanner still works: r becomes hot now and is promoted. */
	hot_add(&h, r.base, r.npages);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
		if (pct(nc.n[0], r.npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	passes = hot_stop(&h);
	kmm_stats_read(&s1);
	log_deltas(&s0, &s1);

	ksft_print_msg("after churn: %lu%% on node 0 in %lld ms\n",
		       pct(nc.n[0], r.npages), now_ms() - t0);
	EXPECT_NE(0, find_task("kmmscand", &kthread)) TH_LOG("kthread gone");
	EXPECT_LE(HOT_PCT, pct(nc.n[0], r.npages));
	expect_accounting(_metadata, &s0, &s1);
	EXPECT_LE(nc.n[0], D(&s0, &s1, S_PROMOTE_SUCCESS));

	/* What is left of r2: unmapped quarter gone, the rest intact. */
	ASSERT_EQ(0, where_pages(0, r2.base + 2 * q * psize(), q, &moved));
	EXPECT_EQ(q, moved.unmapped)
		TH_LOG("unmapped range: %lu unmapped, %lu absent, %lu on node 0, %lu on node 1",
		       moved.unmapped, moved.absent, moved.n[0], moved.n[1]);
	ASSERT_EQ(0, mprotect(r2.base + q * psize(), q * psize(),
			      PROT_READ | PROT_WRITE));
	bad = region_verify(&r, 0, r.npages, passes) +
	      region_verify(&r2, 0, q, passes2) +
	      region_verify(&r2, q, q, passes2) +
	      region_verify(&r2, 3 * q, q, passes2);
	EXPECT_EQ(0UL, bad) TH_LOG("%lu pages changed content", bad);
	region_unmap(&r);
	region_unmap(&r2);
}

/*
 * A queued candidate holds no reference on its folio: while the rate
 * limit keeps thousands of hot pages waiting in the queue, the owner can
 * still migrate them itself.  An extra reference makes migrate_pages()
 * refuse a page, and the same reference breaks KSM, THP collapse and
 * split, UFFDIO_MOVE and COW reuse.
 */
TEST_F_TIMEOUT(promote, queued_pages_stay_movable, 120)
{
	const unsigned long n = (32 * MB) / psize();
	unsigned long i, left, queued;
	struct kmm_stats s0, s1;
	struct hot_thread h = {};
	struct node_count nc;
	long long t0;
	struct region r;
	void **addrs;
	int *nodes, *status;
	int ret;

	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1));
	ret = region_on_node1(&r, n * psize(), 0, 0xbeef);
	ASSERT_EQ(0, ret) TH_LOG("placing 32 MB on node 1: %s", strerror(-ret));
	kmm_stats_read(&s0);
	hot_add(&h, r.base, n);
	ASSERT_EQ(0, hot_start(&h));
	/* Wait until a few thousand candidates were queued. */
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		queued = D(&s0, &s1, S_CANDIDATE);
	} while (queued < 4096 && now_ms() - t0 < DEADLINE_MS);
	ASSERT_LE(4096UL, queued) TH_LOG("only %lu candidates", queued);

	addrs = calloc(n, sizeof(*addrs));
	nodes = calloc(n, sizeof(*nodes));
	status = calloc(n, sizeof(*status));
	ASSERT_TRUE(addrs && nodes && status);
	for (i = 0; i < n; i++) {
		addrs[i] = r.base + i * psize();
		nodes[i] = 0;
	}
	ret = sys_move_pages(0, n, addrs, nodes, status, MPOL_MF_MOVE);
	ASSERT_LE(0, ret) TH_LOG("move_pages: %s", strerror(errno));
	hot_stop(&h);
	ASSERT_EQ(0, where_pages(0, r.base, n, &nc));
	left = nc.n[1];
	kmm_stats_read(&s1);
	ksft_print_msg("%lu candidates; move_pages (returned %d) left %lu/%lu on node 1\n",
		       queued, ret, left, n);
	log_deltas(&s0, &s1);
	/* At most the batch the migrator has isolated right now. */
	EXPECT_GE(512UL, left)
		TH_LOG("%lu pages could not be moved while queued", left);
	EXPECT_EQ(0UL, region_verify(&r, 0, n, h.passes));
	free(addrs);
	free(nodes);
	free(status);
	region_unmap(&r);
}

/* Take mmap_lock for writing as often as possible until told to stop. */
static void *lock_churn(void *arg)
{
	int *stop = arg;
	unsigned long n = 0;
	void *p;

	while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		p = mmap(NULL, psize(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, psize());
		n++;
	}
	return (void *)n;
}

/*
 * A VMA at address 0 (vm.mmap_min_addr=0, as wine and dosemu use) whose
 * first PTE table is where a visit stops when a writer waits for
 * mmap_lock: the pass must resume at address 0, page-aligned, and not
 * walk the table from a byte address.  A thread maps and unmaps a page in
 * a loop so that visits keep stopping on contention; the hot pages at
 * address 0 must still be promoted, no byte may change, and the kernel
 * must stay sane (the host fails the run on any splat).
 */
TEST_F_TIMEOUT(promote, low_vma_resumed, 120)
{
	const size_t len = 4 * MB;
	struct kmm_stats s0, s1;
	struct hot_thread h = {};
	struct node_count hot;
	unsigned long passes, got = 0;
	pthread_t churn;
	void *churned;
	int stop = 0, ret;
	struct region r;
	long long t;
	void *p;

	if (kmm_env_save(&self->env, MIN_ADDR_SYSCTL))
		SKIP(return, "cannot read %s", MIN_ADDR_SYSCTL);
	ASSERT_EQ(0, kmm_env_set_long(&self->env, MIN_ADDR_SYSCTL, 0))
		TH_LOG("cannot set %s to 0", MIN_ADDR_SYSCTL);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		SKIP(return, "no mapping at address 0: %s", strerror(errno));
	ASSERT_EQ(NULL, p) TH_LOG("MAP_FIXED_NOREPLACE at 0 returned %p", p);

	memset(&r, 0, sizeof(r));
	r.map = p;
	r.map_len = len;
	r.base = p;
	r.len = len;
	r.npages = len / psize();
	r.seed = 0x10;
	ret = region_fill_node1(&r, 0);
	ASSERT_EQ(0, ret) TH_LOG("placing 4 MB at 0 on node 1: %s",
				 strerror(-ret));
	hot_add(&h, r.base, r.npages);

	kmm_stats_read(&s0);
	ASSERT_EQ(0, pthread_create(&churn, NULL, lock_churn, &stop));
	ASSERT_EQ(0, hot_start(&h));
	t = wait_promoted(&r, 0, r.npages, HOT_PCT, DEADLINE_MS, &got);
	passes = hot_stop(&h);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(churn, &churned);
	kmm_stats_read(&s1);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &hot));

	ksft_print_msg("VMA at 0: %lu/%lu (%lu%%) on node 0, %lu%% at %lld ms, %lu munmaps\n",
		       hot.n[0], r.npages, pct(hot.n[0], r.npages), got, t,
		       (unsigned long)churned);
	log_deltas(&s0, &s1);

	EXPECT_LE(HOT_PCT, pct(hot.n[0], r.npages))
		TH_LOG("hot pages at address 0 not promoted within %d ms",
		       DEADLINE_MS);
	EXPECT_EQ(0UL, region_verify(&r, 0, r.npages, passes));
	expect_accounting(_metadata, &s0, &s1);
	munmap(r.base, len);	/* region_unmap() takes NULL as "none" */
}

int main(int argc, char **argv)
{
	return kmm_test_main(argc, argv);
}
