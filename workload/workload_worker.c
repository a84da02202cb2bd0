// SPDX-License-Identifier: GPL-2.0
/*
 * workload/workload_worker.c - one worker process: its slice of the region,
 * its hot and cold sets, and the threads that access them.
 */
#include "workload.h"

volatile sig_atomic_t got_term;

void on_term(int sig) { (void)sig; got_term = 1; }

/* choose k distinct items from [0,n) - partial Fisher-Yates on a temp array */
static uint32_t *choose(unsigned long n, unsigned long k)
{
	uint32_t *a = xcalloc(n, sizeof(*a)), *r;

	for (unsigned long i = 0; i < n; i++)
		a[i] = i;
	for (unsigned long i = 0; i < k; i++) {
		unsigned long j = i + rnd_below(n - i);
		uint32_t t = a[i]; a[i] = a[j]; a[j] = t;
	}
	r = xcalloc(k ? k : 1, sizeof(*r));
	memcpy(r, a, k * sizeof(*r));
	free(a);
	return r;
}

/* hot set made of random chunks; returns 2*nchunk chunks when want_b */
static void pick_chunks(struct worker *w, unsigned long hot_pages, int want_b)
{
	unsigned long cp = o.hot_chunk_kb * 1024 / PAGE_SZ, nchunks, nsel;
	uint32_t *sel;

	if (cp < 1)
		cp = 1;
	nchunks = w->npages / cp;
	nsel = (hot_pages + cp - 1) / cp;
	if (nsel < 1)
		nsel = 1;
	if (nsel * (want_b ? 2 : 1) > nchunks)
		nsel = nchunks / (want_b ? 2 : 1);
	sel = choose(nchunks, nsel * (want_b ? 2 : 1));
	/* sort each half so the hot list is address-ordered */
	qsort(sel, nsel, sizeof(*sel), cmp_u32);
	if (want_b)
		qsort(sel + nsel, nsel, sizeof(*sel), cmp_u32);
	w->hotA = xcalloc(nsel * cp, sizeof(uint32_t));
	w->nhotA = 0;
	for (unsigned long i = 0; i < nsel; i++)
		for (unsigned long j = 0; j < cp; j++)
			w->hotA[w->nhotA++] = sel[i] * cp + j;
	if (want_b) {
		w->hotB = xcalloc(nsel * cp, sizeof(uint32_t));
		w->nhotB = 0;
		for (unsigned long i = 0; i < nsel; i++)
			for (unsigned long j = 0; j < cp; j++)
				w->hotB[w->nhotB++] = sel[nsel + i] * cp + j;
	}
	free(sel);
}

