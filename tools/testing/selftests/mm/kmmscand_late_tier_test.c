// SPDX-License-Identifier: GPL-2.0
/*
 * A slow tier that comes online after the processes that will use it, the
 * usual case for CXL memory that an administrator or a daemon onlines once
 * the system runs.  kmmscand registers nobody while there is no slow tier;
 * when memory comes online it must register the processes that exist,
 * whichever sources are selected.  With the "fault" source alone its
 * scanner walks no page table, and it used to register nobody then.
 *
 * Needs the VM of harness/test.sh's late-tier boot: node 1 without memory
 * at boot and a hot-pluggable dimm on it that the kernel left offline
 * (harness/vm.sh with NODE1_MB=0, DIMM1_MB and memhp_default_state=offline),
 * NUMA balancing, root.  Elsewhere it skips, saying what is missing;
 * make test runs it in that VM, where a skip fails the run.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_harness.h"

#define HOT_MB			8
#define SOURCES			KMMSCAND_SYSFS "sources"
#define NODE1			NODE_SYSFS "node1/"
#define REG_DEADLINE_MS		5000	/* registration after the online */
#define TIER_DEADLINE_MS	5000	/* node 1 in a lower tier */

/* The memory blocks of node 1 in the state @state; returns how many. */
static int node1_blocks(int *blocks, int max, const char *state)
{
	char path[PATH_MAX], buf[32];
	struct dirent *de;
	int n = 0, b;
	DIR *dir;

	dir = opendir(NODE1);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < max) {
		if (sscanf(de->d_name, "memory%d", &b) != 1)
			continue;
		snprintf(path, sizeof(path), NODE1 "%s/state", de->d_name);
		if (kmm_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (!strcmp(buf, state))
			blocks[n++] = b;
	}
	closedir(dir);
	return n;
}

/*
 * The process that predates the tier: it maps @len bytes, waits for a byte
 * on @go, then faults them in on node 1, drops the binding, reports on
 * @rep (0 or an errno) and keeps every page hot until killed.
 */
static void late_child(char *base, size_t len, int go, int rep)
{
	unsigned char err = 0, c;
	unsigned long i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go, &c, 1) != 1)
		_exit(1);
	madvise(base, len, MADV_NOHUGEPAGE);	/* EINVAL without THP */
	if (bind_to_node(base, len, 1))
		err = errno ?: EINVAL;
	for (i = 0; !err && i < len / psize(); i++)
		base[i * psize()] = 1;
	if (!err && unbind(base, len))
		err = errno;
	if (write(rep, &err, 1) != 1 || err)
		_exit(1);
	hot_forever(base, len / psize());
}

FIXTURE(late) {
	struct kmm_knob_state knobs;
	char sources[32];
	long numab;
	bool saved;
	pid_t child;
};

FIXTURE_SETUP(late)
{
	char has[64];
	int blocks[64];

	self->saved = false;
	self->child = 0;
	if (geteuid())
		SKIP(return, "needs root");
	if (!kmmscand_present())
		SKIP(return, "no %s: kernel without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);
	ASSERT_LT(0, kmm_read_file(NODE_SYSFS "has_memory", has, sizeof(has)));
	has[strcspn(has, "\n")] = '\0';
	if (nodelist_has(has, 1))
		SKIP(return, "node 1 has memory already (has_memory %s)", has);
	if (node1_blocks(blocks, ARRAY_SIZE(blocks), "offline") <= 0)
		SKIP(return, "no offline memory block on node 1 to online");
	if (access(NUMA_BALANCING_SYSCTL, W_OK))
		SKIP(return, "no %s", NUMA_BALANCING_SYSCTL);

	ASSERT_EQ(0, knobs_save(&self->knobs));
	ASSERT_LT(0, kmm_read_file(SOURCES, self->sources, sizeof(self->sources)));
	ASSERT_EQ(0, read_long(NUMA_BALANCING_SYSCTL, &self->numab));
	self->saved = true;
	/* Every kmmscand write now: a write to its sysfs registers too. */
	ASSERT_EQ(0, write_str(SOURCES, "fault"));
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 1));
	ASSERT_EQ(0, write_long(NUMA_BALANCING_SYSCTL, 2));
}

