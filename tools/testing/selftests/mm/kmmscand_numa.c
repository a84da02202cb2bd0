// SPDX-License-Identifier: GPL-2.0
/* The helpers declared in kmmscand_numa.h. */

#include "kmmscand_numa.h"

long sys_mbind(void *addr, unsigned long len, int mode,
	       const unsigned long *nodemask,
	       unsigned long maxnode, unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
}

long sys_set_mempolicy(int mode, const unsigned long *nodemask,
		       unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, nodemask, maxnode);
}

long sys_move_pages(pid_t pid, unsigned long count,
		    void **pages, const int *nodes, int *status,
		    int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

long bind_to_node(void *addr, size_t len, int nid)
{
	unsigned long mask = 1UL << nid;

	return sys_mbind(addr, len, MPOL_BIND, &mask, sizeof(mask) * 8, 0);
}

long unbind(void *addr, size_t len)
{
	return sys_mbind(addr, len, MPOL_DEFAULT, NULL, 0, 0);
}

int where_pages(pid_t pid, char *base, unsigned long npages,
		struct node_count *nc)
{
	enum { CHUNK = 1024 };
	unsigned long page = sysconf(_SC_PAGESIZE), i, j, n;
	void *addrs[CHUNK];
	int status[CHUNK];

	memset(nc, 0, sizeof(*nc));
	for (i = 0; i < npages; i += n) {
		n = npages - i < CHUNK ? npages - i : CHUNK;
		for (j = 0; j < n; j++)
			addrs[j] = base + (i + j) * page;
		if (sys_move_pages(pid, n, addrs, NULL, status, 0))
			return -errno;
		for (j = 0; j < n; j++) {
			if (status[j] >= 0 && status[j] < KMM_MAX_NODES)
				nc->n[status[j]]++;
			else if (status[j] == -ENOENT)
				nc->absent++;
			else if (status[j] == -EFAULT)
				nc->unmapped++;
			else
				nc->other++;
		}
	}
	nc->total = npages;
	return 0;
}

const char * const kmm_stat_names[NR_KMM_STATS] = {
	"kmmscand_mm_scan",
	"kmmscand_mm_skip_contended",
	"kmmscand_pte_scanned",
	"kmmscand_pmd_skipped",
	"kmmscand_tlb_flush",
	"kmmscand_young",
	"kmmscand_thp_young",
	"kmmscand_candidate",
	"kmmscand_candidate_drop",
	"kmmscand_promote_success",
	"kmmscand_promote_batch",
	"kmmscand_defer_ratelimit",
	"kmmscand_defer_watermark",
	"kmmscand_defer_demotion",
	"kmmscand_fail_isolate",
	"kmmscand_fail_stale",
	"kmmscand_fail_migrate",
	"kmmscand_fail_exit",
	"kmmscand_abit_recorded",
	"kmmscand_abit_promoted",
	"kmmscand_fault_recorded",
	"kmmscand_fault_promoted",
	"kmmscand_fault_fallback",
	"kmmscand_record_lost",
};

/*
 * The values of the /proc/vmstat lines named by @names[0..@nr - 1] into
 * @v (left alone for a name without a line), and which exist into @found
 * unless it is NULL. Returns how many exist, or -errno.
 */
static int vmstat_read_named(const char * const *names, int nr,
			     unsigned long long *v, bool *found)
{
	char line[128], name[64];
	unsigned long long val;
	int i, n = 0;
	FILE *f;

	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &val) != 2)
			continue;
		for (i = 0; i < nr; i++) {
			if (strcmp(name, names[i]))
				continue;
			v[i] = val;
			if (found)
				found[i] = true;
			n++;
		}
	}
	fclose(f);
	return n;
}

int kmm_stats_read(struct kmm_stats *s)
{
	memset(s, 0, sizeof(*s));
	return vmstat_read_named(kmm_stat_names, NR_KMM_STATS, s->v, s->found);
}

unsigned long long kmm_stat(enum kmm_stat i)
{
	struct kmm_stats s;

	kmm_stats_read(&s);
	return s.v[i];
}

const char * const x_stat_names[NR_X_STATS] = {
	"pgdemote_kswapd",
	"pgdemote_direct",
	"pgdemote_khugepaged",
	"pgmigrate_success",
	"pgmigrate_fail",
	"compact_isolated",
	"pgpromote_success",
	"thp_split_page",
	"thp_split_pmd",
	"thp_collapse_alloc",
	"nr_isolated_anon",
	"nr_isolated_file",
};

