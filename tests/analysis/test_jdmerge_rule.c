/* SPDX-License-Identifier: MIT */
/* The merge's dedup over many chunks (analysis/cli/jitdump_units.c: sorted
 * runs of the earlier chunks' LOADs, merged as they grow) against the rule
 * it implements, written here as a plain scan of every earlier LOAD: five
 * chunks by hand, and random traces of up to nine. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli.h"
#include "jitdump_write.h"
#include "jdmerge_fixture.h"

/*
 * More than two chunks: the dedup keeps the earlier chunks' LOADs in sorted
 * runs that merge as chunks come (jitdump_units.c), which two chunks never
 * make happen before a query. Checked against the rule itself, below, as a
 * scan of every earlier LOAD for each (no runs).
 */
#define MAX_LOADS 128

/* A LOAD of the input, as the rule sees it. */
struct ref {
	const struct load *l;
	uint32_t chunk, seq;
	uint64_t ts;
	int before, dropped;
};

/* The merged order: (ts, chunk, seq). */
static int ref_later(const struct ref *x, const struct ref *y)
{
	return x->ts != y->ts ? x->ts > y->ts :
	       x->chunk != y->chunk ? x->chunk > y->chunk : x->seq > y->seq;
}

static int ref_overlaps(const struct ref *a, const struct ref *b)
{
	return a->l->addr < b->l->addr + jdm_size_of(b->l) && b->l->addr < a->l->addr + jdm_size_of(a->l);
}

/* Same place, size, name, and bytes unless either is filler. */
static int ref_same(const struct ref *a, const struct ref *b)
{
	return a->l->addr == b->l->addr && jdm_size_of(a->l) == jdm_size_of(b->l) &&
	       !strcmp(a->l->name, b->l->name) &&
	       (!a->l->real || !b->l->real || a->l->real == b->l->real);
}

/*
 * The LOADs the merge writes, in its order, into r (its count returned):
 * every LOAD of a chunk after the first is compared, as of its time (or its
 * chunk's start when dated before it), with the latest LOAD overlapping it
 * then among the earlier chunks' written ones and its own chunk's earlier
 * ones: the same code is a repeat, dropped; code there before its chunk
 * that differs is dated after the earlier chunks' latest there, and not
 * before its chunk's start (jitdump_merge.c).
 */
static size_t reference(const struct in *in, size_t n, struct ref *r, size_t *repeats)
{
	size_t m = 0, w = 0;

	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < in[k].n; i++) {
			cr_assert_lt(m, MAX_LOADS);
			r[m++] = (struct ref){ &in[k].l[i], (uint32_t)k, (uint32_t)i, in[k].l[i].ts,
					       in[k].l[i].ts < in[k].start, 0 };
		}
	*repeats = 0;
	for (size_t i = 0; i < m; i++) {
		struct ref *x = &r[i];
		uint64_t start = in[x->chunk].start, eff = x->before ? start : x->ts;
		uint64_t prev_end = 0;
		const struct ref *last = NULL;
		int prev = 0;

		/* r is in (chunk, seq) order: r[0..i) is what came before x. */
		for (size_t j = 0; x->chunk && j < i; j++) {
			const struct ref *u = &r[j];
			int earlier = u->chunk < x->chunk;

			if ((earlier && u->dropped) || !ref_overlaps(u, x) || u->ts > eff)
				continue;
			if (!last || ref_later(u, last))
				last = u;
			if (earlier && (!prev || u->ts > prev_end)) {
				prev_end = u->ts;
				prev = 1;
			}
		}
		if (last && ref_same(last, x)) {
			x->dropped = 1;
			++*repeats;
		} else if (x->before && prev && prev_end >= x->ts) {
			x->ts = prev_end + 1 > start ? prev_end + 1 : start;
		}
	}
	for (size_t i = 0; i < m; i++)
		if (!r[i].dropped)
			r[w++] = r[i];
	for (size_t i = 1; i < w; i++) /* insertion sort: by (ts, chunk, seq) */
		for (size_t j = i; j > 0 && ref_later(&r[j - 1], &r[j]); j--) {
			struct ref t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	return w;
}

/* The test's directory, removed by drop_dir even when an assertion fails. */
static char *cur_dir;

