// SPDX-License-Identifier: GPL-2.0
/*
 * prctl tests for kmmscand: PR_SET_KMMSCAND and PR_GET_KMMSCAND, the
 * "Kmmscand:" line of /proc/<pid>/status, the state over fork and exec,
 * bad arguments and unprivileged callers, and what opting out means: a
 * process that opted out keeps its hot pages on the slow tier while a
 * twin that did not is promoted.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <grp.h>

#include "kmmscand_fixture.h"

#define EXEC_CHILD_FLAG		"--kmmscand-exec-child"
#define NOBODY			65534

static int kmm_get(void)
{
	return prctl(PR_GET_KMMSCAND, 0, 0, 0, 0);
}

static int kmm_set(unsigned long on)
{
	return prctl(PR_SET_KMMSCAND, on, 0, 0, 0);
}

FIXTURE(prctl) {
	int saved;
};

FIXTURE_SETUP(prctl)
{
	if (!kmmscand_present())
		SKIP(return, "kernel built without CONFIG_KMMSCAND");
	self->saved = kmm_get();
	ASSERT_LE(0, self->saved) TH_LOG("PR_GET_KMMSCAND: %s",
					 strerror(errno));
}

FIXTURE_TEARDOWN(prctl)
{
	/* The test runs in a child of the harness: nothing to restore. */
}

TEST_F(prctl, default_on)
{
	EXPECT_EQ(1, self->saved) TH_LOG("a new process should be scanned");
	EXPECT_EQ(1, kmmscand_status(getpid()))
		TH_LOG("/proc/self/status needs \"Kmmscand:\\t1\"");
}

TEST_F(prctl, set_get)
{
	ASSERT_EQ(0, kmm_set(0)) TH_LOG("opt out: %s", strerror(errno));
	EXPECT_EQ(0, kmm_get());
	EXPECT_EQ(0, kmmscand_status(getpid()))
		TH_LOG("/proc/self/status needs \"Kmmscand:\\t0\"");
	ASSERT_EQ(0, kmm_set(0)) TH_LOG("opting out twice must work");
	EXPECT_EQ(0, kmm_get());
	ASSERT_EQ(0, kmm_set(1)) TH_LOG("opt in: %s", strerror(errno));
	EXPECT_EQ(1, kmm_get());
	EXPECT_EQ(1, kmmscand_status(getpid()));
}

