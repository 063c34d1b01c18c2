/* SPDX-License-Identifier: MIT */
/*
 * Map reconstruction logic (analysis/plugin/codemap*.c) on
 * record sequences; the same cases on real traces are in map_e2e.sh.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codemap.h"
#include "event.h"
#include "names.h"

static struct letw_codemap m;

static void setup(void) { letw_codemap_init(&m, 42); }
static void teardown(void) { letw_codemap_fini(&m); }

TestSuite(codemap, .init = setup, .fini = teardown);

static void load(int64_t ts, uint64_t start, uint32_t size, const char *name)
{
	cr_assert_eq(letw_codemap_load_copy(&m, ts, LETW_OBJ_METHOD, start, size, name), 0);
}

static void unload(int64_t ts, uint64_t start, uint32_t size, const char *name)
{
	cr_assert_eq(letw_codemap_unload_copy(&m, ts, LETW_OBJ_METHOD, start, size, name), 0);
}

static int rundown(int64_t ts, uint64_t start, uint32_t size, const char *name)
{
	size_t idx;
	int r = letw_codemap_rundown_copy(&m, ts, LETW_OBJ_METHOD, start, size,
					  name, &idx);

	cr_assert_geq(r, 0);
	return r;
}

static size_t build(enum letw_map_mode mode, struct letw_map_entry **e,
		    struct letw_reuse *reuse)
{
	size_t n;

	cr_assert_eq(letw_codemap_build(&m, mode, e, &n, reuse), 0);
	return n;
}

static void expect(const struct letw_map_entry *e, uint64_t start, uint32_t size,
		   const char *name)
{
	cr_expect_eq(e->start, start, "start %#lx != %#lx", (unsigned long)e->start,
		     (unsigned long)start);
	cr_expect_eq(e->size, size);
	cr_expect_str_eq(e->name, name);
}

Test(codemap, load_unload_keeps_code_that_ran)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	load(10, 0x1000, 0x100, "a");
	load(11, 0x2000, 0x80, "b");
	unload(20, 0x1000, 0x100, "a");
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 2);
	expect(&e[0], 0x1000, 0x100, "a");
	expect(&e[1], 0x2000, 0x80, "b");
	cr_expect_eq(r.ranges, 0);
	cr_expect_eq(m.stats.unmatched_unloads, 0);
	free(e);
}

Test(codemap, reuse_latest_vs_all)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	load(10, 0x1000, 0x100, "old");
	unload(20, 0x1000, 0x100, "old");
	load(30, 0x1040, 0x20, "new"); /* inside the old range */
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 3);
	expect(&e[0], 0x1000, 0x40, "old");
	expect(&e[1], 0x1040, 0x20, "new");
	expect(&e[2], 0x1060, 0xa0, "old");
	cr_expect_eq(r.ranges, 1);
	cr_expect_eq(r.regions, 2);
	cr_expect_eq(r.omitted, 0);
	cr_expect_eq(r.trimmed, 1);
	cr_expect_eq(r.example[0], 0x1000);
	free(e);
	cr_assert_eq(build(LETW_MAP_ALL, &e, &r), 2);
	expect(&e[0], 0x1000, 0x100, "old");
	expect(&e[1], 0x1040, 0x20, "new");
	cr_expect_eq(r.omitted, 0);
	free(e);
}

Test(codemap, reuse_keeps_older_code_that_does_not_collide)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	/* Old code spans two new ones: the newest are kept, the old one
	 * (overlapping both) keeps the gaps they leave; an untouched
	 * neighbour stays. */
	load(1, 0x1000, 0x100, "old");
	load(2, 0x1100, 0x10, "neighbour");
	unload(3, 0x1000, 0x100, "old");
	load(4, 0x1000, 0x40, "n1");
	load(5, 0x1080, 0x40, "n2");
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 5);
	expect(&e[0], 0x1000, 0x40, "n1");
	expect(&e[1], 0x1040, 0x40, "old");
	expect(&e[2], 0x1080, 0x40, "n2");
	expect(&e[3], 0x10c0, 0x40, "old");
	expect(&e[4], 0x1100, 0x10, "neighbour");
	cr_expect_eq(r.ranges, 1);
	cr_expect_eq(r.omitted, 0);
	cr_expect_eq(r.trimmed, 1);
	free(e);
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Regions g[0..n) published one after the other, each replaced
 * (unloaded) before the next: region i is more recent than region i-1. */
