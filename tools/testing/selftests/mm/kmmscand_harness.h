/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kmmscand tests share that uses kselftest_harness.h: the setup
 * of a promotion test, main() of a test that saves the machine's knobs
 * around all its tests, and checks of the counters.  The harness defines
 * functions of its own, so only a test's own file may include it: these
 * stay here, inline, and the helpers without it are in kmmscand_*.c.
 */
#ifndef __KMMSCAND_HARNESS_H
#define __KMMSCAND_HARNESS_H

#include "../kselftest_harness.h"
#include "kmmscand_promote.h"

/*
 * The fixture setup of every promotion test: skip unless this is a
 * two-tier machine with kmmscand and its counters, save the knobs, turn
 * NUMA balancing off so that only kmmscand moves pages, and set the
 * contract defaults with a short period so that detection is quick.
 *
 * tlb_flush=1: without a flush, a hot page whose translation stays cached
 * in the TLB is not seen young again until the entry is evicted, which
 * makes detection depend on the TLB (QEMU's software TLB keeps a
 * PMD-mapped THP cached indefinitely). The tests check what kmmscand does
 * with what it detects; hot_promoted_cold_stays checks detection with
 * tlb_flush=0 too.
 */
static inline void kmm_env_setup(struct __test_metadata *_metadata,
				 struct kmm_env *env)
{
	static const struct { enum kmm_knob k; long long v; } defaults[] = {
		{ KNOB_SCAN_PERIOD_MAX_MS, 60000 },
		{ KNOB_SCAN_PERIOD_MIN_MS, PERIOD_MIN_MS },
		{ KNOB_SCAN_PERIOD_MAX_MS, PERIOD_MAX_MS },
		{ KNOB_HOT_HISTORY, 8 },
		{ KNOB_HOT_THRESHOLD, 2 },
		{ KNOB_HOT_HISTORY, 2 },
		{ KNOB_SCAN_SIZE, 65536 },
		{ KNOB_PMD_SKIP, 1 },
		{ KNOB_TLB_FLUSH, 1 },
		{ KNOB_MIGRATE_BATCH, 512 },
		{ KNOB_PROMOTE_RATE_LIMIT_MBPS, 256 },
		{ KNOB_TARGET_NODE, -1 },
		{ KNOB_ENABLED, 1 },
	};
	unsigned int i;
	char why[160];
	bool kthread;
	int ret;

	memset(env, 0, sizeof(*env));
	if (!kmmscand_present())
		SKIP(return, "%s missing: kernel built without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);
	if (geteuid())
		SKIP(return, "needs root to set %s", KMMSCAND_SYSFS);
	if (!two_tiers(why, sizeof(why)))
		SKIP(return, "%s", why);
	if (kmm_stats_read(&(struct kmm_stats){}) <= 0)
		SKIP(return, "no kmmscand_* in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS=n?)");
	ASSERT_NE(0, find_task("kmmscand", &kthread))
		TH_LOG("no kmmscand thread");

	ret = knobs_save(&env->knobs);
	ASSERT_EQ(0, ret) TH_LOG("cannot read knobs: %s", strerror(-ret));
	if (!access(NUMA_BALANCING_SYSCTL, F_OK)) {
		ASSERT_EQ(0, kmm_env_set_long(env, NUMA_BALANCING_SYSCTL, 0))
			TH_LOG("cannot turn NUMA balancing off");
	}
	for (i = 0; i < ARRAY_SIZE(defaults); i++) {
		const char *name = kmm_knobs[defaults[i].k].name;

		ASSERT_EQ(0, knob_set(defaults[i].k, defaults[i].v))
			TH_LOG("cannot set %s to %lld", name, defaults[i].v);
	}
}

/*
 * main() of a promotion test: a test killed by its timeout cannot run its
 * teardown, so save the knobs and the sysctls the tests change before
 * the tests and restore them once more after.
 */
static inline int kmm_test_main(int argc, char **argv)
{
	static const char * const files[] = {
		NUMA_BALANCING_SYSCTL, DEMOTION_SYSFS, BOOST_SYSCTL,
		SCALE_SYSCTL, MIN_ADDR_SYSCTL,
	};
	struct kmm_env env = {};
	unsigned int i;
	int ret;

	if (!geteuid() && kmmscand_present()) {
		knobs_save(&env.knobs);
		for (i = 0; i < ARRAY_SIZE(files); i++)
			kmm_env_save(&env, files[i]);
	}
	ret = test_harness_run(argc, argv);
	kmm_env_restore(&env);
	return ret;
}

/*
 * Relations between the counters over [@a, @b] that wrong accounting
 * breaks (the counters themselves are event sums that never go down):
 *  - every promoted page is counted for exactly one source;
 *  - a page is promoted, fails isolation or fails migration only as a
 *    queued candidate, and each candidate was counted when it was
 *    offered (an offer of a folio already queued counts again, so this
 *    is an upper bound).  For base pages only: promote_success and
 *    fail_migrate count pages, candidates count folios.
 * A scanner visit counts its candidates when it ends, and the migrator
 * may promote them before that: the candidates are read again until
 * they cover @b's pages, for at most two seconds.
 */
static inline void expect_accounting(struct __test_metadata *_metadata,
				     const struct kmm_stats *a,
				     const struct kmm_stats *b)
{
	unsigned long long ok = D(a, b, S_PROMOTE_SUCCESS);
	unsigned long long tried = ok + D(a, b, S_FAIL_ISOLATE) +
				   D(a, b, S_FAIL_MIGRATE);
	long long t0 = now_ms();
	struct kmm_stats c = *b;

	EXPECT_EQ(ok, D(a, b, S_ABIT_PROMOTED) + D(a, b, S_FAULT_PROMOTED))
		TH_LOG("promote_success +%llu, abit_promoted +%llu + fault_promoted +%llu",
		       ok, D(a, b, S_ABIT_PROMOTED), D(a, b, S_FAULT_PROMOTED));
	while (D(a, &c, S_CANDIDATE) < tried && now_ms() - t0 < 2000) {
		sleep_ms(POLL_MS);
		kmm_stats_read(&c);
	}
	EXPECT_LE(tried, D(a, &c, S_CANDIDATE))
		TH_LOG("promoted +%llu, fail_isolate +%llu, fail_migrate +%llu: %s +%llu",
		       ok, D(a, b, S_FAIL_ISOLATE), D(a, b, S_FAIL_MIGRATE),
		       "more than the candidates", D(a, &c, S_CANDIDATE));
}

#endif /* __KMMSCAND_HARNESS_H */