TEST_F(prctl, bad_args)
{
	static const unsigned long bad_arg2[] = { 2, 3, 0x100, -1UL };
	unsigned int i;
	int j, v;

	for (v = 0; v <= 1; v++) {
		ASSERT_EQ(0, kmm_set(v));
		for (i = 0; i < ARRAY_SIZE(bad_arg2); i++) {
			errno = 0;
			EXPECT_EQ(-1, prctl(PR_SET_KMMSCAND, bad_arg2[i], 0, 0, 0))
				TH_LOG("SET arg2=%#lx accepted", bad_arg2[i]);
			EXPECT_EQ(EINVAL, errno);
			EXPECT_EQ(v, kmm_get()) TH_LOG("bad SET changed state");
		}
		/* arg3, arg4, arg5 must be 0 for both SET and GET */
		for (j = 0; j < 3; j++) {
			unsigned long a[3] = { 0, 0, 0 };

			a[j] = 1;
			errno = 0;
			EXPECT_EQ(-1, prctl(PR_SET_KMMSCAND, !v, a[0], a[1], a[2]))
				TH_LOG("SET with arg%d=1 accepted", j + 3);
			EXPECT_EQ(EINVAL, errno);
			EXPECT_EQ(v, kmm_get()) TH_LOG("bad SET changed state");
			errno = 0;
			EXPECT_EQ(-1, prctl(PR_GET_KMMSCAND, 0, a[0], a[1], a[2]))
				TH_LOG("GET with arg%d=1 accepted", j + 3);
			EXPECT_EQ(EINVAL, errno);
		}
		errno = 0;
		EXPECT_EQ(-1, prctl(PR_GET_KMMSCAND, 1, 0, 0, 0))
			TH_LOG("GET with arg2=1 accepted");
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(prctl, fork_inherits)
{
	int status, v;
	pid_t pid;

	for (v = 0; v <= 1; v++) {
		ASSERT_EQ(0, kmm_set(v));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int got = kmm_get();

			/* the child's own change must not reach the parent */
			if (got == v && !kmm_set(!v) && kmm_get() == !v)
				_exit(kmmscand_status(getpid()) == !v ? 0 : 3);
			_exit(got < 0 ? 2 : 1);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("child of a parent with state %d: check %d failed",
			       v, WEXITSTATUS(status));
		EXPECT_EQ(v, kmm_get()) TH_LOG("child changed parent's state");
	}
}

/* Run in the exec()ed image: report the inherited state as exit code. */
static int exec_child(void)
{
	int got = kmm_get();

	if (got < 0)
		return 10;
	if (kmmscand_status(getpid()) != got)
		return 11;
	return got;
}

TEST_F(prctl, exec_keeps)
{
	int status, v;
	pid_t pid;

	for (v = 0; v <= 1; v++) {
		ASSERT_EQ(0, kmm_set(v));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			execl("/proc/self/exe", "kmmscand_prctl_test", EXEC_CHILD_FLAG,
			      (char *)NULL);
			_exit(20);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_NE(20, WEXITSTATUS(status)) TH_LOG("exec failed");
		EXPECT_NE(11, WEXITSTATUS(status))
			TH_LOG("status line disagrees with PR_GET after exec");
		EXPECT_EQ(v, WEXITSTATUS(status))
			TH_LOG("state %d before exec, %d after", v,
			       WEXITSTATUS(status));
	}
}

/* The prctl acts on the caller's own mm and needs no privilege. */
TEST_F(prctl, unprivileged)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to switch to uid %d", NOBODY);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		if (kmm_set(0) || kmm_get() != 0)
			_exit(1);
		if (kmm_set(1) || kmm_get() != 1)
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("uid %d could not use the prctl (step %d)", NOBODY,
		       WEXITSTATUS(status));
}

/* ---- what opting out does ----------------------------------------------- */

/*
 * Twin processes with the same hot range: the one that opted out with
 * PR_SET_KMMSCAND keeps its pages on node 1 while the other is promoted.
 */
TEST_F_TIMEOUT(promote, opted_out_not_scanned, 120)
{
	const size_t len = 8 * MB;
	struct node_count in, out;
	struct kmm_stats s0, s1;
	unsigned long npages = len / psize();
	pid_t twin[2];
	long long t0;
	char *base;
	int i;

	/* Mapped, not touched: each twin faults its own copy in. */
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	ASSERT_EQ(0, madvise(base, len, MADV_NOHUGEPAGE));

	/* Twin 0 opts out before it faults its copy in. */
	for (i = 0; i < 2; i++) {
		twin[i] = hot_child(base, len, i == 0);
		self->env.kids[i] = twin[i] > 0 ? twin[i] : 0;
		ASSERT_LT(0, twin[i])
			TH_LOG("twin %d did not start: %s", i, strerror(-twin[i]));
	}

	kmm_stats_read(&s0);
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(twin[0], base, npages, &out));
		ASSERT_EQ(0, where_pages(twin[1], base, npages, &in));
		if (out.n[0] || pct(in.n[0], npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	for (i = 0; i < 2; i++) {
		kill(twin[i], SIGKILL);
		waitpid(twin[i], NULL, 0);
		self->env.kids[i] = 0;
	}
	kmm_stats_read(&s1);
	log_deltas(&s0, &s1);

	ksft_print_msg("after %lld ms: scanned twin %lu%% on node 0\n",
		       now_ms() - t0, pct(in.n[0], npages));
	ksft_print_msg("opted-out twin: %lu/%lu on node 0, %lu on node 1\n",
		       out.n[0], npages, out.n[1]);
	ASSERT_LE(HOT_PCT, pct(in.n[0], npages))
		TH_LOG("scanned twin not promoted: nothing to compare with");
	EXPECT_EQ(0UL, out.n[0]) TH_LOG("opted-out process had pages promoted");
	EXPECT_EQ(npages, out.n[1]);
	munmap(base, len);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], EXEC_CHILD_FLAG))
		return exec_child();
	return kmm_test_main(argc, argv);
}
