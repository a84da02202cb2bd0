// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_stress: race everything the mm offers against the kmmscand
 * scanner and promotion thread, and check that no byte is lost.
 *
 *   kmmscand_stress [-t SECONDS] [-w WORKERS] [-T THREADS]
 *
 * The duration comes from -t, else KMMSCAND_STRESS_SECONDS, else 20 s.
 * kmmscand runs at its most aggressive settings, then
 *  - WORKERS processes x THREADS threads, each thread owning regions
 *    (anonymous, shmem, THP-aligned with MADV_HUGEPAGE) placed on both
 *    nodes with mbind(), doing random writes/verifies, munmap (whole and
 *    partial, holes refilled later), mremap (move/grow/shrink), mprotect,
 *    madvise(DONTNEED, COLD, PAGEOUT, HUGEPAGE, NOHUGEPAGE, COLLAPSE),
 *    mbind(MPOL_MF_MOVE), move_pages() and fork()+COW checks; one thread
 *    per worker toggles PR_SET_KMMSCAND on its own process
 *    (kmmscand_stress_worker.c, kmmscand_stress_region.c);
 *  - a forker process spawning short-lived children that allocate, write,
 *    verify and exit;
 *  - a migrator process calling migrate_pages() on the workers;
 *  - a balloon filling most of node 0 (demotion_enabled=1), re-touching it
 *    so that demotion and promotion run together;
 *  - the parent changing the sysfs knobs underneath (valid values only).
 * Every page written holds a pattern derived from (region id, page index,
 * generation); the owner tracks the generation of each page (0 = must read
 * as zeros, after MADV_DONTNEED or a fresh mapping).  Pages are verified
 * periodically and all of them at the end.
 *
 * Fault injection on the promotion path is kmmscand_fault_test.
 */
#include "kmmscand_stress_worker.h"

#define MAX_WORKERS	16

/* One random valid change, mostly staying aggressive. */
static void knob_poke(uint64_t *rs)
{
	static const long sizes[] = { 512, 4096, 65536, 4194304, 4194304 };
	static const long batches[] = { 1, 32, 512, 4096, 4096 };
	static const long rates[] = { 0, 1, 64, 1048576, 1048576, 1048576 };
	const long long *cur = stress_knob_cur;
	int k = rnd(rs, NR_KNOBS);
	long v = 0;
	int ret;

	/* Undo the two "off" settings at the next poke. */
	if (cur[KNOB_ENABLED] == 0)
		k = KNOB_ENABLED;
	else if (cur[KNOB_PROMOTE_RATE_LIMIT_MBPS] == 0)
		k = KNOB_PROMOTE_RATE_LIMIT_MBPS;
	switch (k) {
	case KNOB_ENABLED:
		v = cur[k] == 0 ? 1 : !!rnd(rs, 8);
		break;
	case KNOB_SCAN_PERIOD_MIN_MS:
		v = 100 + (rnd(rs, 4) ? 0 :
			   (long)rnd(rs, cur[KNOB_SCAN_PERIOD_MAX_MS] - 100 + 1));
		break;
	case KNOB_SCAN_PERIOD_MAX_MS:
		v = cur[KNOB_SCAN_PERIOD_MIN_MS] + (rnd(rs, 3) ? 0 : (long)rnd(rs, 2000));
		break;
	case KNOB_SCAN_SIZE:
		v = sizes[rnd(rs, 5)];
		break;
	case KNOB_HOT_HISTORY:
		v = cur[KNOB_HOT_THRESHOLD] + rnd(rs, 8 - cur[KNOB_HOT_THRESHOLD] + 1);
		break;
	case KNOB_HOT_THRESHOLD:
		v = 1 + rnd(rs, cur[KNOB_HOT_HISTORY]);
		break;
	case KNOB_PMD_SKIP:
		v = rnd(rs, 2);
		break;
	case KNOB_TLB_FLUSH:
		v = rnd(rs, 4) != 0;
		break;
	case KNOB_MIGRATE_BATCH:
		v = batches[rnd(rs, 5)];
		break;
	case KNOB_PROMOTE_RATE_LIMIT_MBPS:
		v = cur[k] == 0 ? 1048576 : rates[rnd(rs, 6)];
		break;
	case KNOB_TARGET_NODE:
		v = rnd(rs, 2) ? -1 : 0;
		break;
	}
	ret = stress_knob_set(k, v);
	stat_add(&stress->knob_writes, 1);
	if (ret) {
		stat_add(&stress->knob_errors, 1);
		msg("knob %s=%ld rejected: %s\n", kmm_knobs[k].name, v,
		    strerror(-ret));
	}
}

