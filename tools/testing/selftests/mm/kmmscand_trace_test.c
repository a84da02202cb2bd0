// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint and /proc/vmstat tests for kmmscand: the format of every
 * kmmscand event, every kmmscand_* counter, the throttle and drop events
 * when promotion is held back, and the scan, mm and migrate events of a
 * hot workload with fields that parse and agree with each other.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kmmscand_harness.h"

#define TRACEFS_EVENTS		"/sys/kernel/tracing/events/kmmscand/"
#define TRACE_INSTANCE		"/sys/kernel/tracing/instances/kmmscand_trace_test"

static const struct {
	const char *event;
	const char *fields[8];
} trace_events[] = {
	{ "kmmscand_mm_enter", { "mm" } },
	{ "kmmscand_mm_exit", { "mm" } },
	{ "kmmscand_scan_start", { "mm", "period_ms", "budget" } },
	{ "kmmscand_scan_end", { "mm", "scanned", "pmd_skipped", "young",
				 "candidates", "period_ms", "budget" } },
	{ "kmmscand_candidate_drop", { "pfn", "nid", "reason" } },
	{ "kmmscand_migrate_batch", { "nr", "succeeded", "failed",
				      "target_nid", "reason", "source" } },
	{ "kmmscand_record", { "pfn", "nid", "target_nid", "source", "faults",
			       "coarse", "hot" } },
	{ "kmmscand_throttle", { "reason", "target_nid", "nr" } },
};

/* Does the "format" text declare a field called @field? */
static bool format_has_field(const char *fmt, const char *field)
{
	const char *p = fmt;
	size_t len = strlen(field);

	while ((p = strstr(p, "field:"))) {
		const char *semi = strchr(p, ';');
		const char *q;

		if (!semi)
			break;
		/* the name is the last word before ';', maybe with [N] */
		q = semi;
		while (q > p && (q[-1] == ']' || isdigit((unsigned char)q[-1]) ||
				 q[-1] == '['))
			q--;
		if ((size_t)(q - p) > len && !strncmp(q - len, field, len) &&
		    (q[-len - 1] == ' ' || q[-len - 1] == '*'))
			return true;
		p = semi;
	}
	return false;
}

TEST(tracepoint_formats)
{
	static char fmt[8192];
	char path[PATH_MAX];
	unsigned int i, j;
	int ret;

	if (access("/sys/kernel/tracing/events", F_OK))
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	if (!kmmscand_present())
		SKIP(return, "kernel built without CONFIG_KMMSCAND");
	ASSERT_EQ(0, access(TRACEFS_EVENTS, F_OK))
		TH_LOG("no %s", TRACEFS_EVENTS);

	for (i = 0; i < ARRAY_SIZE(trace_events); i++) {
		snprintf(path, sizeof(path), TRACEFS_EVENTS "%s/format",
			 trace_events[i].event);
		ret = kmm_read_file(path, fmt, sizeof(fmt));
		EXPECT_LT(0, ret) TH_LOG("cannot read %s", path);
		if (ret <= 0)
			continue;
		for (j = 0; j < ARRAY_SIZE(trace_events[i].fields); j++) {
			const char *f = trace_events[i].fields[j];

			if (!f)
				break;
			EXPECT_TRUE(format_has_field(fmt, f))
				TH_LOG("%s has no field \"%s\"",
				       trace_events[i].event, f);
		}
		/* Events carry numbers only, no task names. */
		EXPECT_FALSE(format_has_field(fmt, "comm"))
			TH_LOG("%s records comm", trace_events[i].event);
	}
}

TEST(vmstat_counters)
{
	struct kmm_stats s;
	char buf[64];
	int i, n;
	FILE *f;
	bool events = false;

	if (!kmmscand_present())
		SKIP(return, "kernel built without CONFIG_KMMSCAND");
	f = fopen("/proc/vmstat", "r");
	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "pgfault ", 8))
			events = true;
	fclose(f);
	if (!events)
		SKIP(return, "no event counters in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS=n)");

	n = kmm_stats_read(&s);
	EXPECT_EQ(NR_KMM_STATS, n) TH_LOG("found %d of %d kmmscand_* counters",
					  n, NR_KMM_STATS);
	for (i = 0; i < NR_KMM_STATS; i++) {
		const char *name = kmm_stat_names[i] ?: "?";

		EXPECT_TRUE(s.found[i]) TH_LOG("/proc/vmstat has no %s", name);
	}
}

/* ---- events of a workload ------------------------------------------------- */

FIXTURE(trace) {
	struct kmm_env env;
};

