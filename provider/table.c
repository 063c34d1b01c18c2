/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "hash.h"
#include "overlap.h"
#include "table.h"
#include "tsan.h"

#ifdef LETW_GLOBAL_LOCK
#define BIG_LOCK(t) pthread_mutex_lock(&(t)->big_lock)
#define BIG_UNLOCK(t) pthread_mutex_unlock(&(t)->big_lock)
#else
#define BIG_LOCK(t) ((void)(t))
#define BIG_UNLOCK(t) ((void)(t))
#endif

static uint64_t first_page(const struct letw_slot *s)
{
	return s->start >> LETW_PAGE_SHIFT;
}

static uint64_t last_page(const struct letw_slot *s)
{
	return (s->start + s->size - 1) >> LETW_PAGE_SHIFT;
}

struct start_key {
	uint64_t start;
	uint32_t kind;
};

static int match_start(struct cds_lfht_node *node, const void *key)
{
	const struct start_key *k = key;
	const uint32_t *tag = (const uint32_t *)(node + 1);
	const struct letw_slot *s;
	uint32_t st;

	if (__atomic_load_n(tag, __ATOMIC_RELAXED) & LETW_ST_CONT)
		return 0;
	s = caa_container_of(node, struct letw_slot, node);
	st = letw_slot_state(s);
	return letw_st_life(st) == LETW_LIFE_LIVE && letw_st_kind(st) == k->kind &&
	       s->start == k->start;
}

static int match_module(struct cds_lfht_node *node, const void *key)
{
	const struct letw_slot *s = caa_container_of(node, struct letw_slot, node);

	return letw_slot_occupies(letw_slot_state(s)) && s->start == *(const uint64_t *)key;
}

static int match_module_live(struct cds_lfht_node *node, const void *key)
{
	const struct letw_slot *s = caa_container_of(node, struct letw_slot, node);

	return letw_st_life(letw_slot_state(s)) == LETW_LIFE_LIVE &&
	       s->start == *(const uint64_t *)key;
}

/* A continuation node of the record in slot *key. */
static int match_cont(struct cds_lfht_node *node, const void *key)
{
	const uint32_t *tag = (const uint32_t *)(node + 1);

	return (__atomic_load_n(tag, __ATOMIC_RELAXED) & LETW_ST_CONT) &&
	       caa_container_of(node, struct letw_cont, node)->slot == *(const uint32_t *)key;
}

static int match_big(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct letw_big, node)->slot == *(const uint32_t *)key;
}

static int match_ext(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct letw_ext, node)->slot == *(const uint32_t *)key;
}

static struct cds_lfht *new_ht_sized(unsigned long buckets)
{
	/* No CDS_LFHT_AUTO_RESIZE: liburcu's lazy resize launch mallocs on
	 * the inserting thread; letw_table_maintain resizes instead. */
	return cds_lfht_new_flavor(buckets, buckets, 0, 0, &urcu_bp_flavor, NULL);
}

static struct cds_lfht *new_ht(void)
{
	return new_ht_sized(1024);
}

struct letw_table *letw_table_new(uint64_t expected, uint64_t max_records)
{
	struct letw_table *t;

	/* Aligned as declared (64: store.h and the groups above), which
	 * calloc's 16 does not promise: the benchmark's table came out at
	 * 32 mod 64, every "line of its own" shifted half a line. */
	if (posix_memalign((void **)&t, _Alignof(struct letw_table), sizeof(*t)))
		return NULL;
	memset(t, 0, sizeof(*t));
	if (letw_store_init(&t->store, expected, max_records)) {
		free(t);
		return NULL;
	}
	letw_reclaim_init(&t->reclaim, &t->store, &t->intern);
	if (letw_intern_init(&t->intern, &t->store, &t->reclaim))
		goto fail;
	t->code = new_ht();
	t->modules = new_ht();
	/* One bucket: every small publish iterates the whole registry while
	 * a big record is live (overlap.c letw_overlaps_big), and an
	 * iteration visits every bucket: 1024 of them cost ~2.5 us per small
	 * publish. Big records are few; a chain of them is cheap to walk. */
	t->bigs = new_ht_sized(1);
	t->exts = new_ht();
	if (!t->code || !t->modules || !t->bigs || !t->exts)
		goto fail;
	t->code_size = t->modules_size = t->exts_size = 1024;
#ifdef LETW_GLOBAL_LOCK
	pthread_mutex_init(&t->big_lock, NULL);
#endif
	return t;
fail:
	if (t->code)
		cds_lfht_destroy(t->code, NULL);
	if (t->modules)
		cds_lfht_destroy(t->modules, NULL);
	if (t->bigs)
		cds_lfht_destroy(t->bigs, NULL);
	if (t->exts)
		cds_lfht_destroy(t->exts, NULL);
	letw_intern_fini(&t->intern);
	letw_store_fini(&t->store);
	free(t);
	return NULL;
}

