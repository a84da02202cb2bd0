// SPDX-License-Identifier: GPL-2.0
/* The helpers declared in kmmscand_hotplug.h. */

#include "kmmscand_hotplug.h"

int block_attr(int block, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), MEMORY_SYSFS "memory%d/%s", block, attr);
	ret = kmm_read_file(path, buf, len);
	if (ret >= 0)
		buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

int block_set_state(int block, const char *state)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), MEMORY_SYSFS "memory%d/state", block);
	return write_str(path, state);
}

int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int dimm_find(struct dimm *d, char *why, size_t len)
{
	char buf[128], state[32];
	unsigned long long bytes;
	struct dirent *de;
	int block, others = 0;
	DIR *dir;

	memset(d, 0, sizeof(*d));
	if (kmm_read_file(MEMORY_SYSFS "block_size_bytes", buf, sizeof(buf)) <= 0) {
		snprintf(why, len, "no %sblock_size_bytes (CONFIG_MEMORY_HOTPLUG=n?)",
			 MEMORY_SYSFS);
		return -ENOENT;
	}
	bytes = strtoull(buf, NULL, 16);
	d->block_pages = bytes / psize();
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

bool dimm_has_pfn(const struct dimm *d, unsigned long long pfn)
{
	long long block = pfn / d->block_pages;
	int i;

	for (i = 0; i < d->nr; i++)
		if (d->block[i] == block)
			return true;
	return false;
}

long pages_on_dimm(const struct dimm *d, const char *base,
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
		off = ((uintptr_t)base / psize() + i) * sizeof(e[0]);
		if (pread(fd, e, c * sizeof(e[0]), off) != (ssize_t)(c * sizeof(e[0]))) {
			on = errno ? -errno : -EIO;
			break;
		}
		for (j = 0; j < c; j++) {
			uint64_t pfn = PAGEMAP_PFN(e[j]);

			if (!PAGEMAP_PRESENT(e[j]))
				continue;
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

void on_alarm(int sig)
{
	(void)sig;		/* only interrupts the write */
}

int dimm_write_state(const struct dimm *d, const char *state,
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

void dimm_online_all(const struct dimm *d)
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

int log_ops(const char *what, const struct dimm *d,
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

int dimm_count_state(const struct dimm *d, const char *state)
{
	char buf[32];
	int i, n = 0;

	for (i = 0; i < d->nr; i++)
		n += block_attr(d->block[i], "state", buf, sizeof(buf)) > 0 &&
		     !strcmp(buf, state);
	return n;
}
