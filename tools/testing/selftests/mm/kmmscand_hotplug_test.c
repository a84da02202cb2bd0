// SPDX-License-Identifier: GPL-2.0
/*
 * Memory hot-remove tests for kmmscand: the slow tier is memory that can be
 * taken away (a CXL device), and a page that kmmscand queued for promotion
 * must not keep it from going.
 *
 * The memory is a hot-pluggable dimm of the slow node 1 that the kernel
 * onlined into ZONE_MOVABLE: every online ZONE_MOVABLE memory block of node
 * 1 is taken for part of it. Offlining a block migrates every page in it
 * elsewhere; it retries for as long as a page cannot be migrated, until a
 * signal arrives, so every write to a block's state file is made from a
 * child process with a deadline. A queued candidate that holds a folio
 * reference makes the migration of its page fail, and the offlining never
 * completes while the candidate waits.
 *
 * Needs: root, node 0 in a higher memory tier than node 1, ZONE_MOVABLE
 * memory blocks on node 1 (harness/vm.sh: DIMM1_MB and
 * memhp_default_state=online_movable), CONFIG_MEMORY_HOTREMOVE, a kernel
 * with CONFIG_KMMSCAND.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "kmmscand_util.h"

#define MB			(1024UL * 1024)
#define HPAGE			(2 * MB)
#define POLL_MS			200
#define DEADLINE_MS		60000
#define OFFLINE_DEADLINE_MS	60000	/* for all blocks of the dimm together */
#define OFFLINE_GRACE_MS	10000	/* beyond it, the writer is killed */
#define PERIOD_MIN_MS		100
#define PERIOD_MAX_MS		1000
#define MEMORY_SYSFS		"/sys/devices/system/memory/"
#define DEMOTION_SYSFS		"/sys/kernel/mm/numa/demotion_enabled"
#define BOOST_SYSCTL		"/proc/sys/vm/watermark_boost_factor"
#define SCALE_SYSCTL		"/proc/sys/vm/watermark_scale_factor"
/*
 * 10% of a zone between its watermarks (the default is 0.1%): with node 0
 * filled to its low watermark, promotion (which needs room above WMARK_HIGH)
 * is deferred, while the migration of an offlining, which may allocate
 * down to WMARK_MIN, still has about 100 MB of node 0 to go to.
 */
#define SCALE_FACTOR		1000
#define MAX_BLOCKS		64

static unsigned long page_size;

/* ---- the dimm: the ZONE_MOVABLE memory blocks of node 1 ------------------ */

/* Write @str to @path in one write(2). Returns 0 or -errno. */
static int write_str(const char *path, const char *str)
{
	ssize_t ret;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, str, strlen(str));
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : 0;
}

struct dimm {
	int block[MAX_BLOCKS];
	int nr;
	unsigned long block_pages;	/* pages per memory block */
};

static int block_attr(int block, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), MEMORY_SYSFS "memory%d/%s", block, attr);
	ret = read_file(path, buf, len);
	if (ret >= 0)
		buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

/* Write @state to the state file of memory block @block; 0 or -errno. */
static int block_set_state(int block, const char *state)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), MEMORY_SYSFS "memory%d/state", block);
	return write_str(path, state);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * Find the memory blocks of node 1 that are online in ZONE_MOVABLE. Returns
 * how many, or -errno; fills @why when there are none.
 */
static int dimm_find(struct dimm *d, char *why, size_t len)
{
	char buf[128], state[32];
	unsigned long long bytes;
	struct dirent *de;
	int block, others = 0;
	DIR *dir;

	memset(d, 0, sizeof(*d));
	if (read_file(MEMORY_SYSFS "block_size_bytes", buf, sizeof(buf)) <= 0) {
		snprintf(why, len, "no %sblock_size_bytes (CONFIG_MEMORY_HOTPLUG=n?)",
			 MEMORY_SYSFS);
		return -ENOENT;
	}
	bytes = strtoull(buf, NULL, 16);
	d->block_pages = bytes / page_size;
	if (!d->block_pages) {
		snprintf(why, len, "bad block_size_bytes '%s'", buf);
		return -EINVAL;
	}
	dir = opendir(NODE_SYSFS "node1");
	if (!dir) {
		snprintf(why, len, "%snode1: %s", NODE_SYSFS, strerror(errno));
		return -errno;
	}
	while ((de = readdir(dir))) {
		if (sscanf(de->d_name, "memory%d", &block) != 1)
			continue;
		if (block_attr(block, "state", state, sizeof(state)) <= 0 ||
		    block_attr(block, "valid_zones", buf, sizeof(buf)) <= 0)
			continue;
		/* An online block lists only the zone it is in. */
		if (strcmp(state, "online") || strcmp(buf, "Movable")) {
			others++;
			continue;
		}
		if (d->nr < MAX_BLOCKS)
			d->block[d->nr++] = block;
	}
	closedir(dir);
	qsort(d->block, d->nr, sizeof(d->block[0]), cmp_int);
	if (!d->nr)
		snprintf(why, len,
			 "no online ZONE_MOVABLE memory block on node 1 (%d others): boot with a dimm on node 1 and memhp_default_state=online_movable",
			 others);
	return d->nr;
}

