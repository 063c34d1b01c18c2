/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "addrindex.h"
#include "event.h"
#include "jitdump_proc.h"
#include "radix.h"

/* addrindex.h reads a region's start at its beginning. */
G_STATIC_ASSERT(offsetof(struct letw_jd_region, start) == 0);

/* Bytes of one code version, filled chunk by chunk; `got` has a bit per
 * byte so that a chunk seen twice (at load and in a rundown) counts once. */
struct letw_jd_code {
	uint32_t size, have;
	uint8_t *bytes;
	uint8_t *got;
};

/* A line table, filled chunk by chunk (rows_total rows). */
struct letw_jd_rows {
	uint32_t total, have;
	uint32_t *off, *line, *file, *depth;
	uint8_t *got;
	char **files; /* the '\n'-separated names, split; from the first chunk */
	guint nfiles;
};

static void code_free(struct letw_jd_code *c)
{
	if (!c)
		return;
	g_free(c->bytes);
	g_free(c->got);
	g_free(c);
}

static void rows_free(struct letw_jd_rows *r)
{
	if (!r)
		return;
	g_free(r->off);
	g_free(r->line);
	g_free(r->file);
	g_free(r->depth);
	g_free(r->got);
	g_strfreev(r->files);
	g_free(r);
}

struct letw_jd_proc *letw_jd_proc_new(int64_t vpid)
{
	struct letw_jd_proc *p = g_new0(struct letw_jd_proc, 1);

	p->vpid = vpid;
	/* Few regions own code bytes or a line table: freeing visits those,
	 * not every region (a clear function would, 10^5 and more). */
	p->with_extra = g_array_new(FALSE, FALSE, sizeof(guint));
	p->names = g_string_chunk_new(256 * 1024);
	return p;
}

void letw_jd_proc_free(struct letw_jd_proc *p)
{
	if (!p)
		return;
	for (guint i = 0; i < p->with_extra->len; i++) {
		struct letw_jd_region *r = &p->regions[g_array_index(p->with_extra, guint, i)];

		code_free(r->extra->code);
		rows_free(r->extra->rows);
		g_free(r->extra);
		r->extra = NULL;
	}
	g_array_free(p->with_extra, TRUE);
	letw_grow_free(&p->rg, sizeof(*p->regions));
	letw_addrindex_free(&p->at_start);
	g_string_chunk_free(p->names);
	g_free(p);
}

void letw_jd_proc_touch(struct letw_jd_proc *p, uint64_t ns)
{
	if (!p->has_ts || ns < p->first_ns)
		p->first_ns = ns;
	if (!p->has_ts || ns > p->last_ns)
		p->last_ns = ns;
	p->has_ts = 1;
}

static struct letw_jd_region *reg(struct letw_jd_proc *p, guint i)
{
	return &p->regions[i];
}

/* The newest region at start, or NULL. Rundown passes list code in the
 * runtime's store order, the order an earlier pass (or the loads) added
 * it: the region after the last one found is tried before the index
 * (codemap.c does the same). */
static struct letw_jd_region *newest_at(struct letw_jd_proc *p, uint64_t start)
{
	size_t v;
	guint i;

	if (p->hint < p->nregions && reg(p, p->hint)->start == start &&
	    !reg(p, p->hint)->superseded) {
		i = p->hint;
	} else if (!p->nregions || start > p->max_start) {
		/* Past every address seen (a first pass over code allocated
		 * upwards): not in the table, no need to look. */
		return NULL;
	} else {
		v = letw_addrindex_find(&p->at_start, start, p->regions, sizeof(*p->regions));
		if (!v)
			return NULL;
		i = (guint)(v - 1);
	}
	p->hint = i + 1;
	return reg(p, i);
}

/* old: newest_at(start) before this region, or NULL. Returns 0 or
 * -ENOMEM. */
