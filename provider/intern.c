/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "bytes.h"
#include "hash.h"
#include "intern.h"
#include "reclaim.h"
#include "store.h"
#include "tsan.h"

struct key {
	uint64_t a;
	const char *s1, *s2;
	size_t l1, l2;
};

size_t letw_ictx_size(uint32_t len)
{
	return sizeof(struct letw_ictx) + len;
}

/*
 * The key's hash. Each string's own hash comes from the pass that
 * validated it (record.c letw_scan_string: its words folded in by
 * hash.h's step, so the strings are not read again here); the module id,
 * both string hashes and both lengths (so the split between the strings
 * counts) are folded the same way, and the table's mixer finishes it so
 * that both ends of the hash are well mixed (cds_lfht orders by reversed
 * bits). Written out: the core links no library with a string hash (glib
 * is the analysis side's).
 */
unsigned long letw_intern_hash(uint64_t a, size_t l1, uint64_t h1, size_t l2, uint64_t h2)
{
	uint64_t h = letw_str_hash_step(a * LETW_STR_HASH_K, h1);

	h = letw_str_hash_step(h, h2);
	h = letw_str_hash_step(h, ((uint64_t)l1 << 32) ^ l2);
	return letw_hash_u64(h);
}

static int same_key(const struct letw_ictx *e, const struct key *k)
{
	return e->a == k->a && e->len == k->l1 + k->l2 + 2 &&
	       letw_bytes_eq(e->bytes, k->s1, k->l1) && e->bytes[k->l1] == '\0' &&
	       letw_bytes_eq(e->bytes + k->l1 + 1, k->s2, k->l2);
}

/* add_unique's match: only a live entry (refs > 0) counts as present, so
 * an entry on its way out never blocks a new one. */
static int match_live(struct cds_lfht_node *node, const void *key)
{
	const struct letw_ictx *e = caa_container_of(node, struct letw_ictx, node);

	return uatomic_read(&e->refs) > 0 && same_key(e, key);
}

static int match_any(struct cds_lfht_node *node, const void *key)
{
	return same_key(caa_container_of(node, struct letw_ictx, node), key);
}

/*
 * Take a reference if the count is still non-zero. `e` was found through
 * cds_lfht, whose asm cmpxchg published it with every byte its interner
 * wrote (refs included): acquire that for TSan before reading any of it
 * (tsan.h; released in letw_intern_get before the insert).
 */
static int try_ref(struct letw_ictx *e)
{
	uint32_t r;

	letw_hb_acquire(e);
	r = uatomic_read(&e->refs);

	while (r > 0) {
		uint32_t seen = uatomic_cmpxchg(&e->refs, r, r + 1);

		if (seen == r)
			return 1;
		r = seen;
	}
	return 0;
}

/* Never 0 (an empty cache entry, icache.c), never reused. */
static uint64_t next_serial;

int letw_intern_init(struct letw_intern *in, struct letw_store *st,
		     struct letw_reclaim *rc)
{
	in->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
	/* No CDS_LFHT_AUTO_RESIZE: liburcu's lazy resize launch mallocs on
	 * the inserting thread. The control thread resizes instead. */
	in->ht = cds_lfht_new_flavor(1024, 1024, 0, 0, &urcu_bp_flavor, NULL);
	in->st = st;
	in->rc = rc;
	in->live = 0;
	in->size = 1024;
	return in->ht ? 0 : -ENOMEM;
}

void letw_intern_fini(struct letw_intern *in)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	if (!in->ht)
		return;
	/* Entries still referenced by threads' caches (icache.c: a thread
	 * that is still alive, or exited without its destructor running)
	 * hold no slot; they live in the store, which is unmapped next.
	 * Unlinked so that the table can be destroyed. Nobody else uses
	 * the table any more: the read-side section is cds_lfht's rule. */
	urcu_bp_read_lock();
	cds_lfht_for_each(in->ht, &it, node)
		(void)cds_lfht_del(in->ht, node);
	urcu_bp_read_unlock();
	cds_lfht_destroy(in->ht, NULL);
	in->ht = NULL;
}

