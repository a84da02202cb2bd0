// SPDX-License-Identifier: GPL-2.0
/* The helpers of the race and fault tests declared in kmmscand_stress.h. */

#include "kmmscand_stress.h"

struct stress_stats *stress;
long long stress_knob_cur[NR_KNOBS];

static struct kmm_knob_state knobs_saved;
static char demotion_saved[16];		/* "" when there is none */
static int tap_n, tap_failed;

void msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "# ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	/* One write(): lines of concurrent processes do not interleave. */
	if (write(STDOUT_FILENO, buf, n) < 0)
		return;
}

const char *stress_knobs_save(void)
{
	int k;

	for (k = 0; k < NR_KNOBS; k++)
		if (knob_get(k, &stress_knob_cur[k]))
			return kmm_knobs[k].name;
	if (knobs_save(&knobs_saved))
		return "(knobs)";
	if (kmm_read_file(DEMOTION_SYSFS, demotion_saved, sizeof(demotion_saved)) <= 0)
		demotion_saved[0] = '\0';
	return NULL;
}

int stress_knob_set(enum kmm_knob k, long long val)
{
	int ret = knob_set(k, val);

	if (!ret)
		stress_knob_cur[k] = val;
	return ret;
}

bool stress_knobs_restore(void)
{
	long long v = 0;
	bool ok = true;
	int k;

	knobs_restore(&knobs_saved);
	for (k = 0; k < NR_KNOBS; k++) {
		if (knob_get(k, &v) || v != knobs_saved.val[k]) {
			msg("knob %s not restored: %lld, want %lld\n",
			    kmm_knobs[k].name, v, knobs_saved.val[k]);
			ok = false;
		}
	}
	if (demotion_saved[0])
		write_str(DEMOTION_SYSFS, demotion_saved);
	return ok;
}

bool knobs_aggressive(void)
{
	bool ok = true;

	ok &= !stress_knob_set(KNOB_ENABLED, 1);
	ok &= !stress_knob_set(KNOB_SCAN_PERIOD_MIN_MS, 100);
	ok &= !stress_knob_set(KNOB_SCAN_PERIOD_MAX_MS, 100);
	ok &= !stress_knob_set(KNOB_SCAN_SIZE, 4194304);
	ok &= !stress_knob_set(KNOB_HOT_THRESHOLD, 1);
	ok &= !stress_knob_set(KNOB_HOT_HISTORY, 1);
	ok &= !stress_knob_set(KNOB_PMD_SKIP, 1);
	ok &= !stress_knob_set(KNOB_TLB_FLUSH, 1);
	ok &= !stress_knob_set(KNOB_MIGRATE_BATCH, 4096);
	ok &= !stress_knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 1048576);
	ok &= !stress_knob_set(KNOB_TARGET_NODE, -1);
	return ok;
}

static uint64_t stress_pattern(uint32_t id, unsigned long idx,
			       uint32_t gen)
{
	uint64_t s = ((uint64_t)id << 32) ^ ((uint64_t)idx << 1) ^
		     ((uint64_t)gen * 0xd6e8feb86659fd93ULL);

	return rnd_next(&s) | 1;	/* never 0: zero pages are gen 0 */
}

void page_fill(char *p, uint32_t id, unsigned long idx,
	       uint32_t gen)
{
	uint64_t *w = (uint64_t *)p, v = stress_pattern(id, idx, gen);
	long i, n = psize() / 8;

	for (i = 0; i < n; i++)
		w[i] = v + i;
	stat_add(&stress->pages_written, 1);
}

static void report_mismatch(const char *who, uint32_t id,
			    unsigned long idx, const void *addr,
			    long word, uint64_t want, uint64_t got,
			    uint32_t gen)
{
	stat_add(&stress->mismatches, 1);
	if (__atomic_fetch_add(&stress->mismatch_reports, 1, __ATOMIC_RELAXED) >=
	    MAX_MISMATCH_REPORTS)
		return;
	msg("MISMATCH %s pid %d region %#x page %lu addr %p word %ld gen %u: %s %#llx got %#llx\n",
	    who, getpid(), id, idx, addr, word, gen, "want",
	    (unsigned long long)want, (unsigned long long)got);
}

bool page_check(const char *who, const char *p, uint32_t id,
		unsigned long idx, uint32_t gen)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t v = gen ? stress_pattern(id, idx, gen) : 0;
	long i, n = psize() / 8;

	stat_add(&stress->pages_verified, 1);
	for (i = 0; i < n; i++) {
		uint64_t want = gen ? v + i : 0;

		if (w[i] != want) {
			report_mismatch(who, id, idx, p + i * 8, i, want, w[i], gen);
			return false;
		}
	}
	return true;
}

void vmstat_read(struct vmsnap *s)
{
	kmm_stats_read(&s->k);
	x_stats_read(&s->x);
}

long long vm_delta(const struct vmsnap *a,
		   const struct vmsnap *b, enum kmm_stat i)
{
	return b->k.v[i] - a->k.v[i];
}

void vmstat_print_delta(const struct vmsnap *a,
			const struct vmsnap *b)
{
	int i;

	for (i = 0; i < NR_KMM_STATS; i++)
		if (b->k.found[i])
			printf("# vmstat %-28s +%lld\n", kmm_stat_names[i],
			       vm_delta(a, b, i));
	for (i = 0; i < NR_X_STATS; i++)
		if (strncmp(x_stat_names[i], "nr_", 3))
			printf("# vmstat %-28s +%llu\n", x_stat_names[i],
			       XD(&a->x, &b->x, i));
	fflush(stdout);
}

bool isolated_drained(void)
{
	struct x_stats s;
	int tries;

	for (tries = 0; tries < 50; tries++) {
		x_stats_read(&s);
		if (!s.v[X_NR_ISOLATED_ANON] && !s.v[X_NR_ISOLATED_FILE])
			return true;
		sleep_ms(200);
	}
	msg("nr_isolated_anon %llu nr_isolated_file %llu\n",
	    s.v[X_NR_ISOLATED_ANON], s.v[X_NR_ISOLATED_FILE]);
	return false;
}

void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
}

void tap_skip(const char *name, const char *why)
{
	printf("ok %d %s # SKIP %s\n", ++tap_n, name, why);
	fflush(stdout);
}

int stress_start(const char *name)
{
	const char *missing;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (getuid()) {
		printf("ok 1 %s # SKIP must run as root\n", name);
		return KSFT_SKIP;
	}
	missing = stress_knobs_save();
	if (missing) {
		printf("ok 1 %s # SKIP no " KMMSCAND_SYSFS "%s\n", name, missing);
		return KSFT_SKIP;
	}
	if (node_meminfo_kb(0, "MemFree:") <= 0 ||
	    node_meminfo_kb(1, "MemFree:") <= 0) {
		printf("ok 1 %s # SKIP needs memory on nodes 0 and 1\n", name);
		return KSFT_SKIP;
	}
	stress = mmap(NULL, sizeof(*stress), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stress == MAP_FAILED)
		return KSFT_FAIL;
	memset(stress, 0, sizeof(*stress));
	return 0;
}

int stress_end(int ret)
{
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d checks failed\n", tap_failed, tap_n);
	return ret;
}

void stress_demotion_enable(void)
{
	if (demotion_saved[0])
		write_str(DEMOTION_SYSFS, "1");
}

int tap_status(void)
{
	return tap_failed ? KSFT_FAIL : KSFT_PASS;
}
