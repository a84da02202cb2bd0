/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmmscand_stress: a worker process.  Each of its threads owns a few
 * regions (kmmscand_stress_region.h) and, in a random mix, writes and
 * verifies pages, changes the regions' layout, advises them (DONTNEED,
 * COLD, PAGEOUT, HUGEPAGE, NOHUGEPAGE, COLLAPSE), moves pages between the
 * nodes (move_pages, mbind with MPOL_MF_MOVE), and forks to check that
 * copy-on-write keeps both sides intact; one thread per process toggles
 * PR_SET_KMMSCAND.  A SIGSEGV or SIGBUS is reported with the operation
 * and the mappings around the address.  Defined in
 * kmmscand_stress_worker.c.
 */
#ifndef __KMMSCAND_STRESS_WORKER_H
#define __KMMSCAND_STRESS_WORKER_H

#include "kmmscand_stress.h"

/*
 * Run worker @wid: @nthreads threads until stress->stop, then a final
 * check of every page they own.  Returns 0, 1 when a page did not hold
 * what its owner wrote, 2 when the threads could not start.
 */
int stress_worker_main(int wid, int nthreads);

/* Report a SIGSEGV or SIGBUS of this process with the mappings around it. */
void install_fault_handler(void);

#endif /* __KMMSCAND_STRESS_WORKER_H */