long letw_intern_get(struct letw_intern *in, uint64_t a, const char *s1,
		     size_t l1, uint64_t h1, const char *s2, size_t l2, uint64_t h2)
{
	if (!a && !l1 && !l2)
		return 0;
	return letw_intern_get_hashed(in, a, s1, l1, s2, l2,
				      letw_intern_hash(a, l1, h1, l2, h2));
}

long letw_intern_get_hashed(struct letw_intern *in, uint64_t a, const char *s1,
			    size_t l1, const char *s2, size_t l2, unsigned long hash)
{
	struct key k = { .a = a, .s1 = s1 ? s1 : "", .s2 = s2 ? s2 : "",
			 .l1 = l1, .l2 = l2 };
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct letw_ictx *e = NULL;
	uint32_t h = 0;

	cds_lfht_lookup(in->ht, hash, match_any, &k, &it);
	for (node = cds_lfht_iter_get_node(&it); node;
	     cds_lfht_next_duplicate(in->ht, match_any, &k, &it),
	     node = cds_lfht_iter_get_node(&it)) {
		struct letw_ictx *f = caa_container_of(node, struct letw_ictx, node);

		if (try_ref(f))
			return letw_store_chunk_handle(in->st, f);
	}
	/* Not there (or dying): offer a new entry. */
	h = letw_store_chunk_get(in->st, letw_ictx_size((uint32_t)(l1 + l2 + 2)));
	if (!h)
		return -ENOMEM;
	e = letw_store_chunk_ptr(in->st, h);
	e->a = a;
	e->len = (uint32_t)(l1 + l2 + 2);
	memcpy(e->bytes, k.s1, l1);
	e->bytes[l1] = '\0';
	memcpy(e->bytes + l1 + 1, k.s2, l2);
	e->bytes[l1 + 1 + l2] = '\0';
	e->refs = 1;
	cds_lfht_node_init(&e->node);
	letw_hb_release(e); /* acquired by try_ref in those that find it */
	for (;;) {
		struct cds_lfht_node *got = cds_lfht_add_unique(in->ht, hash, match_live,
								&k, &e->node);
		struct letw_ictx *f;

		if (got == &e->node) {
			uatomic_inc(&in->live);
			return h;
		}
		/* Another publisher interned it first: use theirs, unless it
		 * died meanwhile, in which case try to insert ours again. */
		f = caa_container_of(got, struct letw_ictx, node);
		if (try_ref(f)) {
			/* Ours was never linked, but it came off a free list
			 * inside this read-side section: it goes back only
			 * after a grace period (store.h). */
			letw_retire_ictx(in->rc, e);
			return letw_store_chunk_handle(in->st, f);
		}
	}
}

int letw_intern_is(const struct letw_intern *in, uint32_t h, uint64_t a,
		   const char *s1, size_t l1, const char *s2, size_t l2)
{
	struct key k = { .a = a, .s1 = s1 ? s1 : "", .s2 = s2 ? s2 : "",
			 .l1 = l1, .l2 = l2 };

	return same_key(letw_store_chunk_ptr(in->st, h), &k);
}

void letw_intern_ref(struct letw_intern *in, uint32_t h, uint32_t n)
{
	struct letw_ictx *e = letw_store_chunk_ptr(in->st, h);

	/* The caller holds a reference: the count cannot be 0 here, so
	 * this never revives an entry on its way out (try_ref's rule). */
	uatomic_add(&e->refs, n);
}

void letw_intern_put(struct letw_intern *in, uint32_t h)
{
	letw_intern_put_n(in, h, 1);
}

void letw_intern_put_n(struct letw_intern *in, uint32_t h, uint32_t n)
{
	struct letw_ictx *e;

	if (!h || !n)
		return;
	e = letw_store_chunk_ptr(in->st, h);
	if (uatomic_sub_return(&e->refs, n) != 0)
		return;
	(void)cds_lfht_del(in->ht, &e->node);
	uatomic_dec(&in->live);
	letw_retire_ictx(in->rc, e);
}

void letw_intern_maintain(struct letw_intern *in)
{
	unsigned long n = (unsigned long)uatomic_read(&in->live), target = 1024;

	while (target < n)
		target <<= 1;
	/* One bucket per entry, resized when the population crosses a power
	 * of two (cds_lfht_resize waits for grace periods: control thread). */
	if (target != in->size) {
		cds_lfht_resize(in->ht, target);
		in->size = target;
	}
}
