// SPDX-License-Identifier: GPL-2.0
/*
 * workload/workload.c - tiering promotion workloads: the bench, make demo and
 * the userland checks of make test run them.
 *
 * One static binary, several access patterns (--mode).  Memory is placed on
 * the slow node with mbind(MPOL_BIND), faulted in (the one "cold" touch), and
 * then the policy is reset with mbind(MPOL_DEFAULT) so that promotion is
 * allowed (a kept MPOL_BIND would rightly forbid it).
 *
 * Process layout: the parent is the sampler; it forks --procs worker
 * processes (and, for --balloon-leave-mb, one balloon process that fills the
 * top-tier node).  Every --sample-ms the sampler queries the placement of the
 * hot and cold page samples of every worker with move_pages(pid, .., NULL,
 * status) and prints a line
 *     T <sec> hot_on0=<f> cold_on0=<f> acc_on0=<f> [hotA_on0= hotB_on0=] ops=<n> q_ms=<ms>
 * stamped with the middle of the query (q_ms long).  acc_on0 is the share of
 * the interval's accesses (per-page counters) to pages on the fast node at
 * the sample, -1 when the interval counted none.
 * At the end it prints per-worker "W" lines and one "RESULT key=value ..."
 * line.  Workers time fixed-size access batches with clock_gettime and report
 * p50/p90/p99/max batch latency.  A worker runs --threads access threads
 * over its slice (0: one per online CPU), each with its own trace.
 *
 * Placement variants of the slice (the microbenchmarks of the bench):
 *   default           mbind(MPOL_BIND slow), touch every page, MPOL_DEFAULT
 *   --populate        mmap(MAP_POPULATE) under a slow-node task policy
 *   --file PATH       MAP_SHARED mapping of PATH (page cache), placed on the
 *                     slow node by reading it under a slow-node task policy
 *   --move-to-slow    faulted in on the fast node, then move_pages(2) to the
 *                     slow node (with --thp: THPs moved whole where possible)
 * Accesses are 64-byte read-modify-writes, or with --store-pct P single
 * 8-byte stores (P %) and loads (the rest).
 *
 * Everything is deterministic for a given --seed (page choice and traces).
 * Only libc and pthreads; mbind/set_mempolicy/move_pages are raw syscalls.
 */
#include "workload.h"

struct wl_opts o = {
	.mode = "hotcold", .size_mb = 256, .hot_pct = 10, .hot_chunk_kb = 256,
	.procs = 1, .balloon_leave_mb = -1, .secs = 30, .seed = 42, .batch = 4096,
	.slow_node = 1, .fast_node = 0, .sample_ms = 100, .sparse_hot_mb = 64,
	.threads = 1, .store_pct = -1,
};

char *region;
unsigned long region_pages;
uint32_t *cnt;
struct wres *wres;
struct worker W[MAX_PROCS];

/* --------------------------------------------------------------- sampler */
struct frac { unsigned long on0, tot; };

static void query(struct worker *w, void **addr, unsigned long n, struct frac *f,
		  const uint32_t *idx, double scale, double *acc0, double *acc)
{
	const unsigned long chunk = 4096;

	for (unsigned long i = 0; i < n; i += chunk) {
		unsigned long m = n - i < chunk ? n - i : chunk;

		if (sys_move_pages(w->pid, m, addr + i, w->status) < 0)
			continue;
		for (unsigned long j = 0; j < m; j++) {
			int st = w->status[j];
			uint32_t pg = idx[i + j], c = cnt[pg], d;

			if (st >= 0) {
				f->tot++;
				if (st == o.fast_node)
					f->on0++;
			}
			if (!acc)
				continue;
			d = c - w->prev_cnt[pg - w->first_page];
			w->prev_cnt[pg - w->first_page] = c;
			*acc += d * scale;
			if (st == o.fast_node)
				*acc0 += d * scale;
		}
	}
}

static double fr(struct frac f) { return f.tot ? (double)f.on0 / f.tot : 0.0; }

/* AnonHugePages of the workers (smaps_rollup), MB; -1 when unavailable */
static double workers_thp_mb(void)
{
	double kb = 0;

	for (int i = 0; i < o.procs; i++) {
		char path[64], line[256];
		long v = -1;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)W[i].pid);
		f = fopen(path, "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
				break;
		fclose(f);
		if (v < 0)
			return -1;
		kb += v;
	}
	return kb / 1024;
}

