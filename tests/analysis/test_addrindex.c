/* SPDX-License-Identifier: MIT */
/*
 * The sinks' start-address index (analysis/plugin/addrindex.h) against a
 * brute-force search of the same region array: random addresses, many
 * regions at one address (the newest must win), addresses whose 32-bit
 * tags collide, and growth past several doublings, with inserts still
 * queued (LETW_ADDRINDEX_LAG) and made.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "addrindex.h"

/* Shaped like the sinks' regions: the start first, then other fields. */
struct reg {
	uint64_t start;
	uint32_t size, pad;
};

static struct reg *regs;
static size_t nregs;
static struct letw_addrindex ix;

static void setup(void)
{
	regs = calloc(1 << 20, sizeof(*regs));
	cr_assert_not_null(regs);
	nregs = 0;
}

static void teardown(void)
{
	letw_addrindex_free(&ix);
	free(regs);
}

TestSuite(addrindex, .init = setup, .fini = teardown);

static void add(uint64_t start)
{
	regs[nregs].start = start;
	cr_assert_eq(letw_addrindex_put(&ix, nregs, regs, sizeof(*regs)), 0);
	nregs++;
}

/* 1 + the newest region at start, or 0: what the index must answer. */
static size_t brute(uint64_t start)
{
	for (size_t i = nregs; i-- > 0;)
		if (regs[i].start == start)
			return i + 1;
	return 0;
}

static size_t find(uint64_t start)
{
	return letw_addrindex_find(&ix, start, regs, sizeof(*regs));
}

static uint64_t rnd(void)
{
	return ((uint64_t)(unsigned)rand() << 33) ^ ((uint64_t)(unsigned)rand() << 12) ^
	       (unsigned)rand();
}

Test(addrindex, empty_finds_nothing)
{
	cr_assert_eq(find(0), 0);
	cr_assert_eq(find(0x7f0000001000ull), 0);
}

Test(addrindex, random_against_brute_force)
{
	uint64_t keys[4096];

	srand(7);
	/* Code allocated upwards and visited out of order, with some
	 * addresses reused (a newer region at the same start). */
	for (size_t k = 0; k < 4096; k++)
		keys[k] = 0x7f1200000000ull + (uint64_t)(rand() % 100000) * 48;
	for (size_t k = 0; k < 4096; k++) {
		add(keys[k]);
		/* The newest, an older one (queued or in its slot). */
		cr_assert_eq(find(keys[k]), nregs);
		cr_assert_eq(find(keys[k / 2]), brute(keys[k / 2]));
	}
	for (size_t k = 0; k < 4096; k++)
		cr_assert_eq(find(keys[k]), brute(keys[k]), "start %#llx",
			     (unsigned long long)keys[k]);
	for (int k = 0; k < 4096; k++) {
		uint64_t s = rnd();

		cr_assert_eq(find(s), brute(s), "start %#llx", (unsigned long long)s);
	}
}

Test(addrindex, newest_region_wins)
{
	add(0x1000);
	add(0x2000);
	add(0x1000);
	cr_assert_eq(find(0x1000), 3);
	cr_assert_eq(find(0x2000), 2);
	add(0x2000);
	add(0x1000);
	cr_assert_eq(find(0x1000), 5);
	cr_assert_eq(find(0x2000), 4);
	/* Past the queue of inserts not yet made, and through it: replacing
	 * takes the slot over, the index holds two addresses. */
	for (int k = 0; k < 3 * LETW_ADDRINDEX_LAG; k++) {
		add(k % 2 ? 0x1000 : 0x2000);
		cr_assert_eq(find(0x1000), brute(0x1000));
		cr_assert_eq(find(0x2000), brute(0x2000));
	}
	cr_assert_eq(ix.used, 2);
}

/* Past the queue of late inserts: every one of these is in its slot. */
static void flush_queue(uint64_t filler)
{
	for (int k = 0; k < LETW_ADDRINDEX_LAG; k++)
		add(filler + (uint64_t)k * 0x40);
}

Test(addrindex, colliding_tags_kept_apart)
{
	/* With the multiplier 1 the tag is the address's high half: these
	 * addresses share one, so they share a home slot, and only the
	 * region's own start tells them apart, in the slots as in the queue
	 * (a match on the tag alone fails here). */
	uint64_t a = 0x1000, b = 0x2000, c = 0xfffff000, d = 0x3000;
	size_t ia, ib, ic;

	ix.mul = 1;
	cr_assert_eq(letw_addrindex_tag(&ix, a), letw_addrindex_tag(&ix, b));
	cr_assert_eq(letw_addrindex_tag(&ix, a), letw_addrindex_tag(&ix, c));
	cr_assert_eq(letw_addrindex_tag(&ix, a), letw_addrindex_tag(&ix, d));
	add(a);
	ia = nregs;
	add(b);
	ib = nregs;
	add(c);
	ic = nregs;
	flush_queue(0x10000); /* same tag as well: one run of slots */
	cr_assert_eq(ix.lag_n, LETW_ADDRINDEX_LAG);
	cr_assert_geq(ix.used, 3, "a, b and c are in their slots");
	cr_assert_eq(find(a), ia);
	cr_assert_eq(find(b), ib);
	cr_assert_eq(find(c), ic);
	cr_assert_eq(find(d), 0);
	add(b); /* replaces b's slot once it leaves the queue */
	flush_queue(0x20000);
	cr_assert_eq(find(b), brute(b));
	cr_assert_eq(find(a), ia);
	cr_assert_eq(find(c), ic);
	cr_assert_eq(find(d), 0);
	for (uint64_t x = 0x10000; x < 0x20000 + LETW_ADDRINDEX_LAG * 0x40; x += 0x20)
		cr_assert_eq(find(x), brute(x), "start %#llx", (unsigned long long)x);
}

