/* SPDX-License-Identifier: MIT */
/*
 * The table in a fork child (fork.c letw_fork_child).
 *
 * The hooks quiesce the control thread and liburcu, not the runtime's
 * threads: another thread of the parent may be anywhere in a publish or an
 * unpublish when fork() copies the address space, and that thread does
 * not exist in the child. Its call completes in the parent (and returns
 * there what it would have anyway); in the child it never returns, so the
 * child's copy of the runtime never learnt it succeeded. Left as they are,
 * such records were ghosts in the child: a PENDING one occupied its range
 * (a new publish there: -EEXIST) while no unpublish could find it
 * (-ENOENT: remove matches LIVE records only), it was in no live count,
 * and its slot and strings were never reclaimed. So here, on the forking
 * thread, before anything else runs in the child:
 *
 *  - PENDING (a publish between slot_new and its LIVE store: record.c,
 *    table.c letw_table_insert, letw_table_module_insert): backed out as
 *    the publish's own backout does it — DEAD, every node it had linked
 *    unlinked (its first-page node, continuation nodes, big-registry
 *    entry, line table), the slot retired. No load event: the child never
 *    announced it. A chunk the publisher had taken but not linked yet (a
 *    continuation node, big entry or line table between its pop and its
 *    link) cannot be found and stays taken.
 *  - DEAD with a node still linked (an unpublish between its kill and its
 *    last unlink, or a publish's backout between its DEAD store and its
 *    last unlink): finished, and the slot retired. Both paths retire the
 *    slot only after their last unlink, so a DEAD slot with a node linked
 *    was never retired, and one with none linked was (or is in the short
 *    stretch between the last unlink and the retire, whose slot then
 *    stays taken: leaked, not wrong — nothing can match a DEAD record).
 *  - LIVE: whole (LIVE is the insert's last store and the kill is the
 *    unpublish's first), kept.
 * The counters are recounted from the LIVE records found: a thread cut
 * between a LIVE store and its count(), or between an unlink and its
 * decrement, left them off by one for good, and live_bigs off by one
 * either made every small publish scan the registry or, one too low,
 * skip a big record's overlap check.
 *
 * Cost: one walk of the committed slots, as the rundown walker's, paid
 * once by the child at fork (a state read per slot; the pages are only
 * read, so copy-on-write copies none but those of repaired records). A
 * PENDING or DEAD record costs one hash lookup per page it spans (at most
 * LETW_SMALL_PAGES; a big one: one, plus the registry's short chain) and
 * one for its line table if it may have one; DEAD ones are mostly those
 * waiting for a grace period. Measured (forkghost's churn: ~33 K slots,
 * ~11 K deferred frees at the fork): ~1 ms more in letw_fork_child. No
 * lock is taken, and the publish paths are unchanged (but for the order of
 * two stores in record.c's name_put).
 */
#include <pthread.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "hash.h"
#include "table.h"

static int match_node(struct cds_lfht_node *node, const void *key)
{
	return node == key;
}

/* Unlink node n if it is in ht (found by identity: a slot whose publish
 * stopped before its cds_lfht_node_init has link bytes there that must
 * not be read as a node). 1 if it was. */
static int unlink_node(struct cds_lfht *ht, unsigned long hash, struct cds_lfht_node *n)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	cds_lfht_lookup(ht, hash, match_node, n, &it);
	node = cds_lfht_iter_get_node(&it);
	return node && cds_lfht_del(ht, node) == 0;
}

/* Every node a method or stub in slot idx may have linked, unlinked and
 * retired; 1 if any was. The pages as letw_table_insert keys them; st is
 * the state the fork left (before repair's DEAD store). */
static int unlink_code(struct letw_table *t, struct letw_slot *s, uint32_t idx, uint32_t st)
{
	uint32_t kind = letw_st_kind(st);
	uint64_t p0 = s->start >> LETW_PAGE_SHIFT;
	uint64_t pn = (s->start + s->size - 1) >> LETW_PAGE_SHIFT;
	int big = pn - p0 + 1 > LETW_SMALL_PAGES, found;

	found = unlink_node(t->code, letw_hash_u64(p0), &s->node);
	for (uint64_t p = p0 + 1; !big && p <= pn; p++)
		found |= letw_table_drop_cont(t, p, idx);
	if (big)
		found |= letw_table_drop_big(t, idx);
	/* The line table is linked just before the LIVE store, and its flag
	 * joins the state with it: a PENDING record may have one, a DEAD
	 * one only if it was LIVE with one (a backout never linked it). */
	if (kind == LETW_SLOT_METHOD &&
	    (letw_st_life(st) == LETW_LIFE_PENDING || (st & LETW_ST_LINES)))
		found |= letw_table_drop_ext(t, idx);
	return found;
}

/* What one slot adds to the counters recounted below. */
struct fork_counts {
	long methods, stubs, modules, bigs;
	unsigned long conts, exts;
};

static void count_live(struct fork_counts *c, const struct letw_slot *s, uint32_t st)
{
	uint32_t kind = letw_st_kind(st);

	if (kind == LETW_SLOT_MODULE) {
		c->modules++;
		return;
	}
	if (kind == LETW_SLOT_METHOD)
		c->methods++;
	else
		c->stubs++;
	if (st & LETW_ST_BIG)
		c->bigs++;
	else
		c->conts += ((s->start + s->size - 1) >> LETW_PAGE_SHIFT) -
			    (s->start >> LETW_PAGE_SHIFT);
	if (st & LETW_ST_LINES)
		c->exts++;
}

static void repair(struct letw_table *t, struct letw_slot *s, uint32_t idx, uint32_t st)
{
	uint32_t kind = letw_st_kind(st), life = letw_st_life(st);
	int found;

	if (life == LETW_LIFE_PENDING)
		letw_slot_set_state(s, letw_st_with_life(st, LETW_LIFE_DEAD));
	found = kind == LETW_SLOT_MODULE ?
		unlink_node(t->modules, letw_hash_u64(s->start), &s->node) :
		unlink_code(t, s, idx, st);
	if (life == LETW_LIFE_PENDING || found)
		letw_table_retire(t, s);
}

void letw_table_fork_child(struct letw_table *t)
{
	uint32_t bound = letw_store_slot_bound(&t->store);
	struct fork_counts c = { 0 };

#ifdef LETW_GLOBAL_LOCK
	/* Baseline: a parent thread may have held it at the fork. */
	pthread_mutex_init(&t->big_lock, NULL);
#endif
	/* cds_lfht lookups and deletes want a read-side section; nothing
	 * waits for a grace period in the child before the control thread
	 * starts, after this. */
	urcu_bp_read_lock();
	for (uint32_t i = letw_store_slot_next_ready(&t->store, 0, bound); i < bound;
	     i = letw_store_slot_next_ready(&t->store, i + 1, bound)) {
		struct letw_slot *s = letw_store_slot(&t->store, i);
		uint32_t st = letw_slot_state(s), life = letw_st_life(st);

		if (life == LETW_LIFE_LIVE)
			count_live(&c, s, st);
		else if (life == LETW_LIFE_PENDING || life == LETW_LIFE_DEAD)
			repair(t, s, i, st);
	}
	urcu_bp_read_unlock();
	uatomic_set(&t->live_methods, c.methods);
	uatomic_set(&t->live_stubs, c.stubs);
	uatomic_set(&t->live_modules, c.modules);
	uatomic_set(&t->live_bigs, c.bigs);
	uatomic_set(&t->cont_nodes, c.conts);
	uatomic_set(&t->ext_nodes, c.exts);
}