static bool dimm_has_pfn(const struct dimm *d, unsigned long long pfn)
{
	long long block = pfn / d->block_pages;
	int i;

	for (i = 0; i < d->nr; i++)
		if (d->block[i] == block)
			return true;
	return false;
}

/*
 * How many of the @n pages at @base are present in a block of the dimm,
 * from /proc/self/pagemap (PFNs need CAP_SYS_ADMIN); *@lo and *@hi (0 on
 * entry) become the lowest and highest PFN. Returns -errno on failure,
 * -EPERM when the PFNs are hidden.
 */
static long pages_on_dimm(const struct dimm *d, const char *base,
			  unsigned long n, uint64_t *lo, uint64_t *hi)
{
	enum { CHUNK = 512 };
	uint64_t e[CHUNK];
	unsigned long i, j, c;
	long on = 0;
	off_t off;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return -errno;
	for (i = 0; i < n; i += c) {
		c = n - i < CHUNK ? n - i : CHUNK;
		off = ((uintptr_t)base / page_size + i) * sizeof(e[0]);
		if (pread(fd, e, c * sizeof(e[0]), off) != (ssize_t)(c * sizeof(e[0]))) {
			on = errno ? -errno : -EIO;
			break;
		}
		for (j = 0; j < c; j++) {
			uint64_t pfn = e[j] & ((1ULL << 55) - 1);

			if (!(e[j] >> 63))
				continue;	/* not present */
			if (!pfn) {
				on = -EPERM;
				break;
			}
			on += dimm_has_pfn(d, pfn);
			if (!*lo || pfn < *lo)
				*lo = pfn;
			if (pfn > *hi)
				*hi = pfn;
		}
		if (on < 0)
			break;
	}
	close(fd);
	return on;
}

/* ---- block state changes with a deadline --------------------------------- */

struct block_op {
	int block;
	int err;		/* 0 or the errno of the write */
	long long ms;		/* how long the write took */
};

static void on_alarm(int sig)
{
	(void)sig;		/* only interrupts the write */
}

/*
 * Write @state ("offline", "online_movable") to the state file of every
 * block of @d in turn, from a child process whose timer interrupts the
 * write that is still running @deadline_ms after the start: offlining
 * retries for as long as pages cannot be migrated, until a signal. The
 * child is killed if it has not finished OFFLINE_GRACE_MS after that.
 * Fills @ops[0 .. d->nr); returns how many blocks reported, or -errno.
 */
static int dimm_write_state(const struct dimm *d, const char *state,
			    long long deadline_ms, struct block_op *ops)
{
	long long t_end = now_ms() + deadline_ms + OFFLINE_GRACE_MS;
	int fd[2], n = 0, i, status;
	struct pollfd pfd;
	ssize_t got = 0;
	pid_t pid;

	if (pipe(fd))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct sigaction sa = { .sa_handler = on_alarm };  /* no SA_RESTART */
		long long end = now_ms() + deadline_ms;

		close(fd[0]);
		sigaction(SIGALRM, &sa, NULL);
		for (i = 0; i < d->nr; i++) {
			struct block_op op = { .block = d->block[i] };
			long long left = end - now_ms(), t0;
			struct itimerval it = {};

			t0 = now_ms();
			if (left <= 0) {
				op.err = ETIME;
			} else {
				it.it_value.tv_sec = left / 1000;
				it.it_value.tv_usec = (left % 1000) * 1000;
				setitimer(ITIMER_REAL, &it, NULL);
				op.err = -block_set_state(d->block[i], state);
				memset(&it, 0, sizeof(it));
				setitimer(ITIMER_REAL, &it, NULL);
			}
			op.ms = now_ms() - t0;
			if (write(fd[1], &op, sizeof(op)) != sizeof(op))
				_exit(1);
		}
		_exit(0);
	}
	close(fd[1]);
	pfd.fd = fd[0];
	pfd.events = POLLIN;
	while (n < d->nr) {
		long long left = t_end - now_ms();
		ssize_t r;

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			break;
		r = read(fd[0], (char *)ops + got, sizeof(*ops) * d->nr - got);
		if (r <= 0)
			break;
		got += r;
		n = got / sizeof(*ops);
	}
	close(fd[0]);
	if (n < d->nr)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return n;
}

/* ---- memory with a verifiable pattern ------------------------------------ */