/* Addresses a trace could choose to pile up in one run of slots: for a
 * fixed multiplier (this index's first: Fibonacci hashing of the low
 * half), those whose products are consecutive multiples of 64; and, for
 * any hash of the low half
 * alone (glib's), addresses 4 GiB apart. With a multiplier drawn per
 * index, neither shares runs: the longest run of taken slots stays short
 * (here 10^5 addresses in 2^18 slots; one run of them all before). */
static size_t longest_run(void)
{
	size_t best = 0, cur = 0, n = (size_t)1 << ix.bits;

	for (size_t i = 0; i < 2 * n; i++) {
		cur = ix.slot[i % n] ? cur + 1 : 0;
		if (cur > best)
			best = cur;
	}
	return best > n ? n : best;
}

Test(addrindex, chosen_addresses_do_not_pile_up)
{
	const uint32_t fib_inv = 0x144cbc89u; /* 2654435769^-1 mod 2^32 */
	const uint64_t hi = 0x7f1200000000ull;
	enum { N = 100000 };

	for (uint32_t p = 0; p < N; p++)
		add(hi | (uint32_t)(p * 64u * fib_inv));
	cr_assert_lt(longest_run(), 1000, "a run of %zu slots", longest_run());
	for (uint32_t p = 0; p < N; p += 997)
		cr_assert_eq(find(hi | (uint32_t)(p * 64u * fib_inv)), p + 1);
	letw_addrindex_free(&ix);
	nregs = 0;
	for (uint64_t p = 0; p < N; p++)
		add((p << 32) | 0x1000);
	cr_assert_lt(longest_run(), 1000, "a run of %zu slots", longest_run());
	for (uint64_t p = 0; p < N; p += 997)
		cr_assert_eq(find((p << 32) | 0x1000), p + 1);
}

/* The region array may move between a put and its late insert (the sinks
 * grow it with mremap): the insert reads the region where it is then. */
Test(addrindex, regions_moving_under_queued_inserts)
{
	struct reg *moved;

	for (int k = 0; k < 100; k++)
		add(0x7f0000000000ull + (uint64_t)k * 0x100);
	cr_assert_gt(ix.lag_n, 0);
	moved = calloc(1 << 20, sizeof(*moved));
	cr_assert_not_null(moved);
	memcpy(moved, regs, nregs * sizeof(*regs));
	memset(regs, 0xff, nregs * sizeof(*regs)); /* the old place, garbage */
	free(regs);
	regs = moved;
	for (int k = 100; k < 200; k++)
		add(0x7f0000000000ull + (uint64_t)k * 0x100);
	for (int k = 0; k < 200; k++)
		cr_assert_eq(find(0x7f0000000000ull + (uint64_t)k * 0x100), (size_t)k + 1);
}

Test(addrindex, grows_past_many_doublings)
{
	/* 2^19 distinct starts: from the first array (2^10 slots) through
	 * ten doublings, each moving every slot. */
	size_t n = (size_t)1 << 19;

	for (size_t i = 0; i < n; i++)
		add(0x7f0000000000ull + (uint64_t)i * 64);
	cr_assert_eq(ix.used + ix.lag_n, n);
	cr_assert_geq((size_t)1 << ix.bits, 2 * n, "at most half full");
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(find(0x7f0000000000ull + (uint64_t)i * 64), i + 1);
	cr_assert_eq(find(0x7f0000000000ull + (uint64_t)n * 64), 0);
	cr_assert_eq(find(0x7f0000000000ull + 32), 0);
}

Test(addrindex, index_past_32_bits_refused)
{
	/* An index the slot cannot hold: refused, the index unchanged. */
	struct reg one = { .start = 0x1000 };

	cr_assert_eq(letw_addrindex_put(&ix, (size_t)UINT32_MAX - 1, &one,
					0 /* every index reads `one` */), -ENOMEM);
	cr_assert_eq(ix.used, 0);
	cr_assert_eq(letw_addrindex_put(&ix, (size_t)UINT32_MAX - 2, &one, 0), 0);
	cr_assert_eq(letw_addrindex_find(&ix, 0x1000, &one, 0), (size_t)UINT32_MAX - 1);
}
