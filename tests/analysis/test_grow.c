/* SPDX-License-Identifier: MIT */
/* The sinks' growable arrays (analysis/plugin/grow.c): contents kept
 * across the heap-to-mapping switch and every mremap, and a refused
 * growth leaves the array as it was. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

#include <criterion/criterion.h>

#include "grow.h"

struct elem {
	uint64_t a, b, c; /* 24 bytes, like no power of two */
};

static void fill_and_check(size_t n)
{
	struct letw_grow g = { 0 };
	struct elem *e = NULL;
	int mapped_seen = 0;

	for (size_t i = 0; i < n; i++) {
		if (i == g.cap) {
			size_t before = g.cap;

			cr_assert_eq(letw_grow(&g, sizeof(*e), i + 1), 0, "grow to %zu", i + 1);
			cr_assert_geq(g.cap, i + 1);
			cr_assert_gt(g.cap, before);
			e = g.p;
			/* What was there before the move is still there. */
			for (size_t k = 0; k < i; k += 4099)
				cr_assert(e[k].a == k && e[k].b == ~k && e[k].c == k * 3,
					  "element %zu lost growing past %zu", k, before);
			mapped_seen |= (int)g.mapped;
		}
		e[i] = (struct elem){ i, ~i, i * 3 };
	}
	for (size_t k = 0; k < n; k++)
		cr_assert(e[k].a == k && e[k].b == ~k && e[k].c == k * 3, "element %zu", k);
	/* Past 2 MiB the array is a mapping of its own. */
	cr_assert(mapped_seen == (n * sizeof(*e) > ((size_t)2 << 20)));
	letw_grow_free(&g, sizeof(*e));
	cr_assert_null(g.p);
	cr_assert_eq(g.cap, 0);
}

Test(grow, small_stays_on_the_heap)
{
	fill_and_check(1000);
}

Test(grow, large_is_mapped_and_kept)
{
	fill_and_check(2000000); /* 48 MB: several mremap() */
}

Test(grow, large_with_huge_page_advice)
{
	letw_grow_huge_pages(1);
	fill_and_check(300000);
	letw_grow_huge_pages(0);
}

Test(grow, refused_growth_changes_nothing)
{
	struct letw_grow g = { 0 };
	struct rlimit rl = { 64u << 20, 64u << 20 };
	struct elem *e;
	size_t n = (4u << 20) / sizeof(*e); /* 4 MiB: mapped */

	cr_assert_eq(letw_grow(&g, sizeof(*e), n), 0);
	e = g.p;
	for (size_t i = 0; i < n; i++)
		e[i] = (struct elem){ i, ~i, i * 3 };
	/* Criterion runs each test in its own process: the limit stays here. */
	cr_assert_eq(setrlimit(RLIMIT_DATA, &rl), 0);
	cr_assert_eq(letw_grow(&g, sizeof(*e), ((size_t)1 << 30) / sizeof(*e)), -ENOMEM);
	cr_assert_eq(g.p, (void *)e);
	for (size_t i = 0; i < n; i += 997)
		cr_assert(e[i].a == i && e[i].b == ~i && e[i].c == i * 3, "element %zu", i);
	/* A growth the limit allows still works after a refusal. */
	cr_assert_eq(letw_grow(&g, sizeof(*e), n * 2), 0);
	e = g.p;
	for (size_t i = 0; i < n; i += 997)
		cr_assert(e[i].a == i && e[i].b == ~i && e[i].c == i * 3, "element %zu", i);
	letw_grow_free(&g, sizeof(*e));
}

Test(grow, overflowing_request)
{
	struct letw_grow g = { 0 };

	cr_assert_eq(letw_grow(&g, sizeof(struct elem), SIZE_MAX / 8), -ENOMEM);
	cr_assert_null(g.p);
	cr_assert_eq(g.cap, 0);
}
