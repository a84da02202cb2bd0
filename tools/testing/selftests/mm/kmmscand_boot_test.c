// SPDX-License-Identifier: GPL-2.0
/*
 * The first visit after boot.  A process started right after boot, with
 * kmmscand at its boot-time settings, must be scanned within
 * scan_period_min_ms (plus VISIT_SLACK_MS) of its start, like one started
 * later: the scanner must not still be asleep from a round that ran
 * before the slow tier was known.
 *
 * The boot case is only seen when this test runs first after boot (it
 * sorts first among the kmmscand tests that `make test` runs); later it
 * checks the same bound in a running system.  It writes no knob: writing
 * one wakes the scanner and would hide a scanner that sleeps too long.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, a kernel with
 * CONFIG_KMMSCAND, kmmscand enabled with the abit source.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_harness.h"

/* What the scanner may take beyond scan_period_min_ms (a round, TCG). */
#define VISIT_SLACK_MS	1000
#define VISIT_POLL_MS	10
#define VISIT_WAIT_MS	20000

/*
 * Shared memory on node 1, not mapped by this process: only the child
 * below maps it, so only a visit of the child finds young slow-tier pages.
 */
static int shm_on_node1(size_t len)
{
	int fd = memfd_create("kmmscand_boot", 0);
	unsigned long i;
	char *p;

	if (fd < 0 || ftruncate(fd, len))
		return -1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	if (bind_to_node(p, len, 1))
		return -1;
	for (i = 0; i < len; i += psize())
		p[i] = 1;
	if (unbind(p, len))
		return -1;
	munmap(p, len);
	return fd;
}

/*
 * A child that maps @fd and reads every page of it until killed (the
 * mapping is writable: kmmscand leaves read-only file mappings alone).
 */
static pid_t reader_child(int fd, size_t len)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (!pid) {
		unsigned long i;
		char *p, c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0);
		if (p == MAP_FAILED)
			_exit(1);
		for (;;)
			for (i = 0; i < len; i += psize()) {
				c = p[i];
				asm volatile("" : : "r"(c) : "memory");
			}
	}
	return pid;
}

TEST(first_visit)
{
	const size_t len = 8 * MB;
	long long pmin = 0, on = 0, t_fork, t_seen = -1, boot_ms;
	unsigned long long young0;
	struct node_count nc;
	char why[160], buf[64];
	int fd, status;
	pid_t pid;

	boot_ms = now_ms();
	if (!kmmscand_present())
		SKIP(return, "%s missing: kernel built without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);
	if (geteuid())
		SKIP(return, "needs root");
	if (!two_tiers(why, sizeof(why)))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, knob_get(KNOB_ENABLED, &on));
	ASSERT_LT(0, kmm_read_file(KMMSCAND_SYSFS "sources", buf, sizeof(buf)));
	if (!on || !strstr(buf, "abit"))
		SKIP(return, "kmmscand disabled or the abit source off (enabled %lld, sources %s)",
		     on, buf);
	ASSERT_EQ(0, knob_get(KNOB_SCAN_PERIOD_MIN_MS, &pmin));
	ASSERT_EQ(0, kmm_stats_read(&(struct kmm_stats){}) <= 0);

	fd = shm_on_node1(len);
	ASSERT_LE(0, fd) TH_LOG("cannot place %zu MB of shmem on node 1: %s",
				len / MB, strerror(errno));
	young0 = kmm_stat(S_YOUNG);
	t_fork = now_ms();
	pid = reader_child(fd, len);
	ASSERT_LT(0, pid);

	/* Visited: young slow-tier pages found, and only the child has any. */
	while (now_ms() - t_fork < VISIT_WAIT_MS) {
		if (kmm_stat(S_YOUNG) > young0) {
			t_seen = now_ms() - t_fork;
			break;
		}
		sleep_ms(VISIT_POLL_MS);
	}
	ksft_print_msg("started %lld ms after boot, scan_period_min_ms %lld\n",
		       boot_ms, pmin);
	ksft_print_msg("first young slow-tier page %lld ms after the fork (-1: none in %d ms)\n",
		       t_seen, VISIT_WAIT_MS);
	ksft_print_msg("kmmscand_young +%llu\n", kmm_stat(S_YOUNG) - young0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ASSERT_NE(-1, t_seen) TH_LOG("the child was never scanned");
	EXPECT_LE(t_seen, pmin + VISIT_SLACK_MS)
		TH_LOG("first visit %lld ms after the start, over scan_period_min_ms %lld + %d",
		       t_seen, pmin, VISIT_SLACK_MS);

	/* Where the child's pages are now (promoted ones on node 0). */
	{
		char *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

		unsigned long i;

		ASSERT_NE(MAP_FAILED, p);
		for (i = 0; i < len; i += psize())	/* map them to ask */
			asm volatile("" : : "r"(p[i]) : "memory");
		ASSERT_EQ(0, where_pages(0, p, len / psize(), &nc));
		ksft_print_msg("shmem pages: node 0 %lu, node 1 %lu\n",
			       nc.n[0], nc.n[1]);
		munmap(p, len);
	}
	close(fd);
}

TEST_HARNESS_MAIN
