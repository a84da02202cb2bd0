// SPDX-License-Identifier: GPL-2.0
/* A worker process of the race test, declared in kmmscand_stress_worker.h. */

#include "kmmscand_stress_region.h"
#include "kmmscand_stress_worker.h"

static void op_madvise(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b, i;
	int what = rnd(&c->rs, 6);

	if (!stress_pick_range(c, r, r->kind == R_THP ? 1024 : 64, &a, &b))
		return;
	switch (what) {
	case 0:
		if (madvise(r->addr + a * psize(), (b - a) * psize(), MADV_DONTNEED))
			return;
		stat_add(&stress->madv_dontneed, 1);
		/* Private anonymous memory reads back as zeros afterwards. */
		if (r->kind != R_SHM)
			for (i = a; i < b; i++)
				r->gen[i] = 0;
		break;
	case 1:
		if (!madvise(r->addr + a * psize(), (b - a) * psize(), MADV_COLD))
			stat_add(&stress->madv_cold, 1);
		break;
	case 2:
		if (!madvise(r->addr + a * psize(), (b - a) * psize(), MADV_PAGEOUT))
			stat_add(&stress->madv_pageout, 1);
		break;
	case 3:
		if (r->kind == R_SHM)
			break;
		if (!madvise(r->addr + a * psize(), (b - a) * psize(),
			     rnd(&c->rs, 2) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
			stat_add(&stress->madv_nohugepage, 1);
		}
		break;
	default:
		/* Collapse a whole THP-aligned region (after splits). */
		if (r->kind != R_THP || stress_region_has_holes(r) ||
		    ((unsigned long)r->addr & (THP_SIZE - 1)))
			break;
		madvise(r->addr, r->npages * psize(), MADV_HUGEPAGE);
		if (!madvise(r->addr, r->npages * psize() & ~(THP_SIZE - 1),
			     MADV_COLLAPSE))
			stat_add(&stress->madv_collapse_ok, 1);
		else
			stat_add(&stress->madv_collapse_fail, 1);
		break;
	}
	stress_region_verify(c, r, a, b);
}

static void op_move_pages(struct worker_ctx *c, struct region *r)
{
	void *pages[64];
	int nodes[64], status[64];
	unsigned long a, b, i, n;
	int target = rnd(&c->rs, 2);

	if (!stress_pick_range(c, r, 64, &a, &b))
		return;
	n = b - a;
	for (i = 0; i < n; i++) {
		pages[i] = r->addr + (a + i) * psize();
		nodes[i] = target;
		status[i] = INT_MIN;
	}
	stat_add(&stress->move_pages_calls, 1);
	if (sys_move_pages(0, n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		return;
	for (i = 0; i < n; i++)
		if (status[i] == target)
			stat_add(&stress->move_pages_moved, 1);
	stress_region_verify(c, r, a, b);
}

static void op_mbind_move(struct worker_ctx *c, struct region *r)
{
	unsigned long a, b;
	int node = rnd(&c->rs, 2);

	if (!stress_pick_range(c, r, 128, &a, &b))
		return;
	if (!mbind_mask(r->addr + a * psize(), (b - a) * psize(),
			MPOL_PREFERRED, 1UL << node, MPOL_MF_MOVE))
		stat_add(&stress->mbind_move, 1);
	stress_region_verify(c, r, a, b);
}

static void op_prctl(struct worker_ctx *c)
{
	int want = !c->prctl_state, got;

	if (prctl(PR_SET_KMMSCAND, want, 0, 0, 0)) {
		stat_add(&stress->prctl_errors, 1);
		msg("PR_SET_KMMSCAND %d: %s\n", want, strerror(errno));
		return;
	}
	got = prctl(PR_GET_KMMSCAND, 0, 0, 0, 0);
	if (got != want) {
		stat_add(&stress->prctl_errors, 1);
		msg("PR_GET_KMMSCAND = %d after setting %d\n", got, want);
	}
	c->prctl_state = want;
	stat_add(&stress->prctl_toggles, 1);
}

/*
 * fork() from a busy multi-threaded process: the child checks this
 * thread's regions (no other thread writes them), overwrites some (COW),
 * and exits; the parent then checks that the child's writes did not leak.
 */
static void op_cow_fork(struct worker_ctx *c)
{
	int status, k;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		bool ok = true;
		int j;

		snprintf(c->who, sizeof(c->who), "cow-child");
		for (j = 0; j < MAX_REGIONS; j++) {
			struct region *r = &c->r[j];
			unsigned long i;

			if (!r->addr)
				continue;
			ok &= stress_region_verify(c, r, 0, r->npages);
			if (r->kind == R_SHM)	/* shared: the parent would see it */
				continue;
			for (i = 0; i < r->npages; i += 7)
				if (!r->hole[i])
					page_fill(r->addr + i * psize(), r->id, i,
						  GEN_MAX);
			for (i = 0; i < r->npages; i += 7)
				if (!r->hole[i])
					ok &= page_check(c->who, r->addr + i * psize(),
							 r->id, i, GEN_MAX);
		}
		_exit(ok ? 0 : 1);
	}
	stat_add(&stress->cow_forks, 1);
	if (waitpid(pid, &status, 0) == pid &&
	    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		stat_add(&stress->cow_bad, 1);
		msg("COW child %d failed: status %#x\n", pid, status);
	}
	for (k = 0; k < MAX_REGIONS; k++)
		if (c->r[k].addr && c->r[k].kind != R_SHM)
			stress_region_verify(c, &c->r[k], 0, c->r[k].npages);
}

/* What the thread was doing, for the SIGSEGV/SIGBUS report. */
static __thread const char *cur_op = "idle";
static __thread struct region *cur_r;

/* The mappings around @addr, from /proc/self/maps (read(2) only). */
static void dump_maps_near(unsigned long addr)
{
	static char maps[1 << 16];
	char *line, *save;
	ssize_t n, len = 0;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return;
	while (len < (ssize_t)sizeof(maps) - 1 &&
	       (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += n;
	close(fd);
	maps[len] = 0;
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long start = strtoul(line, NULL, 16);
		char *dash = strchr(line, '-');
		unsigned long end = dash ? strtoul(dash + 1, NULL, 16) : 0;

		if (end + (4UL << 20) > addr && start < addr + (4UL << 20)) {
			if (write(STDOUT_FILENO, "#   ", 4) < 0 ||
			    write(STDOUT_FILENO, line, strlen(line)) < 0 ||
			    write(STDOUT_FILENO, "\n", 1) < 0)
				return;
		}
	}
}

static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	char buf[256];
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf),
		     "# pid %d: signal %d at %p during %s, region %p +%lu pages (kind %d)\n",
		     getpid(), sig, si->si_addr, cur_op,
		     cur_r ? (void *)cur_r->addr : NULL, cur_r ? cur_r->npages : 0,
		     cur_r ? cur_r->kind : -1);
	if (write(STDOUT_FILENO, buf, n) < 0)
		n = 0;
	dump_maps_near((unsigned long)si->si_addr);
	signal(sig, SIG_DFL);	/* the access faults again and kills us */
}