/* Short-lived children that allocate, write, verify and exit. */
static int forker_main(void)
{
	uint64_t rs = getpid() * 2654435761ULL;
	int running = 0, status;
	long bad = 0;

	while (!STOPPED()) {
		pid_t pid;

		while (running >= 4) {
			if (wait(&status) > 0) {
				running--;
				if (!WIFEXITED(status) || WEXITSTATUS(status)) {
					bad++;
					msg("forked child failed: status %#x\n", status);
				}
			}
		}
		pid = fork();
		if (pid < 0) {
			usleep(10000);
			continue;
		}
		if (pid == 0) {
			unsigned long np = 16 + rnd(&rs, 256), i;
			uint32_t id = 0xf0000000U | (getpid() & 0xffffff);
			char *p = mmap(NULL, np * psize(), PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			bool ok = true;
			int round;

			rs ^= getpid();
			if (p == MAP_FAILED)
				_exit(3);
			mbind_mask(p, np * psize(), MPOL_PREFERRED,
				   1UL << rnd(&rs, 2), 0);
			if (!rnd(&rs, 4))
				prctl(PR_SET_KMMSCAND, 0, 0, 0, 0);
			for (round = 1; round <= 3 && ok; round++) {
				for (i = 0; i < np; i++)
					page_fill(p + i * psize(), id, i, round);
				if (!rnd(&rs, 3))
					usleep(rnd(&rs, 200000));
				if (!rnd(&rs, 4))
					prctl(PR_SET_KMMSCAND, rnd(&rs, 2), 0, 0, 0);
				for (i = 0; i < np; i++)
					ok &= page_check("forked", p + i * psize(),
							 id, i, round);
			}
			_exit(ok ? 0 : 1);
		}
		stat_add(&stress->forks, 1);
		running++;
	}
	while (running > 0 && wait(&status) > 0) {
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			bad++;
			msg("forked child failed: status %#x\n", status);
		}
	}
	stat_add(&stress->fork_children_bad, bad);
	return bad ? 1 : 0;
}

/* migrate_pages(2) on the workers, both directions. */
static long sys_migrate_pages(pid_t pid, unsigned long from, unsigned long to)
{
	return syscall(SYS_migrate_pages, pid, 64, &from, &to);
}

static int migrator_main(const pid_t *pids, int n)
{
	uint64_t rs = getpid() * 11400714819323198485ULL;

	while (!STOPPED()) {
		pid_t pid = pids[rnd(&rs, n)];
		int from = rnd(&rs, 2);

		if (sys_migrate_pages(pid, 1UL << from, 1UL << !from) >= 0)
			stat_add(&stress->migrate_pages_pids, 1);
		stat_add(&stress->migrate_pages_calls, 1);
		usleep(20000 + rnd(&rs, 80000));
	}
	return 0;
}

/* Fill node 0 (preferred, so it spills to node 1 instead of OOM) and keep it warm. */
static int balloon_main(double fraction)
{
	long free_kb = node_meminfo_kb(0, "MemFree:");
	unsigned long np, i, chunk = THP_SIZE / psize();
	uint64_t rs = getpid();
	uint32_t *gen, id = 0xbbbb0000U;
	long bad = 0;
	char *p;

	if (free_kb <= 0)
		return 0;
	np = (unsigned long)(free_kb * fraction) * 1024 / psize();
	np &= ~(chunk - 1);
	if (np < chunk)
		return 0;
	gen = calloc(np, sizeof(*gen));
	p = mmap(NULL, np * psize(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!gen || p == MAP_FAILED)
		return 2;
	mbind_mask(p, np * psize(), MPOL_PREFERRED, 1UL << 0, 0);
	/* Fill at full speed (nice 0), then keep it warm at nice 19. */
	if (setpriority(PRIO_PROCESS, 0, 0))
		msg("balloon: setpriority: %s\n", strerror(errno));
	for (i = 0; i < np && !STOPPED(); i++) {
		gen[i] = 1;
		page_fill(p + i * psize(), id, i, 1);
	}
	if (setpriority(PRIO_PROCESS, 0, 19))
		msg("balloon: setpriority: %s\n", strerror(errno));
	stat_add(&stress->balloon_pages, i);
	while (!STOPPED()) {
		unsigned long c0 = rnd(&rs, np / chunk) * chunk;

		for (i = c0; i < c0 + chunk; i++) {
			if (!gen[i])
				continue;
			if (!page_check("balloon", p + i * psize(), id, i, gen[i]))
				bad++;
			gen[i] = gen[i] % 1000 + 1;
			page_fill(p + i * psize(), id, i, gen[i]);
		}
		stat_add(&stress->balloon_rounds, 1);
		usleep(5000);
	}
	for (i = 0; i < np; i++)
		if (gen[i] && !page_check("balloon", p + i * psize(), id, i, gen[i]))
			bad++;
	munmap(p, np * psize());
	return bad ? 1 : 0;
}

static pid_t spawn(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/*
		 * Same nice level as the kmmscand threads (19): at nice 0 the
		 * load would starve them on the 2 vCPUs and nothing would race.
		 */
		if (nice(19) < 0)
			msg("nice: %s\n", strerror(errno));
		install_fault_handler();
		_exit(fn(arg));
	}
	return pid;
}