struct region {
	char *base;
	size_t len;
	unsigned long npages;
	uint64_t seed;
};

/* Word @w (>= 1) of page @i; word 0 of every page is a touch counter. */
static inline uint64_t pattern(const struct region *r, unsigned long i,
			       unsigned long w)
{
	return r->seed ^ (i * 0x9e3779b97f4a7c15ULL) ^ (w * 0xc2b2ae3d27d4eb4fULL);
}

/*
 * Map @len bytes of private anonymous memory in base pages, fault it in on
 * node 1 with the pattern (node 1's ZONE_MOVABLE comes first for it: the
 * dimm), then drop the MPOL_BIND again so that placement, not policy, keeps
 * the pages there. MADV_DONTFORK: the children the tests fork (balloon,
 * state writer) must not share the pages, or the next write of the hot
 * thread would copy every page to a new place.
 */
static int region_on_node1(struct region *r, size_t len, uint64_t seed)
{
	unsigned long words = page_size / sizeof(uint64_t), i, w;
	struct node_count nc;

	memset(r, 0, sizeof(*r));
	r->base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->len = len;
	r->npages = len / page_size;
	r->seed = seed;
	if (madvise(r->base, len, MADV_NOHUGEPAGE) ||
	    madvise(r->base, len, MADV_DONTFORK) ||
	    bind_to_node(r->base, len, 1))
		return -errno;
	for (i = 0; i < r->npages; i++) {
		uint64_t *p = (uint64_t *)(r->base + i * page_size);

		p[0] = 0;
		for (w = 1; w < words; w++)
			p[w] = pattern(r, i, w);
	}
	if (unbind(r->base, len) || where_pages(0, r->base, r->npages, &nc))
		return -errno;
	return nc.n[1] == r->npages ? 0 : -EXDEV;
}

static void region_unmap(struct region *r)
{
	if (r->base)
		munmap(r->base, r->len);
	r->base = NULL;
}

/*
 * Check every word of @r: the pattern must be intact and the touch counter
 * must be @count. Returns the number of bad pages and logs the first one.
 */
static unsigned long region_verify(const struct region *r, uint64_t count)
{
	unsigned long words = page_size / sizeof(uint64_t), i, w, bad = 0;

	for (i = 0; i < r->npages; i++) {
		const uint64_t *p = (const uint64_t *)(r->base + i * page_size);
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

/* ---- a thread that keeps a region hot ------------------------------------ */

struct hot_thread {
	pthread_t tid;
	const struct region *r;
	int stop;		/* __atomic accesses */
	unsigned long passes;
	bool running;
};

/* Bump the counter word of every page, a full pass at a time. */
static void *hot_loop(void *arg)
{
	struct hot_thread *h = arg;
	unsigned long i;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < h->r->npages; i++)
			(*(uint64_t *)(h->r->base + i * page_size))++;
		asm volatile("" ::: "memory");
		__atomic_store_n(&h->passes, h->passes + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int hot_start(struct hot_thread *h, const struct region *r)
{
	h->r = r;
	h->stop = 0;
	h->passes = 0;
	if (pthread_create(&h->tid, NULL, hot_loop, h))
		return -1;
	h->running = true;
	return 0;
}

static unsigned long hot_stop(struct hot_thread *h)
{
	if (h->running) {
		__atomic_store_n(&h->stop, 1, __ATOMIC_RELEASE);
		pthread_join(h->tid, NULL);
		h->running = false;
	}
	return h->passes;
}

/* ---- files, node meminfo, zoneinfo --------------------------------------- */

/* The value of the "@key ... kB" line of node @nid's meminfo, or -1. */
static long node_meminfo_kb(int nid, const char *key)
{
	char path[PATH_MAX], line[256], *p;
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), NODE_SYSFS "node%d/meminfo", nid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (kb < 0 && fgets(line, sizeof(line), f)) {
		p = strstr(line, key);
		if (p)
			kb = strtol(p + strlen(key), NULL, 10);
	}
	fclose(f);
	return kb;
}

/* A populated zone of a node, from /proc/zoneinfo; all in pages. */
struct zone_info {
	char name[16];
	long free, min, low, high, boost, managed;
	long protection;	/* lowmem_reserve[] for a movable allocation */
};

#define MAX_ZONES	8

/* The largest entry of "protection: (a, b, ...)": the one for ZONE_MOVABLE. */
static long zone_protection(const char *p)
{
	long v, max = 0;
	char *end;

	for (;;) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > max)
			max = v;
		p = end;
		if (*p != ',')
			break;
		p++;
	}
	return max;
}