static void generations(const struct letw_map_entry *g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		load(10 * (int64_t)i + 1, g[i].start, g[i].size, g[i].name);
		if (i + 1 < n)
			unload(10 * (int64_t)i + 2, g[i].start, g[i].size, g[i].name);
	}
}

/* The lines perf reads: sorted by address, none overlapping the next. */
static void expect_sorted_disjoint(const struct letw_map_entry *e, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		cr_expect_leq(e[i - 1].start + e[i - 1].size, e[i].start,
			      "line %zu (%#lx+%#x) overlaps or precedes line %zu (%#lx)", i - 1,
			      (unsigned long)e[i - 1].start, e[i - 1].size, i,
			      (unsigned long)e[i].start);
}

/* The map in latest mode of the generations g[0..ng) is exactly
 * want[0..n), with these counts. */
#define LATEST(g, want, trimmed, omitted) \
	expect_latest(g, N_OF(g), want, N_OF(want), trimmed, omitted)
static void expect_latest(const struct letw_map_entry *g, size_t ng,
			  const struct letw_map_entry *want, size_t n, size_t trimmed,
			  size_t omitted)
{
	struct letw_map_entry *e;
	struct letw_reuse r;
	size_t i;

	generations(g, ng);
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), n);
	for (i = 0; i < n; i++)
		expect(&e[i], want[i].start, want[i].size, want[i].name);
	cr_expect_eq(r.trimmed, trimmed);
	cr_expect_eq(r.omitted, omitted);
	free(e);
}

Test(codemap, latest_newer_code_over_the_head)
{
	static const struct letw_map_entry g[] = { { 0x1000, 0x100, "old" },
						   { 0x0f80, 0xc0, "new" } };
	static const struct letw_map_entry want[] = { { 0x0f80, 0xc0, "new" },
						      { 0x1040, 0xc0, "old" } };

	LATEST(g, want, 1, 0);
}

Test(codemap, latest_newer_code_over_the_tail)
{
	static const struct letw_map_entry g[] = { { 0x1000, 0x100, "old" },
						   { 0x10c0, 0x80, "new" } };
	static const struct letw_map_entry want[] = { { 0x1000, 0xc0, "old" },
						      { 0x10c0, 0x80, "new" } };
	struct letw_map_entry *e;
	struct letw_reuse r;

	LATEST(g, want, 1, 0);
	/* --mode all: unchanged, every region whole. */
	cr_assert_eq(build(LETW_MAP_ALL, &e, &r), 2);
	expect(&e[0], 0x1000, 0x100, "old");
	expect(&e[1], 0x10c0, 0x80, "new");
	cr_expect_eq(r.trimmed, 0);
	cr_expect_eq(r.omitted, 0);
	free(e);
}

Test(codemap, latest_newer_code_in_the_middle_leaves_two_pieces)
{
	static const struct letw_map_entry g[] = { { 0x1000, 0x100, "old" },
						   { 0x1010, 0x10, "new" } };
	static const struct letw_map_entry want[] = {
		{ 0x1000, 0x10, "old" }, { 0x1010, 0x10, "new" }, { 0x1020, 0xe0, "old" },
	};

	LATEST(g, want, 1, 0);
}

/* More lines than regions: the output grows past one a region. */
Test(codemap, latest_several_newer_regions_leave_gaps)
{
	static const struct letw_map_entry g[] = {
		{ 0x1000, 0x100, "old" }, { 0x1010, 0x10, "n1" },
		{ 0x1040, 0x20, "n2" }, { 0x10f0, 0x10, "n3" },
	};
	static const struct letw_map_entry want[] = {
		{ 0x1000, 0x10, "old" }, { 0x1010, 0x10, "n1" }, { 0x1020, 0x20, "old" },
		{ 0x1040, 0x20, "n2" }, { 0x1060, 0x90, "old" }, { 0x10f0, 0x10, "n3" },
	};

	LATEST(g, want, 1, 0);
}

