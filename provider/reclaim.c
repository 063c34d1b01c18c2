/* SPDX-License-Identifier: MIT */
#include <string.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "intern.h"
#include "reclaim.h"
#include "slot.h"
#include "store.h"
#include "tsan.h"

struct batch {
	struct rcu_head rcu;
	struct letw_reclaim *rc;
	uint32_t handle;
	struct cds_lfs_head *slots, *ictx, *chunks;
};

void letw_reclaim_init(struct letw_reclaim *rc, struct letw_store *st,
		       struct letw_intern *in)
{
	memset(rc, 0, sizeof(*rc));
	rc->st = st;
	rc->in = in;
	__cds_lfs_init(&rc->slots);
	__cds_lfs_init(&rc->ictx);
	__cds_lfs_init(&rc->chunks);
}

static void push(struct letw_reclaim *rc, struct __cds_lfs_stack *q,
		 struct cds_lfs_node *n)
{
	cds_lfs_node_init(n);
	letw_hb_release(n); /* taken in release_all (tsan.h) */
	(void)cds_lfs_push(q, n);
	uatomic_inc(&rc->pending);
}

void letw_retire_slot(struct letw_reclaim *rc, struct letw_slot *s)
{
	push(rc, &rc->slots, &s->retire);
}

void letw_retire_ictx(struct letw_reclaim *rc, struct letw_ictx *e)
{
	push(rc, &rc->ictx, &e->retire);
}

void letw_retire_chunk(struct letw_reclaim *rc, struct letw_retired_chunk *c)
{
	push(rc, &rc->chunks, &c->retire);
}

void letw_slot_release(struct letw_reclaim *rc, struct letw_slot *s)
{
	uint32_t st = letw_slot_state(s);
	uint32_t gen = (st & LETW_ST_GEN_MASK) + (1u << LETW_ST_GEN_SHIFT);

	if (letw_st_kind(st) == LETW_SLOT_METHOD && !(st & LETW_ST_NAME_INLINE) && s->name) {
		if (letw_names_handle_is(s->name))
			letw_names_put(&rc->st->names, s->name); /* its length is its block's */
		else
			letw_store_chunk_put(rc->st, s->name,
					     strlen(letw_store_chunk_ptr(rc->st, s->name)) + 1);
	}
	letw_intern_put(rc->in, s->ctx);
	s->ctx = s->name = 0;
	/* FREE, next generation: a walker's claim on the old record fails. */
	letw_slot_set_state(s, gen & LETW_ST_GEN_MASK);
	letw_store_slot_put(rc->st, s);
}

static long release_all(struct letw_reclaim *rc, struct batch *b)
{
	struct cds_lfs_node *n, *next;
	long count = 0;

	if (b->slots)
		cds_lfs_for_each_safe(b->slots, n, next) {
			letw_hb_acquire(n);
			letw_slot_release(rc, caa_container_of(n, struct letw_slot, retire));
			count++;
		}
	if (b->chunks)
		cds_lfs_for_each_safe(b->chunks, n, next) {
			struct letw_retired_chunk *c =
				caa_container_of(n, struct letw_retired_chunk, retire);

			letw_hb_acquire(n);
			letw_store_chunk_put(rc->st, letw_store_chunk_handle(rc->st,
						(char *)c - c->offset), c->size);
			count++;
		}
	/* The slot releases above may retire contexts: those go to rc's
	 * stack (the next batch), not this one. */
	if (b->ictx)
		cds_lfs_for_each_safe(b->ictx, n, next) {
			struct letw_ictx *e = caa_container_of(n, struct letw_ictx, retire);

			letw_hb_acquire(n);
			letw_store_chunk_put(rc->st, letw_store_chunk_handle(rc->st, e),
					     letw_ictx_size(e->len));
			count++;
		}
	return count;
}

/* On liburcu's call_rcu thread, after the grace period. */
static void batch_done(struct rcu_head *head)
{
	struct batch *b = caa_container_of(head, struct batch, rcu);
	struct letw_reclaim *rc;
	long n;

	/* call_rcu's queue is liburcu asm too: the tick's writes to the
	 * batch, released there (tsan.h). */
	letw_hb_acquire(b);
	rc = b->rc;

	/* cds_lfht_del (interned contexts) wants a read-side section. */
	urcu_bp_read_lock();
	n = release_all(rc, b);
	urcu_bp_read_unlock();
	uatomic_sub(&rc->pending, n);
	/* The batch chunk itself was popped before the grace period that
	 * just ended: it may go back now. */
	letw_store_chunk_put(rc->st, b->handle, sizeof(*b));
	uatomic_dec(&rc->batches_in_flight);
}

void letw_reclaim_tick(struct letw_reclaim *rc)
{
	struct batch *b;
	uint32_t h;

	if (!uatomic_read(&rc->pending))
		return;
	urcu_bp_read_lock(); /* store pops want one */
	h = letw_store_chunk_get(rc->st, sizeof(*b));
	urcu_bp_read_unlock();
	if (!h)
		return; /* out of memory: try again next tick */
	b = letw_store_chunk_ptr(rc->st, h);
	b->rc = rc;
	b->handle = h;
	/* Only this thread pops: __cds_lfs_pop_all needs no read side. */
	b->slots = __cds_lfs_pop_all(&rc->slots);
	b->ictx = __cds_lfs_pop_all(&rc->ictx);
	b->chunks = __cds_lfs_pop_all(&rc->chunks);
	/* Even an empty batch goes through a grace period: its chunk came
	 * off a free list inside a read-side section. */
	uatomic_inc(&rc->batches_in_flight);
	letw_hb_release(b);
	urcu_bp_call_rcu(&b->rcu, batch_done);
}
