// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand's hint-fault source.
 *
 * With NUMA balancing in tiering mode and "fault" in
 * /sys/kernel/mm/kmmscand/sources, a hint fault on a slow-tier page is
 * recorded by kmmscand in the faulting task and the page is promoted by the
 * kmmscand_migrate thread; with the source off, or when kmmscand cannot
 * take the fault (disabled, process opted out), NUMA balancing migrates
 * in the task as it always did.
 *
 * Every test places 64 MB on node 1, keeps 8 MB of it hot from a thread
 * named HOT_COMM and polls where the hot pages are with move_pages(2) until
 * they are on node 0 or a deadline passes.  Meanwhile a trace instance
 * records migrate:mm_migrate_pages and the kmmscand events; each trace line
 * names the task that ran it, which tells who migrated.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, NUMA balancing
 * and tracefs.  Fails if kmmscand is there without the sources file.
 * The shared setup (knobs, NUMA balancing, memory on node 1, the hot
 * thread) is kmmscand_harness.h's and kmmscand_promote.h's.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_harness.h"

#define REGION_MB		64
#define HOT_MB			8
#define SOURCES			KMMSCAND_SYSFS "sources"
#define INSTANCE		"/sys/kernel/tracing/instances/kmmscand_fault_test"
#define HOT_COMM		"kmm-hot"
#define MIGRATOR_COMM		"kmmscand_migrat"	/* 15 chars of comm */

/* ---- /proc/vmstat ------------------------------------------------------- */

enum { V_REC, V_FPROM, V_FALLBACK, V_APROM, V_PROM, V_SCAN, V_NB_CAND,
	V_HINT, V_LOST, V_PASSES, V_PTE_UPD, V_FSTALE, V_FISO, V_FMIG, V_FEXIT,
	NR_V };

static const char * const vnames[NR_V] = {
	"kmmscand_fault_recorded", "kmmscand_fault_promoted",
	"kmmscand_fault_fallback", "kmmscand_abit_promoted",
	"kmmscand_promote_success", "kmmscand_pte_scanned",
	"pgpromote_candidate", "numa_hint_faults", "kmmscand_record_lost",
	"kmmscand_mm_scan", "numa_pte_updates", "kmmscand_fail_stale",
	"kmmscand_fail_isolate", "kmmscand_fail_migrate", "kmmscand_fail_exit",
};

/*
 * Read the counters of vnames[]; returns how many were found.  Node
 * counters (pgpromote_candidate) are kept per CPU and folded lazily: fold
 * them first, or an increment of an earlier test could show up in this
 * one's deltas.
 */
static int vm_read(unsigned long long *v)
{
	char line[128], name[64];
	unsigned long long x;
	int i, n = 0;
	FILE *f;

	write_str("/proc/sys/vm/stat_refresh", "1");
	memset(v, 0, NR_V * sizeof(*v));
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &x) != 2)
			continue;
		for (i = 0; i < NR_V; i++)
			if (!strcmp(name, vnames[i])) {
				v[i] = x;
				n++;
			}
	}
	fclose(f);
	return n;
}

/* ---- the sources file and the trace instance ---------------------------- */