static void usage(void)
{
	fprintf(stderr,
"usage: workload [--mode M] [options]\n"
" modes (presets): hotcold zipf phase flat multi thp thp-scatter scatter topfull\n"
"                  topfull-hard sparse uniform populate file-shared file-shared-rw\n"
"                  thp-move\n"
" --size-mb N       touched region (all workers together); map size for sparse [256]\n"
" --hot-pct P       hot fraction in %% [10]\n"
" --hot-mb M        hot set size in MB (instead of --hot-pct)\n"
" --hot-chunk-kb K  hot set built from random K KB chunks [256]\n"
" --hot-per-2m N    scattered hot set: N hot 4K pages per 2 MB region\n"
" --thp             MADV_HUGEPAGE the region\n"
" --zipf S          zipf(S) over all pages (hot = top hot-pct%% ranks)\n"
" --phase           hot set moves to a disjoint set at half time\n"
" --flat            uniform random over all pages\n"
" --sparse          map size-mb, touch one page per 2 MB plus the hot set\n"
" --sparse-hot-mb N hot set size in sparse mode [64]\n"
" --procs P         worker processes, each with its own slice and hot set [1]\n"
" --balloon-leave-mb M  fill the fast node until only M MB are free\n"
" --balloon-lock    mlock the balloon\n"
" --threads N       access threads per worker, 0 = one per online CPU [1]\n"
" --store-pct P     single stores (P %%) and loads instead of read-modify-writes\n"
" --populate        anonymous mmap(MAP_POPULATE) under a slow-node task policy\n"
" --file PATH       MAP_SHARED mapping of PATH (created, and unlinked, if missing)\n"
" --file-rw         map the file read-write (default read-only: loads only)\n"
" --move-to-slow    fault in on the fast node, then move_pages() to the slow node\n"
" --split-kb K      one VMA per K KB of the region (many mappings per PTE table)\n"
" --secs T          run time [30]   --seed S [42]   --batch B accesses [4096]\n"
" --slow-node N [1] --fast-node N [0]  --sample-ms MS [100]\n"
" --go-file F       after setup create F.ready and wait until F exists\n");
	exit(1);
}

/* numeric option values: the whole word must be a number in [lo, hi] */
static double arg_num(const char *opt, const char *v, double lo, double hi)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || x < lo || x > hi) {
		fprintf(stderr, "workload: --%s wants a number in [%g, %g], got '%s'\n",
			opt, lo, hi, v);
		usage();
	}
	return x;
}

static long arg_int(const char *opt, const char *v, long lo, long hi)
{
	double x = arg_num(opt, v, lo, hi);

	if (x != (long)x) {
		fprintf(stderr, "workload: --%s wants an integer, got '%s'\n", opt, v);
		usage();
	}
	return (long)x;
}

static void apply_mode(const char *m)
{
	o.mode = m;
	if (!strcmp(m, "hotcold")) {
	} else if (!strcmp(m, "zipf")) {
		o.zipf_s = 0.99;
	} else if (!strcmp(m, "phase")) {
		o.phase = 1;
	} else if (!strcmp(m, "flat")) {
		o.flat = 1;
	} else if (!strcmp(m, "multi")) {
		o.procs = 3;
	} else if (!strcmp(m, "thp")) {
		o.thp = 1; o.hot_chunk_kb = 2048;
	} else if (!strcmp(m, "thp-scatter")) {
		o.thp = 1; o.hot_per_2m = 8;
	} else if (!strcmp(m, "scatter")) {
		o.hot_per_2m = 8;
	} else if (!strcmp(m, "topfull")) {
		o.balloon_leave_mb = 32;
	} else if (!strcmp(m, "topfull-hard")) {
		/* hot set several times the free node-0 memory: set --hot-mb */
		o.balloon_leave_mb = 32; o.hot_mb = 112;
	} else if (!strcmp(m, "sparse")) {
		o.sparse = 1; o.size_mb = 4096;
	} else if (!strcmp(m, "uniform")) {
		/* abench-like: uniform 4 KB accesses, one thread per CPU, 50:50 */
		o.flat = 1; o.threads = 0; o.store_pct = 50;
	} else if (!strcmp(m, "populate")) {
		o.populate = 1; o.threads = 0; o.store_pct = 50;
	} else if (!strcmp(m, "file-shared")) {
		o.file = "/tmp/kmmscand-bench.file"; o.store_pct = 0;
	} else if (!strcmp(m, "file-shared-rw")) {
		o.file = "/tmp/kmmscand-bench-rw.file"; o.file_rw = 1; o.store_pct = 0;
	} else if (!strcmp(m, "thp-move")) {
		o.thp = 1; o.hot_chunk_kb = 2048; o.move_to_slow = 1;
	} else {
		fprintf(stderr, "workload: unknown mode %s\n", m);
		usage();
	}
}

