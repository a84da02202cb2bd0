// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_fault_test: fault injection on the promotion path.
 *
 *   kmmscand_fault_test [-t SECONDS]      (default 20 s)
 *
 * fail_page_alloc and failslab (debugfs, task-filter) are aimed at the
 * kmmscand_migrate thread (and briefly at the scanner) while a hot set on
 * node 1 is touched: the failures must show up in the kmmscand_fail_*
 * counters, data must stay intact, promotion must resume once the
 * injection stops, and the system must stay usable.  Needs a kernel with
 * CONFIG_FAULT_INJECTION_DEBUG_FS, FAILSLAB and FAIL_PAGE_ALLOC (make
 * test-debug); skips otherwise.
 *
 * Output is TAP ("ok N name" / "not ok N name"); exit status 0 on success,
 * 1 on failure, 4 when skipped.
 */
#include "kmmscand_stress.h"

static int fi_set(const char *dir, const char *attr, const char *val)
{
	char path[256];
	int ret;

	snprintf(path, sizeof(path), DBG "%s/%s", dir, attr);
	ret = write_str(path, val);
	if (ret)
		msg("write %s=%s: %s\n", path, val, strerror(-ret));
	return ret;
}

#define FI_TIMES 1000000L

static int fi_setup(const char *dir)
{
	char times[32];
	int ret = 0;

	snprintf(times, sizeof(times), "%ld", FI_TIMES);
	ret |= fi_set(dir, "probability", "0");
	ret |= fi_set(dir, "interval", "1");
	ret |= fi_set(dir, "times", times);
	ret |= fi_set(dir, "space", "0");
	ret |= fi_set(dir, "verbose", "0");
	ret |= fi_set(dir, "task-filter", "Y");
	ret |= fi_set(dir, "ignore-gfp-wait", "N");
	if (!strcmp(dir, "fail_page_alloc")) {
		ret |= fi_set(dir, "ignore-gfp-highmem", "N");
		ret |= fi_set(dir, "min-order", "0");
	}
	return ret;
}

static long fi_injected(const char *dir)
{
	char path[256];
	long v;

	snprintf(path, sizeof(path), DBG "%s/times", dir);
	if (read_long(path, &v))
		return -1;
	return FI_TIMES - v;
}

static int make_it_fail(pid_t pid, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/make-it-fail", pid);
	return write_str(path, on ? "1" : "0");
}

struct hotset {
	char *p;
	unsigned long np;
	uint32_t gen;
};

/* Read and rewrite the hot set for @secs seconds. */
static bool hot_touch(struct hotset *h, double secs)
{
	double end = now_s() + secs;
	bool ok = true;
	unsigned long i;

	do {
		for (i = 0; i < h->np; i++)
			ok &= page_check("hot", h->p + i * psize(), 0x40000000, i,
					 h->gen);
		h->gen++;
		for (i = 0; i < h->np; i++)
			page_fill(h->p + i * psize(), 0x40000000, i, h->gen);
		usleep(50000);
	} while (now_s() < end);
	return ok;
}

static unsigned long pages_on_node(struct hotset *h, int nid)
{
	struct node_count nc;

	if (where_pages(0, h->p, h->np, &nc))
		return 0;
	return nc.n[nid];
}

static void push_to_node(struct hotset *h, int nid)
{
	mbind_mask(h->p, h->np * psize(), MPOL_PREFERRED, 1UL << nid,
		   MPOL_MF_MOVE);
	/* Default policy again, or kmmscand leaves the pages where they are. */
	mbind_mask(h->p, h->np * psize(), MPOL_DEFAULT, 0, 0);
}