static int sources_read(char *buf, size_t len)
{
	int ret = kmm_read_file(SOURCES, buf, len);

	if (ret < 0)
		return ret;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* One write(2) of @s; 0 or -errno. */
static int sources_write(const char *s)
{
	ssize_t ret = knob_write_str("sources", s);

	if (ret < 0)
		return ret;
	return ret == (ssize_t)strlen(s) ? 0 : -EIO;
}

static int inst_write(const char *rel, const char *val)
{
	return write_str_at(INSTANCE, rel, val);
}

/* What the trace says about the run, by event and by the task that ran it. */
struct trace_counts {
	unsigned long mig_kmm;		/* mm_migrate_pages reason=kmmscand */
	unsigned long mig_kmm_elsewhere; /* ... not run by kmmscand_migrate */
	unsigned long mig_numa_hot;	/* reason=numa_misplaced, in HOT_COMM */
	unsigned long rec_hot;		/* kmmscand_record in HOT_COMM */
	unsigned long rec_migrator;	/* kmmscand_record in kmmscand_migrate */
	unsigned long batch_abit;	/* kmmscand_migrate_batch source=abit */
	unsigned long batch_fault;	/* ... source=fault */
	unsigned long lines;
};

/* The comm of a trace line ("  comm-pid  [cpu] ..."), in @comm. */
static void line_comm(const char *line, char *comm, size_t len)
{
	const char *p = line + strspn(line, " ");
	const char *end = strstr(p, " [");
	const char *dash = NULL, *q;

	for (q = p; end && q < end; q++)
		if (*q == '-')
			dash = q;
	if (!dash || (size_t)(dash - p) >= len) {
		comm[0] = '\0';
		return;
	}
	memcpy(comm, p, dash - p);
	comm[dash - p] = '\0';
}

static void trace_count(struct trace_counts *c)
{
	char *line = NULL, comm[32];
	size_t cap = 0;
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = fopen(INSTANCE "/trace", "r");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		c->lines++;
		line_comm(line, comm, sizeof(comm));
		if (strstr(line, " mm_migrate_pages: ")) {
			if (strstr(line, "reason=kmmscand")) {
				c->mig_kmm++;
				if (strcmp(comm, MIGRATOR_COMM))
					c->mig_kmm_elsewhere++;
			} else if (strstr(line, "reason=numa_misplaced") &&
				   !strcmp(comm, HOT_COMM)) {
				c->mig_numa_hot++;
			}
		} else if (strstr(line, " kmmscand_record: ")) {
			if (!strcmp(comm, HOT_COMM))
				c->rec_hot++;
			else if (!strcmp(comm, MIGRATOR_COMM))
				c->rec_migrator++;
		} else if (strstr(line, " kmmscand_migrate_batch: ")) {
			if (strstr(line, "source=abit"))
				c->batch_abit++;
			else if (strstr(line, "source=fault"))
				c->batch_fault++;
		}
	}
	free(line);
	fclose(f);
}

/* ---- the workload ------------------------------------------------------- */

/* What one run observed. */
struct run {
	unsigned long hot_n, hot_on0, cold_n, cold_on0;
	long long ms;			/* until HOT_PCT on node 0, -1: never */
	unsigned long long d[NR_V];	/* vmstat deltas */
	struct trace_counts tc;
};

/*
 * 64 MB written on node 1 (then unbound), 8 MB of it kept hot by a thread
 * named HOT_COMM until HOT_PCT of the hot pages are on node 0 or
 * DEADLINE_MS passed.  With @opt_out the process opts out of kmmscand
 * first.
 */
static void run_hot(struct __test_metadata *_metadata, struct run *out,
		    bool opt_out)
{
	const unsigned long hot_first = 16 * MB / psize();
	unsigned long long v0[NR_V], v1[NR_V];
	struct hot_thread h = {};
	struct node_count lo, hi;
	unsigned long got, passes;
	struct region r;
	int k;

	memset(out, 0, sizeof(*out));
	if (opt_out)
		ASSERT_EQ(0, prctl(PR_SET_KMMSCAND, 0, 0, 0, 0));
	ASSERT_EQ(0, region_on_node1(&r, REGION_MB * MB, 0, 0x5eed))
		TH_LOG("memory not placed on node 1");
	out->hot_n = HOT_MB * MB / psize();
	out->cold_n = r.npages - out->hot_n;

	ASSERT_EQ(0, inst_write("trace", ""));
	ASSERT_EQ(0, inst_write("tracing_on", "1"));
	vm_read(v0);
	hot_add(&h, r.base + hot_first * psize(), out->hot_n);
	ASSERT_EQ(0, hot_start(&h));
	ASSERT_EQ(0, pthread_setname_np(h.tid, HOT_COMM));
	out->ms = wait_promoted(&r, hot_first, out->hot_n, HOT_PCT,
				DEADLINE_MS, &got);
	passes = hot_stop(&h);
	vm_read(v1);
	inst_write("tracing_on", "0");
	for (k = 0; k < NR_V; k++)
		out->d[k] = v1[k] - v0[k];
	trace_count(&out->tc);

	ASSERT_EQ(0, where_pages(0, r.base + hot_first * psize(), out->hot_n,
				 &hi));
	out->hot_on0 = hi.n[0];
	ASSERT_EQ(0, where_pages(0, r.base, hot_first, &lo));
	ASSERT_EQ(0, where_pages(0, r.base + (hot_first + out->hot_n) * psize(),
				 r.npages - hot_first - out->hot_n, &hi));
	out->cold_on0 = lo.n[0] + hi.n[0];
	EXPECT_EQ(0UL, region_verify(&r, 0, hot_first, 0));
	EXPECT_EQ(0UL, region_verify(&r, hot_first, out->hot_n, passes))
		TH_LOG("hot pages corrupt");
	EXPECT_EQ(0UL, region_verify(&r, hot_first + out->hot_n,
				     r.npages - hot_first - out->hot_n, 0));
	region_unmap(&r);

	ksft_print_msg("hot %lu/%lu on node 0 (%lld ms), cold %lu/%lu\n",
		       out->hot_on0, out->hot_n, out->ms, out->cold_on0,
		       out->cold_n);
	for (k = 0; k < NR_V; k++)
		ksft_print_msg("  %-26s +%llu\n", vnames[k], out->d[k]);
	ksft_print_msg("  trace: %lu lines\n", out->tc.lines);
	ksft_print_msg("  mm_migrate_pages: kmmscand %lu (%lu elsewhere)\n",
		       out->tc.mig_kmm, out->tc.mig_kmm_elsewhere);
	ksft_print_msg("  mm_migrate_pages: numa_misplaced in %s %lu\n",
		       HOT_COMM, out->tc.mig_numa_hot);
	ksft_print_msg("  kmmscand_record: in %s %lu, in the migrator %lu\n",
		       HOT_COMM, out->tc.rec_hot, out->tc.rec_migrator);
	ksft_print_msg("  kmmscand_migrate_batch: abit %lu, fault %lu\n",
		       out->tc.batch_abit, out->tc.batch_fault);
}