FIXTURE_TEARDOWN(late)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->saved) {
		write_long(NUMA_BALANCING_SYSCTL, self->numab);
		write_str(SOURCES, self->sources);
		knobs_restore(&self->knobs);
	}
}

/*
 * A process started with no slow tier is not registered; once node 1's
 * memory is online in a lower tier, it is, within REG_DEADLINE_MS and
 * with no write to kmmscand's sysfs in between, and kmmscand_migrate
 * promotes the pages it keeps hot on node 1 from its hint faults.
 */
TEST_F_TIMEOUT(late, fault_source_registers_on_online, 150)
{
	const size_t len = HOT_MB * MB;
	const unsigned long n = len / psize();
	struct kmm_stats s0, s1;
	long long t0, tier_ms = -1, reg_ms = -1, ms = -1;
	struct node_count nc = {};
	int go[2], rep[2], blocks[64], nb, i, st;
	unsigned long got = 0;
	unsigned char err;
	char why[160];
	char *base;

	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(rep));
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(go[1]);
		close(rep[0]);
		late_child(base, len, go[0], rep[1]);
	}
	close(go[0]);
	close(rep[1]);
	st = kmmscand_status(self->child);
	ASSERT_EQ(0, st) TH_LOG("registered with no slow tier (status %d)", st);

	nb = node1_blocks(blocks, ARRAY_SIZE(blocks), "offline");
	ASSERT_LT(0, nb);
	kmm_stats_read(&s0);
	t0 = now_ms();
	for (i = 0; i < nb; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path),
			 "/sys/devices/system/memory/memory%d/state", blocks[i]);
		ASSERT_EQ(0, write_str(path, "online_movable"))
			TH_LOG("onlining memory%d: %s", blocks[i], strerror(errno));
	}
	do {
		if (tier_ms < 0 && two_tiers(why, sizeof(why)))
			tier_ms = now_ms() - t0;
		st = kmmscand_status(self->child);
		if (st == 1) {
			reg_ms = now_ms() - t0;
			break;
		}
		sleep_ms(10);
	} while (now_ms() - t0 < REG_DEADLINE_MS);
	ksft_print_msg("%d blocks online; node 1 a lower tier after %lld ms\n",
		       nb, tier_ms);
	ksft_print_msg("the process registered after %lld ms (status %d)\n",
		       reg_ms, st);
	ASSERT_LE(0, tier_ms) TH_LOG("%s", why);
	ASSERT_LE(0, reg_ms)
		TH_LOG("not registered %d ms after node 1 came online", REG_DEADLINE_MS);

	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(rep[0], &err, 1)) TH_LOG("the child died");
	ASSERT_EQ(0, err) TH_LOG("placing on node 1: %s", strerror(err));
	ASSERT_EQ(0, where_pages(self->child, base, n, &nc));
	ASSERT_EQ(n, nc.n[1]) TH_LOG("%lu of %lu pages on node 1", nc.n[1], n);
	ms = wait_on_node(self->child, base, n, 0, HOT_PCT, DEADLINE_MS, &got);
	kmm_stats_read(&s1);
	ksft_print_msg("%lu%% on node 0 after %lld ms; fault_promoted +%llu, pte_scanned +%llu\n",
		       got, ms, D(&s0, &s1, S_FAULT_PROMOTED),
		       D(&s0, &s1, S_PTE_SCANNED));
	EXPECT_LE(0, ms) TH_LOG("%lu%% of the hot pages on node 0 after %d ms",
				got, DEADLINE_MS);
	EXPECT_LT(0ULL, D(&s0, &s1, S_FAULT_PROMOTED))
		TH_LOG("kmmscand promoted none of its hint faults");
	EXPECT_EQ(0ULL, D(&s0, &s1, S_PTE_SCANNED)) TH_LOG("the scanner walked");
}

TEST_HARNESS_MAIN
