/* SPDX-License-Identifier: MIT */
/* Byte-exact method names: see names.h for the layout and the protocol. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu/uatomic.h>

#include "names.h"

#define REGION (2ull << 30)     /* 2 GiB of address space: offsets fit 31 bits */
#define SPARE_GRAIN 16u         /* blocks per control-thread commit: 64 KiB */
#define SPARE_MIN 32u           /* the pool's floor: 128 KiB */
#define SPARE_AT_INIT 160u      /* 640 KiB at init: a first block for each of the 125 lengths, and 35 */
#define HEAD(bn, tag) (((uint64_t)(tag) << 32) | (bn))

static struct letw_names_blk *blk(const struct letw_names *nm, uint32_t bn)
{
	return (struct letw_names_blk *)(nm->base + (size_t)bn * LETW_NAMES_BLOCK);
}

static uint32_t words_of(uint32_t n)
{
	return (n + 63) / 64;
}

/* Names per block and where name 0 starts for length len: the most names
 * that a bitmap of w words and a 64-byte-aligned start leave room for,
 * over w (the header's line is the one takers and givers write; names
 * start on the next one so that a publisher copying its name does not
 * false-share it). */
static void class_geometry(uint32_t len, uint16_t *n, uint16_t *first)
{
	uint32_t best = 0, best_f = 0;

	for (uint32_t w = 1; w <= words_of(LETW_NAMES_BLOCK / len); w++) {
		uint32_t f = (uint32_t)(sizeof(struct letw_names_blk) + 8 * w + 63) & ~63u;
		uint32_t k = (LETW_NAMES_BLOCK - f) / len;

		if (k > 64 * w)
			k = 64 * w;
		if (k > best)
			best = k, best_f = f;
	}
	*n = (uint16_t)best;
	*first = (uint16_t)best_f;
}

/* Push block bn on the tagged stack at *head. Release: the block's header,
 * bitmap and `next` are visible to whoever acquires the head and finds it
 * there. The tag makes a pop's CAS fail if the head was popped and pushed
 * back since the popper read it (ABA). */