/*
 * NUMA balancing handled the hint faults as in 6.12: the hot set reached
 * node 0, migrated by the task that faulted, and kmmscand neither recorded
 * a fault of that task nor migrated anything.
 */
static void expect_task_migrated(struct __test_metadata *_metadata,
				 const struct run *r)
{
	EXPECT_LE(HOT_PCT * r->hot_n, 100 * r->hot_on0)
		TH_LOG("NUMA balancing promoted too little");
	EXPECT_LT(0UL, r->tc.mig_numa_hot) TH_LOG("the task migrated nothing");
	EXPECT_EQ(0UL, r->tc.rec_hot) TH_LOG("kmmscand recorded the task's faults");
	EXPECT_EQ(0UL, r->tc.mig_kmm) TH_LOG("kmmscand_migrate migrated pages");
}

/* ---- fixture ------------------------------------------------------------ */

FIXTURE(fault) {
	struct kmm_env env;
	bool inst;
};

/*
 * kmmscand_harness.h's environment (contract defaults, 0.1 s to 1 s scan
 * periods for the "abit" source), NUMA balancing in tiering mode, and a
 * trace instance for the events that say who migrated.
 */
FIXTURE_SETUP(fault)
{
	unsigned long long v[NR_V];
	int ret;

	self->inst = false;
	kmm_env_setup(_metadata, &self->env);
	if (access(NUMA_BALANCING_SYSCTL, W_OK))
		SKIP(return, "no %s (CONFIG_NUMA_BALANCING=n?)",
		     NUMA_BALANCING_SYSCTL);
	if (access("/sys/kernel/tracing/instances", F_OK))
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	/* The feature under test: its absence is a failure. */
	ASSERT_EQ(0, access(SOURCES, F_OK)) TH_LOG("no %s", SOURCES);
	ASSERT_EQ(NR_V, vm_read(v)) TH_LOG("counters missing in /proc/vmstat");
	ASSERT_EQ(0, kmm_env_save(&self->env, SOURCES));
	ASSERT_EQ(0, kmm_env_set_long(&self->env, NUMA_BALANCING_SYSCTL, 2))
		TH_LOG("cannot enable NUMA balancing's tiering mode");

	rmdir(INSTANCE);
	ret = mkdir(INSTANCE, 0755);
	ASSERT_EQ(0, ret) TH_LOG("mkdir %s: %s", INSTANCE, strerror(errno));
	self->inst = true;
	ASSERT_EQ(0, inst_write("buffer_size_kb", "4096"));
	ASSERT_EQ(0, inst_write("events/migrate/mm_migrate_pages/enable", "1"));
	ASSERT_EQ(0, inst_write("events/kmmscand/kmmscand_record/enable", "1"));
	ASSERT_EQ(0, inst_write("events/kmmscand/kmmscand_migrate_batch/enable",
				"1"));
}