/* Code covered whole, by one newer region or by several together, is
 * still omitted; older code next to it keeps what they leave free. */
Test(codemap, latest_fully_covered_code_is_omitted)
{
	static const struct letw_map_entry g[] = {
		{ 0x1070, 0x40, "part" }, /* partly under n2 */
		{ 0x1000, 0x80, "both" }, /* under n1 and n2 together */
		{ 0x1020, 0x10, "one" },  /* under n1 alone */
		{ 0x1000, 0x40, "n1" },	  { 0x1040, 0x40, "n2" },
	};
	static const struct letw_map_entry want[] = {
		{ 0x1000, 0x40, "n1" }, { 0x1040, 0x40, "n2" }, { 0x1080, 0x30, "part" },
	};

	LATEST(g, want, 1, 2);
}

/* Three generations, nested (A under B under C) and sliding (X, Y, Z
 * each over the previous one's tail): each older one keeps only what
 * every newer one leaves free, pieces of newer code included. */
Test(codemap, latest_three_generations)
{
	static const struct letw_map_entry g[] = {
		{ 0x1000, 0x100, "A" }, { 0x1040, 0x80, "B" }, { 0x1080, 0x20, "C" },
		{ 0x2000, 0x40, "X" }, { 0x2020, 0x40, "Y" }, { 0x2040, 0x40, "Z" },
	};
	static const struct letw_map_entry want[] = {
		{ 0x1000, 0x40, "A" }, { 0x1040, 0x40, "B" }, { 0x1080, 0x20, "C" },
		{ 0x10a0, 0x20, "B" }, { 0x10c0, 0x40, "A" }, { 0x2000, 0x20, "X" },
		{ 0x2020, 0x20, "Y" }, { 0x2040, 0x40, "Z" },
	};

	LATEST(g, want, 4, 0);
}

/* Random generations in a small window against the rule itself, address
 * by address: the line at an address names the most recent region that
 * held it, none where no region did; a region is omitted when it names
 * no address, trimmed when it names some of its own but not all. */
Test(codemap, latest_names_every_address_after_its_most_recent_code)
{
	enum { BASE = 0x1000, SPAN = 0x100, ROUNDS = 300, MAXG = 7 };
	uint32_t seed = 12345;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		struct letw_map_entry g[MAXG];
		char names[MAXG][8];
		int owner[SPAN];
		size_t ng, i, n, l, omitted = 0, trimmed = 0;
		struct letw_map_entry *e;
		struct letw_reuse r;
		uint64_t a;

		letw_codemap_fini(&m);
		letw_codemap_init(&m, 42);
		seed = seed * 1103515245u + 12345u;
		ng = 2 + (seed >> 16) % (MAXG - 1);
		for (a = 0; a < SPAN; a++)
			owner[a] = -1;
		for (i = 0; i < ng; i++) {
			seed = seed * 1103515245u + 12345u;
			g[i].start = BASE + (seed >> 16) % (SPAN - 8);
			seed = seed * 1103515245u + 12345u;
			g[i].size = 1 + (seed >> 16) % (BASE + SPAN - (uint32_t)g[i].start);
			snprintf(names[i], sizeof(names[i]), "g%zu", i);
			g[i].name = names[i];
			for (a = g[i].start; a < g[i].start + g[i].size; a++)
				owner[a - BASE] = (int)i;
		}
		generations(g, ng);
		n = build(LETW_MAP_LATEST, &e, &r);
		expect_sorted_disjoint(e, n);
		for (a = 0, l = 0; a < SPAN; a++) {
			while (l < n && e[l].start + e[l].size <= BASE + a)
				l++;
			if (owner[a] < 0)
				cr_assert(l == n || e[l].start > BASE + a,
					  "round %d: %#lx named, no code there", round,
					  (unsigned long)(BASE + a));
			else
				cr_assert(l < n && e[l].start <= BASE + a &&
						  strcmp(e[l].name, g[owner[a]].name) == 0,
					  "round %d: %#lx not named %s", round,
					  (unsigned long)(BASE + a), g[owner[a]].name);
		}
		for (i = 0; i < ng; i++) {
			uint64_t own = 0;

			for (a = g[i].start; a < g[i].start + g[i].size; a++)
				own += owner[a - BASE] == (int)i;
			omitted += own == 0;
			trimmed += own && own < g[i].size;
		}
		cr_expect_eq(r.omitted, omitted, "round %d", round);
		cr_expect_eq(r.trimmed, trimmed, "round %d", round);
		free(e);
	}
}