void x_stats_read(struct x_stats *x)
{
	memset(x, 0, sizeof(*x));
	vmstat_read_named(x_stat_names, NR_X_STATS, x->v, NULL);
}

unsigned long long XD(const struct x_stats *a,
		      const struct x_stats *b, enum x_stat s)
{
	return b->v[s] - a->v[s];
}

void log_deltas(const struct kmm_stats *a, const struct kmm_stats *b)
{
	int i;

	for (i = 0; i < NR_KMM_STATS; i++)
		if (b->v[i] != a->v[i])
			ksft_print_msg("  %-28s +%llu\n", kmm_stat_names[i],
				       b->v[i] - a->v[i]);
}

unsigned long long D(const struct kmm_stats *a,
		     const struct kmm_stats *b, enum kmm_stat s)
{
	return b->v[s] - a->v[s];
}

long node_meminfo_kb(int nid, const char *key)
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

long zone_protection(const char *p)
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

int node_zones(int nid, struct zone_info *z, int max)
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
		else if (sscanf(line, " promo %ld", &v) == 1)
			cur->promo = v;
		else if (sscanf(line, " managed %ld", &v) == 1)
			cur->managed = v;
	}
	if (cur && !cur->managed)
		n--;
	fclose(f);
	return n;
}

long node_room(const struct zone_info *z, int n, bool high)
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

void log_zones(int nid, const struct zone_info *z, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ksft_print_msg("node %d %s: free %ld, min %ld low %ld high %ld promo %ld\n",
			       nid, z[i].name, z[i].free, z[i].min, z[i].low,
			       z[i].high, z[i].promo);
		ksft_print_msg("node %d %s: boost %ld, protection %ld\n",
			       nid, z[i].name, z[i].boost, z[i].protection);
	}
}

uint64_t balloon_stamp(unsigned long i)
{
	return 0xba11000000000000ULL ^ (i * 0x9e3779b97f4a7c15ULL);
}

void balloon_child(int rep, int go, size_t len)
{
	const unsigned long chunk = BALLOON_CHUNK / psize();
	unsigned long npages = len / psize(), i, bad = 0;
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
		char *c0 = p + br.pages * psize();

		if (madvise(c0, BALLOON_CHUNK, MADV_POPULATE_WRITE) ||
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
		*(uint64_t *)(p + i * psize()) = balloon_stamp(i);
	br.ms = now_ms() - t0;
report:
	if (write(rep, &br, sizeof(br)) != sizeof(br) || br.err)
		_exit(2);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	for (i = 0; i < br.pages; i++)
		bad += *(uint64_t *)(p + i * psize()) != balloon_stamp(i);
	_exit(bad ? 1 : 0);
}

int balloon_start(struct balloon *b, size_t len, int deadline_ms)
{
	struct pollfd pfd;
	int rep[2], go[2], ret;

	memset(b, 0, sizeof(*b));
	b->go = -1;
	if (pipe(rep))
		return -errno;
	if (pipe(go)) {
		ret = -errno;
		close(rep[0]);
		close(rep[1]);
		return ret;
	}
	fflush(stdout);
	fflush(stderr);
	b->pid = fork();
	if (!b->pid) {
		close(rep[0]);
		close(go[1]);
		balloon_child(rep[1], go[0], len);
	}
	close(rep[1]);
	close(go[0]);
	b->go = go[1];
	if (b->pid < 0) {
		ret = -errno;
		b->pid = 0;
		close(rep[0]);
		return ret;
	}
	pfd.fd = rep[0];
	pfd.events = POLLIN;
	/* About 10 s for 1 GB in the test VM; more when the host is busy. */
	ret = poll(&pfd, 1, deadline_ms);
	if (ret == 1)
		ret = read(rep[0], &b->br, sizeof(b->br)) == sizeof(b->br) ?
		      0 : -EPIPE;
	else
		ret = ret ? -errno : -ETIMEDOUT;
	close(rep[0]);
	return ret;
}

int balloon_free(struct balloon *b)
{
	int status = -1;

	if (write(b->go, "g", 1) != 1)
		return -1;
	close(b->go);
	b->go = -1;
	if (waitpid(b->pid, &status, 0) != b->pid)
		status = -1;
	b->pid = 0;
	return status;
}
