/* SPDX-License-Identifier: MIT */
/*
 * The code table: every live method version and stub, keyed by code start,
 * in a liburcu lock-free resizable hash table (cds_lfht) using the
 * bulletproof RCU flavour, so runtime threads need no registration.
 *
 * A second cds_lfht, keyed by 4 KiB page, indexes which records touch which
 * page; publish uses it to refuse overlapping ranges without a lock
 * (see table.c). Modules live in a third table keyed by module id.
 *
 * Built with LETW_GLOBAL_LOCK, the same table takes one mutex in every
 * mutation and the walker holds it for the whole pass: the design lttng-etw
 * replaces, kept as the benchmark and deadlock-model baseline.
 */
#ifndef LETW_TABLE_H
#define LETW_TABLE_H

#include <pthread.h>
#include <stdint.h>

#include "record.h"

struct letw_table {
	struct cds_lfht *code;
	struct cds_lfht *pages;
	struct cds_lfht *modules;
	long live_methods;
	long live_stubs;
	long live_modules;
	unsigned long resize_hint; /* control thread only: see maintain */
#ifdef LETW_GLOBAL_LOCK
	/* Baseline only: taken by every mutation and held by the walker for
	 * a whole pass. Nothing else is taken while it is held. */
	pthread_mutex_t big_lock;
#endif
};

struct letw_table *letw_table_new(void);
/* Unlink everything and release it after a grace period. The caller
 * guarantees no concurrent mutation or walk. */
void letw_table_destroy(struct letw_table *t);

/*
 * Insert a record. On success the table owns the caller's reference and
 * the record is visible to walkers. On failure (-EEXIST: overlap) the
 * record has been released (after a grace period, since other publishers
 * may have seen its page nodes). Caller must hold urcu_bp_read_lock so the
 * record stays valid for its load event after this returns.
 */
int letw_table_insert(struct letw_table *t, struct letw_rec *rec);

/*
 * Unlink the live record of this kind starting at start, mark it dead and
 * return it in *out. Caller holds urcu_bp_read_lock (so *out stays valid
 * while it emits the unload event) and then calls letw_rec_put_deferred.
 * -ENOENT when there is no such live record.
 */
int letw_table_remove(struct letw_table *t, uint64_t start, int kind,
		      struct letw_rec **out);

int letw_table_module_insert(struct letw_table *t, struct letw_module_rec *mod);
int letw_table_module_remove(struct letw_table *t, uint64_t module_id,
			     struct letw_module_rec **out);

/* Control thread, outside any read-side section and any pass. */
void letw_table_maintain(struct letw_table *t);

void letw_table_walk_lock(struct letw_table *t);
void letw_table_walk_unlock(struct letw_table *t);

#endif