FIXTURE_TEARDOWN_PARENT(fault)
{
	if (self->inst) {
		inst_write("tracing_on", "0");
		inst_write("events/enable", "0");
		rmdir(INSTANCE);
	}
	kmm_env_restore(&self->env);
}

/*
 * NUMA balancing's rate limit in tiering mode holds for kmmscand too:
 * kmmscand charges the pages of each batch it lets go to
 * pgpromote_candidate, and nothing else does while kmmscand takes the
 * faults.  So the pages charged lie between those promoted and those
 * that reached a batch (promoted, or failed there: stale, exited, not
 * isolated, not migrated); a fault path that applied NUMA balancing's
 * rate limit itself would charge every hot page it saw on top.
 */
static void expect_charged_by_batches(struct __test_metadata *_metadata,
				      const struct run *r)
{
	unsigned long long batched = r->d[V_PROM] + r->d[V_FSTALE] +
				     r->d[V_FISO] + r->d[V_FMIG] + r->d[V_FEXIT];

	EXPECT_LE(r->d[V_PROM], r->d[V_NB_CAND])
		TH_LOG("kmmscand's promotions not charged to NUMA balancing's rate limit");
	EXPECT_GE(batched, r->d[V_NB_CAND])
		TH_LOG("%llu promotion candidates charged, only %llu pages reached a batch",
		       r->d[V_NB_CAND], batched);
}

/*
 * Hint faults only (the scanner idle): the faults are recorded in the
 * task, and kmmscand_migrate, not the task, promotes; NUMA balancing's
 * own promotion path (hot threshold, rate limit) is never reached.  Its
 * rate limit holds for kmmscand's batches instead: they, and nothing
 * else, are charged as promotion candidates (pgpromote_candidate).
 */
TEST_F_TIMEOUT(fault, promoted_by_kthread, 120)
{
	struct run r;

	ASSERT_EQ(0, sources_write("fault\n"));
	run_hot(_metadata, &r, false);

	EXPECT_LE(HOT_PCT * r.hot_n, 100 * r.hot_on0)
		TH_LOG("hot pages not promoted within %d ms", DEADLINE_MS);
	EXPECT_GT(COLD_PCT * r.cold_n, 100 * r.cold_on0)
		TH_LOG("cold pages promoted");
	EXPECT_LT(0ULL, r.d[V_HINT]) TH_LOG("no hint faults at all");
	EXPECT_LT(0ULL, r.d[V_REC]);
	EXPECT_LE(r.hot_on0, r.d[V_FPROM])
		TH_LOG("more hot pages on node 0 than kmmscand_fault_promoted");
	EXPECT_EQ(0ULL, r.d[V_SCAN]) TH_LOG("the scanner ran without abit");
	expect_charged_by_batches(_metadata, &r);
	/* who did what */
	EXPECT_LT(0UL, r.tc.rec_hot) TH_LOG("no fault recorded in the task");
	EXPECT_EQ(0UL, r.tc.rec_migrator);
	EXPECT_LT(0UL, r.tc.mig_kmm) TH_LOG("kmmscand_migrate migrated nothing");
	EXPECT_EQ(0UL, r.tc.mig_kmm_elsewhere)
		TH_LOG("reason=kmmscand migrations outside kmmscand_migrate");
	EXPECT_EQ(0UL, r.tc.mig_numa_hot) TH_LOG("the task migrated pages");
	EXPECT_LT(0UL, r.tc.batch_fault);
	EXPECT_EQ(0UL, r.tc.batch_abit);
}

/*
 * The source off (and kmmscand off, so that only NUMA balancing acts): as
 * in 6.12, the task migrates on its hint faults, through NUMA balancing's
 * rate limit, and kmmscand sees none of them.
 */
TEST_F_TIMEOUT(fault, source_off_task_migrates, 120)
{
	struct run r;

	ASSERT_EQ(0, sources_write("abit"));
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 0));
	run_hot(_metadata, &r, false);

	expect_task_migrated(_metadata, &r);
	EXPECT_LT(0ULL, r.d[V_NB_CAND]);
	EXPECT_EQ(0ULL, r.d[V_REC]);
	EXPECT_EQ(0ULL, r.d[V_FALLBACK]) TH_LOG("the hook ran with the source off");
}

