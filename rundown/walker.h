/* SPDX-License-Identifier: MIT */
/*
 * The rundown walker: enumerates every live record of a code table for one
 * or both rundown flavours. Runs on the library's control thread only.
 *
 * Invariants (DESIGN §5), relied on by tests and the report sink:
 *  - a record live for the whole walk is emitted exactly once per flavour;
 *  - a record unpublished before the walk began is never emitted;
 *  - a record unpublished during the walk is emitted or counted in
 *    skipped_raced, never read after it is freed;
 *  - the walker takes no lock a publisher takes (except in the
 *    LETW_GLOBAL_LOCK baseline) and never calls back into the runtime:
 *    the sink is the library's own emitter.
 */
#ifndef LETW_WALKER_H
#define LETW_WALKER_H

#include <stdint.h>

#include "letw_payload.h"

struct letw_table;

enum letw_flavour {
	LETW_FLAVOUR_DCSTART = 0,
	LETW_FLAVOUR_DCEND = 1,
	LETW_NR_FLAVOURS = 2,
};

/* Each callback returns 1 when it emitted the record, 0 when the event is
 * disabled (so `emitted` counts only records that reached a session). */
struct letw_walk_sink {
	int (*module)(void *ctx, enum letw_flavour f, const struct letw_tp_module *md);
	int (*method)(void *ctx, enum letw_flavour f, const struct letw_tp_method *m);
	int (*stub)(void *ctx, enum letw_flavour f, const struct letw_tp_stub *s);
	void *ctx;
	/* Optional: when it reads non-zero the walk stops early and returns
	 * -ECANCELED (process exit or shutdown while a pass runs). */
	const int *cancel;
};

struct letw_walk_stats {
	uint64_t emitted[LETW_NR_FLAVOURS];
	uint64_t skipped_raced;
	uint64_t pinned;         /* records collected in phase 1, emitted in phase 2 */
	uint64_t read_side_ns;   /* time spent inside rcu_read_lock */
};

/* passes: LETW_PASS_* bits. Returns 0, -ENOMEM, or -ECANCELED. */
int letw_walk(struct letw_table *t, unsigned int passes,
	      const struct letw_walk_sink *sink, struct letw_walk_stats *out);

#endif
