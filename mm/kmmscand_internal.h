/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the kmmscand scanner (mm/kmmscand.c) and the promotion
 * thread (mm/kmmscand_migrate.c).  Not for use outside mm/.
 */
#ifndef _MM_KMMSCAND_INTERNAL_H
#define _MM_KMMSCAND_INTERNAL_H

#include <linux/kmmscand.h>	/* enum kmmscand_drop_reason */
#include <linux/types.h>	/* bool */

struct folio;
struct mm_struct;

/* Tunables, written from sysfs (mm/kmmscand.c), read with READ_ONCE(). */
extern bool kmmscand_enabled;
extern unsigned int kmmscand_migrate_batch;
extern unsigned int kmmscand_promote_rate_mbps;

/* Capacity of the scanner -> migrator queue, in folios. */
#define KMMSCAND_QUEUE_LEN	8192
/* Largest migrate_batch, in folios (and pages). */
#define KMMSCAND_BATCH_MAX	4096

bool kmmscand_queue_folio(struct folio *folio, struct mm_struct *mm,
			  int nid, unsigned int nr);
void kmmscand_queue_purge(struct mm_struct *mm, enum kmmscand_drop_reason why);
void kmmscand_migrate_wake(bool tunables);
bool kmmscand_folio_promotable(struct folio *folio);
int kmmscand_migrate_init(void);
void kmmscand_migrate_exit(void);

/* Implemented by the scanner, called by the migrator. */
void kmmscand_target_failed(struct mm_struct *mm, int nid);

#endif /* _MM_KMMSCAND_INTERNAL_H */