static void push(struct letw_names *nm, uint64_t *head, uint32_t bn)
{
	uint64_t h = __atomic_load_n(head, __ATOMIC_RELAXED);

	do
		__atomic_store_n(&blk(nm, bn)->next, (uint32_t)h, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(head, &h, HEAD(bn, (h >> 32) + 1), 1,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Pop `top` if it is still the head: one attempt. Reading the `next` of a
 * block popped meanwhile is harmless (blocks stay mapped; the tag fails
 * the CAS). Acquire: pairs with push's release. */
static int pop_if(struct letw_names *nm, uint64_t *head, uint64_t top)
{
	uint32_t nx = __atomic_load_n(&blk(nm, (uint32_t)top)->next, __ATOMIC_RELAXED);

	return __atomic_compare_exchange_n(head, &top, HEAD(nx, (top >> 32) + 1), 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* A block off the pool, or 0 when it is empty. */
static uint32_t pop_spare(struct letw_names *nm)
{
	for (;;) {
		uint64_t top = __atomic_load_n(&nm->spare, __ATOMIC_ACQUIRE);

		if (!(uint32_t)top)
			return 0;
		if (pop_if(nm, &nm->spare, top)) {
			uatomic_dec(&nm->nspare);
			return (uint32_t)top;
		}
	}
}

/* Put block bn on its class's stack unless it is there (or about to be):
 * the exchange makes one caller the pusher. Seq_cst, the Dekker pair with
 * the popper's clear-then-recheck (names.h). */
static void offer(struct letw_names *nm, struct letw_names_class *k, uint32_t bn)
{
	if (!__atomic_exchange_n(&blk(nm, bn)->instack, 1, __ATOMIC_SEQ_CST))
		push(nm, &k->partial, bn);
}

/* Reserve one free name of block b: decrement its count if positive.
 * Acquire: pairs with the giver's release increment, so the bit it set
 * before is visible to the scan that follows. */
static int reserve(struct letw_names_blk *b)
{
	int32_t v = __atomic_load_n(&b->nfree, __ATOMIC_RELAXED);

	while (v > 0)
		if (__atomic_compare_exchange_n(&b->nfree, &v, v - 1, 1, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 1;
	return 0;
}

/* A reservation guarantees a set bit: clear one. Acquire on the bit: the
 * giver's release (after the grace period) orders every reader's last
 * look at the old name before our writes of the new one. */
static uint32_t claim_bit(struct letw_names_blk *b)
{
	uint32_t nw = words_of(b->n);

	for (;;)
		for (uint32_t w = 0; w < nw; w++) {
			uint64_t v = __atomic_load_n(&b->bits[w], __ATOMIC_RELAXED);

			while (v) {
				uint64_t bit = v & -v, old;

				old = __atomic_fetch_and(&b->bits[w], ~bit, __ATOMIC_ACQUIRE);
				if (old & bit)
					return w * 64 + (uint32_t)__builtin_ctzll(bit);
				v = old & ~bit;
			}
		}
}

static uint32_t handle_of(const struct letw_names *nm, const struct letw_names_class *k,
			  uint32_t bn, uint32_t i)
{
	size_t len = (size_t)(k - nm->cls) + LETW_NAMES_MIN;

	return LETW_NAMES_HANDLE |
	       (uint32_t)((size_t)bn * LETW_NAMES_BLOCK + k->first + i * len);
}

/*
 * Commit `nr` fresh blocks with one mprotect: the number of the first, or
 * 0 when the region is exhausted. `prefault` touches every page (the
 * control thread); a taker's single block is touched by its header write.
 */
static uint32_t commit(struct letw_names *nm, uint32_t nr, int prefault)
{
	size_t len = (size_t)nr * LETW_NAMES_BLOCK;
	size_t off = uatomic_add_return(&nm->claimed, len) - len;

	if (off + len > nm->max) {
		uatomic_sub(&nm->claimed, len);
		return 0;
	}
	if (mprotect(nm->base + off, len, PROT_READ | PROT_WRITE)) {
		/* The claim back unless a later one was made (store.c,
		 * unclaim_slots: kept, every failed try of the control
		 * thread's burnt a range for good). */
		(void)uatomic_cmpxchg(&nm->claimed, off + len, off);
		return 0;
	}
	if (prefault)
		memset(nm->base + off, 0, len);
	uatomic_add(&nm->blocks, (long)nr);
	return (uint32_t)(off / LETW_NAMES_BLOCK);
}

/*
 * Give block bn (ours alone: fresh, or popped off the pool) length c +
 * LETW_NAMES_MIN and push it on the class's stack. `keep`: name 0 is the
 * caller's and stays clear in the bitmap.
 */
static void assign(struct letw_names *nm, uint32_t c, uint32_t bn, uint32_t *keep)
{
	struct letw_names_class *k = &nm->cls[c];
	struct letw_names_blk *b = blk(nm, bn);
	uint32_t n = k->n, nw = words_of(n);

	b->len = (uint16_t)(c + LETW_NAMES_MIN);
	b->n = (uint16_t)n;
	b->nfree = (int32_t)n - (keep ? 1 : 0);
	b->instack = 1;
	for (uint32_t w = 0; w < nw; w++)
		b->bits[w] = (w + 1) * 64 <= n ? ~0ull : (1ull << (n % 64)) - 1;
	if (keep) {
		b->bits[0] &= ~1ull;
		*keep = handle_of(nm, k, bn, 0);
	}
	uatomic_add(&k->total, (long)n);
	uatomic_add(&k->nfree, (long)n - (keep ? 1 : 0));
	uatomic_inc(&nm->assigned);
	push(nm, &k->partial, bn);
}

/* Control thread (and init): `nr` prefaulted blocks into the pool. */
static int stock(struct letw_names *nm, uint32_t nr)
{
	uint32_t first = commit(nm, nr, 1);

	if (!first)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++)
		push(nm, &nm->spare, first + i);
	uatomic_add(&nm->nspare, (long)nr);
	return 0;
}

int letw_names_init(struct letw_names *nm)
{
	memset(nm, 0, sizeof(*nm));
	nm->max = REGION;
	nm->base = mmap(NULL, nm->max, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (nm->base == MAP_FAILED) {
		nm->base = NULL;
		return -ENOMEM;
	}
	nm->claimed = LETW_NAMES_BLOCK; /* block 0 is "none" on the stacks */
	for (uint32_t c = 0; c < LETW_NAMES_NR; c++)
		class_geometry(c + LETW_NAMES_MIN, &nm->cls[c].n, &nm->cls[c].first);
	/* Enough that the first name of every length takes a spare, not the
	 * slow path (tests/unit/test_api.c small_strings_...); if it fails,
	 * takers commit their own. */
	(void)stock(nm, SPARE_AT_INIT);
	return 0;
}

void letw_names_fini(struct letw_names *nm)
{
	if (nm->base)
		munmap(nm->base, nm->max);
	memset(nm, 0, sizeof(*nm));
}

uint32_t letw_names_get(struct letw_names *nm, const char *s, size_t len)
{
	uint32_t c = (uint32_t)len - LETW_NAMES_MIN, h = 0, bn;
	struct letw_names_class *k;

	if (len < LETW_NAMES_MIN || len > LETW_NAMES_MAX)
		return 0;
	k = &nm->cls[c];
	for (;;) {
		/* Acquire: pairs with push's release (the block's header). */
		uint64_t top = __atomic_load_n(&k->partial, __ATOMIC_ACQUIRE);
		struct letw_names_blk *b;

		if (!(bn = (uint32_t)top))
			break;
		b = blk(nm, bn);
		if (reserve(b)) {
			h = handle_of(nm, k, bn, claim_bit(b));
			uatomic_dec(&k->nfree);
			break;
		}
		/* The top block is full: pop it, then the popper's half of
		 * the Dekker pair (names.h). */
		if (pop_if(nm, &k->partial, top)) {
			__atomic_store_n(&b->instack, 0, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&b->nfree, __ATOMIC_SEQ_CST) > 0)
				offer(nm, k, bn);
		}
	}
	if (!h) {
		/* The class has no free name: a spare block, prefaulted, or
		 * the slow path. */
		if (!(bn = pop_spare(nm))) {
			if (!(bn = commit(nm, 1, 0)))
				return 0;
			uatomic_inc(&nm->slow_grows); /* commits only (store.c) */
		}
		assign(nm, c, bn, &h);
	}
	memcpy(nm->base + (h & ~LETW_NAMES_HANDLE), s, len);
	return h;
}

void letw_names_put(struct letw_names *nm, uint32_t h)
{
	size_t off = h & ~LETW_NAMES_HANDLE;
	uint32_t bn = (uint32_t)(off / LETW_NAMES_BLOCK);
	struct letw_names_blk *b = blk(nm, bn);
	struct letw_names_class *k = &nm->cls[b->len - LETW_NAMES_MIN];
	uint32_t i = (uint32_t)(off % LETW_NAMES_BLOCK - k->first) / b->len;

	/* Bit first (release: the taker's acquire on it orders our past
	 * readers before its writes), then the count (seq_cst: release for
	 * reserve's acquire, and the giver's half of the Dekker pair). */
	__atomic_fetch_or(&b->bits[i / 64], 1ull << (i % 64), __ATOMIC_RELEASE);
	uatomic_inc(&k->nfree);
	if (__atomic_fetch_add(&b->nfree, 1, __ATOMIC_SEQ_CST) == 0)
		offer(nm, k, bn);
}

/*
 * The pool's low-water mark, demand-driven: twice the blocks taken from
 * it since the last call (a burst of publishes is met at the next poll
 * with room for as much again), at least a quarter of the blocks in use
 * (the poll can be late by a table resize, whose length grows with the
 * table: with an eighth, filling 10^6 methods took the slow path 63 and
 * 372 times in two runs; the chunk classes keep a quarter too) and
 * SPARE_MIN. Committed in grains of SPARE_GRAIN
 * blocks (one mprotect each), bounded work per call.
 */
void letw_names_maintain(struct letw_names *nm)
{
	long assigned = uatomic_read(&nm->assigned);
	long want = 2 * (assigned - nm->seen);

	nm->seen = assigned;
	if (want < assigned / 4)
		want = assigned / 4;
	if (want < SPARE_MIN)
		want = SPARE_MIN;
	for (int n = 0; n < 64 && uatomic_read(&nm->nspare) < want; n++)
		if (stock(nm, SPARE_GRAIN))
			break;
}

void letw_names_usage(const struct letw_names *nm, uint64_t *committed, uint64_t *in_use,
		      uint64_t *slow_grows)
{
	*committed = (uint64_t)uatomic_read(&nm->blocks) * LETW_NAMES_BLOCK;
	*in_use = 0;
	for (uint32_t c = 0; c < LETW_NAMES_NR; c++) {
		const struct letw_names_class *k = &nm->cls[c];
		long used = uatomic_read(&k->total) - uatomic_read(&k->nfree);

		*in_use += (uint64_t)(used > 0 ? used : 0) * (c + LETW_NAMES_MIN);
	}
	*slow_grows = (uint64_t)uatomic_read(&nm->slow_grows);
}