struct spawn_arg {
	int wid, threads;
	const pid_t *pids;
	int npids;
	double fraction;
};

static int spawn_worker(void *a)
{
	struct spawn_arg *s = a;

	return stress_worker_main(s->wid, s->threads);
}

static int spawn_forker(void *a)
{
	(void)a;
	return forker_main();
}

static int spawn_migrator(void *a)
{
	struct spawn_arg *s = a;

	return migrator_main(s->pids, s->npids);
}

static int spawn_balloon(void *a)
{
	struct spawn_arg *s = a;

	return balloon_main(s->fraction);
}

static void print_ops(void)
{
	printf("# ops: forks %ld (failed %ld), cow_forks %ld (failed %ld)\n",
	       stress->forks, stress->fork_children_bad, stress->cow_forks, stress->cow_bad);
	printf("# ops: mmaps %ld, munmaps %ld, partial_munmaps %ld, hole_refills %ld\n",
	       stress->mmaps, stress->munmaps, stress->partial_munmaps, stress->hole_refills);
	printf("# ops: mremaps %ld (failed %ld), mprotects %ld, mbind_move %ld\n",
	       stress->mremaps, stress->mremap_fail, stress->mprotects, stress->mbind_move);
	printf("# ops: madvise dontneed %ld, cold %ld, pageout %ld, (no)hugepage %ld\n",
	       stress->madv_dontneed, stress->madv_cold, stress->madv_pageout,
	       stress->madv_hugepage + stress->madv_nohugepage);
	printf("# ops: madvise collapse ok %ld, failed %ld\n",
	       stress->madv_collapse_ok, stress->madv_collapse_fail);
	printf("# ops: move_pages %ld (pages moved %ld), migrate_pages %ld (ok %ld)\n",
	       stress->move_pages_calls, stress->move_pages_moved,
	       stress->migrate_pages_calls, stress->migrate_pages_pids);
	printf("# ops: prctl toggles %ld (errors %ld), knob writes %ld (rejected %ld)\n",
	       stress->prctl_toggles, stress->prctl_errors, stress->knob_writes,
	       stress->knob_errors);
	printf("# ops: pages written %ld, verified %ld, mismatches %ld\n",
	       stress->pages_written, stress->pages_verified, stress->mismatches);
	printf("# ops: balloon pages %ld (rounds %ld)\n",
	       stress->balloon_pages, stress->balloon_rounds);
	fflush(stdout);
}

static const char *proc_name(pid_t pid, const pid_t *workers, int nw,
			     pid_t forker, pid_t migrator, pid_t balloon)
{
	int i;

	for (i = 0; i < nw; i++)
		if (workers[i] == pid)
			return "worker";
	if (pid == forker)
		return "forker";
	if (pid == migrator)
		return "migrator";
	if (pid == balloon)
		return "balloon";
	return "?";
}