static void count(struct letw_table *t, uint32_t kind, long delta)
{
	uatomic_add(kind == LETW_SLOT_METHOD ? &t->live_methods : &t->live_stubs, delta);
}

static uint32_t slot_index(struct letw_table *t, const struct letw_slot *s)
{
	return letw_store_slot_index(&t->store, s);
}

static void retire_chunk(struct letw_table *t, struct letw_retired_chunk *rc,
			 const void *base, size_t size)
{
	rc->size = (uint32_t)size;
	rc->offset = (uint32_t)((const char *)rc - (const char *)base);
	letw_retire_chunk(&t->reclaim, rc);
}

/* table.h: unlink and retire, 1 if there was something to. */
int letw_table_drop_cont(struct letw_table *t, uint64_t page, uint32_t idx)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct letw_cont *c;

	cds_lfht_lookup(t->code, letw_hash_u64(page), match_cont, &idx, &it);
	if (!(node = cds_lfht_iter_get_node(&it)))
		return 0;
	c = caa_container_of(node, struct letw_cont, node);
	if (cds_lfht_del(t->code, node) == 0)
		uatomic_dec(&t->cont_nodes);
	retire_chunk(t, &c->rc, c, sizeof(*c));
	return 1;
}

int letw_table_drop_big(struct letw_table *t, uint32_t idx)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct letw_big *b;

	cds_lfht_lookup(t->bigs, letw_hash_u64(idx), match_big, &idx, &it);
	if (!(node = cds_lfht_iter_get_node(&it)))
		return 0;
	b = caa_container_of(node, struct letw_big, node);
	(void)cds_lfht_del(t->bigs, node);
	retire_chunk(t, &b->rc, b, sizeof(*b));
	uatomic_dec(&t->live_bigs);
	return 1;
}

int letw_table_drop_ext(struct letw_table *t, uint32_t idx)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct letw_ext *e;

	cds_lfht_lookup(t->exts, letw_hash_u64(idx), match_ext, &idx, &it);
	if (!(node = cds_lfht_iter_get_node(&it)))
		return 0;
	e = caa_container_of(node, struct letw_ext, node);
	if (!cds_lfht_del(t->exts, node))
		uatomic_dec(&t->ext_nodes);
	retire_chunk(t, &e->rc, e, e->rc.size);
	return 1;
}

/*
 * Unlink every node of a record whose pages [first_page, upto) were
 * inserted (upto is exclusive; the slot's own node is page first_page),
 * then retire it. Used by a publish backing out and by unpublish. The
 * slot is already DEAD: concurrent matchers skip it.
 */
static void unlink_pages(struct letw_table *t, struct letw_slot *s, uint64_t upto)
{
	uint64_t p0 = first_page(s);
	uint32_t idx = slot_index(t, s);

	if (upto > p0)
		(void)cds_lfht_del(t->code, &s->node);
	for (uint64_t p = p0 + 1; p < upto; p++)
		letw_table_drop_cont(t, p, idx);
}

/*
 * Big records against small ones, without a lock (Dekker):
 *   small: state PENDING, widen its chunk's range (store.h), nodes in —
 *          the first successful cds_lfht_add_unique issues a full barrier
 *          after its commit (rculfhash.h), which is the pair's barrier —
 *          then read live_bigs, and if non-zero look through the registry;
 *   big:   node in the registry, live_bigs++ (full barrier), then scan:
 *          read each chunk's range, and where it meets the big range the
 *          slots' states, for an occupying overlapping record.
 * A small publisher that reads live_bigs after the big one's increment also
 * finds its registry entry (added before the increment); one that reads it
 * before has widened its range and stored PENDING before the big one's
 * barrier, so the scan sees both: it visits the chunk and meets the slot.
 * Both may fail; both never succeed. Big against big: both registered
 * before either scans. A record whose range is in no chunk's summary (a
 * big one) is found through the registry only.
 */