void install_fault_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

#define OP(name, call) do { cur_op = name; call; } while (0)

static void worker_sleepless_step(struct worker_ctx *c)
{
	int k = rnd(&c->rs, MAX_REGIONS);
	struct region *r = &c->r[k];
	int op;

	cur_r = r;
	if (!r->addr) {
		cur_op = "create";
		if (stress_region_create(c, r))
			stress_op_write(c, r);
		cur_op = "idle";
		return;
	}
	cur_r = r;
	op = rnd(&c->rs, 100);
	if (op < 30) {
		OP("write", stress_op_write(c, r));
	} else if (op < 40) {
		OP("verify", stress_region_verify(c, r, 0, r->npages));
	} else if (op < 44) {
		OP("destroy", stress_region_destroy(c, r));
	} else if (op < 50) {
		OP("munmap_partial", stress_op_munmap_partial(c, r));
	} else if (op < 55) {
		OP("refill_holes", stress_op_refill_holes(c, r));
	} else if (op < 62) {
		OP("mremap", stress_op_mremap(c, r));
	} else if (op < 68) {
		OP("mprotect", stress_op_mprotect(c, r));
	} else if (op < 82) {
		OP("madvise", op_madvise(c, r));
	} else if (op < 88) {
		OP("move_pages", op_move_pages(c, r));
	} else if (op < 92) {
		OP("mbind_move", op_mbind_move(c, r));
	} else if (op < 97) {
		if (c->prctl_owner)
			OP("prctl", op_prctl(c));
	} else if (c->prctl_owner && !rnd(&c->rs, 3)) {
		cur_r = NULL;
		OP("cow_fork", op_cow_fork(c));
	}
	cur_op = "idle";
}

static void *worker_thread(void *arg)
{
	struct worker_ctx *c = arg;
	int k;

	snprintf(c->who, sizeof(c->who), "w%d.t%d", c->wid, c->tid);
	while (!STOPPED()) {
		double t0 = now_s();

		worker_sleepless_step(c);
		/* About 50% duty: leave the CPUs some idle time for the kthreads. */
		usleep((useconds_t)((now_s() - t0) * 1e6) + 100);
	}
	/* Final check of everything this thread owns. */
	for (k = 0; k < MAX_REGIONS; k++) {
		if (!c->r[k].addr)
			continue;
		cur_r = &c->r[k];
		OP("final_refill", stress_op_refill_holes(c, &c->r[k]));
		OP("final_verify", stress_region_destroy(c, &c->r[k]));
	}
	return NULL;
}

int stress_worker_main(int wid, int nthreads)
{
	struct worker_ctx *ctx = calloc(nthreads, sizeof(*ctx));
	pthread_t *th = calloc(nthreads, sizeof(*th));
	long before = stress->mismatches;
	int i;

	if (!ctx || !th)
		return 2;
	for (i = 0; i < nthreads; i++) {
		ctx[i].wid = wid;
		ctx[i].tid = i;
		ctx[i].rs = (uint64_t)getpid() * 1000003 + i * 7919 + time(NULL);
		ctx[i].prctl_owner = i == 0;
		ctx[i].prctl_state = 1;
		if (pthread_create(&th[i], NULL, worker_thread, &ctx[i]))
			return 2;
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	/* Leave the process opted in: exit with either state must be fine. */
	return stress->mismatches != before ? 1 : 0;
}

