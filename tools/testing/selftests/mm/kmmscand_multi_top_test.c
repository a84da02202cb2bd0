// SPDX-License-Identifier: GPL-2.0
/*
 * Two top-tier nodes, as on a machine with two sockets of DRAM in front of
 * one CXL tier: a top-tier node that is full must not hold back the
 * promotion of hot pages that go to the other one.
 *
 * Needs: root, node 0 and node 2 in the same (top) memory tier, node 1 in
 * a slower one (harness/vm.sh with NODE2_MB), CONFIG_KMMSCAND.  Skips on
 * a machine without a second top-tier node; make test runs it in a VM
 * that has one, where a skip fails the run.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_harness.h"

#define TOP_MB		16	/* each process's memory on its top-tier node */
#define HOT_MB		8	/* and its hot set on node 1 */
#define SMALL_BATCH	32	/* pages per migration batch */
#define QUEUED_MIN	256	/* A's candidates queued before B starts */
#define QUEUED		"queued"	/* in KMMSCAND_SYSFS */

FIXTURE(multi) {
	struct kmm_env env;
};

FIXTURE_SETUP(multi)
{
	kmm_env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN_PARENT(multi)
{
	kmm_env_restore(&self->env);
}

/*
 * A process with @top_len bytes at @top on @top_node and @hot_len bytes at
 * @hot on node 1.  Places both, reports 0 or an errno on @rep, waits for
 * a byte on @go and keeps every page of both hot until killed: kmmscand
 * sends a page to the top-tier node where its process has most of the
 * pages it finds in use.
 */
static void tier_child(char *top, size_t top_len, int top_node, char *hot,
		       size_t hot_len, int go, int rep)
{
	unsigned char err = 0, c;
	unsigned long i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	madvise(top, top_len, MADV_NOHUGEPAGE);	/* EINVAL without THP */
	madvise(hot, hot_len, MADV_NOHUGEPAGE);
	if (bind_to_node(top, top_len, top_node) ||
	    bind_to_node(hot, hot_len, 1))
		err = errno ?: EINVAL;
	for (i = 0; !err && i < top_len / psize(); i++)
		top[i * psize()] = 1;
	for (i = 0; !err && i < hot_len / psize(); i++)
		hot[i * psize()] = 1;
	if (!err && (unbind(top, top_len) || unbind(hot, hot_len)))
		err = errno;
	if (write(rep, &err, 1) != 1 || err)
		_exit(1);
	if (read(go, &c, 1) != 1)
		_exit(1);
	for (;;) {
		for (i = 0; i < top_len / psize(); i++)
			(*(uint64_t *)(top + i * psize()))++;
		for (i = 0; i < hot_len / psize(); i++)
			(*(uint64_t *)(hot + i * psize()))++;
		asm volatile("" ::: "memory");
	}
}

struct tier_proc {
	pid_t pid;
	int go;
	char *top, *hot;
};

/* Fork tier_child(); 0 once its pages are in place, or -errno. */
static int tier_start(struct tier_proc *t, int top_node)
{
	const size_t top_len = TOP_MB * MB, hot_len = HOT_MB * MB;
	int go[2], rep[2];
	unsigned char err;

	t->pid = 0;
	t->go = -1;
	t->top = mmap(NULL, top_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->hot = mmap(NULL, hot_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->top == MAP_FAILED || t->hot == MAP_FAILED)
		return -ENOMEM;
	if (pipe(go) || pipe(rep))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	t->pid = fork();
	if (!t->pid) {
		close(go[1]);
		close(rep[0]);
		tier_child(t->top, top_len, top_node, t->hot, hot_len, go[0],
			   rep[1]);
	}
	close(go[0]);
	close(rep[1]);
	t->go = go[1];
	if (t->pid < 0)
		return -errno;
	if (read(rep[0], &err, 1) != 1)
		err = EPIPE;
	close(rep[0]);
	return -err;
}

static void tier_stop(struct tier_proc *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
	if (t->go >= 0)
		close(t->go);
	t->pid = 0;
	t->go = -1;
}

/*
 * Process A's memory is on node 0, B's on node 2; both keep 8 MB hot on
 * node 1.  Node 0 is filled to its low watermark, so A's candidates are
 * deferred (kmmscand_defer_watermark) and, with batches of SMALL_BATCH
 * pages, fill every batch taken from the head of the queue.  B starts
 * once QUEUED_MIN of them wait: its hot pages must reach node 2 within
 * DEADLINE_MS all the same.
 */
TEST_F_TIMEOUT(multi, full_node_does_not_block_other, 180)
{
	const unsigned long hot_n = HOT_MB * MB / psize();
	struct tier_proc a = {}, b = {};
	struct node_count na = {}, nb = {};
	struct kmm_stats s0, s1;
	long long t0, ms = -1, queued = 0;
	unsigned long got = 0;
	struct balloon bl;
	int ret, t0n, t2n;

	t0n = memtier_of(0);
	t2n = memtier_of(2);
	if (t2n < 0 || t2n != t0n)
		SKIP(return, "node 2 not in node 0's tier (%d, node 0 %d)",
		     t2n, t0n);
	if (access(DEMOTION_SYSFS, W_OK))
		SKIP(return, "%s: %s", DEMOTION_SYSFS, strerror(errno));
	/* Node 0 stays full: no demotion, fixed watermarks. */
	ASSERT_EQ(0, kmm_env_set(&self->env, DEMOTION_SYSFS, "0"));
	if (!access(BOOST_SYSCTL, F_OK))
		ASSERT_EQ(0, kmm_env_set_long(&self->env, BOOST_SYSCTL, 0));
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, SMALL_BATCH));

	ret = tier_start(&a, 0);
	self->env.kids[0] = a.pid;
	ASSERT_EQ(0, ret) TH_LOG("process A: %s", strerror(-ret));
	ret = tier_start(&b, 2);
	self->env.kids[1] = b.pid;
	if (ret)
		tier_stop(&a);
	ASSERT_EQ(0, ret) TH_LOG("process B: %s", strerror(-ret));

	ret = balloon_start(&bl, (size_t)node_meminfo_kb(0, "MemTotal:") * 1024,
			    DEADLINE_MS);
	if (ret || bl.br.err) {
		tier_stop(&a);
		tier_stop(&b);
		if (bl.pid > 0)
			balloon_free(&bl);
	}
	ASSERT_EQ(0, ret) TH_LOG("the balloon did not fill node 0: %s",
				 strerror(-ret));
	ASSERT_EQ(0, bl.br.err) TH_LOG("balloon: %s", strerror(bl.br.err));

	kmm_stats_read(&s0);
	ASSERT_EQ(1, write(a.go, "g", 1));
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		if (knob_read(QUEUED, &queued))
			queued = -1;
	} while ((queued < QUEUED_MIN || !D(&s0, &s1, S_DEFER_WATERMARK)) &&
		 now_ms() - t0 < SHORT_DEADLINE_MS);
	ksft_print_msg("A: %lld candidates queued, %llu batches deferred after %lld ms\n",
		       queued, D(&s0, &s1, S_DEFER_WATERMARK), now_ms() - t0);

	if (queued >= QUEUED_MIN && D(&s0, &s1, S_DEFER_WATERMARK)) {
		ASSERT_EQ(1, write(b.go, "g", 1));
		ms = wait_on_node(b.pid, b.hot, hot_n, 2, HOT_PCT, DEADLINE_MS,
				  &got);
		where_pages(b.pid, b.hot, hot_n, &nb);
	}
	kmm_stats_read(&s1);
	where_pages(a.pid, a.hot, hot_n, &na);
	tier_stop(&a);
	tier_stop(&b);
	self->env.kids[0] = 0;
	self->env.kids[1] = 0;
	EXPECT_EQ(0, balloon_free(&bl)) TH_LOG("balloon pages corrupt");

	ksft_print_msg("B: %lu%% of its hot pages on node 2 after %lld ms\n",
		       got, ms);
	ksft_print_msg("B: node 0 %lu, node 1 %lu\n", nb.n[0], nb.n[1]);
	ksft_print_msg("A: node 0 %lu, node 1 %lu, node 2 %lu of %lu\n",
		       na.n[0], na.n[1], na.n[2], hot_n);
	ksft_print_msg("deferred batches %llu, promoted %llu\n",
		       D(&s0, &s1, S_DEFER_WATERMARK),
		       D(&s0, &s1, S_PROMOTE_SUCCESS));
	ASSERT_LE(QUEUED_MIN, queued)
		TH_LOG("A's candidates did not wait in the queue: no blocking to test");
	ASSERT_LT(0ULL, D(&s0, &s1, S_DEFER_WATERMARK))
		TH_LOG("node 0 was not full: no blocking to test");
	EXPECT_LE(0, ms)
		TH_LOG("B's hot pages held back behind A's: %lu%% on node 2 after %d ms",
		       got, DEADLINE_MS);
}

TEST_HARNESS_MAIN