/* The command line into o; a usage line and exit status 2 on anything wrong. */
static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "size-mb", 1, 0, 's' }, { "hot-pct", 1, 0, 'h' },
		{ "hot-chunk-kb", 1, 0, 'c' }, { "hot-per-2m", 1, 0, 'k' }, { "thp", 0, 0, 'T' },
		{ "zipf", 1, 0, 'z' }, { "phase", 0, 0, 'P' }, { "flat", 0, 0, 'F' },
		{ "sparse", 0, 0, 'S' }, { "sparse-hot-mb", 1, 0, 'H' }, { "procs", 1, 0, 'n' },
		{ "balloon-leave-mb", 1, 0, 'b' }, { "balloon-lock", 0, 0, 'L' },
		{ "secs", 1, 0, 't' }, { "seed", 1, 0, 'r' }, { "batch", 1, 0, 'B' },
		{ "slow-node", 1, 0, '1' }, { "fast-node", 1, 0, '0' },
		{ "sample-ms", 1, 0, 'i' }, { "verbose", 0, 0, 'v' }, { "help", 0, 0, '?' },
		{ "go-file", 1, 0, 'g' }, { "hot-mb", 1, 0, 'M' },
		{ "threads", 1, 0, 'j' }, { "store-pct", 1, 0, 'w' }, { "populate", 0, 0, 'p' },
		{ "file", 1, 0, 'f' }, { "file-rw", 0, 0, 'W' }, { "move-to-slow", 0, 0, 'x' },
		{ "split-kb", 1, 0, 'K' },
		{ 0 }
	};
	int c, li = 0;

	/* the mode preset first, so explicit options override it */
	for (int i = 1; i < argc - 1; i++)
		if (!strcmp(argv[i], "--mode"))
			apply_mode(argv[i + 1]);
	while ((c = getopt_long(argc, argv, "", lo, &li)) != -1) {
		const char *n = lo[li].name;
		const long big = 1L << 40;

		switch (c) {
		case 'm': break;
		case 's': o.size_mb = arg_int(n, optarg, 1, 1L << 30); break;
		case 'h': o.hot_pct = arg_num(n, optarg, 0, 100); break;
		case 'c': o.hot_chunk_kb = arg_int(n, optarg, 4, 1L << 30); break;
		case 'k': o.hot_per_2m = arg_int(n, optarg, 1, PAGES_PER_PMD); break;
		case 'T': o.thp = 1; break;
		case 'z': o.zipf_s = arg_num(n, optarg, 0, 10); break;
		case 'P': o.phase = 1; break;
		case 'F': o.flat = 1; break;
		case 'S': o.sparse = 1; break;
		case 'H': o.sparse_hot_mb = arg_int(n, optarg, 1, 1L << 30); break;
		case 'n': o.procs = arg_int(n, optarg, 1, MAX_PROCS); break;
		case 'b': o.balloon_leave_mb = arg_int(n, optarg, -1, big); break;
		case 'L': o.balloon_lock = 1; break;
		case 't': o.secs = arg_num(n, optarg, 0.1, 1e6); break;
		case 'r': o.seed = arg_int(n, optarg, 0, big); break;
		case 'B': o.batch = arg_int(n, optarg, 1, 1L << 24); break;
		case '1': o.slow_node = arg_int(n, optarg, 0, MAX_NODE); break;
		case '0': o.fast_node = arg_int(n, optarg, 0, MAX_NODE); break;
		case 'i': o.sample_ms = arg_int(n, optarg, 10, 1000000); break;
		case 'v': o.verbose = 1; break;
		case 'g': o.go_file = optarg; break;
		case 'M': o.hot_mb = arg_int(n, optarg, 1, 1L << 30); break;
		case 'j': o.threads = arg_int(n, optarg, 0, MAX_THREADS); break;
		case 'w': o.store_pct = arg_int(n, optarg, -1, 100); break;
		case 'p': o.populate = 1; break;
		case 'f': o.file = optarg; break;
		case 'W': o.file_rw = 1; break;
		case 'x': o.move_to_slow = 1; break;
		case 'K': o.split_kb = arg_int(n, optarg, 4, 1L << 20); break;
		default: usage();
		}
	}
	if (optind < argc) {
		fprintf(stderr, "workload: unexpected argument '%s'\n", argv[optind]);
		usage();
	}
	if (o.procs < 1 || o.procs > MAX_PROCS || !o.size_mb || !o.batch || o.secs <= 0)
		usage();
	if (o.split_kb && ((o.split_kb << 10) % PAGE_SZ || o.populate || o.file)) {
		fprintf(stderr, "workload: --split-kb takes a multiple of %lu, without --populate "
			"or --file\n", (unsigned long)PAGE_SZ >> 10);
		usage();
	}
	if (o.slow_node == o.fast_node) {
		fprintf(stderr, "workload: --slow-node and --fast-node must differ\n");
		usage();
	}
	if (o.populate + !!o.file + o.move_to_slow > 1 ||
	    ((o.populate || o.file || o.move_to_slow) && o.sparse)) {
		fprintf(stderr, "workload: --populate, --file, --move-to-slow and --sparse "
			"exclude each other\n");
		usage();
	}
	if (o.file && (o.procs != 1 || o.thp || o.balloon_leave_mb >= 0)) {
		fprintf(stderr, "workload: --file takes one worker process, no --thp, no balloon\n");
		usage();
	}
	if (o.file && !o.file_rw && o.store_pct != 0) {
		fprintf(stderr, "workload: a read-only file mapping takes loads only (--store-pct 0)\n");
		usage();
	}
	if (o.populate && o.thp) {
		fprintf(stderr, "workload: --populate maps without MADV_HUGEPAGE (no --thp)\n");
		usage();
	}
	if (o.threads == 0) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		o.threads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : ncpu;
	}
	if (o.hot_mb && !o.sparse)
		o.hot_pct = 100.0 * o.hot_mb / o.size_mb;
}

