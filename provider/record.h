/* SPDX-License-Identifier: MIT */
/*
 * Code records: one immutable block per published method version or stub,
 * holding its payload (emitted straight from here by both the publish path
 * and the walker), its strings, and its nodes in the code table.
 *
 * Lifetime: a record starts with one reference, owned by the table. The
 * walker may pin it (one more reference) while it is reachable under
 * rcu_read_lock. Unpublish marks it dead, unlinks it, and drops the table's
 * reference from a call_rcu callback, i.e. after every reader that could
 * have found it has left its read-side section. The last reference frees.
 */
#ifndef LETW_RECORD_H
#define LETW_RECORD_H

#include <stdint.h>
#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>

#include <lttng-etw/lttng-etw.h>
#include "letw_payload.h"

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

struct letw_rec {
	struct cds_lfht_node node; /* code table, keyed by start */
	struct rcu_head rcu;
	uint64_t start;
	uint64_t end; /* exclusive */
	int kind;
	int dead;     /* 0 → 1 once, by the one unpublish that wins (cmpxchg) */
	long refs;
	uint32_t npages;
	union {
		struct letw_tp_method method;
		struct letw_tp_stub stub;
	} p;
	struct letw_page_node *pages; /* npages entries, same allocation */
};

struct letw_module_rec {
	struct cds_lfht_node node; /* module table, keyed by module_id */
	struct rcu_head rcu;
	int dead;
	long refs;
	struct letw_tp_module p;
};

#define LETW_PAGE_SHIFT 12

/* Validation shared by every publish call: 0 or a negative errno. */
int letw_validate_string(const char *s, int required);

/* Build a record (validated, strings copied); *out owns one reference. */
int letw_rec_new_method(const struct letw_method *m, uint16_t instance_id,
			struct letw_rec **out);
int letw_rec_new_stub(const struct letw_stub *s, uint16_t instance_id,
		      struct letw_rec **out);
int letw_module_rec_new(const struct letw_module *m, uint16_t instance_id,
			struct letw_module_rec **out);

void letw_rec_get(struct letw_rec *rec);
void letw_rec_put(struct letw_rec *rec);
/* Drop the table's reference after a grace period (never waits). */
void letw_rec_put_deferred(struct letw_rec *rec);
void letw_module_rec_put_deferred(struct letw_module_rec *mod);

void letw_module_rec_get(struct letw_module_rec *mod);
void letw_module_rec_put(struct letw_module_rec *mod);

/* Records (code and modules) allocated and not yet freed: the live ones
 * plus those waiting for a grace period or a walker's pin. */
uint64_t letw_rec_allocated(void);

#endif