static void drop_dir(void)
{
	if (cur_dir)
		nftw(cur_dir, jdm_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(cur_dir);
	cur_dir = NULL;
}

/* Merges in[] (n chunks, in a new cur_dir) into *g, and checks every LOAD
 * written against reference(): time, place, size, name, new code_index,
 * bytes, line table before it; and the repeats counted. */
static void merge_checked(const struct in *in, size_t n, struct got *g, const char *what)
{
	struct letw_jd_chunk_out c[16];
	struct ref r[MAX_LOADS];
	size_t want, repeats, k = 0;
	char count[96], *p;
	int merged;

	cr_assert_leq(n, 16u);
	cur_dir = jdm_tmpdir();
	jdm_chunks(c, cur_dir, in, n);
	cr_assert_eq(letw_jd_merge_chunks(cur_dir, c, n, &merged), 0, "%s: %s", what, jdm_said);
	cr_assert_eq(merged, 1, "%s: %s", what, jdm_said);
	want = reference(in, n, r, &repeats);
	snprintf(count, sizeof(count), "%zu LOAD record(s), %zu repeated across", want, repeats);
	cr_assert(strstr(jdm_said, count), "%s: want `%s`: %s", what, count, jdm_said);
	p = jdm_dump_path(cur_dir);
	jdm_read_dump(p, g);
	free(p);
	for (size_t i = 0; i < g->n; i++) {
		const struct letw_jd_rec *rec = &g->rec[i];
		const struct load *l;
		uint8_t code[MAX_CODE];

		if (rec->id != LETW_JD_CODE_LOAD)
			continue;
		cr_assert_lt(k, want, "%s: LOAD %zu (%s at %llu) more than the rule's %zu", what, k,
			     rec->name, (unsigned long long)rec->ts, want);
		l = r[k].l;
		cr_assert(rec->ts == r[k].ts && rec->code_addr == l->addr && !strcmp(rec->name, l->name),
			  "%s: LOAD %zu is %s at %#llx, %llu; the rule: %s at %#llx, %llu (chunk %u)",
			  what, k, rec->name, (unsigned long long)rec->code_addr,
			  (unsigned long long)rec->ts, l->name, (unsigned long long)l->addr,
			  (unsigned long long)r[k].ts, r[k].chunk + 1);
		cr_assert_eq(rec->code_size, jdm_size_of(l), "%s: LOAD %zu's size", what, k);
		cr_assert_eq(rec->code_index, k + 1, "%s: code_index renumbered in file order", what);
		if (!jdm_code_of(l, code))
			letw_jd_filler(code, jdm_size_of(l), k + 1, JDM_PID);
		cr_assert_eq(memcmp(rec->code, code, jdm_size_of(l)), 0, "%s: LOAD %zu's bytes", what, k);
		cr_assert_eq(i > 0 && g->rec[i - 1].id == LETW_JD_CODE_DEBUG_INFO, l->lines,
			     "%s: DEBUG_INFO before LOAD %zu (%s)", what, k, l->name);
		k++;
	}
	cr_assert_eq(k, want, "%s: %zu LOADs written, the rule's %zu", what, k, want);
}

/* Five chunks of four or five LOADs: the runs of what was seen merge after
 * c2 (4 + 4) and after c4 (3 + 3), so c3 and c4 query a merged run and
 * two runs, and c5 two merged ones. */
Test(jdmerge, five_chunks_repeats_replacements_and_a_region_holding_others, .fini = drop_dir)
{
	const struct load c1[] = {
		{ 1100, 0x1000, "rep", 1, 1, 0 },
		{ 1200, 0x2000, "old", 0, 0, 0 },
		{ 1300, 0x5040, "s1", 1, 0, 0 },
		{ 1400, 0x5100, "s2", 0, 0, 0 },
	};
	const struct load c2[] = {
		{ 1, 0x2000, "old", 0, 0, 0 }, /* its rundown: old, a repeat */
		{ 2200, 0x5000, "big", 0, 0, 0x200 }, /* over s1 and s2 */
		{ 2500, 0x3000, "tmp", 0, 0, 32 },
		{ 2600, 0x6000, "c2a", 1, 0, 0 },
		{ 2700, 0x6100, "c2b", 0, 1, 0 },
	};
	const struct load c3[] = {
		{ 1, 0x1000, "rep", 1, 1, 0 }, /* c1's rep: a repeat */
		{ 1, 0x5180, "s4", 0, 0, 0 },  /* in big, met past s1 and s2 */
		{ 3300, 0x2000, "new", 1, 0, 0 }, /* replaces old */
		{ 4000, 0x3800, "edge", 0, 0, 0 }, /* at c4's start */
	};
	const struct load c4[] = {
		{ 1, 0x2000, "new", 1, 0, 0 },   /* a repeat of c3's */
		{ 1, 0x3010, "other", 0, 1, 0 }, /* where tmp was: c4's start */
		{ 1, 0x3808, "other2", 0, 0, 0 }, /* where edge was, at c4's start */
		{ 4500, 0x5080, "s3", 0, 0, 0 }, /* in big */
	};
	const struct load c5[] = {
		{ 1, 0x1000, "rep", 1, 1, 0 },   /* still c1's */
		{ 1, 0x2000, "new", 1, 0, 0 },   /* c3's */
		{ 1, 0x3010, "other", 0, 1, 0 }, /* c4's, re-dated there */
		{ 1, 0x5000, "big", 0, 0, 0x200 }, /* s3 came over part of it */
		{ 5500, 0x6000, "c2a", 2, 0, 0 }, /* other bytes: new code */
		{ 5600, 0x6100, "c2b", 0, 0, 0 }, /* filler: c2's */
	};
	const struct in in[] = {
		{ 62, 1000, c1, 4 }, { 62, 2000, c2, 5 }, { 62, 3000, c3, 4 },
		{ 62, 4000, c4, 4 }, { 62, 5000, c5, 6 },
	};
	const struct { uint64_t ts, addr; const char *name; } want[] = {
		{ 1100, 0x1000, "rep" }, { 1200, 0x2000, "old" }, { 1300, 0x5040, "s1" },
		{ 1400, 0x5100, "s2" }, { 2200, 0x5000, "big" }, { 2500, 0x3000, "tmp" },
		{ 2600, 0x6000, "c2a" }, { 2700, 0x6100, "c2b" }, { 3000, 0x5180, "s4" },
		{ 3300, 0x2000, "new" }, { 4000, 0x3800, "edge" }, { 4000, 0x3010, "other" },
		{ 4001, 0x3808, "other2" }, { 4500, 0x5080, "s3" }, { 5000, 0x5000, "big" },
		{ 5500, 0x6000, "c2a" },
	};
	struct got g;
	size_t k = 0;

	merge_checked(in, 5, &g, "five chunks");
	cr_assert(strstr(jdm_said, "16 LOAD record(s), 7 repeated"), "%s", jdm_said);
	for (size_t i = 0; i < g.n; i++) {
		const struct letw_jd_rec *r = &g.rec[i];

		if (r->id != LETW_JD_CODE_LOAD)
			continue;
		cr_assert_lt(k, 16u);
		cr_assert(r->ts == want[k].ts && r->code_addr == want[k].addr &&
				  !strcmp(r->name, want[k].name),
			  "LOAD %zu: %s at %#llx, %llu; want %s at %#llx, %llu", k, r->name,
			  (unsigned long long)r->code_addr, (unsigned long long)r->ts, want[k].name,
			  (unsigned long long)want[k].addr, (unsigned long long)want[k].ts);
		cr_assert_eq(r->code_index, k + 1);
		k++;
	}
	cr_assert_eq(k, 16u);
}

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* A random LOAD at one of 24 places 16 bytes apart, some larger, over
 * others; or a copy of an earlier one (so that repeats are many). */
static void random_load(uint64_t *s, struct load *l, const struct load *pool, size_t n, uint64_t ts)
{
	static const char *const names[] = { "a", "b", "c" };
	static const uint32_t sizes[] = { 0, 0, 0, 0, 0, 48, 0x100 };

	if (n && rnd(s) % 2) {
		*l = pool[rnd(s) % n];
	} else {
		l->addr = 0x1000 + 0x10 * (rnd(s) % 24);
		l->name = names[rnd(s) % 3];
		l->real = (int)(rnd(s) % 3);
		l->size = sizes[rnd(s) % 7];
	}
	l->lines = (int)(rnd(s) % 2);
	l->ts = ts;
}

/* 20 traces of 4 to 9 chunks 1000 apart, each chunk's rundown (before its
 * start) then its loads (up to 2500 after its start: the next chunk may
 * begin before them, as snapshots do), times on a 250 grid so that some
 * fall on a later chunk's start (code re-dated after it, not at it): the
 * merge is the rule's. */
Test(jdmerge, random_chunks_merged_as_the_rule_says, .fini = drop_dir)
{
	uint64_t s = 20261207;

	for (int t = 0; t < 20; t++) {
		struct load l[MAX_LOADS];
		struct in in[9];
		size_t n = 4 + rnd(&s) % 6, m = 0;
		struct got g;
		char what[32];

		for (size_t k = 0; k < n; k++) {
			size_t before = rnd(&s) % 5, loads = rnd(&s) % 6;
			uint64_t start = 1000 * (k + 1), ts = start;

			in[k] = (struct in){ 62, start, &l[m], before + loads };
			for (size_t i = 0; i < before; i++, m++)
				random_load(&s, &l[m], l, m, 1 + rnd(&s) % 2);
			for (size_t i = 0; i < loads; i++, m++) {
				ts += 250 * (rnd(&s) % 3);
				random_load(&s, &l[m], l, m, ts);
			}
		}
		snprintf(what, sizeof(what), "trace %d (%zu chunks)", t, n);
		merge_checked(in, n, &g, what);
		drop_dir();
	}
}
