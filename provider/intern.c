/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

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
 * The key's bytes eight at a time, each word folded in with a rotate, an
 * xor and one multiply (FxHash's step); the table's mixer finishes it so
 * that both ends of the hash are well mixed (cds_lfht orders by reversed
 * bits). Was FNV-1a, one multiply per byte in a dependency chain: for the
 * ~50 bytes of a namespace and a signature, ~15 % of a publish. The
 * lengths go in first, so the split between the two strings counts. A
 * string's last partial word is read as the eight bytes ending at its end
 * (overlapping bytes already folded: deterministic, and no read past the
 * string); a string shorter than eight bytes byte by byte. Written out:
 * the core links no library with a string hash (glib is the analysis
 * side's).
 */
#define HASH_K 0x9e3779b97f4a7c15ull

static uint64_t hash_step(uint64_t h, uint64_t w)
{
	return (((h << 26) | (h >> 38)) ^ w) * HASH_K;
}

static uint64_t hash_bytes(uint64_t h, const char *p, size_t n)
{
	uint64_t w = 0;
	size_t i;

	if (n < 8) {
		for (i = 0; i < n; i++)
			w |= (uint64_t)(unsigned char)p[i] << (8 * i);
		return hash_step(h, w);
	}
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, sizeof(w)); /* unaligned load, no aliasing */
		h = hash_step(h, w);
	}
	if (i < n) {
		memcpy(&w, p + n - 8, sizeof(w));
		h = hash_step(h, w);
	}
	return h;
}

static unsigned long key_hash(const struct key *k)
{
	uint64_t h = hash_step(k->a * HASH_K, ((uint64_t)k->l1 << 32) ^ k->l2);

	h = hash_bytes(h, k->s1, k->l1);
	h = hash_bytes(h, k->s2, k->l2);
	return letw_hash_u64(h);
}

static int same_key(const struct letw_ictx *e, const struct key *k)
{
	return e->a == k->a && e->len == k->l1 + k->l2 + 2 &&
	       memcmp(e->bytes, k->s1, k->l1) == 0 && e->bytes[k->l1] == '\0' &&
	       memcmp(e->bytes + k->l1 + 1, k->s2, k->l2) == 0;
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

int letw_intern_init(struct letw_intern *in, struct letw_store *st,
		     struct letw_reclaim *rc)
{
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
	if (in->ht)
		cds_lfht_destroy(in->ht, NULL);
	in->ht = NULL;
}

long letw_intern_get(struct letw_intern *in, uint64_t a, const char *s1,
		     size_t l1, const char *s2, size_t l2)
{
	struct key k = { .a = a, .s1 = s1 ? s1 : "", .s2 = s2 ? s2 : "",
			 .l1 = l1, .l2 = l2 };
	unsigned long hash;
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct letw_ictx *e = NULL;
	uint32_t h = 0;

	if (!a && !l1 && !l2)
		return 0;
	hash = key_hash(&k);
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

void letw_intern_put(struct letw_intern *in, uint32_t h)
{
	struct letw_ictx *e;

	if (!h)
		return;
	e = letw_store_chunk_ptr(in->st, h);
	if (uatomic_sub_return(&e->refs, 1) != 0)
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