static int add(struct letw_jd_proc *p, struct letw_jd_region *old, uint64_t ns,
		int obj, uint64_t start, uint32_t size, const char *name,
		uint64_t method_id, uint64_t version_id, enum letw_jd_origin origin)
{
	struct letw_jd_region r = {
		.start = start, .size = size, .obj = (uint8_t)obj,
		.origin = (uint8_t)origin,
		.name = g_string_chunk_insert(p->names, name),
		.method_id = method_id, .version_id = version_id,
		.rec_ns = ns,
	};

	if (p->nregions >= G_MAXUINT - 1)
		return -ENOMEM;
	/* Before the array moves. */
	if (old)
		old->superseded = 1;
	if (p->nregions == p->rg.cap) {
		if (letw_grow(&p->rg, sizeof(r), p->nregions + 1))
			return -ENOMEM;
		p->regions = p->rg.p;
	}
	p->regions[p->nregions] = r;
	if (letw_addrindex_put(&p->at_start, p->nregions, p->regions, sizeof(*p->regions)))
		return -ENOMEM;
	p->nregions++;
	p->hint = p->nregions;
	if (size > p->max_size)
		p->max_size = size;
	if (start > p->max_start)
		p->max_start = start;
	return 0;
}

int letw_jd_proc_load(struct letw_jd_proc *p, uint64_t ns, int obj,
		      uint64_t start, uint32_t size, const char *name,
		      uint64_t method_id, uint64_t version_id)
{
	struct letw_jd_region *old = newest_at(p, start);

	if (old && !old->dead) {
		/* The trace lost the unload (or the runtime never sent it). */
		old->dead = 1;
		old->death_ns = ns;
		p->stats.implicit_replacements++;
	}
	p->stats.loads++;
	return add(p, old, ns, obj, start, size, name, method_id, version_id, LETW_JD_FROM_LOAD);
}

int letw_jd_proc_unload(struct letw_jd_proc *p, uint64_t ns, int obj,
			uint64_t start, uint32_t size, const struct letw_name_src *src,
			const struct letw_jd_ids *ids)
{
	struct letw_jd_region *old = newest_at(p, start);
	uint64_t method_id, version_id;
	const char *name;

	if (old && !old->dead && old->obj == obj) {
		old->dead = 1;
		old->death_ns = ns;
		return 0;
	}
	/* Code loaded before the trace and unloaded in it: samples before
	 * the unload still need its name. */
	name = src->get(src->arg);
	if (!name)
		return -ENOMEM;
	ids->get(ids->arg, &method_id, &version_id);
	p->stats.unload_only++;
	if (add(p, old, ns, obj, start, size, name, method_id, version_id, LETW_JD_FROM_UNLOAD))
		return -ENOMEM;
	old = reg(p, p->nregions - 1);
	old->dead = 1;
	old->death_ns = ns;
	return 0;
}

int letw_jd_proc_rundown(struct letw_jd_proc *p, uint64_t ns, int obj,
			 uint64_t start, uint32_t size, const struct letw_name_src *src,
			 const struct letw_jd_ids *ids)
{
	struct letw_jd_region *old = newest_at(p, start);
	uint64_t method_id, version_id;
	const char *name;
	int same = 0;

	if (old && old->obj == obj && old->size == size) {
		same = src->is(old->name, src->arg);
		if (same < 0)
			return same;
	}
	if (same) {
		/* Already mapped (or the walker listed freed code, which is
		 * the report's business): no second LOAD. */
		p->stats.rundown_known++;
		return 0;
	}
	/* Copied by the walker before its code was unloaded and the start
	 * reused during this pass (codemap.c letw_codemap_rundown_by): older
	 * than the region there, not new code. Taken for new, its LOAD came
	 * after the newer code's and perf named the newer code after it. */
	if (old && old->origin == LETW_JD_FROM_LOAD && p->pass_begin_ns &&
	    old->rec_ns >= p->pass_begin_ns) {
		p->stats.rundown_superseded++;
		return 0;
	}
	name = src->get(src->arg);
	if (!name)
		return -ENOMEM;
	if (old && !old->dead) {
		old->dead = 1;
		old->death_ns = ns;
		p->stats.implicit_replacements++;
	}
	ids->get(ids->arg, &method_id, &version_id);
	p->stats.rundown_new++;
	return add(p, old, ns, obj, start, size, name, method_id, version_id, LETW_JD_FROM_RUNDOWN);
}

