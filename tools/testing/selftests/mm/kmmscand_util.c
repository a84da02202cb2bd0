// SPDX-License-Identifier: GPL-2.0
/* The helpers declared in kmmscand_util.h. */

#include "kmmscand_util.h"

const struct kmm_knob_desc kmm_knobs[NR_KNOBS] = {
	[KNOB_ENABLED]			= { "enabled", 1, 0, 1 },
	[KNOB_SCAN_PERIOD_MIN_MS]	= { "scan_period_min_ms", 500, 100, 60000 },
	[KNOB_SCAN_PERIOD_MAX_MS]	= { "scan_period_max_ms", 5000, 100, 60000 },
	[KNOB_SCAN_SIZE]		= { "scan_size", 65536, 512, 4194304 },
	[KNOB_HOT_HISTORY]		= { "hot_history", 2, 1, 8 },
	[KNOB_HOT_THRESHOLD]		= { "hot_threshold", 2, 1, 8 },
	[KNOB_PMD_SKIP]			= { "pmd_skip", 1, 0, 1 },
	[KNOB_TLB_FLUSH]		= { "tlb_flush", 0, 0, 1 },
	[KNOB_MIGRATE_BATCH]		= { "migrate_batch", 512, 1, 4096 },
	[KNOB_PROMOTE_RATE_LIMIT_MBPS]	= { "promote_rate_limit_mbps", 256, 0, 1048576 },
	[KNOB_TARGET_NODE]		= { "target_node", -1, -1, INT_MAX },
};

int knob_read(const char *name, long long *val)
{
	char path[PATH_MAX], buf[64], *end;
	ssize_t len;
	int fd, err;

	snprintf(path, sizeof(path), KMMSCAND_SYSFS "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = errno;
	close(fd);
	if (len < 0)
		return -err;
	buf[len] = '\0';
	errno = 0;
	*val = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end != '\n' && *end != '\0'))
		return -EBADMSG;
	return 0;
}

ssize_t knob_write_raw(const char *name, const char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t ret;
	int fd;

	snprintf(path, sizeof(path), KMMSCAND_SYSFS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, buf, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

ssize_t knob_write_str(const char *name, const char *str)
{
	return knob_write_raw(name, str, strlen(str));
}

int knob_write_num(const char *name, long long val)
{
	char buf[32];
	ssize_t ret;

	snprintf(buf, sizeof(buf), "%lld\n", val);
	ret = knob_write_str(name, buf);
	if (ret < 0)
		return ret;
	return ret == (ssize_t)strlen(buf) ? 0 : -EIO;
}

int knob_get(enum kmm_knob k, long long *val)
{
	return knob_read(kmm_knobs[k].name, val);
}

int knob_set(enum kmm_knob k, long long val)
{
	return knob_write_num(kmm_knobs[k].name, val);
}

int knobs_save(struct kmm_knob_state *st)
{
	int i, ret;

	st->valid = false;
	for (i = 0; i < NR_KNOBS; i++) {
		ret = knob_get(i, &st->val[i]);
		if (ret)
			return ret;
	}
	st->valid = true;
	return 0;
}

int knobs_restore(const struct kmm_knob_state *st)
{
	static const struct { enum kmm_knob k; bool widen; long long v; } steps[] = {
		{ KNOB_SCAN_PERIOD_MAX_MS, true, 60000 },
		{ KNOB_SCAN_PERIOD_MIN_MS, false, 0 },
		{ KNOB_SCAN_PERIOD_MAX_MS, false, 0 },
		{ KNOB_HOT_HISTORY, true, 8 },
		{ KNOB_HOT_THRESHOLD, false, 0 },
		{ KNOB_HOT_HISTORY, false, 0 },
		{ KNOB_SCAN_SIZE, false, 0 },
		{ KNOB_PMD_SKIP, false, 0 },
		{ KNOB_TLB_FLUSH, false, 0 },
		{ KNOB_MIGRATE_BATCH, false, 0 },
		{ KNOB_PROMOTE_RATE_LIMIT_MBPS, false, 0 },
		{ KNOB_TARGET_NODE, false, 0 },
		{ KNOB_ENABLED, false, 0 },
	};
	unsigned int i;
	int ret, err = 0;

	if (!st->valid)
		return 0;
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		long long v = steps[i].widen ? steps[i].v : st->val[steps[i].k];

		ret = knob_set(steps[i].k, v);
		if (ret && !err)
			err = ret;
	}
	return err;
}

bool kmmscand_present(void)
{
	struct stat st;

	return !stat(KMMSCAND_SYSFS, &st) && S_ISDIR(st.st_mode);
}

int kmm_read_file(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd, err;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (len < 0)
		return -err;
	buf[len] = '\0';
	return len;
}

int read_long(const char *path, long *val)
{
	char buf[64], *end;
	int ret;

	ret = kmm_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EBADMSG;
	return 0;
}

int write_str(const char *path, const char *str)
{
	ssize_t ret;
	int fd;

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ret = write(fd, str, strlen(str));
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : 0;
}

int write_str_at(const char *dir, const char *rel, const char *str)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return write_str(path, str);
}

