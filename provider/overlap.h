/* SPDX-License-Identifier: MIT */
/*
 * The code table's overlap checks (table.c letw_table_insert): which live
 * record a new one's range meets. Small records are checked by the code
 * table itself, one node per page; big ones through these scans, the two
 * sides of the Dekker pair described over letw_table_insert. All read
 * side: callers hold urcu_bp_read_lock.
 */
#ifndef LETW_OVERLAP_H
#define LETW_OVERLAP_H

#include "table.h"

/* letw_match_overlap's key: the table (to resolve continuation nodes)
 * and the record being inserted. */
struct letw_overlap_key {
	struct letw_table *t;
	const struct letw_slot *rec;
};

/* cds_lfht_add_unique's match on a page chain: "this node's record
 * overlaps the new one". */
int letw_match_overlap(struct cds_lfht_node *node, const void *key);
/* Is any big record other than s overlapping it? Every small publish asks
 * while a big record is live. */
int letw_overlaps_big(struct letw_table *t, const struct letw_slot *s);
/* Is any small record overlapping big record s? Big publishes only. */
int letw_overlaps_any(struct letw_table *t, const struct letw_slot *s);

#endif
