/* SPDX-License-Identifier: MIT */
#include <stddef.h>

#include "overlap.h"
#include "tsan.h"

/* The record a code-table node belongs to: a slot, or a continuation
 * node naming one. Both put a 32-bit word right after the node; only
 * continuation nodes set LETW_ST_CONT in it. */
static struct letw_slot *node_owner(struct letw_table *t, struct cds_lfht_node *node)
{
	const uint32_t *tag = (const uint32_t *)(node + 1);

	_Static_assert(offsetof(struct letw_slot, state) == sizeof(struct cds_lfht_node) &&
		       offsetof(struct letw_cont, tag) == sizeof(struct cds_lfht_node),
		       "slots and continuation nodes are told apart by this word");
	if (__atomic_load_n(tag, __ATOMIC_RELAXED) & LETW_ST_CONT)
		return letw_store_slot(&t->store,
				       caa_container_of(node, struct letw_cont, node)->slot);
	return caa_container_of(node, struct letw_slot, node);
}

static int ranges_overlap(const struct letw_slot *a, const struct letw_slot *b)
{
	return a->start < b->start + b->size && b->start < a->start + a->size;
}

/* Free and dead records give their range back. */
int letw_match_overlap(struct cds_lfht_node *node, const void *key)
{
	const struct letw_overlap_key *k = key;
	struct letw_slot *o = node_owner(k->t, node);

	if (o == k->rec || !letw_slot_occupies(letw_slot_state(o)))
		return 0;
	return ranges_overlap(o, k->rec);
}

/* The registry has one bucket (table.c letw_table_new says why). */
int letw_overlaps_big(struct letw_table *t, const struct letw_slot *s)
{
	struct cds_lfht_iter it;
	struct letw_big *b;

	cds_lfht_for_each_entry(t->bigs, &it, b, node) {
		struct letw_slot *o;

		/* Found through cds_lfht's asm: tell TSan (table.c releases). */
		letw_hb_acquire(b);
		o = letw_store_slot(&t->store, b->slot);

		if (o != s && letw_slot_occupies(letw_slot_state(o)) && ranges_overlap(o, s))
			return 1;
	}
	return 0;
}

/* A big record's check against every small one: a scan of the store that
 * skips each chunk whose address range (store.h) misses the big range, so
 * O(chunks) plus the chunks it does meet; paid by big publishes only. Big
 * records never widen a range (the registry finds them), so a 4 GiB heap
 * does not make every later scan visit its chunk. */
int letw_overlaps_any(struct letw_table *t, const struct letw_slot *s)
{
	uint32_t bound = letw_store_slot_bound(&t->store);

	for (uint32_t c = 0; c * LETW_STORE_SLOT_CHUNK < bound; c++) {
		if (!letw_store_slot_chunk_ready(&t->store, c) ||
		    !letw_store_summary_meets(&t->store, c, s->start, s->start + s->size))
			continue;
		for (uint32_t i = 0; i < LETW_STORE_SLOT_CHUNK; i++) {
			struct letw_slot *o = letw_store_slot(&t->store,
							      c * LETW_STORE_SLOT_CHUNK + i);
			uint32_t st = letw_slot_state(o);
			uint32_t k = letw_st_kind(st);

			if (o == s || !letw_slot_occupies(st) ||
			    (k != LETW_SLOT_METHOD && k != LETW_SLOT_STUB))
				continue;
			if (ranges_overlap(o, s))
				return 1;
		}
	}
	return 0;
}