/* The populated zones of node @nid. Returns how many, or -errno. */
static int node_zones(int nid, struct zone_info *z, int max)
{
	struct zone_info *cur = NULL;
	char line[512], name[16], *p;
	int n = 0, node;
	long v;
	FILE *f;

	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone %15s", &node, name) == 2) {
			/* An empty zone gives its slot to the next one. */
			if (cur && !cur->managed)
				n--;
			cur = NULL;
			if (node == nid && n < max) {
				cur = &z[n++];
				memset(cur, 0, sizeof(*cur));
				snprintf(cur->name, sizeof(cur->name), "%s", name);
			}
			continue;
		}
		if (!cur)
			continue;
		p = strstr(line, "protection: (");
		if (p) {
			cur->protection = zone_protection(p + strlen("protection: ("));
			continue;
		}
		if (sscanf(line, " pages free %ld", &v) == 1)
			cur->free = v;
		else if (sscanf(line, " boost %ld", &v) == 1)
			cur->boost = v;
		else if (sscanf(line, " min %ld", &v) == 1)
			cur->min = v;
		else if (sscanf(line, " low %ld", &v) == 1)
			cur->low = v;
		else if (sscanf(line, " high %ld", &v) == 1)
			cur->high = v;
		else if (sscanf(line, " managed %ld", &v) == 1)
			cur->managed = v;
	}
	if (cur && !cur->managed)
		n--;
	fclose(f);
	return n;
}

/*
 * Free pages of the zones of a node above a watermark, for a movable
 * allocation: the sum over the zones of free - mark - protection, where
 * positive. @high picks WMARK_HIGH (without boost, where the migrator
 * defers every batch) or else WMARK_MIN (the floor of an offlining's
 * migration target allocation).
 */
static long node_room(const struct zone_info *z, int n, bool high)
{
	long room = 0, r;
	int i;

	for (i = 0; i < n; i++) {
		r = z[i].free - z[i].protection -
		    (high ? z[i].high - z[i].boost : z[i].min);
		if (r > 0)
			room += r;
	}
	return room;
}

static void log_zones(int nid, const struct zone_info *z, int n)
{
	int i;

	for (i = 0; i < n; i++)
		ksft_print_msg("node %d %s: free %ld, min %ld low %ld high %ld, protection %ld\n",
			       nid, z[i].name, z[i].free, z[i].min, z[i].low,
			       z[i].high, z[i].protection);
}

static void log_deltas(const struct kmm_stats *a, const struct kmm_stats *b)
{
	int i;

	for (i = 0; i < NR_KMM_STATS; i++)
		if (b->v[i] != a->v[i])
			ksft_print_msg("  %-28s +%llu\n", kmm_stat_names[i],
				       b->v[i] - a->v[i]);
}

static inline unsigned long long D(const struct kmm_stats *a,
				   const struct kmm_stats *b, enum kmm_stat s)
{
	return b->v[s] - a->v[s];
}

/* ---- the balloon: a full node 0 ------------------------------------------ */

struct balloon_report {
	unsigned long pages;	/* populated */
	unsigned long on_node0;	/* of those, on node 0 */
	long long ms;		/* time it took */
	int err;		/* errno of the step that failed, or 0 */
};

static inline uint64_t balloon_stamp(unsigned long i)
{
	return 0xba11000000000000ULL ^ (i * 0x9e3779b97f4a7c15ULL);
}

/*
 * A child process that is not scanned fills node 0 with anonymous memory,
 * 2 MB at a time, until the page allocator puts pages on node 1 instead:
 * then every zone of node 0 is at its low watermark. MPOL_PREFERRED, not
 * MPOL_BIND, so that it never ends in direct reclaim or the OOM killer.
 * Stamp every page, send the report on @rep, hold the memory until @go is
 * written to or closed, check the stamps and exit 0 if they are intact.
 */