int letw_table_insert(struct letw_table *t, struct letw_slot *s, struct letw_ext *ext)
{
	struct letw_overlap_key key = { .t = t, .rec = s };
	uint64_t p0 = first_page(s), pn = last_page(s), upto = p0;
	uint32_t idx = slot_index(t, s), st = letw_slot_state(s);
	uint32_t kind = letw_st_kind(st);
	int big = pn - p0 + 1 > LETW_SMALL_PAGES, ret = -EEXIST;
	struct letw_big *b = NULL;

	BIG_LOCK(t);
	/* Before the first node goes in, whose add_unique's full barrier
	 * (on success; failing, we back out and need none) orders it and
	 * the PENDING state before the read of live_bigs below: the pair
	 * above. A publish that fails leaves the range wider, which is
	 * harmless (store.h). */
	if (!big)
		letw_store_summary_widen(&t->store, idx, s->start, s->start + s->size);
	cds_lfht_node_init(&s->node);
	if (cds_lfht_add_unique(t->code, letw_hash_u64(p0), letw_match_overlap, &key,
				&s->node) != &s->node)
		goto backout;
	upto = p0 + 1;
	for (uint64_t p = p0 + 1; !big && p <= pn; p++) {
		uint32_t h = letw_store_chunk_get(&t->store, sizeof(struct letw_cont));
		struct letw_cont *c;

		if (!h) {
			ret = -ENOMEM;
			goto backout;
		}
		c = letw_store_chunk_ptr(&t->store, h);
		c->tag = LETW_ST_CONT;
		c->slot = idx;
		cds_lfht_node_init(&c->node);
		if (cds_lfht_add_unique(t->code, letw_hash_u64(p), letw_match_overlap, &key,
					&c->node) != &c->node) {
			retire_chunk(t, &c->rc, c, sizeof(*c));
			goto backout;
		}
		uatomic_inc(&t->cont_nodes);
		upto = p + 1;
	}
	if (big) {
		uint32_t h = letw_store_chunk_get(&t->store, sizeof(*b));

		if (!h) {
			ret = -ENOMEM;
			goto backout;
		}
		b = letw_store_chunk_ptr(&t->store, h);
		b->slot = idx;
		cds_lfht_node_init(&b->node);
		letw_hb_release(b); /* acquired in letw_overlaps_big (tsan.h) */
		cds_lfht_add(t->bigs, letw_hash_u64(idx), &b->node);
		(void)uatomic_add_return(&t->live_bigs, 1); /* full barrier */
		if (letw_overlaps_big(t, s) || letw_overlaps_any(t, s))
			goto backout;
	} else if (uatomic_read(&t->live_bigs) && letw_overlaps_big(t, s)) {
		/* live_bigs read after the first add_unique's barrier: the
		 * pair above (was a cmm_smp_mb of its own here, ~35 ns). */
		goto backout;
	}
	if (ext) {
		cds_lfht_node_init(&ext->node);
		cds_lfht_add(t->exts, letw_hash_u64(idx), &ext->node);
		uatomic_inc(&t->ext_nodes);
		st |= LETW_ST_LINES;
	}
	if (big)
		st |= LETW_ST_BIG;
	/* Born during a pass (it read the pass's mark): the pass leaves it to
	 * its load event (rundown/walker.c). */
	st = letw_st_with_mark(st, __atomic_load_n(&t->mark_pub, __ATOMIC_SEQ_CST));
	/* Release: a reader that sees LIVE sees every field. */
	letw_slot_set_state(s, letw_st_with_life(st, LETW_LIFE_LIVE));
	count(t, kind, 1);
	BIG_UNLOCK(t);
	return 0;

backout:
	/* DEAD first, so concurrent matchers stop counting us as a conflict,
	 * then unlink; others may still be looking at our nodes in their
	 * read-side sections, hence retire rather than free. */
	letw_slot_set_state(s, letw_st_with_life(st, LETW_LIFE_DEAD));
	unlink_pages(t, s, upto);
	if (b)
		letw_table_drop_big(t, idx);
	BIG_UNLOCK(t);
	if (ext)
		retire_chunk(t, &ext->rc, ext, ext->rc.size);
	letw_retire_slot(&t->reclaim, s);
	return ret;
}

