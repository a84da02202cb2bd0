// SPDX-License-Identifier: GPL-2.0
/* The helpers declared in kmmscand_promote.h. */

#include "kmmscand_promote.h"

size_t thp_size(void)
{
	static size_t size;

	if (!size)
		size = read_pmd_pagesize() ?: 2 * MB;
	return size;
}

uint64_t pattern(const struct region *r, unsigned long i, unsigned long w)
{
	return r->seed ^ (i * 0x9e3779b97f4a7c15ULL) ^ (w * 0xc2b2ae3d27d4eb4fULL);
}

int region_fill_node1(struct region *r, int flags)
{
	unsigned long words = psize() / sizeof(uint64_t), i, w;
	bool thp = flags & REGION_THP;
	void *first = r->base;
	int node = 1, status;
	struct node_count nc;

	if (madvise(r->base, r->len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	    thp)
		return -errno;
	if (bind_to_node(r->base, r->len, 1))
		return -errno;
	for (i = 0; i < r->npages; i++) {
		uint64_t *p = (uint64_t *)(r->base + i * psize());

		p[0] = 0;
		for (w = 1; w < words; w++)
			p[w] = pattern(r, i, w);
	}
	if (!(flags & REGION_BOUND) && unbind(r->base, r->len))
		return -errno;
	/*
	 * The last pages faulted in wait in this CPU's LRU add batch, off
	 * the LRU, until this CPU drains it: kmmscand's migrator skips a
	 * folio that is not on the LRU, so a hot page among them would not
	 * move while this CPU runs only the test's loops.  move_pages() with
	 * a target node drains every CPU's batches first (lru_cache_disable()
	 * in do_pages_move()); the page asked for is on node 1 already.
	 */
	if (sys_move_pages(0, 1, &first, &node, &status, MPOL_MF_MOVE))
		return -errno;
	if (where_pages(0, r->base, r->npages, &nc))
		return -errno;
	if (nc.n[1] != r->npages)
		return -EXDEV;
	return 0;
}

int region_on_node1(struct region *r, size_t len, int flags, uint64_t seed)
{
	int type = flags & REGION_SHARED ? MAP_SHARED : MAP_PRIVATE;
	uintptr_t start;

	memset(r, 0, sizeof(*r));
	r->map_len = len + (flags & REGION_THP ? thp_size() : 0);
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		      type | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return -errno;
	}
	start = (uintptr_t)r->map;
	if (flags & REGION_THP)
		start = (start + thp_size() - 1) & ~(thp_size() - 1);
	r->base = (char *)start;
	r->len = len;
	r->npages = len / psize();
	r->seed = seed;
	if ((flags & REGION_DONTFORK) &&
	    madvise(r->map, r->map_len, MADV_DONTFORK))
		return -errno;
	return region_fill_node1(r, flags);
}