void build_worker(struct worker *w)
{
	unsigned long hot_pages;
	unsigned char *ishot;

	if (o.sparse) {
		hot_pages = o.sparse_hot_mb * 256 / o.procs;
	} else {
		hot_pages = (unsigned long)(w->npages * o.hot_pct / 100.0);
	}
	if (hot_pages < 1)
		hot_pages = 1;

	if (o.flat) {
		/* every page is equally hot: "hot" = all pages */
		w->hotA = xcalloc(w->npages, sizeof(uint32_t));
		for (unsigned long i = 0; i < w->npages; i++)
			w->hotA[i] = i;
		w->nhotA = w->npages;
	} else if (o.zipf_s > 0) {
		double sum = 0;

		w->rank2page = choose(w->npages, w->npages);
		w->cdf = xcalloc(w->npages, sizeof(double));
		for (unsigned long r = 0; r < w->npages; r++) {
			sum += 1.0 / pow((double)(r + 1), o.zipf_s);
			w->cdf[r] = sum;
		}
		for (unsigned long r = 0; r < w->npages; r++)
			w->cdf[r] /= sum;
		w->hotA = xcalloc(hot_pages, sizeof(uint32_t));
		for (unsigned long r = 0; r < hot_pages; r++)
			w->hotA[r] = w->rank2page[r];
		w->nhotA = hot_pages;
		qsort(w->hotA, w->nhotA, sizeof(uint32_t), cmp_u32);
	} else if (o.hot_per_2m) {
		unsigned long nreg = w->npages / PAGES_PER_PMD, k = o.hot_per_2m;

		if (k > PAGES_PER_PMD)
			k = PAGES_PER_PMD;
		w->hotA = xcalloc(nreg * k + 1, sizeof(uint32_t));
		for (unsigned long r = 0; r < nreg; r++) {
			uint32_t *s = choose(PAGES_PER_PMD, k);

			qsort(s, k, sizeof(*s), cmp_u32);
			for (unsigned long j = 0; j < k; j++)
				w->hotA[w->nhotA++] = r * PAGES_PER_PMD + s[j];
			free(s);
		}
	} else {
		pick_chunks(w, hot_pages, o.phase);
	}

	ishot = xcalloc(w->npages, 1);
	for (unsigned long i = 0; i < w->nhotA; i++)
		ishot[w->hotA[i]] = 1;
	for (unsigned long i = 0; i < w->nhotB; i++)
		ishot[w->hotB[i]] = 2;

	if (o.sparse) {
		/* touch: hot pages + first page of every 2 MB region */
		unsigned long nreg = w->npages / PAGES_PER_PMD;

		w->touch = xcalloc(w->nhotA + nreg + 1, sizeof(uint32_t));
		w->cold = xcalloc(nreg + 1, sizeof(uint32_t));
		for (unsigned long i = 0; i < w->nhotA; i++)
			w->touch[w->ntouch++] = w->hotA[i];
		for (unsigned long r = 0; r < nreg; r++) {
			uint32_t p = r * PAGES_PER_PMD + (r * 7) % PAGES_PER_PMD;

			if (ishot[p])
				continue;
			w->touch[w->ntouch++] = p;
			w->cold[w->ncold++] = p;
		}
	} else if (!o.flat) {
		w->cold = xcalloc(w->npages, sizeof(uint32_t));
		for (unsigned long i = 0; i < w->npages; i++)
			if (!ishot[i])
				w->cold[w->ncold++] = i;
	}
	free(ishot);
}

/* strided sample of a page list -> addresses */
void sample_list(struct worker *w, const uint32_t *list, unsigned long n,
			unsigned long cap, void ***addr, uint32_t **idx,
			unsigned long *ns, double *scale)
{
	unsigned long m = n < cap ? n : cap;

	*addr = xcalloc(m + 1, sizeof(void *));
	*idx = xcalloc(m + 1, sizeof(uint32_t));
	for (unsigned long i = 0; i < m; i++) {
		unsigned long k = (unsigned long)((double)i * n / m);
		unsigned long pg = w->first_page + list[k];

		(*idx)[i] = pg;
		(*addr)[i] = region + pg * PAGE_SZ;
	}
	*ns = m;
	*scale = m ? (double)n / m : 0;
}

/* ---------------------------------------------------------------- worker */
static void touch_pages(struct worker *w, char *base)
{
	if (w->touch) {
		for (unsigned long i = 0; i < w->ntouch; i++)
			base[w->touch[i] * PAGE_SZ] = 1;
	} else {
		for (unsigned long i = 0; i < w->npages; i++)
			base[i * PAGE_SZ] = 1;
	}
}