FIXTURE_SETUP(trace)
{
	kmm_env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN_PARENT(trace)
{
	kmm_env_restore(&self->env);
}

static int instance_write(const char *rel, const char *val)
{
	return write_str_at(TRACE_INSTANCE, rel, val);
}

/* Is the value of "reason=" in @line one of @names (NULL-terminated)? */
static bool reason_is_one_of(const char *line, const char * const *names)
{
	const char *p = strstr(line, " reason=");
	size_t len;

	if (!p)
		return false;
	p += strlen(" reason=");
	len = strcspn(p, "\n ");
	for (; *names; names++)
		if (strlen(*names) == len && !strncmp(p, *names, len))
			return true;
	return false;
}

struct provoked {
	unsigned long throttle, drop, drop_off, bad;
};

/* Count the throttle and drop events in the instance's trace buffer. */
static int count_provoked(struct provoked *c)
{
	static const char * const throttle_reasons[] = {
		"ratelimit", "watermark", "demotion", NULL
	};
	static const char * const drop_reasons[] = {
		"queue_full", "exit", "opt_out", "off", "defer_full", "policy",
		NULL
	};
	static const char * const off_reason[] = { "off", NULL };
	char line[512];
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = fopen(TRACE_INSTANCE "/trace", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strstr(line, " kmmscand_throttle: ")) {
			c->throttle++;
			if (!reason_is_one_of(line, throttle_reasons) &&
			    !c->bad++)
				ksft_print_msg("bad event: %s", line);
		} else if (strstr(line, " kmmscand_candidate_drop: ")) {
			c->drop++;
			if (reason_is_one_of(line, off_reason))
				c->drop_off++;
			if (!reason_is_one_of(line, drop_reasons) && !c->bad++)
				ksft_print_msg("bad event: %s", line);
		}
	}
	fclose(f);
	return 0;
}

/*
 * kmmscand_throttle and kmmscand_candidate_drop only fire when promotion
 * is held back.  Provoke them: keep 16 MB of node 1 hot under a rate
 * limit of 1 MB/s, so that the token bucket runs dry (throttle, reason
 * ratelimit), then disable kmmscand with candidates still queued (drop,
 * reason off).
 */
TEST_F_TIMEOUT(trace, tracepoints_provoked, 120)
{
	const size_t len = 16 * MB;
	struct provoked c = {};
	int status;
	long long t0;
	pid_t pid;

	if (access("/sys/kernel/tracing/instances", F_OK))
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	/* The fixture's quick detection, small batches at 1 MB/s. */
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, 32));
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1));

	if (mkdir(TRACE_INSTANCE, 0700) && errno != EEXIST)
		SKIP(return, "cannot create a trace instance: %s",
		     strerror(errno));
	ASSERT_EQ(0, instance_write("buffer_size_kb", "1024"));
	ASSERT_EQ(0, instance_write("trace", ""));
	ASSERT_EQ(0, instance_write("events/kmmscand/kmmscand_throttle/enable",
				    "1"));
	ASSERT_EQ(0, instance_write("events/kmmscand/kmmscand_candidate_drop/enable",
				    "1"));

	pid = hot_child(NULL, len, false);
	self->env.kids[0] = pid > 0 ? pid : 0;
	ASSERT_LT(0, pid) TH_LOG("placing %zu MB on node 1: %s", len / MB,
				 strerror(-pid));

	t0 = now_ms();
	do {
		sleep_ms(500);
		ASSERT_EQ(0, count_provoked(&c));
	} while (!c.throttle && now_ms() - t0 < 60000);
	/* Whatever is still queued is dropped now. */
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 0));
	sleep_ms(500);

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->env.kids[0] = 0;
	ASSERT_EQ(0, count_provoked(&c));
	instance_write("events/kmmscand/enable", "0");
	rmdir(TRACE_INSTANCE);

	ksft_print_msg("%lld ms: %lu throttle, %lu candidate_drop (%lu reason=off), %lu bad\n",
		       now_ms() - t0, c.throttle, c.drop, c.drop_off, c.bad);
	/*
	 * Each one on its own: at 1 MB/s the bucket runs dry with most of
	 * the 16 MB still queued, so enabled=0 finds candidates to drop.
	 */
	EXPECT_LT(0UL, c.throttle)
		TH_LOG("no kmmscand_throttle at 1 MB/s within 60 s");
	EXPECT_LT(0UL, c.drop_off)
		TH_LOG("no kmmscand_candidate_drop reason=off after enabled=0 %s",
		       "with candidates queued");
	EXPECT_EQ(0UL, c.bad) TH_LOG("events with an unknown reason");
}

/* Value of " key=" in @line as a number; false if absent or not a number. */
static bool trace_field(const char *line, const char *key,
			unsigned long long *val)
{
	char pat[64], *end;
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	errno = 0;
	*val = strtoull(p, &end, 0);
	if (end == p || errno)
		return false;
	return *end == ' ' || *end == '\n' || *end == '\0' || *end == ',';
}

static bool trace_has_key(const char *line, const char *key)
{
	char pat[64];

	snprintf(pat, sizeof(pat), " %s=", key);
	return strstr(line, pat);
}

/*
 * With all kmmscand events on in a private trace instance, a hot workload
 * and a few short-lived children must produce every common event with
 * fields that parse and agree with each other and with the knobs.
 */
