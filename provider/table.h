/* SPDX-License-Identifier: MIT */
/*
 * The code table: every live method version and stub, and the modules,
 * in the record store's slots, indexed by liburcu lock-free hash tables
 * (cds_lfht, bulletproof RCU flavour: runtime threads need no
 * registration):
 *
 *  - code: keyed by 4 KiB page. A record has a node on every page it
 *    touches — the slot's own node on its first page, continuation nodes
 *    (struct letw_cont) on the others — inserted with cds_lfht_add_unique
 *    and a match that reports *overlap*: records touching one page share
 *    one hash and so one duplicate chain, and add_unique is atomic
 *    within a chain, so of two racing overlapping publishers at most one
 *    succeeds, without a lock, in one table operation per page.
 *  - Records spanning more than LETW_SMALL_PAGES pages ("big": e.g. a
 *    whole stub heap) keep only their first-page node and register in
 *    `bigs`; the overlap check against them is the Dekker pair described
 *    in table.c. A big publish scans the store's slot chunks whose address
 *    range (store.h) meets it; small ones only widen their chunk's range.
 *  - modules: keyed by module id. exts: line tables, keyed by slot index.
 *
 * Built with LETW_GLOBAL_LOCK, the same table takes one mutex in every
 * mutation and the walker holds it for the whole pass: the design lttng-etw
 * replaces, kept as the benchmark and deadlock-model baseline.
 */
#ifndef LETW_TABLE_H
#define LETW_TABLE_H

#include <pthread.h>
#include <stdint.h>

#include "intern.h"
#include "lines.h"
#include "reclaim.h"
#include "slot.h"
#include "store.h"

#define LETW_PAGE_SHIFT 12
#define LETW_SMALL_PAGES 64u

/* A record's node on one more page than its first. */
struct letw_cont {
	struct cds_lfht_node node;     /* code table, key: the page */
	uint32_t tag;                  /* LETW_ST_CONT, where a slot has `state` */
	uint32_t slot;                 /* the record's slot index */
	struct letw_retired_chunk rc;
};

/* A big record's entry in the registry. */
struct letw_big {
	struct cds_lfht_node node;     /* bigs, key: slot index */
	uint32_t slot;
	uint32_t pad;
	struct letw_retired_chunk rc;
};

/* A record's line table, found by slot index (the slot has no room). */
struct letw_ext {
	struct cds_lfht_node node;     /* exts, key: slot index */
	struct letw_retired_chunk rc;
	uint32_t slot;
	uint32_t pad;
	struct letw_lines lines;       /* its columns follow in the chunk */
};

/*
 * Laid out by who writes what (the table is allocated 64-byte aligned,
 * table.c, so that these groups are lines of their own at run time):
 * read-mostly fields every publish reads (interning, the tables, the pass
 * marks); the retire stacks, which every unpublish, the control thread's
 * tick and the call_rcu thread's batches write; the live counters, which
 * every publish and unpublish writes. Mixed, an unpublish or a batch on
 * another core made a publish's read of `code` or `intern.serial` miss.
 */
struct letw_table {
	struct letw_store store;
	struct letw_intern intern;
	struct cds_lfht *code, *modules, *bigs, *exts;
	/*
	 * The walker's accounting (rundown/walker.c): while a pass runs,
	 * mark_unpub and then mark_pub hold its mark; unpublish reads
	 * mark_unpub before it kills a record and counts in `skipped` the
	 * records the pass has not claimed yet; publish stamps new records
	 * with mark_pub so the pass leaves them to their load event.
	 */
	uint32_t mark_unpub, mark_pub;

	struct letw_reclaim reclaim __attribute__((aligned(64)));

	long live_methods __attribute__((aligned(64))); /* uatomic, with the three below */
	long live_stubs, live_modules, live_bigs;
	/* uatomic: continuation nodes in `code`. Its slot nodes are
	 * live_methods + live_stubs: a one-page publish updates one shared
	 * counter, not two. */
	unsigned long cont_nodes;
	unsigned long ext_nodes;       /* uatomic: nodes in `exts` */
	long skipped;                  /* uatomic, see mark_unpub */
	/* Control thread: the sizes last asked for (code, modules, exts are
	 * resized by letw_table_maintain, never by the inserting thread). */
	unsigned long code_size, modules_size, exts_size;
#ifdef LETW_GLOBAL_LOCK
	/* Baseline only: taken by every mutation and held by the walker for
	 * a whole pass. Nothing else is taken while it is held. */
	pthread_mutex_t big_lock;
#endif
};

struct letw_table *letw_table_new(uint64_t expected, uint64_t max_records);
/* Unpublish everything, wait for the deferred frees, unmap. The caller
 * guarantees no concurrent mutation or walk. */
void letw_table_destroy(struct letw_table *t);

/*
 * Insert a prepared record (slot PENDING, fields set; ext NULL or its line
 * table, not yet linked) and make it LIVE. On failure (-EEXIST overlap,
 * -ENOMEM) everything is retired and the table is unchanged. Caller holds
 * urcu_bp_read_lock, and keeps holding it while it emits the load event.
 */
int letw_table_insert(struct letw_table *t, struct letw_slot *s, struct letw_ext *ext);

/*
 * Kill the LIVE record of this kind starting at `start` and unlink it;
 * *out stays readable until the caller's read-side section ends. The
 * caller then calls letw_table_retire. -ENOENT when there is none.
 */
int letw_table_remove(struct letw_table *t, uint64_t start, int kind,
		      struct letw_slot **out);
void letw_table_retire(struct letw_table *t, struct letw_slot *s);

int letw_table_module_insert(struct letw_table *t, struct letw_slot *s);
int letw_table_module_remove(struct letw_table *t, uint64_t module_id,
			     struct letw_slot **out);

/* The line table of a LIVE slot with LETW_ST_LINES, or NULL. Read side. */
const struct letw_lines *letw_table_lines(struct letw_table *t, uint32_t slot);

/* Control thread, outside any read-side section: everything below, plus
 * the hash tables' resizes and the interning table's upkeep. */
void letw_table_maintain(struct letw_table *t);
/* The bounded part, also run by the walker between its sections while a
 * pass holds off letw_table_maintain: free what a grace period released,
 * then keep the store stocked ahead of the publishers. Same thread and
 * context rules. */
void letw_table_tick(struct letw_table *t);

/*
 * Unlink and retire, if linked: slot idx's continuation node on `page`,
 * its big-registry entry (live_bigs--), its line table (ext_nodes--).
 * 1 if there was one, 0 if not. Inside a read-side section. Shared by table.c's unpublish and backout
 * and table_fork.c's repair.
 */
int letw_table_drop_cont(struct letw_table *t, uint64_t page, uint32_t idx);
int letw_table_drop_big(struct letw_table *t, uint32_t idx);
int letw_table_drop_ext(struct letw_table *t, uint32_t idx);

/*
 * Fork child only (fork.c letw_fork_child), single-threaded, after
 * liburcu's after-fork hooks: back out the publishes and finish the
 * unpublishes the parent's other threads were in the middle of, and
 * recount the counters (table_fork.c).
 */
void letw_table_fork_child(struct letw_table *t);

void letw_table_walk_lock(struct letw_table *t);
void letw_table_walk_unlock(struct letw_table *t);

#endif