/* mbind(MPOL_BIND node), fault the slice in, back to the default policy */
static void fault_in(struct worker *w, char *base, unsigned long len, int node)
{
	if (o.thp && madvise(base, len, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE) %s", "failed");
	if (sys_mbind(base, len, MPOL_BIND_, node))
		die("mbind(MPOL_BIND, node %s) failed", o.slow_node == node ? "slow" : "fast");
	touch_pages(w, base);
	/* reset to the default policy: promotion must be allowed */
	if (sys_mbind(base, len, MPOL_DEFAULT_, 0))
		die("mbind(MPOL_DEFAULT) %s", "failed");
}

/*
 * Anonymous memory populated by mmap(MAP_POPULATE): only the task policy can
 * place it (the VMA does not exist before the call), so bind the task to the
 * slow node around the mmap and go back to the default policy afterwards.
 */
static void populate_anon(char *base, unsigned long len)
{
	if (sys_set_mempolicy(MPOL_BIND_, o.slow_node))
		die("set_mempolicy(MPOL_BIND) %s", "failed");
	if (mmap(base, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1, 0) == MAP_FAILED)
		die("mmap(MAP_POPULATE) %s", "failed");
	if (sys_set_mempolicy(MPOL_DEFAULT_, 0))
		die("set_mempolicy(MPOL_DEFAULT) %s", "failed");
}

/* Write len bytes of a pattern and fsync: clean page cache where it was written. */
static void fill_file(int fd, unsigned long len)
{
	static char buf[1 << 20];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 131 + 7);
	for (unsigned long off = 0; off < len; off += sizeof(buf)) {
		size_t n = len - off < sizeof(buf) ? len - off : sizeof(buf);

		if (pwrite(fd, buf, n, off) != (ssize_t)n)
			die("writing %s", o.file);
	}
	if (fsync(fd))
		die("fsync %s", o.file);
}

/*
 * MAP_SHARED mapping of o.file.  An existing file is used as it is (never
 * written with a read-only mapping); a missing one is created, unlinked at
 * once (nothing is left behind) and filled.  Page cache is allocated under
 * the task policy (tmpfs follows the mapping's policy, hence the mbind too),
 * so the file is written or read in under a slow-node binding; cached pages
 * of an existing file are dropped first so that the reads allocate anew.
 */
