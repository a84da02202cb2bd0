/* SPDX-License-Identifier: GPL-2.0 */
/* CPU time of a kernel thread and /proc/vmstat counters, for the smoke programs. */
#ifndef KTHREAD_CPU_H
#define KTHREAD_CPU_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* utime + stime in clock ticks of the kthread named @comm, -1 if absent */
static long long kthread_ticks(const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	long long ret = -1;

	while (d && (de = readdir(d))) {
		char path[300], buf[512], *p;
		unsigned long long ut, st;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		p = strchr(buf, '(');
		if (!p || strncmp(p + 1, comm, strlen(comm)) ||
		    p[1 + strlen(comm)] != ')')
			continue;
		p = strrchr(buf, ')');
		/* fields after ')': state(3) ... utime(14) stime(15) */
		if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			   &ut, &st) == 2)
			ret = ut + st;
	}
	if (d)
		closedir(d);
	return ret;
}

/* The value of /proc/vmstat counter @key, 0 if absent. */
static unsigned long long vmstat(const char *key)
{
	unsigned long long v, ret = 0;
	char name[64];
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fscanf(f, "%63s %llu", name, &v) == 2)
		if (!strcmp(name, key))
			ret = v;
	if (f)
		fclose(f);
	return ret;
}

#endif