/* One old region under a thousand newer ones with gaps between: twice
 * as many lines as regions, the array grown as they come. */
Test(codemap, latest_many_pieces)
{
	struct letw_map_entry *e;
	struct letw_reuse r;
	char name[32];
	size_t i, n;

	load(1, 0x100000, 0x40000, "old");
	unload(2, 0x100000, 0x40000, "old");
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		load(3 + (int64_t)i, 0x100000 + i * 0x100 + 0x80, 0x40, name);
	}
	n = build(LETW_MAP_LATEST, &e, &r);
	cr_assert_eq(n, 2001);
	expect_sorted_disjoint(e, n);
	expect(&e[0], 0x100000, 0x80, "old");
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		expect(&e[2 * i + 1], 0x100080 + i * 0x100, 0x40, name);
		/* The last gap runs to the old region's end. */
		expect(&e[2 * i + 2], 0x1000c0 + i * 0x100, i < 999 ? 0xc0 : 0x1840, "old");
	}
	cr_expect_eq(r.trimmed, 1);
	free(e);
}

Test(codemap, same_code_reloaded_is_written_once)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	load(1, 0x1000, 0x10, "f");
	unload(2, 0x1000, 0x10, "f");
	load(3, 0x1000, 0x10, "f");
	cr_expect_eq(rundown(4, 0x1000, 0x10, "f"), LETW_RD_LIVE);
	cr_assert_eq(build(LETW_MAP_ALL, &e, &r), 1);
	cr_expect_eq(r.ranges, 0);
	cr_expect_eq(r.merged, 1);
	free(e);
}

Test(codemap, rundown_only)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	cr_expect_eq(rundown(5, 0x3000, 0x30, "c"), LETW_RD_NEW);
	cr_expect_eq(rundown(6, 0x1000, 0x10, "a"), LETW_RD_NEW);
	/* DCEnd of the same code later: the same region. */
	cr_expect_eq(rundown(50, 0x1000, 0x10, "a"), LETW_RD_LIVE);
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 2);
	expect(&e[0], 0x1000, 0x10, "a");
	expect(&e[1], 0x3000, 0x30, "c");
	cr_expect_eq(m.n, 2);
	free(e);
}

Test(codemap, unload_before_dcend)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	cr_expect_eq(rundown(1, 0x1000, 0x10, "a"), LETW_RD_NEW);
	cr_expect_eq(rundown(1, 0x2000, 0x10, "b"), LETW_RD_NEW);
	unload(5, 0x1000, 0x10, "a");
	/* A DCEnd listing a after its unload is reported, not resurrected. */
	cr_expect_eq(rundown(9, 0x1000, 0x10, "a"), LETW_RD_AFTER_UNLOAD);
	cr_expect_eq(rundown(9, 0x2000, 0x10, "b"), LETW_RD_LIVE);
	cr_expect_eq(m.stats.rundown_after_unload, 1);
	cr_expect(m.r[0].flags & LETW_REG_DEAD);
	cr_expect_eq(m.r[0].death_ns, 5);
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 2);
	expect(&e[0], 0x1000, 0x10, "a");
	free(e);
}

