/* SPDX-License-Identifier: MIT */
/*
 * Deferred reclamation without malloc. A thread that unlinks something
 * (unpublish, a publish backing out, the last put of an interned context)
 * pushes it on a lock-free stack of its kind (cds_lfs: one cmpxchg,
 * retried only if another push or the control thread's pop-all got in
 * between; no thread ever waits for another, and no half-linked node is
 * left behind, even by a fork). The control thread periodically pops each
 * stack whole into a batch, itself a store chunk, and hands it to liburcu's
 * call_rcu; the batch callback, on liburcu's call_rcu thread after the
 * grace period, releases everything in it back to the store's free lists.
 * One rcu_head per batch instead of per record: records have no room for
 * one, and a batch costs the publishers nothing.
 */
#ifndef LETW_RECLAIM_H
#define LETW_RECLAIM_H

#include <stdint.h>

#include <urcu/lfstack.h>

struct letw_slot;
struct letw_ictx;
struct letw_store;
struct letw_intern;

/* Embedded in chunks retired on their own (continuation nodes, line
 * tables): released as `size` bytes from `offset` bytes before it. */
struct letw_retired_chunk {
	struct cds_lfs_node retire;
	uint32_t size;
	uint32_t offset;
};

struct letw_reclaim {
	struct letw_store *st;
	struct letw_intern *in;
	struct __cds_lfs_stack slots, ictx, chunks;
	long pending; /* items retired, not yet released (uatomic) */
	long batches_in_flight; /* uatomic */
};

void letw_reclaim_init(struct letw_reclaim *rc, struct letw_store *st,
		       struct letw_intern *in);

/* Any thread, wait-free. The slot must be DEAD or never published, and
 * unreachable from the tables (unlinked): its names and context are
 * released with it. */
void letw_retire_slot(struct letw_reclaim *rc, struct letw_slot *s);
void letw_retire_ictx(struct letw_reclaim *rc, struct letw_ictx *e);
void letw_retire_chunk(struct letw_reclaim *rc, struct letw_retired_chunk *c);

/* Control thread (or the walker between its read-side sections): batch
 * what was retired so far and queue it for after a grace period. */
void letw_reclaim_tick(struct letw_reclaim *rc);


/* Release a slot's owned data and return it to the store: the batch
 * callback's per-slot work, also used where nobody can hold the slot. */
void letw_slot_release(struct letw_reclaim *rc, struct letw_slot *s);

#endif