static void balloon_child(int rep, int go, size_t len)
{
	const unsigned long chunk = HPAGE / page_size;
	unsigned long npages = len / page_size, i, bad = 0;
	struct balloon_report br = {};
	unsigned long node0 = 1UL;
	long long t0 = now_ms();
	struct node_count nc;
	char c, *p;

	prctl(PR_SET_KMMSCAND, 0, 0, 0, 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		br.err = errno;
		goto report;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	if (sys_mbind(p, len, MPOL_PREFERRED, &node0, sizeof(node0) * 8, 0)) {
		br.err = errno;
		goto report;
	}
	while (br.pages + chunk <= npages) {
		char *c0 = p + br.pages * page_size;

		if (madvise(c0, HPAGE, MADV_POPULATE_WRITE) ||
		    where_pages(0, c0, chunk, &nc)) {
			br.err = errno;
			break;
		}
		br.pages += chunk;
		br.on_node0 += nc.n[0];
		if (nc.n[0] < chunk)
			break;		/* spilled: node 0 is full */
	}
	for (i = 0; i < br.pages; i++)
		*(uint64_t *)(p + i * page_size) = balloon_stamp(i);
	br.ms = now_ms() - t0;
report:
	if (write(rep, &br, sizeof(br)) != sizeof(br) || br.err)
		_exit(2);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	for (i = 0; i < br.pages; i++)
		bad += *(uint64_t *)(p + i * page_size) != balloon_stamp(i);
	_exit(bad ? 1 : 0);
}

/* ---- fixture -------------------------------------------------------------- */

FIXTURE(hotplug) {
	struct kmm_knob_state saved;
	struct dimm dimm;
	long numa_balancing;
	bool nb_saved;
	pid_t balloon;		/* killed in teardown if a test bails out */
	char demotion[16];	/* demotion_enabled to restore, "" if untouched */
	long boost_factor;	/* vm.watermark_boost_factor to restore, or -1 */
	long scale_factor;	/* vm.watermark_scale_factor to restore, or -1 */
};

FIXTURE_SETUP(hotplug)
{
	char why[200];
	bool kthread;
	int ret;

	page_size = sysconf(_SC_PAGESIZE);
	self->saved.valid = false;
	self->nb_saved = false;
	self->balloon = 0;
	self->demotion[0] = '\0';
	self->boost_factor = -1;
	self->scale_factor = -1;
	self->dimm.nr = 0;
	if (!kmmscand_present())
		SKIP(return, "%s missing: kernel built without CONFIG_KMMSCAND",
		     KMMSCAND_SYSFS);
	if (geteuid())
		SKIP(return, "needs root to offline memory and set %s",
		     KMMSCAND_SYSFS);
	if (!two_tiers(why, sizeof(why)))
		SKIP(return, "%s", why);
	if (kmm_stats_read(&(struct kmm_stats){}) <= 0)
		SKIP(return, "no kmmscand_* in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS=n?)");
	if (dimm_find(&self->dimm, why, sizeof(why)) <= 0)
		SKIP(return, "%s", why);
	ASSERT_NE(0, find_task("kmmscand", &kthread)) TH_LOG("no kmmscand thread");
	ASSERT_NE(0, find_task("kmmscand_migrate", &kthread))
		TH_LOG("no kmmscand_migrate thread");

	ret = knobs_save(&self->saved);
	ASSERT_EQ(0, ret) TH_LOG("cannot read knobs: %s", strerror(-ret));
	if (!read_long(NUMA_BALANCING_SYSCTL, &self->numa_balancing)) {
		self->nb_saved = true;
		ASSERT_EQ(0, write_long(NUMA_BALANCING_SYSCTL, 0))
			TH_LOG("cannot turn NUMA balancing off");
	}
	/* As kmmscand_promote_test: quick detection, defaults otherwise. */
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, 60000));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MIN_MS, PERIOD_MIN_MS));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_PERIOD_MAX_MS, PERIOD_MAX_MS));
	ASSERT_EQ(0, knob_set(KNOB_HOT_HISTORY, 8));
	ASSERT_EQ(0, knob_set(KNOB_HOT_THRESHOLD, 2));
	ASSERT_EQ(0, knob_set(KNOB_HOT_HISTORY, 2));
	ASSERT_EQ(0, knob_set(KNOB_SCAN_SIZE, 65536));
	ASSERT_EQ(0, knob_set(KNOB_PMD_SKIP, 1));
	ASSERT_EQ(0, knob_set(KNOB_TLB_FLUSH, 1));
	ASSERT_EQ(0, knob_set(KNOB_MIGRATE_BATCH, 512));
	ASSERT_EQ(0, knob_set(KNOB_PROMOTE_RATE_LIMIT_MBPS, 256));
	ASSERT_EQ(0, knob_set(KNOB_TARGET_NODE, -1));
	ASSERT_EQ(0, knob_set(KNOB_ENABLED, 1));
}

/* Bring back every block of the dimm that a test left offline. */
static void dimm_online_all(const struct dimm *d)
{
	char state[32];
	int i, ret;

	for (i = 0; i < d->nr; i++) {
		if (block_attr(d->block[i], "state", state, sizeof(state)) <= 0 ||
		    !strcmp(state, "online"))
			continue;
		ret = block_set_state(d->block[i], "online_movable");
		if (ret)
			ksft_print_msg("onlining memory%d again: %s\n",
				       d->block[i], strerror(-ret));
	}
}

FIXTURE_TEARDOWN_PARENT(hotplug)
{
	int ret;

	if (self->balloon > 0) {
		kill(self->balloon, SIGKILL);
		waitpid(self->balloon, NULL, 0);
	}
	dimm_online_all(&self->dimm);
	if (self->nb_saved)
		write_long(NUMA_BALANCING_SYSCTL, self->numa_balancing);
	if (self->demotion[0] && write_str(DEMOTION_SYSFS, self->demotion))
		TH_LOG("restoring %s failed", DEMOTION_SYSFS);
	if (self->boost_factor >= 0)
		write_long(BOOST_SYSCTL, self->boost_factor);
	if (self->scale_factor >= 0)
		write_long(SCALE_SYSCTL, self->scale_factor);
	ret = knobs_restore(&self->saved);
	if (ret)
		TH_LOG("restoring knobs failed: %s", strerror(-ret));
}