static int run_stress(int seconds, int nworkers, int nthreads)
{
	struct spawn_arg wa[MAX_WORKERS], ma, ba;
	pid_t workers[MAX_WORKERS], forker, migrator, balloon, pid;
	struct vmsnap v0, v1;
	uint64_t rs = getpid();
	int i, status, crashed = 0, failed_procs = 0, alive;
	double end;
	bool scanned, off = !!getenv("KMMSCAND_STRESS_OFF");

	printf("# %d s, %d workers x %d threads, forker, migrator, balloon, knobs\n",
	       seconds, nworkers, nthreads);
	tap(knobs_aggressive(), "aggressive knobs (period 100 ms, scan_size max, tlb_flush 1)");
	/* Reference run without kmmscand, to tell its bugs from others. */
	if (off) {
		printf("# KMMSCAND_STRESS_OFF: kmmscand disabled for the run\n");
		stress_knob_set(KNOB_ENABLED, 0);
	}
	stress_demotion_enable();
	vmstat_read(&v0);

	/* Past the free memory of node 0: kswapd must demote to make room. */
	ba.fraction = 1.2;
	balloon = spawn(spawn_balloon, &ba);
	for (i = 0; i < nworkers; i++) {
		wa[i].wid = i + 1;
		wa[i].threads = nthreads;
		workers[i] = spawn(spawn_worker, &wa[i]);
	}
	forker = spawn(spawn_forker, NULL);
	ma.pids = workers;
	ma.npids = nworkers;
	migrator = spawn(spawn_migrator, &ma);

	end = now_s() + seconds;
	while (now_s() < end) {
		usleep(100000 + rnd(&rs, 200000));
		if (!off)
			knob_poke(&rs);
	}
	/* Give back the most aggressive settings for the final checks. */
	if (!off)
		knobs_aggressive();
	__atomic_store_n(&stress->stop, 1, __ATOMIC_RELAXED);

	alive = nworkers + 3;
	while (alive > 0 && (pid = wait(&status)) > 0) {
		const char *what = proc_name(pid, workers, nworkers, forker,
					     migrator, balloon);

		alive--;
		if (WIFSIGNALED(status)) {
			crashed++;
			printf("# %s %d killed by signal %d%s\n", what, pid,
			       WTERMSIG(status),
			       WTERMSIG(status) == SIGKILL ? " (OOM killer?)" : "");
		} else if (WEXITSTATUS(status)) {
			failed_procs++;
			printf("# %s %d exited with %d\n", what, pid,
			       WEXITSTATUS(status));
		}
	}
	vmstat_read(&v1);
	print_ops();
	vmstat_print_delta(&v0, &v1);

	tap(!crashed, "no process crashed (%d killed by a signal)", crashed);
	tap(!stress->mismatches && !failed_procs,
	    "data intact: %ld pages verified, %ld mismatches", stress->pages_verified,
	    stress->mismatches);
	tap(!stress->cow_bad && !stress->fork_children_bad,
	    "fork children intact: %ld forks, %ld COW forks", stress->forks,
	    stress->cow_forks);
	tap(!stress->prctl_errors, "PR_SET/GET_KMMSCAND consistent over %ld toggles",
	    stress->prctl_toggles);
	tap(!stress->knob_errors, "%ld valid knob writes accepted", stress->knob_writes);
	tap(isolated_drained(), "no folio left isolated (nr_isolated_* back to 0)");
	if (off) {
		tap_skip("kmmscand scanned under load", "KMMSCAND_STRESS_OFF");
	} else if (!v1.k.found[S_PTE_SCANNED]) {
		tap_skip("kmmscand scanned during the stress", "no kmmscand vmstat counters");
	} else {
		scanned = vm_delta(&v0, &v1, S_PTE_SCANNED) > 0;
		tap(scanned, "kmmscand scanned under load (+%lld PTEs)",
		    vm_delta(&v0, &v1, S_PTE_SCANNED));
		/*
		 * The knob writer turns promotion off only for a moment and
		 * the workers keep hot pages on node 1: a stress run with no
		 * promotion at all is a migrator that stopped, not a SKIP.
		 */
		tap(vm_delta(&v0, &v1, S_PROMOTE_SUCCESS) > 0,
		    "promotion ran under load (+%lld pages)",
		    vm_delta(&v0, &v1, S_PROMOTE_SUCCESS));
	}
	tap(stress_knobs_restore(), "knobs restored");
	return tap_status();
}

int main(int argc, char **argv)
{
	int seconds = 20, nworkers = 3, nthreads = 3, opt, ret;
	const char *env = getenv("KMMSCAND_STRESS_SECONDS");

	if (env && atoi(env) > 0)
		seconds = atoi(env);
	while ((opt = getopt(argc, argv, "t:w:T:")) != -1) {
		switch (opt) {
		case 't':
			seconds = atoi(optarg);
			break;
		case 'w':
			nworkers = atoi(optarg);
			break;
		case 'T':
			nthreads = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-t seconds] [-w workers] [-T threads]\n",
				argv[0]);
			return 2;
		}
	}
	if (seconds < 1)
		seconds = 1;
	if (nworkers < 1)
		nworkers = 1;
	if (nworkers > MAX_WORKERS)
		nworkers = MAX_WORKERS;
	if (nthreads < 1)
		nthreads = 1;
	ret = stress_start("kmmscand_stress");
	if (ret)
		return ret;
	return stress_end(run_stress(seconds, nworkers, nthreads));
}