/* r's extra, made (and remembered for freeing) at its first code bytes
 * or rows. */
static struct letw_jd_extra *extra_of(struct letw_jd_proc *p, struct letw_jd_region *r)
{
	guint i = (guint)(r - reg(p, 0));

	if (!r->extra) {
		r->extra = g_new0(struct letw_jd_extra, 1);
		g_array_append_val(p->with_extra, i);
	}
	return r->extra;
}

static void extra_lines(struct letw_jd_proc *p, struct letw_jd_region *r,
			const struct letw_jdx *x)
{
	struct letw_jd_rows *t = r->extra ? r->extra->rows : NULL;

	if (!t) {
		char *files = NULL;

		/* Bounded by what the provider emits (LETW_LINES_MAX rows), so
		 * a damaged count cannot make us allocate gigabytes. */
		if (!x->rows_total || x->rows_total > LETW_JD_ROWS_MAX ||
		    letw_jdx_files(x->files, &files)) {
			p->stats.bad_chunks++;
			return;
		}
		t = extra_of(p, r)->rows = g_new0(struct letw_jd_rows, 1);
		t->total = x->rows_total;
		t->off = g_new0(uint32_t, t->total);
		t->line = g_new0(uint32_t, t->total);
		t->file = g_new0(uint32_t, t->total);
		t->depth = g_new0(uint32_t, t->total);
		t->got = g_new0(uint8_t, t->total);
		t->files = g_strsplit(files, "\n", -1);
		t->nfiles = g_strv_length(t->files);
		g_free(files);
	}
	if (x->rows_total != t->total) {
		p->stats.bad_chunks++;
		return;
	}
	for (uint32_t i = 0; i < x->nr; i++) {
		uint32_t row = x->row_first + i;

		if (t->got[row])
			continue;
		t->got[row] = 1;
		t->have++;
		t->off[row] = (uint32_t)letw_jdx_u(x->native_offsets, i);
		t->line[row] = (uint32_t)letw_jdx_u(x->lines, i);
		t->file[row] = (uint32_t)letw_jdx_u(x->files_idx, i);
		t->depth[row] = (uint32_t)letw_jdx_u(x->inline_depths, i);
	}
}

static void extra_code(struct letw_jd_proc *p, struct letw_jd_region *r,
		       const struct letw_jdx *x)
{
	struct letw_jd_code *c = r->extra ? r->extra->code : NULL;

	/* The provider sends at most LETW_CODE_BYTES_MAX bytes of a code
	 * version: a larger one can never be whole. */
	if (x->code_size != r->size || x->code_size > LETW_JD_CODE_MAX) {
		p->stats.bad_chunks++;
		return;
	}
	if (!c) {
		c = extra_of(p, r)->code = g_new0(struct letw_jd_code, 1);
		c->size = r->size;
		c->bytes = g_malloc0(c->size);
		c->got = g_malloc0((c->size + 7) / 8);
	}
	for (uint32_t i = 0; i < x->len; i++) {
		uint32_t o = x->offset + i;

		if (c->got[o / 8] & (1u << (o % 8)))
			continue;
		c->got[o / 8] |= (uint8_t)(1u << (o % 8));
		c->have++;
		c->bytes[o] = (uint8_t)letw_jdx_u(x->bytes, i);
	}
}

void letw_jd_proc_extra(struct letw_jd_proc *p, const struct letw_jdx *x)
{
	struct letw_jd_region *r = newest_at(p, x->code_start);

	/* Chunks follow the load or rundown record of their code version
	 * (the provider emits them right after it), so the newest region at
	 * the address is theirs unless the record itself was lost. */
	if (!r || r->obj != LETW_OBJ_METHOD || r->method_id != x->method_id ||
	    r->version_id != x->version_id) {
		p->stats.orphan_chunks++;
		return;
	}
	if (x->kind == LETW_JDX_LINES)
		extra_lines(p, r, x);
	else
		extra_code(p, r, x);
}

/* ---- dating and ordering ---- */