/* The source on but kmmscand disabled: the faults go back to NUMA balancing. */
TEST_F_TIMEOUT(fault, disabled_falls_back, 120)
{
	struct run r;

	ASSERT_EQ(0, sources_write("fault"));
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 0));
	run_hot(_metadata, &r, false);

	expect_task_migrated(_metadata, &r);
	EXPECT_LT(0ULL, r.d[V_FALLBACK]);
	EXPECT_EQ(0ULL, r.d[V_REC]);
	EXPECT_LT(0ULL, r.d[V_NB_CAND]);
}

/* An opted-out process is NUMA balancing's alone, even with the source on. */
TEST_F_TIMEOUT(fault, opted_out_falls_back, 120)
{
	struct run r;

	ASSERT_EQ(0, sources_write("fault"));
	run_hot(_metadata, &r, true);

	expect_task_migrated(_metadata, &r);
	EXPECT_LT(0ULL, r.d[V_FALLBACK]);
}

/*
 * Both sources: whichever sees a hot page first has it promoted, by the
 * kmmscand_migrate thread; every promotion is counted for exactly one
 * source; the task migrates nothing and NUMA balancing's rate limit is
 * applied to kmmscand's batches only.  (Here the scanner, at 100 ms periods, usually wins: NUMA
 * balancing starts sampling a second after the process started.)
 */
TEST_F_TIMEOUT(fault, both_sources, 120)
{
	struct run r;

	ASSERT_EQ(0, sources_write("fault abit"));
	run_hot(_metadata, &r, false);

	EXPECT_LE(HOT_PCT * r.hot_n, 100 * r.hot_on0);
	EXPECT_LT(0ULL, r.d[V_PASSES]) TH_LOG("the scanner did not run");
	EXPECT_EQ(r.d[V_PROM], r.d[V_FPROM] + r.d[V_APROM])
		TH_LOG("promotions not attributed to exactly one source");
	EXPECT_LE(r.hot_on0, r.d[V_PROM]);
	EXPECT_LT(0UL, r.tc.batch_abit + r.tc.batch_fault);
	EXPECT_EQ(0UL, r.tc.mig_kmm_elsewhere);
	EXPECT_EQ(0UL, r.tc.mig_numa_hot) TH_LOG("the task migrated pages");
	EXPECT_EQ(0UL, r.tc.rec_migrator);
	expect_charged_by_batches(_metadata, &r);
}

#define ONCE_OBSERVE_MS		3000	/* watch the pages read once */
#define ONCE_MIN_FREE_MB	256	/* node 0 free: "room to spare" */

/*
 * One rule for pages touched once (kmmscand_fault_hot()): with room to
 * spare on node 0, a hint fault and one earlier window make a page hot,
 * never the fault alone.  The hot set is promoted first (a page kept hot
 * still is); then, once NUMA balancing has sampled the whole region again,
 * every cold page is read once, which takes a hint fault on each sampled
 * one.  For ONCE_OBSERVE_MS afterwards at most 1 % of the cold pages may
 * be on node 0.  NUMA balancing's own rule would promote every page that
 * faulted (its first-access rule while pgdat_free_space_enough()).
 */