int write_long(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", val);
	return write_str(path, buf);
}

int kmmscand_status(pid_t pid)
{
	char path[64], line[256];
	int val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Kmmscand:\t", 10))
			continue;
		if (!strcmp(line + 10, "0\n"))
			val = 0;
		else if (!strcmp(line + 10, "1\n"))
			val = 1;
		else
			val = -2;
	}
	fclose(f);
	return val;
}

bool node_online(int nid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), NODE_SYSFS "node%d", nid);
	return !access(path, F_OK);
}

bool nodelist_has(const char *list, int nid)
{
	const char *p = list;

	while (*p && *p != '\n') {
		char *end;
		long lo, hi;

		lo = strtol(p, &end, 10);
		if (end == p)
			return false;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1)
				return false;
			p = end;
		}
		if (nid >= lo && nid <= hi)
			return true;
		if (*p == ',')
			p++;
	}
	return false;
}

int memtier_of(int nid)
{
	struct dirent *de;
	int tier = -ENOENT;
	DIR *dir;

	dir = opendir(MEMTIER_SYSFS);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char path[PATH_MAX], buf[256];
		int id;

		if (sscanf(de->d_name, "memory_tier%d", &id) != 1)
			continue;
		snprintf(path, sizeof(path), MEMTIER_SYSFS "%s/nodelist",
			 de->d_name);
		if (kmm_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		if (nodelist_has(buf, nid)) {
			tier = id;
			break;
		}
	}
	closedir(dir);
	return tier;
}

bool two_tiers(char *why, size_t len)
{
	int t0, t1;

	if (!node_online(1)) {
		snprintf(why, len, "node 1 is not online: need a slow-tier node 1");
		return false;
	}
	t0 = memtier_of(0);
	t1 = memtier_of(1);
	if (t0 < 0 || t1 < 0 || t0 >= t1) {
		snprintf(why, len,
			 "node 1 (memory_tier%d) is not below node 0 (memory_tier%d)",
			 t1, t0);
		return false;
	}
	return true;
}

pid_t find_task(const char *comm, bool *kthread)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *proc;

	*kthread = false;
	proc = opendir("/proc");
	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		char path[PATH_MAX], buf[512], *p;
		unsigned long flags = 0;
		int i;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (kmm_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, comm))
			continue;
		found = atoi(de->d_name);

		/* flags is field 9 of stat: the 7th after the ')' of comm */
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (kmm_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		p = strrchr(buf, ')');
		for (i = 0; p && i < 7; i++)
			p = strchr(p + 1, ' ');
		if (p && sscanf(p, " %lu", &flags) == 1)
			*kthread = flags & PF_KTHREAD_FLAG;
	}
	closedir(proc);
	return found;
}

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

unsigned long pct(unsigned long part, unsigned long whole)
{
	return whole ? part * 100 / whole : 0;
}
