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

Test(addrindex, colliding_tags_kept_apart)
{
	/* The tag is the low half: these four addresses share one, so they
	 * share a home slot and a bit too, and only the region's own start
	 * tells them apart. */
	uint64_t a = 0x0000000100001000ull, b = 0x0000000200001000ull,
		 c = 0x00007fff00001000ull, d = 0x1000;

	cr_assert_eq(letw_addrindex_tag(a), letw_addrindex_tag(b));
	cr_assert_eq(letw_addrindex_tag(a), letw_addrindex_tag(c));
	cr_assert_eq(letw_addrindex_tag(a), letw_addrindex_tag(d));
	add(a);
	add(b);
	add(c);
	cr_assert_eq(find(a), 1);
	cr_assert_eq(find(b), 2);
	cr_assert_eq(find(c), 3);
	cr_assert_eq(find(d), 0);
	add(b);
	cr_assert_eq(find(b), 4);
	cr_assert_eq(find(a), 1);
	cr_assert_eq(find(c), 3);
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