static void map_file(char *base, unsigned long len)
{
	int prot = PROT_READ | (o.file_rw ? PROT_WRITE : 0), created = 0, fd;
	volatile char sink = 0;
	struct stat st;

	if (sys_set_mempolicy(MPOL_BIND_, o.slow_node))
		die("set_mempolicy(MPOL_BIND) %s", "failed");
	fd = open(o.file, o.file_rw ? O_RDWR : O_RDONLY);
	if (fd < 0 && errno == ENOENT) {
		fd = open(o.file, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0) {
			created = 1;
			unlink(o.file);
			fill_file(fd, len);
		}
	}
	if (fd < 0)
		die("open %s", o.file);
	if (!created) {
		if (fstat(fd, &st) || (unsigned long)st.st_size < len) {
			errno = EINVAL;
			die("%s is smaller than the region", o.file);
		}
		posix_fadvise(fd, 0, len, POSIX_FADV_DONTNEED);
	}
	if (mmap(base, len, prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		die("mmap(MAP_SHARED) %s", o.file);
	close(fd);
	if (sys_mbind(base, len, MPOL_BIND_, o.slow_node))
		die("mbind(MPOL_BIND) of the mapping of %s", o.file);
	for (unsigned long off = 0; off < len; off += PAGE_SZ)
		sink += base[off];
	(void)sink;
	if (sys_mbind(base, len, MPOL_DEFAULT_, 0) || sys_set_mempolicy(MPOL_DEFAULT_, 0))
		die("resetting the memory policy %s", "failed");
	printf("FILE path=%s created=%d prot=%s\n", o.file, created, o.file_rw ? "rw" : "r");
}

/*
 * Fault the slice in on the fast node (as THPs with --thp), then move it to
 * the slow node with move_pages(2), one 2 MB range per call.  The kernel
 * moves a THP whole when the slow node has a free huge page and splits it
 * otherwise.  The status move_pages() returns for the other pages of a THP
 * being moved is -EBUSY, so the MOVE line counts the placement afterwards.
 */
static void fault_and_move(struct worker *w, char *base, unsigned long len)
{
	static void *addr[PAGES_PER_PMD];
	static int nodes[PAGES_PER_PMD], status[PAGES_PER_PMD];
	unsigned long on_slow = 0, other = 0;
	double t0;

	fault_in(w, base, len, o.fast_node);
	t0 = now_s();
	for (int query = 0; query < 2; query++) {
		for (unsigned long off = 0; off < len; off += PMD_SZ) {
			unsigned long n = (len - off) / PAGE_SZ;

			if (n > PAGES_PER_PMD)
				n = PAGES_PER_PMD;
			for (unsigned long i = 0; i < n; i++) {
				addr[i] = base + off + i * PAGE_SZ;
				nodes[i] = o.slow_node;
			}
			if (!query) {
				if (sys_move_pages_to(n, addr, nodes, status) < 0)
					die("move_pages to the slow node %s", "failed");
				continue;
			}
			if (sys_move_pages(0, n, addr, status) < 0)
				die("move_pages (query) %s", "failed");
			for (unsigned long i = 0; i < n; i++) {
				if (status[i] == o.slow_node)
					on_slow++;
				else
					other++;
			}
		}
	}
	printf("MOVE pages=%lu on_slow=%lu elsewhere=%lu secs=%.2f\n", on_slow + other,
	       on_slow, other, now_s() - t0);
}

/* Place the worker's slice on the slow node: the one touch its cold pages get. */
static void place_slice(struct worker *w)
{
	char *base = region + w->first_page * PAGE_SZ;
	unsigned long len = w->npages * PAGE_SZ;

	if (o.file)
		map_file(base, len);
	else if (o.populate)
		populate_anon(base, len);
	else if (o.move_to_slow)
		fault_and_move(w, base, len);
	else
		fault_in(w, base, len, o.slow_node);
}

static uint32_t *make_trace(struct worker *w, const uint32_t *hot, unsigned long nhot)
{
	uint32_t *t = xcalloc(TRACE_LEN, sizeof(uint32_t));

	for (unsigned long i = 0; i < TRACE_LEN; i++) {
		if (w->cdf) {
			double u = (rnd() >> 11) * (1.0 / 9007199254740992.0);
			unsigned long lo = 0, hi = w->npages - 1;

			while (lo < hi) {
				unsigned long mid = (lo + hi) / 2;

				if (w->cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			t[i] = w->rank2page[lo];
		} else {
			t[i] = hot[rnd_below(nhot)];
		}
		if (o.store_pct > 0 && rnd_below(100) < (uint64_t)o.store_pct)
			t[i] |= TRACE_STORE;
	}
	return t;
}

/* One access thread of a worker. */
struct thr {
	struct worker *w;
	struct wres *r;
	uint32_t *tA, *tB;
	uint32_t *lat;
	unsigned long nlat;
	double t_start, secs;
	uint64_t sink;
	int failed;
};

/*
 * The access loop: batches of o.batch accesses along the trace, each batch
 * timed.  The per-page counters are shared by the threads of a worker and
 * updated without atomics: a lost increment only blurs the access weighting
 * of the placement samples a little.
 */
static void *access_loop(void *arg)
{
	struct thr *t = arg;
	struct worker *w = t->w;
	char *base = region + w->first_page * PAGE_SZ;
	uint32_t *mycnt = cnt + w->first_page, *cur = t->tA;
	double t_end = t->t_start + t->secs, t_mid = t->t_start + t->secs / 2;
	unsigned long cap = 1 << 20, pos = 0;
	uint64_t sink = 0;

	t->lat = malloc(cap * sizeof(uint32_t));
	if (!t->lat) {
		t->failed = 1;
		return NULL;
	}
	while (!got_term) {
		uint64_t t0 = now_ns(), t1;

		for (unsigned int b = 0; b < o.batch; b++) {
			uint32_t e = cur[pos], pg = e & TRACE_PAGE;
			volatile uint64_t *p = (volatile uint64_t *)
				(base + pg * PAGE_SZ + ((pos * 67) & 63) * 64);

			if (o.store_pct < 0)
				*p += 1;
			else if (e & TRACE_STORE)
				*p = pos;
			else
				sink += *p;
			mycnt[pg]++;
			pos = (pos + 1) & (TRACE_LEN - 1);
		}
		t1 = now_ns();
		if (t->nlat == cap) {
			uint32_t *l = realloc(t->lat, 2 * cap * sizeof(uint32_t));

			if (!l) {
				t->failed = 1;
				break;
			}
			t->lat = l;
			cap *= 2;
		}
		t->lat[t->nlat++] = (t1 - t0) > 0xffffffffull ? 0xffffffffu : (uint32_t)(t1 - t0);
		__atomic_fetch_add(&t->r->ops, o.batch, __ATOMIC_RELAXED);
		double tn = t1 * 1e-9;

		if (tn >= t_end)
			break;
		if (t->tB && cur == t->tA && tn >= t_mid)
			cur = t->tB;
	}
	t->sink = sink;
	return NULL;
}

void run_worker(int id, int go_fd, int ready_fd, int rel_fd, double secs)
{
	struct worker *w = &W[id];
	struct wres *r = &wres[id];
	struct thr *th = xcalloc(o.threads, sizeof(*th));
	pthread_t *tid = xcalloc(o.threads, sizeof(*tid));
	unsigned long nlat = 0;
	uint32_t *lat;
	struct rusage ru, ru0;
	double t_start;
	char c = 'r';
	int failed = 0;

	for (int k = 0; k < o.threads; k++) {
		/* thread 0 gets the traces a single-threaded worker always had */
		rnd_seed(o.seed * 1000 + id + 1 + 7919ul * k);
		th[k].w = w;
		th[k].r = r;
		th[k].secs = secs;
		th[k].tA = make_trace(w, w->hotA, w->nhotA);
		if (o.phase)
			th[k].tB = make_trace(w, w->hotB, w->nhotB);
	}
	place_slice(w);

	if (write(ready_fd, &c, 1) != 1)
		_exit(3);
	/* wait for "go": the sampler closes the pipe */
	while (read(go_fd, &c, 1) > 0)
		;
	t_start = now_s();
	getrusage(RUSAGE_SELF, &ru0);	/* setup (fault-in) is not counted */
	for (int k = 0; k < o.threads; k++) {
		th[k].t_start = t_start;
		if (k && pthread_create(&tid[k], NULL, access_loop, &th[k]))
			_exit(4);
	}
	access_loop(&th[0]);
	for (int k = 0; k < o.threads; k++) {
		if (k)
			pthread_join(tid[k], NULL);
		nlat += th[k].nlat;
		failed |= th[k].failed;
	}
	if (failed)
		_exit(4);
	lat = xcalloc(nlat + 1, sizeof(uint32_t));
	nlat = 0;
	for (int k = 0; k < o.threads; k++) {
		memcpy(lat + nlat, th[k].lat, th[k].nlat * sizeof(uint32_t));
		nlat += th[k].nlat;
	}
	qsort(lat, nlat, sizeof(uint32_t), cmp_u32);
	r->nbatch = nlat;
	if (nlat) {
		r->p50 = lat[(nlat - 1) * 50 / 100];
		r->p90 = lat[(nlat - 1) * 90 / 100];
		r->p99 = lat[(nlat - 1) * 99 / 100];
		r->max = lat[nlat - 1];
	}
	getrusage(RUSAGE_SELF, &ru);
	r->utime = (ru.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		   (ru.ru_utime.tv_usec - ru0.ru_utime.tv_usec) * 1e-6;
	r->stime = (ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		   (ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e-6;
	r->ready = 2;
	/* stay alive (mapped) until the sampler took its final sample */
	while (read(rel_fd, &c, 1) > 0)
		;
	_exit(0);
}