/*
 * --split-kb: every other @chunk bytes of the region also executable, so
 * that the region is one VMA per @chunk (neighbours with other flags do
 * not merge): many mappings share each PTE table, as in a process with
 * many small mappings.  The accesses are the same.
 */
static void split_region(char *base, unsigned long len, unsigned long chunk)
{
	for (unsigned long off = chunk; off < len; off += 2 * chunk) {
		unsigned long n = len - off < chunk ? len - off : chunk;

		if (mprotect(base + off, n, PROT_READ | PROT_WRITE | PROT_EXEC))
			die("mprotect %s", "--split-kb");
	}
}

/*
 * The region, 2 MB aligned, cut into o.procs slices of equal 2 MB-multiple
 * size, and the counters shared with the workers.  Returns the pages of a
 * slice.
 */
static unsigned long map_region(void)
{
	unsigned long map_pages, slice;
	char *raw;

	slice = (o.size_mb << 20) / o.procs / PMD_SZ * PAGES_PER_PMD;
	if (!slice)
		slice = PAGES_PER_PMD;
	map_pages = slice * o.procs;
	if (map_pages > (unsigned long)TRACE_PAGE + 1) {
		fprintf(stderr, "workload: --size-mb too large\n");
		usage();
	}
	raw = mmap(NULL, map_pages * PAGE_SZ + PMD_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap %s", "region");
	region = (char *)(((uintptr_t)raw + PMD_SZ - 1) & ~(PMD_SZ - 1));
	region_pages = map_pages;
	if (o.split_kb)
		split_region(region, map_pages * PAGE_SZ, o.split_kb << 10);
	cnt = mmap(NULL, map_pages * sizeof(uint32_t) + sizeof(struct wres) * MAX_PROCS,
		   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED)
		die("mmap %s", "counters");
	memset(cnt, 0, map_pages * sizeof(uint32_t));
	wres = (struct wres *)(cnt + map_pages);
	memset(wres, 0, sizeof(struct wres) * MAX_PROCS);

	return slice;
}

/* Each worker's slice, hot and cold sets and placement samples; CFG line. */
static void plan_workers(unsigned long slice, unsigned long *nhot_tot,
			 unsigned long *ncold_tot)
{
	for (int i = 0; i < o.procs; i++) {
		struct worker *w = &W[i];

		w->first_page = i * slice;
		w->npages = slice;
		build_worker(w);
		sample_list(w, w->hotA, w->nhotA, HOT_SAMPLE_CAP, &w->hs_addr, &w->hs_idx,
			    &w->nhs, &w->hs_scale);
		if (w->nhotB)
			sample_list(w, w->hotB, w->nhotB, HOT_SAMPLE_CAP, &w->bs_addr,
				    &w->bs_idx, &w->nbs, &w->bs_scale);
		sample_list(w, w->cold, w->ncold, COLD_SAMPLE_CAP, &w->cs_addr, &w->cs_idx,
			    &w->ncs, &w->cs_scale);
		w->status = xcalloc(4096, sizeof(int));
		w->prev_cnt = xcalloc(w->npages, sizeof(uint32_t));
		*nhot_tot += w->nhotA;
		*ncold_tot += w->ncold;
	}
	printf("CFG mode=%s size_mb=%lu procs=%d hot_pages=%lu cold_pages=%lu thp=%d zipf=%.2f "
	       "phase=%d flat=%d sparse=%d hot_per_2m=%u hot_chunk_kb=%lu secs=%.1f seed=%lu "
	       "batch=%u slow_node=%d fast_node=%d threads=%d store_pct=%d populate=%d "
	       "file=%s file_rw=%d move_to_slow=%d\n",
	       o.mode, o.size_mb, o.procs, *nhot_tot, *ncold_tot, o.thp, o.zipf_s, o.phase,
	       o.flat, o.sparse, o.hot_per_2m, o.hot_chunk_kb, o.secs, o.seed, o.batch,
	       o.slow_node, o.fast_node, o.threads, o.store_pct, o.populate,
	       o.file ? o.file : "-", o.file_rw, o.move_to_slow);

}

/*
 * Fork the workers and wait until each has set its slice up.  Returns 0,
 * or 2 when one died on the way (all are killed then, the balloon too).
 */
static int start_workers(int go[2], int rd[2], int rel[2], pid_t balloon)
{
	if (pipe(go) || pipe(rd) || pipe(rel))
		die("pipe %s", "");
	for (int i = 0; i < o.procs; i++) {
		pid_t p = fork();

		if (p < 0)
			die("fork %s", "");
		if (p == 0) {
			close(go[1]);
			close(rd[0]);
			close(rel[1]);
			run_worker(i, go[0], rd[1], rel[0], o.secs);
		}
		W[i].pid = p;
	}
	close(go[0]);
	close(rd[1]);
	close(rel[0]);
	for (int i = 0; i < o.procs; i++) {
		char ch;

		if (read(rd[0], &ch, 1) != 1) {
			fprintf(stderr, "workload: a worker died during setup\n");
			for (int j = 0; j < o.procs; j++)
				kill(W[j].pid, SIGKILL);
			if (balloon)
				kill(balloon, SIGKILL);
			return 2;
		}
	}
	return 0;
}

/* Where the sampled pages are right after setup: all on the slow node. */
static void print_setup(double setup_s)
{
	struct frac h = { 0 }, cf = { 0 };

	for (int i = 0; i < o.procs; i++) {
		query(&W[i], W[i].hs_addr, W[i].nhs, &h, W[i].hs_idx, 0, NULL, NULL);
		query(&W[i], W[i].cs_addr, W[i].ncs, &cf, W[i].cs_idx, 0, NULL, NULL);
	}
	printf("SETUP secs=%.2f hot_on0=%.4f cold_on0=%.4f hot_mapped=%lu cold_mapped=%lu "
	       "thp_mb=%.0f\n", setup_s, fr(h), fr(cf), h.tot, cf.tot, workers_thp_mb());
}

/* With --go-file, let the driver switch the policy on between setup and run. */
static void await_go(void)
{
	char rp[4096];
	int fd;
	double give_up = now_s() + 600;

	if (!o.go_file)
		return;
	snprintf(rp, sizeof(rp), "%s.ready", o.go_file);
	fd = open(rp, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	while (access(o.go_file, F_OK) && now_s() < give_up && !got_term)
		usleep(10000);
}

/* What the sampler saw over the run. */
struct run_result {
	double acc_all, acc0_all, hot_final, cold_final, t50, t90;
};

/*
 * Sample the placement every o.sample_ms until every worker is done: a T
 * line per sample, t50/t90 of the hot set (of the new one after a phase
 * change, measured from the change).
 */
static void sample_loop(double t_start, struct run_result *res)
{
	double next = t_start, acc_all = 0, acc0_all = 0, hot_final = 0, cold_final = 0;
	double t50 = -1, t90 = -1, mid = t_start + o.secs / 2;
	uint64_t prev_ops = 0;
	int phase_printed = 0, alive = o.procs;
	double last_t = -1e9;

	while (alive > 0) {
		struct frac hA = { 0 }, hB = { 0 }, cf = { 0 };
		double a0 = 0, a = 0, t, tq, qms, hot;
		uint64_t ops = 0;
		int st;

		alive = 0;
		for (int i = 0; i < o.procs; i++)
			if (wres[i].ready != 2 && waitpid(W[i].pid, &st, WNOHANG) == 0)
				alive++;
		t = now_s();
		if (t < next && alive) {
			usleep((useconds_t)((next - t) * 1e6 > 20000 ? 20000 : (next - t) * 1e6));
			continue;
		}
		if (!alive && t - last_t < o.sample_ms / 2000.0)
			break;	/* final sample would duplicate the last one */
		last_t = t;
		/* a query slower than the period skips samples, no burst */
		do
			next += o.sample_ms / 1000.0;
		while (next <= t);
		for (int i = 0; i < o.procs; i++) {
			struct worker *w = &W[i];

			query(w, w->hs_addr, w->nhs, &hA, w->hs_idx, w->hs_scale, &a0, &a);
			if (w->nbs)
				query(w, w->bs_addr, w->nbs, &hB, w->bs_idx, w->bs_scale, &a0, &a);
			query(w, w->cs_addr, w->ncs, &cf, w->cs_idx, w->cs_scale, &a0, &a);
			ops += wres[i].ops;
		}
		/*
		 * The placement was read over [t, tq]: stamp the sample
		 * with the middle of that window, not its start.
		 */
		tq = now_s();
		qms = (tq - t) * 1e3;
		t = (t + tq) / 2;
		if (o.phase && !phase_printed && t >= mid) {
			printf("PHASE t=%.2f\n", mid - t_start);
			phase_printed = 1;
		}
		hot = (o.phase && t >= mid) ? fr(hB) : fr(hA);
		acc_all += a;
		acc0_all += a0;
		/* acc_on0=-1: no access counted in the interval */
		printf("T %.3f hot_on0=%.4f cold_on0=%.4f acc_on0=%.4f", t - t_start, hot,
		       fr(cf), a > 0 ? a0 / a : -1.0);
		if (o.phase)
			printf(" hotA_on0=%.4f hotB_on0=%.4f", fr(hA), fr(hB));
		printf(" ops=%llu q_ms=%.1f\n", (unsigned long long)(ops - prev_ops), qms);
		prev_ops = ops;
		if (!o.phase || t >= mid) {
			double base = o.phase ? mid : t_start;

			if (t50 < 0 && hot >= 0.5)
				t50 = t - base;
			if (t90 < 0 && hot >= 0.9)
				t90 = t - base;
		}
		hot_final = hot;
		cold_final = fr(cf);
		if (got_term)
			for (int i = 0; i < o.procs; i++)
				kill(W[i].pid, SIGTERM);
	}
	res->acc_all = acc_all;
	res->acc0_all = acc0_all;
	res->hot_final = hot_final;
	res->cold_final = cold_final;
	res->t50 = t50;
	res->t90 = t90;
}

/*
 * Reap the workers, print a W line for each and the RESULT line.  Returns
 * the exit status: 1 when a worker failed.
 */
static int reap_and_report(double t_start, double setup_s, const struct run_result *res,
			   double thp_end, pid_t balloon, long balloon_mb,
			   unsigned long nhot_tot, unsigned long ncold_tot)
{
	double p50 = 0, p90 = 0, p99 = 0, mx = 0, wut = 0, wst = 0;
	uint64_t nb = 0, tops = 0;
	int bad = 0;

	for (int i = 0; i < o.procs; i++) {
		int st = 0;
		struct rusage ru;

		if (wait4(W[i].pid, &st, 0, &ru) < 0 && errno != ECHILD)
			bad++;
		if (wres[i].ready != 2)
			bad++;
		printf("W %d nbatch=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f "
		       "utime=%.2f stime=%.2f ops=%llu\n", i,
		       (unsigned long long)wres[i].nbatch, wres[i].p50 / 1e3,
		       wres[i].p90 / 1e3, wres[i].p99 / 1e3, wres[i].max / 1e3,
		       wres[i].utime, wres[i].stime, (unsigned long long)wres[i].ops);
		p50 += wres[i].p50 / 1e3 / o.procs;
		p90 += wres[i].p90 / 1e3 / o.procs;
		if (wres[i].p99 / 1e3 > p99)
			p99 = wres[i].p99 / 1e3;
		if (wres[i].max / 1e3 > mx)
			mx = wres[i].max / 1e3;
		wut += wres[i].utime;
		wst += wres[i].stime;
		nb += wres[i].nbatch;
		tops += wres[i].ops;
	}
	if (balloon) {
		kill(balloon, SIGKILL);
		waitpid(balloon, NULL, 0);
	}
	struct rusage self;

	getrusage(RUSAGE_SELF, &self);
	printf("RESULT mode=%s secs=%.2f setup_s=%.2f hot_final=%.4f cold_final=%.4f "
	       "acc_on0=%.4f t50=%.3f t90=%.3f sample_ms=%u p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "max_us=%.1f nbatch=%llu ops=%llu work_utime=%.2f work_stime=%.2f "
	       "sampler_stime=%.2f balloon_mb=%ld hot_pages=%lu cold_pages=%lu procs=%d "
	       "threads=%d thp_mb_end=%.0f failed=%d\n",
	       o.mode, now_s() - t_start, setup_s, res->hot_final, res->cold_final,
	       res->acc_all > 0 ? res->acc0_all / res->acc_all : 0.0, res->t50, res->t90, o.sample_ms, p50, p90, p99, mx,
	       (unsigned long long)nb, (unsigned long long)tops, wut, wst,
	       self.ru_stime.tv_sec + self.ru_stime.tv_usec * 1e-6, balloon_mb,
	       nhot_tot, ncold_tot, o.procs, o.threads, thp_end, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long slice, nhot_tot = 0, ncold_tot = 0;
	int go[2], rd[2], rel[2], rc;
	struct run_result res;
	double t0, setup_s, t_start, thp_end;
	long balloon_mb = 0;
	pid_t balloon = 0;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = now_s();
	rnd_seed(o.seed);
	slice = map_region();
	plan_workers(slice, &nhot_tot, &ncold_tot);

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (o.balloon_leave_mb >= 0) {
		balloon = start_balloon(&balloon_mb);
		printf("BALLOON mb=%ld node%d_free_mb_after=%ld\n", balloon_mb, o.fast_node,
		       node_free_mb(o.fast_node));
	}
	rc = start_workers(go, rd, rel, balloon);
	if (rc)
		return rc;
	setup_s = now_s() - t0;
	print_setup(setup_s);
	await_go();
	close(go[1]);	/* go */
	t_start = now_s();

	sample_loop(t_start, &res);
	thp_end = workers_thp_mb();
	close(rel[1]);	/* release the workers */
	return reap_and_report(t_start, setup_s, &res, thp_end, balloon, balloon_mb,
			       nhot_tot, ncold_tot);
}