TEST_F_TIMEOUT(trace, tracepoints_fire, 120)
{
	unsigned long long v, scanned, young, budget, period, nr, ok, fail;
	unsigned long n_enter = 0, n_exit = 0, n_start = 0, n_end = 0;
	unsigned long n_batch = 0, bad = 0, promoted = 0;
	static char line[1024];
	struct node_count nc;
	struct hot_thread h = {};
	long long t0;
	struct region r;
	FILE *f;
	int i, ret;

	if (access("/sys/kernel/tracing/instances", F_OK))
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	if (access("/sys/kernel/tracing/events/kmmscand", F_OK))
		SKIP(return, "no kmmscand trace events (CONFIG_EVENT_TRACING?)");
	if (mkdir(TRACE_INSTANCE, 0700) && errno != EEXIST)
		SKIP(return, "cannot create trace instance: %s", strerror(errno));
	ASSERT_EQ(0, instance_write("buffer_size_kb", "4096"));
	ASSERT_EQ(0, instance_write("trace", ""));
	ASSERT_EQ(0, instance_write("events/kmmscand/enable", "1"));

	for (i = 0; i < 3; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	ret = region_on_node1(&r, 8 * MB, 0, 0x4444);
	ASSERT_EQ(0, ret) TH_LOG("placing 8 MB on node 1: %s", strerror(-ret));
	hot_add(&h, r.base, r.npages);
	ASSERT_EQ(0, hot_start(&h));
	t0 = now_ms();
	do {
		ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
		if (pct(nc.n[0], r.npages) >= HOT_PCT)
			break;
		sleep_ms(POLL_MS);
	} while (now_ms() - t0 < DEADLINE_MS);
	hot_stop(&h);
	instance_write("events/kmmscand/enable", "0");

	f = fopen(TRACE_INSTANCE "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strstr(line, " kmmscand_mm_enter: ")) {
			n_enter++;
			bad += !trace_has_key(line, "mm");
		} else if (strstr(line, " kmmscand_mm_exit: ")) {
			n_exit++;
			bad += !trace_has_key(line, "mm");
		} else if (strstr(line, " kmmscand_scan_start: ")) {
			n_start++;
			if (!trace_field(line, "period_ms", &period) ||
			    !trace_field(line, "budget", &budget) ||
			    !trace_has_key(line, "mm")) {
				if (!bad++)
					ksft_print_msg("unparsed: %s", line);
			}
		} else if (strstr(line, " kmmscand_scan_end: ")) {
			n_end++;
			if (!trace_field(line, "scanned", &scanned) ||
			    !trace_field(line, "pmd_skipped", &v) ||
			    !trace_field(line, "young", &young) ||
			    !trace_field(line, "candidates", &v) ||
			    !trace_field(line, "period_ms", &period) ||
			    !trace_field(line, "budget", &budget) ||
			    young > scanned || period < 100 ||
			    period > 60000 || !budget || budget > 4194304) {
				if (!bad++)
					ksft_print_msg("bad kmmscand_scan_end: %s", line);
			}
		} else if (strstr(line, " kmmscand_migrate_batch: ")) {
			n_batch++;
			if (!trace_field(line, "nr", &nr) ||
			    !trace_field(line, "succeeded", &ok) ||
			    !trace_field(line, "failed", &fail) ||
			    !trace_field(line, "target_nid", &v) ||
			    !strstr(line, " reason=kmmscand") ||
			    ok + fail != nr || v != 0) {
				/* all three counts are in base pages */
				if (!bad++)
					ksft_print_msg("bad kmmscand_migrate_batch: %s",
						       line);
			} else {
				promoted += ok;
			}
		}
	}
	fclose(f);
	rmdir(TRACE_INSTANCE);

	ksft_print_msg("events: kmmscand_mm_enter %lu kmmscand_mm_exit %lu\n",
		       n_enter, n_exit);
	ksft_print_msg("events: kmmscand_scan_start %lu kmmscand_scan_end %lu\n",
		       n_start, n_end);
	ksft_print_msg("kmmscand_migrate_batch %lu (promoted %lu), bad %lu; ours on node 0: %lu\n",
		       n_batch, promoted, bad, nc.n[0]);
	EXPECT_LT(0UL, n_enter) TH_LOG("forks did not trace kmmscand_mm_enter");
	EXPECT_LT(0UL, n_exit) TH_LOG("exits did not trace kmmscand_mm_exit");
	EXPECT_LT(0UL, n_start);
	EXPECT_LT(0UL, n_end);
	EXPECT_LT(0UL, n_batch);
	EXPECT_EQ(0UL, bad) TH_LOG("events with missing or inconsistent fields");
	EXPECT_LE(nc.n[0], promoted)
		TH_LOG("pages moved that no kmmscand_migrate_batch event reported");
	region_unmap(&r);
}

int main(int argc, char **argv)
{
	return kmm_test_main(argc, argv);
}