TEST_F_TIMEOUT(fault, touched_once_not_promoted, 120)
{
	const unsigned long hot_first = 16 * MB / psize();
	unsigned long long v0[NR_V], v1[NR_V], upd0;
	unsigned long hot_n, cold_n, got, i, peak = 0;
	struct node_count lo, hi, hot;
	struct hot_thread h = {};
	uint64_t sum = 0;
	long long t0, ms;
	struct region r;
	long free_kb;

	free_kb = node_meminfo_kb(0, "MemFree:");
	ASSERT_LT(ONCE_MIN_FREE_MB * 1024L, free_kb)
		TH_LOG("node 0 has %ld kB free: no room to spare", free_kb);
	ASSERT_EQ(0, sources_write("fault"));
	vm_read(v0);
	upd0 = v0[V_PTE_UPD];
	ASSERT_EQ(0, region_on_node1(&r, REGION_MB * MB, 0, 0x0ce));
	hot_n = HOT_MB * MB / psize();
	cold_n = r.npages - hot_n;
	hot_add(&h, r.base + hot_first * psize(), hot_n);
	ASSERT_EQ(0, hot_start(&h));
	ms = wait_promoted(&r, hot_first, hot_n, HOT_PCT, DEADLINE_MS, &got);
	EXPECT_LE(0, ms) TH_LOG("hot set at %lu%% on node 0 after %d ms",
				got, DEADLINE_MS);

	/*
	 * Wait until NUMA balancing has sampled (made PROT_NONE) as many
	 * slow-tier PTEs as there are cold pages since the region was made;
	 * it samples a PTE again only after its fault, so the cold ones
	 * stay sampled until they are read.
	 */
	t0 = now_ms();
	for (;;) {
		vm_read(v0);
		if (v0[V_PTE_UPD] - upd0 >= cold_n || now_ms() - t0 >= 30000)
			break;
		sleep_ms(POLL_MS);
	}
	ASSERT_LE(upd0 + cold_n, v0[V_PTE_UPD])
		TH_LOG("NUMA balancing sampled %llu PTEs in 30 s",
		       v0[V_PTE_UPD] - upd0);

	/* Every cold page, once. */
	for (i = 0; i < r.npages; i++)
		if (i < hot_first || i >= hot_first + hot_n)
			sum += __atomic_load_n((uint64_t *)(r.base + i * psize()),
					       __ATOMIC_RELAXED);
	/* keep the reads */
	asm volatile("" : : "r"(sum) : "memory");

	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, hot_first, &lo));
		ASSERT_EQ(0, where_pages(0, r.base + (hot_first + hot_n) * psize(),
					 r.npages - hot_first - hot_n, &hi));
		peak = lo.n[0] + hi.n[0] > peak ? lo.n[0] + hi.n[0] : peak;
		if (100 * peak > cold_n)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < ONCE_OBSERVE_MS);
	vm_read(v1);
	ASSERT_EQ(0, where_pages(0, r.base + hot_first * psize(), hot_n, &hot));
	hot_stop(&h);

	ksft_print_msg("hot %lu/%lu on node 0; cold read once: %llu hint faults\n",
		       hot.n[0], hot_n, v1[V_HINT] - v0[V_HINT]);
	ksft_print_msg("cold on node 0: at most %lu/%lu in %lld ms\n",
		       peak, cold_n, now_ms() - t0);
	/* The reads must have faulted, or nothing was tested. */
	EXPECT_LE(cold_n / 2, v1[V_HINT] - v0[V_HINT])
		TH_LOG("the cold pages read once took too few hint faults");
	EXPECT_GE(cold_n, 100 * peak) TH_LOG("pages touched once were promoted");
	EXPECT_LE(HOT_PCT * hot_n, 100 * hot.n[0])
		TH_LOG("the hot set left node 0");
	EXPECT_EQ(0UL, region_verify(&r, 0, hot_first, 0));
	EXPECT_EQ(0UL, region_verify(&r, hot_first + hot_n,
				     r.npages - hot_first - hot_n, 0));
	region_unmap(&r);
}

#define LATE_REG_MS		5000	/* registration after enabling */

/*
 * A process started while kmmscand was disabled is not registered (its
 * fork took no kmmscand lock), and is registered when kmmscand is enabled
 * with only the fault source selected, so with no page-table walk of the
 * scanner: its hint faults are then kmmscand's, and kmmscand_migrate
 * promotes its hot pages.  (NUMA balancing samples a new process only a
 * second after its fork; kmmscand is enabled well before.)
 */