/* Log what dimm_write_state() reported; returns how many blocks failed. */
static int log_ops(const char *what, const struct dimm *d,
		   const struct block_op *ops, int n)
{
	int i, bad = d->nr - n;

	for (i = 0; i < n; i++) {
		ksft_print_msg("%s memory%d: %s after %lld ms\n", what,
			       ops[i].block,
			       ops[i].err ? strerror(ops[i].err) : "done",
			       ops[i].ms);
		bad += !!ops[i].err;
	}
	if (n < d->nr)
		ksft_print_msg("%s: %d of %d blocks never reported (writer killed)\n",
			       what, d->nr - n, d->nr);
	return bad;
}

/* How many blocks of @d are in state @state. */
static int dimm_count_state(const struct dimm *d, const char *state)
{
	char buf[32];
	int i, n = 0;

	for (i = 0; i < d->nr; i++)
		n += block_attr(d->block[i], "state", buf, sizeof(buf)) > 0 &&
		     !strcmp(buf, state);
	return n;
}

/*
 * The control: 8 MB written once on the dimm, nothing queued. Every block
 * of the dimm goes offline within the deadline, the pages leave it with
 * their content, and the blocks come back online in ZONE_MOVABLE. If this
 * fails, offlining itself does not work here, whatever kmmscand does.
 */
TEST_F_TIMEOUT(hotplug, offline_online_cycle, 180)
{
	struct block_op ops[MAX_BLOCKS];
	uint64_t lo = 0, hi = 0;
	struct dimm again;
	struct node_count nc;
	struct region r;
	char why[200];
	long on;
	int n, ret;

	ret = region_on_node1(&r, 8 * MB, 0xc0de);
	ASSERT_EQ(0, ret) TH_LOG("placing 8 MB on node 1: %s", strerror(-ret));
	on = pages_on_dimm(&self->dimm, r.base, r.npages, &lo, &hi);
	ksft_print_msg("dimm: %d blocks of %lu MB from memory%d; region: %ld/%lu pages on it\n",
		       self->dimm.nr, self->dimm.block_pages * page_size / MB,
		       self->dimm.block[0], on, r.npages);
	ksft_print_msg("region: PFNs %#llx-%#llx\n", (unsigned long long)lo,
		       (unsigned long long)hi);
	ASSERT_LE(0, on) TH_LOG("pagemap: %s", strerror(-on));
	ASSERT_EQ((long)r.npages, on) TH_LOG("the region is not on the dimm");

	n = dimm_write_state(&self->dimm, "offline", OFFLINE_DEADLINE_MS, ops);
	ASSERT_LE(0, n) TH_LOG("offlining: %s", strerror(-n));
	ASSERT_EQ(0, log_ops("offline", &self->dimm, ops, n));
	ASSERT_EQ(self->dimm.nr, dimm_count_state(&self->dimm, "offline"));
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	ksft_print_msg("region after offlining: node 0 %lu, node 1 %lu\n",
		       nc.n[0], nc.n[1]);
	EXPECT_EQ(r.npages, nc.n[0] + nc.n[1]);
	EXPECT_EQ(0UL, region_verify(&r, 0)) TH_LOG("data changed by offlining");

	n = dimm_write_state(&self->dimm, "online_movable", OFFLINE_DEADLINE_MS,
			     ops);
	ASSERT_LE(0, n);
	EXPECT_EQ(0, log_ops("online", &self->dimm, ops, n));
	EXPECT_EQ(self->dimm.nr, dimm_find(&again, why, sizeof(why)))
		TH_LOG("the dimm did not come back online in ZONE_MOVABLE");
	region_unmap(&r);
}

/*
 * The hot-remove case: node 0 is full, so hot pages on the dimm are queued
 * for promotion and wait there (kmmscand_defer_watermark). Offlining the
 * dimm must still succeed within OFFLINE_DEADLINE_MS, with the pages
 * going to the room left on node 0, and no byte of the region may change
 * while its thread keeps writing to it. Once node 0 has room again, the
 * candidates of the removed memory are dropped as stale, not promoted.
 */