/* A region's start, size and index: what finding the regions that
 * overlap another needs, sorted by start (radix.h: stably, so equal
 * starts stay in index order). The search reads this array in order
 * instead of a region (80 bytes, at a random place) per step. */
struct by_start {
	uint64_t start;
	guint idx;
	uint32_t size;
};

/* The time region r's record says about when the code at its addresses
 * ended, for code o seen earlier there. */
static uint64_t end_before(const struct letw_jd_region *o, const struct letw_jd_region *r)
{
	return o->dead && o->death_ns <= r->rec_ns ? o->death_ns : r->rec_ns;
}

/* Whether a region seen before the one at sorted position pos overlaps
 * it; with t, the latest end of those (t unchanged when none). */
static int overlapped(struct letw_jd_proc *p, const struct by_start *s, guint n, guint pos,
		      uint64_t *t)
{
	const struct by_start *r = &s[pos];
	uint64_t lo = r->start > p->max_size ? r->start - p->max_size : 0;
	int found = 0;

	/* Regions overlapping r sit within max_size before its start. */
	for (guint k = pos; k-- > 0;) {
		if (s[k].start < lo)
			break;
		if (s[k].idx < r->idx && s[k].start + s[k].size > r->start) {
			uint64_t end;

			if (!t)
				return 1;
			end = end_before(reg(p, s[k].idx), reg(p, r->idx));
			if (end > *t)
				*t = end;
			found = 1;
		}
	}
	for (guint k = pos + 1; k < n; k++) {
		if (s[k].start >= r->start + r->size)
			break;
		if (s[k].idx < r->idx) {
			uint64_t end;

			if (!t)
				return 1;
			end = end_before(reg(p, s[k].idx), reg(p, r->idx));
			if (end > *t)
				*t = end;
			found = 1;
		}
	}
	return found;
}

/* A region's index under a sort key: radix.h sorts by the leading
 * uint64_t, stably, so equal keys stay in index (trace) order. */
struct keyed {
	uint64_t key;
	guint idx;
};

/* Both sort records lead with the key and the index at the same offsets,
 * so one comparison orders either; read through memcpy, as a by_start
 * is not a keyed. */
_Static_assert(offsetof(struct by_start, start) == offsetof(struct keyed, key) &&
		       offsetof(struct by_start, idx) == offsetof(struct keyed, idx),
	       "by_start and keyed share their key and index layout");

static int cmp_key_idx(const void *a, const void *b)
{
	struct keyed x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	if (x.key != y.key)
		return x.key < y.key ? -1 : 1;
	return x.idx < y.idx ? -1 : x.idx > y.idx;
}

static void sort_key_idx(void *base, guint n, size_t size)
{
	/* The radix sort needs a copy of the array: without memory, the
	 * same order from qsort (ties by index, so stable too). */
	if (letw_radix_sort(base, n, size) != 0)
		qsort(base, n, size, cmp_key_idx);
}

/*
 * The indexes of k (in index order) ordered by key, then index. Load
 * times mostly come in index order already (a load is dated by its
 * record, and records come in time order; code a rundown listed first is
 * dated back to the start of the trace, before most others): the keys
 * that keep the order so far are taken as they are, only the others are
 * sorted, and the two runs merged. Both are in (key, index) order, so the
 * merge is the order a sort of all of them gives.
 */
static void by_load_time(struct keyed *k, guint n, guint *out)
{
	struct keyed *rest = g_new(struct keyed, n ? n : 1);
	guint na = 0, nb = 0, a = 0, b = 0, o = 0;

	for (guint i = 0; i < n; i++) {
		if (!na || k[i].key >= k[na - 1].key)
			k[na++] = k[i];
		else
			rest[nb++] = k[i];
	}
	sort_key_idx(rest, nb, sizeof(*rest));
	while (a < na && b < nb) {
		if (k[a].key < rest[b].key ||
		    (k[a].key == rest[b].key && k[a].idx < rest[b].idx))
			out[o++] = k[a++].idx;
		else
			out[o++] = rest[b++].idx;
	}
	while (a < na)
		out[o++] = k[a++].idx;
	while (b < nb)
		out[o++] = rest[b++].idx;
	g_free(rest);
}

