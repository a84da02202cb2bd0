// SPDX-License-Identifier: GPL-2.0
/*
 * softdirty_thp_migrate -- migrating a PMD-mapped THP sets its soft-dirty
 * bit although nobody wrote to it (mainline 6.12, x86).
 *
 * remove_migration_pmd() rebuilds the PMD and calls pmd_mkdirty() when the
 * folio and the migration entry are dirty; on x86 pmd_mkdirty() also sets
 * _PAGE_SOFT_DIRTY, and nothing clears it again when the entry was not
 * soft-dirty. remove_migration_pte() got that fix ("mm/migrate: preserve
 * exact soft-dirty state", 2024: an explicit pte_clear_soft_dirty()); the
 * PMD path did not. So a THP that moves between clear_refs and the next
 * pagemap read looks written: the "huge page dirty bit" check of
 * tools/testing/selftests/mm/soft-dirty.c (and the soft-dirty checks of
 * pagemap_ioctl) fail whenever anything migrates the THP in that window --
 * kmmscand promoting it, NUMA balancing, compaction, or, as here, a plain
 * move_pages(2) with kmmscand disabled.
 *
 * The same steps on a 4 KiB page are run as a control: there 6.12 keeps
 * the bit clear.
 *
 * Migration entries carry the dirty bit only with CONFIG_SWAP=y (and
 * enough swap-offset bits, migration_entry_supports_ad()); without swap
 * support the rebuilt PMD is clean and the bug cannot show. The
 * `make test-mm` kernel has no CONFIG_SWAP (no /proc/swaps): it skips.
 *
 * Exit status: 0 the THP case reproduced (soft-dirty set by migration
 * alone); 1 it did not; 4 cannot run here (one node, no THP, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PM_SOFT_DIRTY	(1ULL << 55)
#define PM_PRESENT	(1ULL << 63)
#define MPOL_MF_MOVE	(1 << 1)
#define THP_SIZE	(2UL << 20)

static int pagemap_fd;

static uint64_t pagemap(void *addr)
{
	uint64_t e;
	off_t off = (uintptr_t)addr / getpagesize() * sizeof(e);

	if (pread(pagemap_fd, &e, sizeof(e), off) != sizeof(e)) {
		perror("pread pagemap");
		exit(4);
	}
	return e;
}

static void clear_soft_dirty(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd < 0 || write(fd, "4", 1) != 1) {
		perror("clear_refs");
		exit(4);
	}
	close(fd);
}

static int node_of(void *addr)
{
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1UL, &addr, NULL, &status, 0))
		return -1;
	return status;
}

static int move_to(void *addr, int node)
{
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1UL, &addr, &node, &status, MPOL_MF_MOVE))
		return -errno;
	return status;
}

static long anon_huge_kb(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* One case: returns 1 when migration alone left the page soft-dirty. */
static int one(const char *what, char *p, size_t len)
{
	int from, to, st;
	uint64_t before, after;

	memset(p, 0x5a, len);			/* present, dirty */
	clear_soft_dirty();
	before = pagemap(p);
	from = node_of(p);
	if (!(before & PM_PRESENT) || from < 0) {
		printf("# %s: page not present\n", what);
		exit(4);
	}
	to = !from;
	st = move_to(p, to);
	if (st != to) {
		printf("# %s: move_pages to node %d failed: %d\n", what, to, st);
		exit(4);
	}
	after = pagemap(p);
	printf("# %s: node %d -> %d, soft-dirty before %d after %d (no write in between)\n",
	       what, from, to, !!(before & PM_SOFT_DIRTY), !!(after & PM_SOFT_DIRTY));
	return !(before & PM_SOFT_DIRTY) && (after & PM_SOFT_DIRTY);
}

int main(void)
{
	char *raw, *thp, *small;
	int thp_bad, small_bad;

	if (access("/sys/devices/system/node/node1", F_OK)) {
		printf("# SKIP: needs two NUMA nodes\n");
		return 4;
	}
	if (access("/proc/swaps", F_OK)) {
		printf("# SKIP: kernel without CONFIG_SWAP: migration entries keep no dirty bit\n");
		return 4;
	}
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0) {
		perror("/proc/self/pagemap");
		return 4;
	}
	raw = mmap(NULL, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	small = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED || small == MAP_FAILED) {
		perror("mmap");
		return 4;
	}
	thp = (char *)(((uintptr_t)raw + THP_SIZE - 1) & ~(THP_SIZE - 1));
	if (madvise(thp, THP_SIZE, MADV_HUGEPAGE)) {
		perror("madvise(MADV_HUGEPAGE)");
		return 4;
	}
	memset(thp, 1, THP_SIZE);
	if (anon_huge_kb() < 2048) {
		printf("# SKIP: no THP (AnonHugePages %ld kB)\n", anon_huge_kb());
		return 4;
	}
	small_bad = one("4K page", small, getpagesize());
	thp_bad = one("PMD-mapped THP", thp, THP_SIZE);
	if (anon_huge_kb() < 2048)
		printf("# note: the THP was split on the way\n");
	printf("%s - soft-dirty set by migrating a 4K page alone\n", small_bad ? "not ok 1" : "ok 1");
	printf("%s - soft-dirty set by migrating a PMD-mapped THP alone\n", thp_bad ? "not ok 2" : "ok 2");
	if (thp_bad) {
		printf("REPRODUCED: migrating a clean PMD-mapped THP made it soft-dirty\n");
		return 0;
	}
	printf("NOT REPRODUCED\n");
	return 1;
}