TEST_F_TIMEOUT(hotplug, offline_with_queued_candidates, 300)
{
	const unsigned long n = (16 * MB) / page_size;
	struct block_op ops[MAX_BLOCKS];
	struct zone_info z[MAX_ZONES];
	struct kmm_stats s0, s1, s2, s3;
	struct balloon_report br;
	struct hot_thread h = {};
	struct node_count nc;
	int rep[2], go[2], nz, nops, bad_ops, status = 0;
	long free_kb, total_kb, room_high, room_min, on;
	unsigned long long offers;
	uint64_t lo = 0, hi = 0;
	unsigned long passes;
	struct pollfd pfd;
	long long t0, t_off;
	struct region r;
	int ret;
	pid_t pid;

	if (access(DEMOTION_SYSFS, W_OK))
		SKIP(return, "%s: %s", DEMOTION_SYSFS, strerror(errno));
	if (access(SCALE_SYSCTL, W_OK))
		SKIP(return, "%s: %s", SCALE_SYSCTL, strerror(errno));
	free_kb = node_meminfo_kb(0, "MemFree:");
	total_kb = node_meminfo_kb(0, "MemTotal:");
	ASSERT_LT(0, free_kb) TH_LOG("no MemFree in node 0's meminfo");
	if (free_kb > 4L * 1024 * 1024)
		SKIP(return, "node 0 has %ld MB free: too much to fill in time",
		     free_kb / 1024);

	/* No demotion and no boost: node 0 stays full, at fixed marks. */
	ASSERT_LT(0, read_file(DEMOTION_SYSFS, self->demotion,
			       sizeof(self->demotion)));
	ASSERT_EQ(0, write_str(DEMOTION_SYSFS, "0"));
	ASSERT_EQ(0, read_long(BOOST_SYSCTL, &self->boost_factor));
	ASSERT_EQ(0, write_long(BOOST_SYSCTL, 0));
	ASSERT_EQ(0, read_long(SCALE_SYSCTL, &self->scale_factor));
	ASSERT_EQ(0, write_long(SCALE_SYSCTL, SCALE_FACTOR));

	ret = region_on_node1(&r, n * page_size, 0xd177);
	ASSERT_EQ(0, ret) TH_LOG("placing 16 MB on node 1: %s", strerror(-ret));
	on = pages_on_dimm(&self->dimm, r.base, r.npages, &lo, &hi);
	ASSERT_LE(0, on) TH_LOG("pagemap: %s", strerror(-on));
	ASSERT_EQ((long)n, on) TH_LOG("only %ld/%lu pages on the dimm", on, n);

	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(go));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(rep[0]);
		close(go[1]);
		balloon_child(rep[1], go[0], (size_t)total_kb * 1024);
	}
	self->balloon = pid;
	close(rep[1]);
	close(go[0]);
	pfd.fd = rep[0];
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, DEADLINE_MS))
		TH_LOG("the balloon did not fill node 0 within %d ms", DEADLINE_MS);
	ASSERT_EQ((ssize_t)sizeof(br), read(rep[0], &br, sizeof(br)));
	close(rep[0]);
	ASSERT_EQ(0, br.err) TH_LOG("balloon: %s", strerror(br.err));
	nz = node_zones(0, z, MAX_ZONES);
	ASSERT_LT(0, nz) TH_LOG("no zone of node 0 in /proc/zoneinfo");
	room_high = node_room(z, nz, true);
	room_min = node_room(z, nz, false);
	ksft_print_msg("balloon: %lu MB in %lld ms, %lu pages of it on node 1\n",
		       br.pages * page_size / MB, br.ms, br.pages - br.on_node0);
	log_zones(0, z, nz);
	ksft_print_msg("node 0: %ld pages above WMARK_HIGH, %ld above WMARK_MIN\n",
		       room_high, room_min);
	ASSERT_LT(br.on_node0, br.pages)
		TH_LOG("node 0 took %lu MB without filling up",
		       br.pages * page_size / MB);
	/* A batch of 512 pages is deferred unless it fits above WMARK_HIGH. */
	ASSERT_GT(512L, room_high) TH_LOG("node 0 has room for promotion");
	/* The region, the balloon's spill and whatever else is on the dimm. */
	ASSERT_LT((long)(4 * n), room_min)
		TH_LOG("node 0 has no room left for the offlining's migration");

	/* Hot: queued, and waiting, as nothing fits above WMARK_HIGH. */
	kmm_stats_read(&s0);
	ASSERT_EQ(0, hot_start(&h, &r));
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s1);
		offers = D(&s0, &s1, S_CANDIDATE);
		/* Every pass offers every hot page; two passes queued all. */
		if (offers >= 2 * n && D(&s0, &s1, S_DEFER_WATERMARK) >= 10)
			break;
	} while (now_ms() - t0 < DEADLINE_MS);
	lo = 0;
	hi = 0;
	on = pages_on_dimm(&self->dimm, r.base, r.npages, &lo, &hi);
	ksft_print_msg("after %lld ms hot: %llu candidates, %ld/%lu pages still on the dimm\n",
		       now_ms() - t0, offers, on, n);
	ksft_print_msg("region: PFNs %#llx-%#llx\n", (unsigned long long)lo,
		       (unsigned long long)hi);
	log_deltas(&s0, &s1);
	ASSERT_LE(2 * n, offers) TH_LOG("the hot region was not queued");
	ASSERT_LE(10ULL, D(&s0, &s1, S_DEFER_WATERMARK))
		TH_LOG("the migrator did not defer for the watermark");
	ASSERT_EQ((long)n, on) TH_LOG("pages left the dimm before the offlining");

	/* Remove the dimm while its pages are queued and written to. */
	t0 = now_ms();
	nops = dimm_write_state(&self->dimm, "offline", OFFLINE_DEADLINE_MS, ops);
	t_off = now_ms() - t0;
	passes = hot_stop(&h);
	kmm_stats_read(&s2);
	ASSERT_LE(0, nops) TH_LOG("offlining: %s", strerror(-nops));
	bad_ops = log_ops("offline", &self->dimm, ops, nops);
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	ksft_print_msg("offlining took %lld ms; region: node 0 %lu, node 1 %lu; %lu passes\n",
		       t_off, nc.n[0], nc.n[1], passes);
	log_deltas(&s1, &s2);
	EXPECT_EQ(0UL, region_verify(&r, passes))
		TH_LOG("region content changed");
	ASSERT_EQ(0, bad_ops)
		TH_LOG("the dimm could not be offlined within %d ms while its pages were queued",
		       OFFLINE_DEADLINE_MS);
	ASSERT_EQ(self->dimm.nr, dimm_count_state(&self->dimm, "offline"));
	EXPECT_EQ(n, nc.n[0] + nc.n[1]);

	/*
	 * Room on node 0 again: every candidate of the offline memory is
	 * dropped as stale.  Promotions are not asserted to be 0: pages this
	 * test and the balloon child allocated on node 1 while node 0 was
	 * full are legitimate candidates, and the counter is global.  The
	 * region itself must be whole and unchanged.
	 */
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->balloon = 0;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("balloon pages changed content (status %#x)", status);
	t0 = now_ms();
	do {
		sleep_ms(POLL_MS);
		kmm_stats_read(&s3);
		if (D(&s2, &s3, S_FAIL_STALE) >= n)
			break;
	} while (now_ms() - t0 < DEADLINE_MS);
	ksft_print_msg("balloon freed: after %lld ms, %llu stale, %llu promoted\n",
		       now_ms() - t0, D(&s2, &s3, S_FAIL_STALE),
		       D(&s2, &s3, S_PROMOTE_SUCCESS));
	log_deltas(&s2, &s3);
	EXPECT_LE(n, D(&s2, &s3, S_FAIL_STALE))
		TH_LOG("candidates of the offline memory were not dropped");
	ASSERT_EQ(0, where_pages(0, r.base, r.npages, &nc));
	EXPECT_EQ(n, nc.n[0] + nc.n[1]);
	EXPECT_EQ(0UL, region_verify(&r, passes))
		TH_LOG("region content changed after the queue drained");

	nops = dimm_write_state(&self->dimm, "online_movable",
				OFFLINE_DEADLINE_MS, ops);
	ASSERT_LE(0, nops);
	EXPECT_EQ(0, log_ops("online", &self->dimm, ops, nops));
	EXPECT_EQ(self->dimm.nr, dimm_count_state(&self->dimm, "online"));
	region_unmap(&r);
}

int main(int argc, char **argv)
{
	struct kmm_knob_state saved = {};
	long boost = -1, scale = -1;
	char demotion[16] = "", why[200];
	struct dimm dimm = {};
	int ret;

	/*
	 * A test killed by its timeout cannot run its teardown: restore the
	 * knobs and sysctls, and online the dimm, once more at the end.
	 */
	page_size = sysconf(_SC_PAGESIZE);
	if (!geteuid() && kmmscand_present()) {
		knobs_save(&saved);
		if (read_file(DEMOTION_SYSFS, demotion, sizeof(demotion)) <= 0)
			demotion[0] = '\0';
		if (read_long(BOOST_SYSCTL, &boost))
			boost = -1;
		if (read_long(SCALE_SYSCTL, &scale))
			scale = -1;
		if (dimm_find(&dimm, why, sizeof(why)) < 0)
			dimm.nr = 0;
	}
	ret = test_harness_run(argc, argv);
	dimm_online_all(&dimm);
	knobs_restore(&saved);
	if (demotion[0])
		write_str(DEMOTION_SYSFS, demotion);
	if (boost >= 0)
		write_long(BOOST_SYSCTL, boost);
	if (scale >= 0)
		write_long(SCALE_SYSCTL, scale);
	return ret;
}