/* The walker copies a record, then emits the copy after its read-side
 * section: meanwhile the code was unloaded and other code loaded at its
 * start, both in the trace before the copy. The copy is older than the
 * code there (loaded during its pass): before, it was taken for new code,
 * ended the live region and named its addresses after the freed code. */
Test(codemap, rundown_copy_of_code_replaced_during_its_pass)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	load(10, 0x1000, 0x40, "A");          /* before the pass */
	letw_codemap_pass_begin(&m, 100);     /* the pass's Init */
	unload(110, 0x1000, 0x40, "A");
	load(120, 0x1000, 0x40, "B");
	cr_expect_eq(rundown(130, 0x1000, 0x40, "A"), LETW_RD_SUPERSEDED);
	cr_expect_eq(m.stats.rundown_superseded, 1);
	cr_expect_eq(m.stats.implicit_replacements, 0);
	cr_expect_eq(m.n, 2, "no region added for the copy");
	cr_expect_not(m.r[1].flags & LETW_REG_DEAD, "B still live");
	cr_expect(m.r[0].flags & LETW_REG_DEAD);
	cr_expect_eq(m.r[0].death_ns, 110);
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 1);
	expect(&e[0], 0x1000, 0x40, "B");
	free(e);
	/* Code loaded before the pass began and then listed as other code
	 * at its start: the copy is newer (its load and B's unload lost),
	 * and replaces B as before. */
	letw_codemap_pass_begin(&m, 200);
	cr_expect_eq(rundown(230, 0x1000, 0x40, "C"), LETW_RD_NEW);
	cr_expect_eq(m.stats.implicit_replacements, 1);
	/* No Init (lost): no pass to date the copy by; taken as new. */
	load(300, 0x2000, 0x10, "D");
	letw_codemap_pass_begin(&m, 0);
	cr_expect_eq(rundown(310, 0x2000, 0x10, "E"), LETW_RD_NEW);
}

Test(codemap, unload_of_unknown_code_still_names_it)
{
	struct letw_map_entry *e;
	struct letw_reuse r;

	unload(7, 0x5000, 0x20, "early");
	cr_expect_eq(m.stats.unmatched_unloads, 1);
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 1);
	expect(&e[0], 0x5000, 0x20, "early");
	free(e);
}

Test(codemap, load_over_live_code_ends_it)
{
	load(1, 0x1000, 0x10, "a");
	load(2, 0x1000, 0x20, "b"); /* unload lost */
	cr_expect_eq(m.stats.implicit_replacements, 1);
	cr_expect(m.r[0].flags & LETW_REG_IMPLICIT_END);
	cr_expect_eq(m.r[0].death_ns, 2);
}

Test(codemap, many_regions)
{
	struct letw_map_entry *e;
	struct letw_reuse r;
	char name[32];
	uint64_t i;

	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "f%lu", (unsigned long)i);
		load((int64_t)i, 0x100000 + i * 0x40, 0x40, name);
	}
	cr_assert_eq(build(LETW_MAP_LATEST, &e, &r), 20000);
	for (i = 1; i < 20000; i++)
		cr_assert_gt(e[i].start, e[i - 1].start);
	free(e);
}

/* The shortcuts in front of the start index (the next region in store
 * order, addresses past every one seen) and its lazy filling never hide
 * code the map holds: blocks allocated downwards, a second pass in store
 * order and a shuffled one all find every region again. */
static void rundown_all_live(const uint64_t *starts, size_t n, const size_t *order)
{
	char name[32];
	size_t i;

	for (i = 0; i < n; i++) {
		size_t k = order ? order[i] : i;

		snprintf(name, sizeof(name), "f%zu", k);
		cr_assert_eq(rundown(1000 + (int64_t)i, starts[k], 0x10, name), LETW_RD_LIVE,
			     "region %zu at %#lx not found", k, (unsigned long)starts[k]);
	}
}