TEST_F_TIMEOUT(fault, started_while_disabled, 120)
{
	const size_t len = HOT_MB * MB;
	const unsigned long n = len / psize();
	unsigned long long v0[NR_V], v1[NR_V];
	long long t0, reg_ms = -1, ms = -1;
	unsigned long got = 0;
	char *base;
	pid_t pid;
	int st;

	ASSERT_EQ(0, sources_write("fault"));
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 0));
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	pid = hot_child(base, len, false);
	ASSERT_LT(0, pid) TH_LOG("hot child: %s", strerror(-pid));
	st = kmmscand_status(pid);
	EXPECT_EQ(0, st) TH_LOG("registered while kmmscand was disabled");

	vm_read(v0);
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 1));
	t0 = now_ms();
	do {
		st = kmmscand_status(pid);
		if (st == 1) {
			reg_ms = now_ms() - t0;
			break;
		}
		sleep_ms(10);
	} while (now_ms() - t0 < LATE_REG_MS);
	if (reg_ms >= 0)
		ms = wait_on_node(pid, base, n, 0, HOT_PCT, DEADLINE_MS, &got);
	vm_read(v1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap(base, len);

	ksft_print_msg("registered %lld ms after enabling (status %d)\n",
		       reg_ms, st);
	ksft_print_msg("%lu%% on node 0 after %lld ms\n", got, ms);
	ksft_print_msg("  fault_promoted +%llu, pte_scanned +%llu, fault_recorded +%llu\n",
		       v1[V_FPROM] - v0[V_FPROM], v1[V_SCAN] - v0[V_SCAN],
		       v1[V_REC] - v0[V_REC]);
	ASSERT_LE(0, reg_ms)
		TH_LOG("not registered %d ms after kmmscand was enabled (status %d)",
		       LATE_REG_MS, st);
	EXPECT_LE(0, ms) TH_LOG("%lu%% of the hot pages on node 0 after %d ms",
				got, DEADLINE_MS);
	EXPECT_LT(0ULL, v1[V_FPROM] - v0[V_FPROM])
		TH_LOG("kmmscand promoted none of its hint faults");
	EXPECT_EQ(0ULL, v1[V_SCAN] - v0[V_SCAN]) TH_LOG("the scanner walked");
}

/* The sources file: what it accepts, and the scanner idling without abit. */
TEST_F_TIMEOUT(fault, sources_file, 60)
{
	static const char * const good[][2] = {
		{ "abit", "abit" }, { "fault\n", "fault" },
		{ "abit fault", "abit fault" }, { "fault abit\n", "abit fault" },
	};
	static const char * const bad[] = {
		"\n", "none", "abit ", " fault", "abit  fault", "abit,fault",
		"fault fault", "ABIT", "abit\n\n", "0", "abitfault",
	};
	unsigned long long v0[NR_V], v1[NR_V];
	char buf[64];
	long long t0, t;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		ASSERT_EQ(0, sources_write(good[i][0]))
			TH_LOG("\"%s\" refused", good[i][0]);
		ASSERT_EQ(0, sources_read(buf, sizeof(buf)));
		EXPECT_STREQ(good[i][1], buf);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, sources_write(bad[i]))
			TH_LOG("\"%s\" not refused with EINVAL", bad[i]);
		ASSERT_EQ(0, sources_read(buf, sizeof(buf)));
		EXPECT_STREQ("abit fault", buf) TH_LOG("after \"%s\"", bad[i]);
	}

	/* The scanner passes over the processes with abit ... */
	ASSERT_EQ(0, sources_write("abit"));
	vm_read(v0);
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		vm_read(v1);
	} while (v1[V_PASSES] == v0[V_PASSES] && now_ms() - t0 < 10000);
	ASSERT_LT(v0[V_PASSES], v1[V_PASSES]) TH_LOG("the scanner does not scan");

	/* ... and idles without: once its round is over, no pass ends. */
	ASSERT_EQ(0, sources_write("fault"));
	t0 = now_ms();
	do {
		v0[V_PASSES] = v1[V_PASSES];
		sleep_ms(1000);
		vm_read(v1);
		t = now_ms();
	} while (v1[V_PASSES] != v0[V_PASSES] && t - t0 < 10000);
	ASSERT_EQ(v0[V_PASSES], v1[V_PASSES]) TH_LOG("the scanner does not stop");
	sleep_ms(3000);	/* three of the fixture's longest scan periods */
	vm_read(v0);
	EXPECT_EQ(v1[V_PASSES], v0[V_PASSES])
		TH_LOG("the scanner ran without abit");
	EXPECT_EQ(v1[V_SCAN], v0[V_SCAN]);
}

/* As kmm_test_main(), and the sources file too. */
int main(int argc, char **argv)
{
	char saved[32] = "";
	int ret;

	if (!geteuid() && kmm_read_file(SOURCES, saved, sizeof(saved)) <= 0)
		saved[0] = '\0';
	ret = kmm_test_main(argc, argv);
	if (saved[0] && write_str(SOURCES, saved))
		ksft_print_msg("restoring %s failed\n", SOURCES);
	return ret;
}