/*
 * The unpublish side of the walker's accounting (rundown/walker.c): the
 * pass mark is read *before* the record is killed. Reading it set means
 * the kill comes after the pass began; if the pass has not claimed the
 * record (its mark differs), the record was present and will not be
 * emitted: it is one of the pass's skipped_raced.
 */
static int kill(struct letw_table *t, struct letw_slot *s)
{
	uint32_t mark = __atomic_load_n(&t->mark_unpub, __ATOMIC_SEQ_CST);
	uint32_t st = letw_slot_state(s);

	do {
		if (letw_st_life(st) != LETW_LIFE_LIVE)
			return -ENOENT; /* another unpublish won */
	} while (!letw_slot_cas(s, &st, letw_st_with_life(st, LETW_LIFE_DEAD)));
	if (mark && (st & LETW_ST_MARK_MASK) != mark)
		uatomic_inc(&t->skipped);
	return 0;
}

int letw_table_remove(struct letw_table *t, uint64_t start, int kind,
		      struct letw_slot **out)
{
	struct start_key key = { .start = start, .kind = (uint32_t)kind };
	unsigned long hash = letw_hash_u64(start >> LETW_PAGE_SHIFT);
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	BIG_LOCK(t);
	cds_lfht_lookup(t->code, hash, match_start, &key, &it);
	for (node = cds_lfht_iter_get_node(&it); node;
	     cds_lfht_next_duplicate(t->code, match_start, &key, &it),
	     node = cds_lfht_iter_get_node(&it)) {
		struct letw_slot *s = caa_container_of(node, struct letw_slot, node);
		uint32_t st;

		if (kill(t, s))
			continue;
		st = letw_slot_state(s);
		unlink_pages(t, s, (st & LETW_ST_BIG) ? first_page(s) + 1 : last_page(s) + 1);
		if (st & LETW_ST_BIG)
			letw_table_drop_big(t, slot_index(t, s));
		if (st & LETW_ST_LINES)
			letw_table_drop_ext(t, slot_index(t, s));
		count(t, (uint32_t)kind, -1);
		BIG_UNLOCK(t);
		*out = s;
		return 0;
	}
	BIG_UNLOCK(t);
	return -ENOENT;
}

void letw_table_retire(struct letw_table *t, struct letw_slot *s)
{
	letw_retire_slot(&t->reclaim, s);
}

int letw_table_module_insert(struct letw_table *t, struct letw_slot *s)
{
	uint32_t st = letw_slot_state(s);

	BIG_LOCK(t);
	cds_lfht_node_init(&s->node);
	if (cds_lfht_add_unique(t->modules, letw_hash_u64(s->start), match_module,
				&s->start, &s->node) != &s->node) {
		letw_slot_set_state(s, letw_st_with_life(st, LETW_LIFE_DEAD));
		BIG_UNLOCK(t);
		letw_retire_slot(&t->reclaim, s);
		return -EEXIST;
	}
	st = letw_st_with_mark(st, __atomic_load_n(&t->mark_pub, __ATOMIC_SEQ_CST));
	letw_slot_set_state(s, letw_st_with_life(st, LETW_LIFE_LIVE));
	uatomic_inc(&t->live_modules);
	BIG_UNLOCK(t);
	return 0;
}

int letw_table_module_remove(struct letw_table *t, uint64_t module_id,
			     struct letw_slot **out)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	BIG_LOCK(t);
	cds_lfht_lookup(t->modules, letw_hash_u64(module_id), match_module_live,
			&module_id, &it);
	for (node = cds_lfht_iter_get_node(&it); node;
	     cds_lfht_next_duplicate(t->modules, match_module_live, &module_id, &it),
	     node = cds_lfht_iter_get_node(&it)) {
		struct letw_slot *s = caa_container_of(node, struct letw_slot, node);

		if (kill(t, s))
			continue;
		(void)cds_lfht_del(t->modules, &s->node);
		uatomic_dec(&t->live_modules);
		BIG_UNLOCK(t);
		*out = s;
		return 0;
	}
	BIG_UNLOCK(t);
	return -ENOENT;
}

const struct letw_lines *letw_table_lines(struct letw_table *t, uint32_t idx)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	cds_lfht_lookup(t->exts, letw_hash_u64(idx), match_ext, &idx, &it);
	node = cds_lfht_iter_get_node(&it);
	return node ? &caa_container_of(node, struct letw_ext, node)->lines : NULL;
}