Test(codemap, lookups_find_every_region_whatever_the_order)
{
	enum { N = 12000 };
	static uint64_t starts[N];
	static size_t order[N];
	char name[32];
	size_t i;

	/* 6000 blocks of two regions each, top-down, then a second pass in
	 * store order and one shuffled. */
	for (i = 0; i < N; i++) {
		starts[i] = 0x7f0000000000ull - (i / 2) * 0x10000 + (i % 2) * 0x100;
		snprintf(name, sizeof(name), "f%zu", i);
		cr_assert_eq(rundown((int64_t)i, starts[i], 0x10, name), LETW_RD_NEW);
		order[i] = i;
	}
	rundown_all_live(starts, N, NULL);
	for (i = N - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	rundown_all_live(starts, N, order);
	cr_assert_eq(m.n, N);
}

/* letw_codemap_rundown_by() asks for the name only to add a region, and
 * compares with is() only code of the same kind and size. */
struct src_calls {
	const char *name;
	int is_calls, get_calls;
};

static int src_is(const char *stored, void *arg)
{
	struct src_calls *c = arg;

	c->is_calls++;
	return strcmp(stored, c->name) == 0;
}

static const char *src_get(void *arg)
{
	struct src_calls *c = arg;

	c->get_calls++;
	return c->name;
}

static int rundown_by(int64_t ts, uint64_t start, uint32_t size, struct src_calls *c)
{
	const struct letw_name_src src = { src_is, src_get, c };
	size_t idx;

	c->is_calls = c->get_calls = 0;
	return letw_codemap_rundown_by(&m, ts, LETW_OBJ_METHOD, start, size, &src, &idx);
}

Test(codemap, rundown_by_builds_names_only_for_new_regions)
{
	struct src_calls a = { "a", 0, 0 }, b = { "b", 0, 0 };

	cr_expect_eq(rundown_by(1, 0x1000, 0x10, &a), LETW_RD_NEW);
	cr_expect_eq(a.is_calls, 0);
	cr_expect_eq(a.get_calls, 1);
	cr_expect_eq(rundown_by(2, 0x1000, 0x10, &a), LETW_RD_LIVE);
	cr_expect_eq(a.is_calls, 1);
	cr_expect_eq(a.get_calls, 0);
	/* Other code at the address: a new region, the old one ended. */
	cr_expect_eq(rundown_by(3, 0x1000, 0x10, &b), LETW_RD_NEW);
	cr_expect_eq(b.get_calls, 1);
	cr_expect_eq(rundown_by(4, 0x1000, 0x20, &b), LETW_RD_NEW);
	cr_expect_eq(b.is_calls, 0, "another size is other code, no name compared");
	unload(5, 0x1000, 0x20, "b");
	cr_expect_eq(rundown_by(6, 0x1000, 0x20, &b), LETW_RD_AFTER_UNLOAD);
	cr_expect_eq(b.get_calls, 0);
	cr_expect_eq(m.n, 3);
	cr_expect_eq(m.stats.implicit_replacements, 2);
	cr_expect_eq(m.stats.rundown_after_unload, 1);
}

/* The start index's bitmap and queued inserts (addrindex.h; the index
 * built at the first lookup, then grown) never hide a region: addresses
 * between known ones, added after it was built, are found again. */
Test(codemap, filter_keeps_every_region_findable)
{
	enum { N = 9000 };
	char name[32];
	size_t i;

	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		cr_assert_eq(rundown((int64_t)i, 0x500000000000ull - i * 0x40, 0x10, name),
			     LETW_RD_NEW);
	}
	/* In between, unknown to the map: an unmatched unload each. */
	for (i = 0; i < N; i++)
		unload(20000 + (int64_t)i, 0x500000000000ull - i * 0x40 - 0x20, 0x10, "u");
	cr_expect_eq(m.stats.unmatched_unloads, N);
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		cr_assert_eq(rundown(30000 + (int64_t)i, 0x500000000000ull - i * 0x40, 0x10,
				     name), LETW_RD_LIVE, "region %zu lost", i);
		cr_assert_eq(rundown(40000 + (int64_t)i, 0x500000000000ull - i * 0x40 - 0x20,
				     0x10, "u"), LETW_RD_AFTER_UNLOAD);
	}
	cr_expect_eq(m.n, 2 * N);
}