static int fault_mode(int seconds)
{
	struct vmsnap v0, v1, v2, v3;
	struct hotset h;
	pid_t mig, scan;
	bool kthread;
	long inj_pa, inj_slab, inj_pa2, inj_slab2;
	unsigned long on0 = 0;
	bool data_ok = true, usable = true;
	double t_inj = seconds * 0.5;
	char *q;
	int status;
	pid_t pid;

	if (access(DBG "fail_page_alloc/probability", W_OK) ||
	    access(DBG "failslab/probability", W_OK)) {
		printf("ok 1 fault_injection # SKIP %s\n",
		       "no fail_page_alloc/failslab in debugfs");
		return KSFT_SKIP;
	}
	/* A kernel that cuts a kthread's comm shows 15 characters. */
	mig = find_task("kmmscand_migrate", &kthread) ?:
	      find_task("kmmscand_migrat", &kthread);
	scan = find_task("kmmscand", &kthread);
	if (!mig || !scan || access("/proc/self/make-it-fail", W_OK)) {
		printf("ok 1 fault_injection # SKIP %s\n",
		       "no kmmscand_migrate thread or no make-it-fail");
		return KSFT_SKIP;
	}
	vmstat_read(&v0);
	if (!v0.k.found[S_FAIL_MIGRATE]) {
		printf("ok 1 kmmscand_fault_test # SKIP no kmmscand vmstat counters\n");
		return KSFT_SKIP;
	}
	printf("# fault injection: %d s, kmmscand_migrate pid %d, kmmscand pid %d\n",
	       seconds, mig, scan);
	tap(knobs_aggressive(), "aggressive knobs set");
	tap(!fi_setup("fail_page_alloc") && !fi_setup("failslab"),
	    "fault injection configured (task-filter, gfp-wait and highmem included)");

	h.np = (64UL << 20) / psize();
	h.gen = 1;
	h.p = mmap(NULL, h.np * psize(), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h.p == MAP_FAILED) {
		tap(false, "hot set mapped");
		return KSFT_FAIL;
	}
	mbind_mask(h.p, h.np * psize(), MPOL_PREFERRED, 1UL << 1, 0);
	for (unsigned long i = 0; i < h.np; i++)
		page_fill(h.p + i * psize(), 0x40000000, i, h.gen);
	mbind_mask(h.p, h.np * psize(), MPOL_DEFAULT, 0, 0);
	printf("# hot set: %lu pages, %lu on node 1\n", h.np, pages_on_node(&h, 1));

	/* Phase 1: every allocation of the migrator fails. */
	make_it_fail(mig, 1);
	fi_set("fail_page_alloc", "probability", "100");
	fi_set("failslab", "probability", "100");
	vmstat_read(&v1);
	data_ok &= hot_touch(&h, t_inj * 0.6);
	/* Phase 2: some fail. */
	fi_set("fail_page_alloc", "probability", "30");
	fi_set("failslab", "probability", "30");
	data_ok &= hot_touch(&h, t_inj * 0.4);
	/* Phase 3: the scanner's own (GFP_NOWAIT xarray) allocations fail. */
	make_it_fail(mig, 0);
	make_it_fail(scan, 1);
	fi_set("failslab", "probability", "50");
	fi_set("fail_page_alloc", "probability", "50");
	push_to_node(&h, 1);
	data_ok &= hot_touch(&h, seconds * 0.15);
	make_it_fail(scan, 0);
	fi_set("fail_page_alloc", "probability", "0");
	fi_set("failslab", "probability", "0");
	vmstat_read(&v2);
	inj_pa = fi_injected("fail_page_alloc");
	inj_slab = fi_injected("failslab");

	/* Phase 4: no injection; promotion must resume. */
	push_to_node(&h, 1);
	{
		double end = now_s() + seconds * 0.35 + 30;

		do {
			data_ok &= hot_touch(&h, 2);
			vmstat_read(&v3);
			on0 = pages_on_node(&h, 0);
		} while (now_s() < end &&
			 (vm_delta(&v2, &v3, S_PROMOTE_SUCCESS) <= 0 ||
			  on0 < h.np / 2));
		printf("# after the injection: %lu of %lu hot pages on node 0\n",
		       on0, h.np);
	}
	inj_pa2 = fi_injected("fail_page_alloc");
	inj_slab2 = fi_injected("failslab");

	/* The system is still usable: fork, exec, allocate on both nodes. */
	pid = fork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	usable &= pid > 0 && waitpid(pid, &status, 0) == pid &&
		  WIFEXITED(status) && !WEXITSTATUS(status);
	q = mmap(NULL, 32 << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	usable &= q != MAP_FAILED;
	if (q != MAP_FAILED)
		munmap(q, 32 << 20);

	printf("# injected failures: fail_page_alloc %ld, failslab %ld\n",
	       inj_pa, inj_slab);
	printf("# injected after the injection stopped: +%ld, +%ld\n",
	       inj_pa2 - inj_pa, inj_slab2 - inj_slab);
	printf("# during injection:\n");
	vmstat_print_delta(&v1, &v2);
	printf("# after injection:\n");
	vmstat_print_delta(&v2, &v3);

	tap(inj_pa > 0, "failures injected into the migrator (%ld page allocations, %ld slab)",
	    inj_pa, inj_slab);
	tap(vm_delta(&v1, &v2, S_FAIL_MIGRATE) +
	    vm_delta(&v1, &v2, S_FAIL_ISOLATE) > 0,
	    "kmmscand_fail_migrate counted the failures (+%lld)",
	    vm_delta(&v1, &v2, S_FAIL_MIGRATE));
	tap(inj_pa2 == inj_pa && inj_slab2 == inj_slab,
	    "no injection after make-it-fail/probability were reset");
	/* Not just any page of the system: this hot set, half of it. */
	tap(vm_delta(&v2, &v3, S_PROMOTE_SUCCESS) > 0 && on0 >= h.np / 2,
	    "promotion resumed after the injection (+%lld pages, %lu of %lu hot pages on node 0, need half)",
	    vm_delta(&v2, &v3, S_PROMOTE_SUCCESS), on0, h.np);
	data_ok &= hot_touch(&h, 0);
	tap(data_ok, "hot set intact (%ld pages verified, %ld mismatches)",
	    stress->pages_verified, stress->mismatches);
	tap(usable, "system usable (fork+exec, 32 MB allocation)");
	tap(isolated_drained(), "no folio left isolated (nr_isolated_* back to 0)");
	munmap(h.p, h.np * psize());
	tap(stress_knobs_restore(), "knobs restored");
	return tap_status();
}

int main(int argc, char **argv)
{
	int seconds = 20, opt, ret;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		switch (opt) {
		case 't':
			seconds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-t seconds]\n", argv[0]);
			return 2;
		}
	}
	if (seconds < 1)
		seconds = 1;
	ret = stress_start("kmmscand_fault_test");
	if (ret)
		return ret;
	return stress_end(fault_mode(seconds));
}