void region_unmap(struct region *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

unsigned long region_verify(const struct region *r,
			    unsigned long first, unsigned long n,
			    uint64_t count)
{
	unsigned long words = psize() / sizeof(uint64_t), i, w, bad = 0;

	for (i = first; i < first + n; i++) {
		const uint64_t *p = (const uint64_t *)(r->base + i * psize());
		bool ok = p[0] == count;

		for (w = 1; ok && w < words; w++)
			ok = p[w] == pattern(r, i, w);
		if (!ok && !bad++)
			ksft_print_msg("page %lu corrupt: counter %llu want %llu, word %lu\n",
				       i, (unsigned long long)p[0],
				       (unsigned long long)count, w - 1);
	}
	return bad;
}

long long wait_on_node(pid_t pid, char *base, unsigned long n,
		       int node, unsigned long want,
		       long long deadline_ms, unsigned long *got)
{
	long long t0 = now_ms();
	struct node_count nc;

	*got = 0;
	for (;;) {
		if (where_pages(pid, base, n, &nc))
			return -1;
		*got = pct(nc.n[node], n);
		if (*got >= want)
			return now_ms() - t0;
		if (now_ms() - t0 >= deadline_ms)
			return -1;
		sleep_ms(POLL_MS);
	}
}

long long wait_promoted(const struct region *r,
			unsigned long first, unsigned long n,
			unsigned long want, long long deadline_ms,
			unsigned long *got)
{
	return wait_on_node(0, r->base + first * psize(), n, 0, want,
			    deadline_ms, got);
}

void *hot_loop(void *arg)
{
	struct hot_thread *h = arg;
	unsigned long i;
	int r;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		for (r = 0; r < h->nr; r++)
			for (i = 0; i < h->range[r].npages; i++)
				(*(uint64_t *)(h->range[r].base + i * psize()))++;
		/* every pass really stores to every page */
		asm volatile("" ::: "memory");
		__atomic_store_n(&h->passes, h->passes + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

void hot_add(struct hot_thread *h, char *base, unsigned long npages)
{
	h->range[h->nr].base = base;
	h->range[h->nr].npages = npages;
	h->nr++;
}

int hot_start(struct hot_thread *h)
{
	h->stop = 0;
	h->passes = 0;
	if (pthread_create(&h->tid, NULL, hot_loop, h))
		return -1;
	h->running = true;
	return 0;
}

unsigned long hot_stop(struct hot_thread *h)
{
	if (h->running) {
		__atomic_store_n(&h->stop, 1, __ATOMIC_RELEASE);
		pthread_join(h->tid, NULL);
		h->running = false;
	}
	return h->passes;
}

void hot_forever(char *base, unsigned long npages)
{
	unsigned long i;

	for (;;) {
		for (i = 0; i < npages; i++)
			(*(uint64_t *)(base + i * psize()))++;
		asm volatile("" ::: "memory");
	}
}

pid_t hot_child(char *base, size_t len, bool opt_out)
{
	unsigned char err = 0;
	unsigned long i;
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (!pid) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (opt_out && prctl(PR_SET_KMMSCAND, 0, 0, 0, 0))
			err = errno;
		if (!err && !base) {
			base = mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (base == MAP_FAILED)
				err = errno;
		}
		/* Base pages; a kernel without THP has them anyway. */
		madvise(base, len, MADV_NOHUGEPAGE);
		if (!err && bind_to_node(base, len, 1))
			err = errno ?: EINVAL;
		for (i = 0; !err && i < len / psize(); i++)
			base[i * psize()] = 1;
		if (!err && unbind(base, len))
			err = errno;
		if (write(fds[1], &err, 1) != 1 || err)
			_exit(1);
		close(fds[1]);
		hot_forever(base, len / psize());
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &err, 1) != 1)
		err = pid < 0 ? errno : EPIPE;
	close(fds[0]);
	if (err && pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return err ? -err : pid;
}

long anon_huge_kb(void *addr)
{
	char line[256];
	bool in = false;
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start <= (unsigned long)addr &&
			     (unsigned long)addr < end;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

bool thp_usable(char *why, size_t len)
{
	char buf[128];

	if (kmm_read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf,
			  sizeof(buf)) <= 0) {
		snprintf(why, len, "no THP (CONFIG_TRANSPARENT_HUGEPAGE=n)");
		return false;
	}
	if (strstr(buf, "[never]")) {
		snprintf(why, len, "THP disabled: enabled is [never]");
		return false;
	}
	return true;
}

int kmm_env_save(struct kmm_env *env, const char *path)
{
	int i, ret;

	for (i = 0; i < env->nr_files; i++)
		if (!strcmp(env->file[i].path, path))
			return 0;
	if (i == KMM_ENV_FILES)
		return -ENOSPC;
	ret = kmm_read_file(path, env->file[i].val, sizeof(env->file[i].val));
	if (ret <= 0)
		return ret ?: -ENODATA;
	env->file[i].path = path;
	env->nr_files++;
	return 0;
}

int kmm_env_set(struct kmm_env *env, const char *path, const char *str)
{
	int ret = kmm_env_save(env, path);

	return ret ?: write_str(path, str);
}

int kmm_env_set_long(struct kmm_env *env, const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", val);
	return kmm_env_set(env, path, buf);
}

int kmm_env_restore(struct kmm_env *env)
{
	int i, ret, bad = 0;

	for (i = 0; i < (int)ARRAY_SIZE(env->kids); i++) {
		if (env->kids[i] > 0) {
			kill(env->kids[i], SIGKILL);
			waitpid(env->kids[i], NULL, 0);
		}
		env->kids[i] = 0;
	}
	for (i = env->nr_files - 1; i >= 0; i--) {
		ret = write_str(env->file[i].path, env->file[i].val);
		if (ret && ++bad)
			ksft_print_msg("restoring %s failed: %s\n",
				       env->file[i].path, strerror(-ret));
	}
	env->nr_files = 0;
	ret = knobs_restore(&env->knobs);
	if (ret && ++bad)
		ksft_print_msg("restoring the knobs failed: %s\n",
			       strerror(-ret));
	return bad;
}