GArray *letw_jd_proc_finish(struct letw_jd_proc *p, uint64_t before_ns)
{
	guint n = p->nregions;
	GArray *order;
	struct by_start *s;
	struct keyed *k;

	/* A tenth of the jitdump's time went to the kernel clearing fresh
	 * heap pages for the arrays here. So each array is made when the
	 * one before it is freed, and takes its memory, already paged in:
	 * first the index by start (no record comes after the stream's
	 * end), then the array by start, dropped before the load times are
	 * keyed from the regions themselves. */
	letw_addrindex_free(&p->at_start);
	s = g_new(struct by_start, n ? n : 1);
	for (guint i = 0; i < n; i++) {
		struct letw_jd_region *r = reg(p, i);

		s[i] = (struct by_start){ r->start, i, r->size };
	}
	sort_key_idx(s, n, sizeof(*s));
	/* Code first seen in a rundown record or an unload (no load event)
	 * was mapped before the trace began, or later when other code held
	 * any of its addresses earlier in the trace: the first here, the
	 * rare second where the search proves it. A load is mapped at its
	 * record's time, which load_ns already is (it shares rec_ns's
	 * storage). The search reads the record time of the region it dates
	 * (end_before), never another's, so each is overwritten once dated. */
	for (guint pos = 0; pos < n; pos++) {
		struct letw_jd_region *r = reg(p, s[pos].idx);
		uint64_t t = before_ns;

		if (r->origin == LETW_JD_FROM_LOAD)
			continue;
		if (overlapped(p, s, n, pos, NULL))
			overlapped(p, s, n, pos, &t);
		r->load_ns = t;
	}
	g_free(s);
	k = g_new(struct keyed, n ? n : 1);
	for (guint i = 0; i < n; i++)
		k[i] = (struct keyed){ reg(p, i)->load_ns, i };
	/* The LOADs in the order of their times, then of the trace. */
	order = g_array_sized_new(FALSE, FALSE, sizeof(guint), n);
	g_array_set_size(order, n);
	by_load_time(k, n, (guint *)(void *)order->data);
	g_free(k);
	return order;
}

const uint8_t *letw_jd_region_code(const struct letw_jd_region *r)
{
	const struct letw_jd_code *c = r->extra ? r->extra->code : NULL;

	return c && c->have == c->size ? c->bytes : NULL;
}

int letw_jd_region_has_lines(const struct letw_jd_region *r)
{
	const struct letw_jd_rows *t = r->extra ? r->extra->rows : NULL;

	return t && t->have == t->total;
}

GArray *letw_jd_region_debug_lines(const struct letw_jd_region *r)
{
	const struct letw_jd_rows *t = r->extra->rows;
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct letw_jd_line));

	for (uint32_t i = 0; i < t->total;) {
		uint32_t j = i, best = i;
		struct letw_jd_line e;

		/* Rows at one offset are an inlining stack, outermost first:
		 * keep the deepest frame (the last one at that depth). */
		while (j < t->total && t->off[j] == t->off[i]) {
			if (t->depth[j] >= t->depth[best])
				best = j;
			j++;
		}
		e.addr = r->start + t->off[best];
		e.line = t->line[best];
		e.file = t->file[best] < t->nfiles && *t->files[t->file[best]] ?
			t->files[t->file[best]] : "??";
		/* Offsets beyond the code (a bad table) cannot be mapped. */
		if (t->off[best] < r->size &&
		    !(out->len &&
		      g_array_index(out, struct letw_jd_line, out->len - 1).line == e.line &&
		      strcmp(g_array_index(out, struct letw_jd_line, out->len - 1).file,
			     e.file) == 0))
			g_array_append_val(out, e);
		i = j;
	}
	/* perf's DWARF writer ends the sequence at the last entry's address,
	 * so the last entry would cover nothing: an entry at the code's end
	 * makes it cover the code up to there. */
	if (out->len) {
		struct letw_jd_line end = g_array_index(out, struct letw_jd_line, out->len - 1);

		end.addr = r->start + r->size;
		g_array_append_val(out, end);
	}
	return out;
}