/*
 * Resizes and store growth, on the control thread: cds_lfht_resize waits
 * for grace periods and allocates the new bucket array (libc's allocator,
 * off every publish path). The code table is sized one bucket per node,
 * re-targeted each time the population crosses a power of two.
 */
static void resize(struct cds_lfht *ht, unsigned long n, unsigned long *size)
{
	unsigned long target = 1024;

	while (target < n)
		target <<= 1;
	if (target != *size) {
		cds_lfht_resize(ht, target);
		*size = target;
	}
}

void letw_table_tick(struct letw_table *t)
{
	/* Frees first: the slots they return are stock the store need not
	 * commit. */
	letw_reclaim_tick(&t->reclaim);
	letw_store_maintain(&t->store);
}

void letw_table_maintain(struct letw_table *t)
{
	/* The store first, as always: publishers draining it take the slow
	 * path, and a resize below may wait for grace periods. */
	letw_table_tick(t);
	/* Not in letw_table_tick, which the walker runs between its
	 * sections: in the global-lock baseline publishers wait for the walk
	 * lock inside their read-side sections, and this waits for a grace
	 * period. */
	(void)letw_store_rebalance(&t->store);
	/* A slot node per live method and stub, plus the continuation
	 * nodes; records being published or backed out are not counted,
	 * which sizing can do without. */
	resize(t->code, (unsigned long)(uatomic_read(&t->live_methods) +
					uatomic_read(&t->live_stubs)) +
			uatomic_read(&t->cont_nodes), &t->code_size);
	resize(t->modules, (unsigned long)uatomic_read(&t->live_modules), &t->modules_size);
	resize(t->exts, uatomic_read(&t->ext_nodes), &t->exts_size);
	letw_intern_maintain(&t->intern);
}

void letw_table_walk_lock(struct letw_table *t)
{
	BIG_LOCK(t);
}

void letw_table_walk_unlock(struct letw_table *t)
{
	BIG_UNLOCK(t);
}

void letw_table_destroy(struct letw_table *t)
{
	uint32_t bound;

	if (!t)
		return;
	bound = letw_store_slot_bound(&t->store);
	urcu_bp_read_lock();
	for (uint32_t i = letw_store_slot_next_ready(&t->store, 0, bound); i < bound;
	     i = letw_store_slot_next_ready(&t->store, i + 1, bound)) {
		struct letw_slot *s, *got;
		uint32_t st, kind;

		s = letw_store_slot(&t->store, i);
		st = letw_slot_state(s);
		kind = letw_st_kind(st);
		if (letw_st_life(st) != LETW_LIFE_LIVE)
			continue;
		if (kind == LETW_SLOT_MODULE ?
			    letw_table_module_remove(t, s->start, &got) :
			    letw_table_remove(t, s->start, (int)kind, &got))
			continue;
		letw_table_retire(t, got);
	}
	urcu_bp_read_unlock();
	/* Two rounds: slots first, then the contexts their release retired.
	 * urcu_bp_barrier waits for the batches' callbacks. Off every
	 * runtime hot path. Also while a batch is still in flight with
	 * nothing pending: its callback subtracts `pending` before it puts
	 * the batch's own chunk back, so the callback of a batch the
	 * control thread queued just before it stopped could still be
	 * running when `pending` reads 0, and the store was unmapped under
	 * it (SIGSEGV on liburcu's call_rcu thread in
	 * reliability.hostile_api under TSan, 1 run in 6 to 18). */
	for (int round = 0; round < 4 && (uatomic_read(&t->reclaim.pending) ||
					  uatomic_read(&t->reclaim.batches_in_flight));
	     round++) {
		letw_reclaim_tick(&t->reclaim);
		urcu_bp_barrier();
	}
	cds_lfht_destroy(t->code, NULL);
	cds_lfht_destroy(t->modules, NULL);
	cds_lfht_destroy(t->bigs, NULL);
	cds_lfht_destroy(t->exts, NULL);
	letw_intern_fini(&t->intern);
	letw_store_fini(&t->store);
#ifdef LETW_GLOBAL_LOCK
	pthread_mutex_destroy(&t->big_lock);
#endif
	free(t);
}
