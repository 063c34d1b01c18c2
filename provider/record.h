/* SPDX-License-Identifier: MIT */
/*
 * Code records: one immutable block per published method version or stub,
 * holding its payload (emitted straight from here by both the publish path
 * and the walker), its strings, and its nodes in the code table.
 *
 * Lifetime: unpublish marks a record dead, unlinks it and hands it to
 * call_rcu, so it is released only after every reader that could have
 * found it has left its read-side section. The walker, though, keeps
 * pointers to the records it collected under rcu_read_lock and emits from
 * them *outside* any read-side section (walker.c says why). So while a walk
 * is in progress, released records are parked instead of freed, and the
 * walk frees the parking lot when it ends. This costs the walker one atomic
 * per pass instead of a reference count write on every record it visits.
 */
#ifndef LETW_RECORD_H
#define LETW_RECORD_H

#include <stdint.h>
#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>

#include <lttng-etw/lttng-etw.h>
#include "letw_payload.h"
#include "lines.h"

enum letw_rec_kind {
	LETW_REC_METHOD = 1,
	LETW_REC_STUB = 2,
};

/* Overlap index entry: one per 4 KiB page a record touches. */
struct letw_page_node {
	struct cds_lfht_node node;
	uint64_t page;
	struct letw_rec *rec;
};

/*
 * Field order follows the walker's reads: phase 1 touches only `node`;
 * phase 2 reads `dead`, `kind` and the payload, then the strings. Keeping
 * them adjacent keeps a record's walk to two or three cache lines.
 */
struct letw_rec {
	struct cds_lfht_node node; /* code table, keyed by start */
	int dead;     /* 0 → 1 once, by the one unpublish that wins (cmpxchg) */
	int kind;
	union {
		struct letw_tp_method method;
		struct letw_tp_stub stub;
	} p;
	struct rcu_head rcu;
	uint64_t start;
	uint64_t end; /* exclusive */
	uint32_t npages;
	struct letw_page_node *pages; /* npages entries, same allocation */
	const struct letw_lines *lines; /* NULL, or in the same allocation */
};

struct letw_module_rec {
	struct cds_lfht_node node; /* module table, keyed by module_id */
	struct rcu_head rcu;
	int dead;
	struct letw_tp_module p;
};

#define LETW_PAGE_SHIFT 12

/* Validation shared by every publish call: the string's length (0 for
 * an optional NULL) or a negative errno, from one bounded scan. */
long letw_validate_string(const char *s, int required);

/* Build a record (validated, strings copied), owned by the caller until
 * it is linked into a table. */
int letw_rec_new_method(const struct letw_method *m,
			const struct letw_method_opts *opts, uint16_t instance_id,
			struct letw_rec **out);
int letw_rec_new_stub(const struct letw_stub *s, uint16_t instance_id,
		      struct letw_rec **out);
int letw_module_rec_new(const struct letw_module *m, uint16_t instance_id,
			struct letw_module_rec **out);

/* Free a record no other thread can have seen (never linked). */
void letw_rec_put(struct letw_rec *rec);
void letw_module_rec_put(struct letw_module_rec *mod);
/* Release an unlinked record after a grace period (never waits). */
void letw_rec_put_deferred(struct letw_rec *rec);
void letw_module_rec_put_deferred(struct letw_module_rec *mod);

/* Bracket a walk: records released in between are parked, not freed, and
 * freed when the last walk in progress ends. */
void letw_walk_begin(void);
void letw_walk_end(void);

/* Records (code and modules) allocated and not yet freed: the live ones
 * plus those waiting for a grace period or a walker's pin. */
uint64_t letw_rec_allocated(void);

#endif
