/* SPDX-License-Identifier: MIT */
/*
 * From the regions of one process to perf map lines: identical regions are
 * written once, and address ranges that held different code over time are
 * counted and resolved by the mode (latest or all).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codemap.h"
#include "radix.h"

static uint64_t end_of(const struct letw_region *r)
{
	uint64_t e = r->start + r->size;

	return e < r->start ? UINT64_MAX : e;
}

static int by_address(const void *a, const void *b)
{
	const struct letw_region *x = *(const struct letw_region *const *)a;
	const struct letw_region *y = *(const struct letw_region *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Most recently live first: still live at the end of the trace, then by
 * death, then by the last record seen. */
static int by_recency(const void *a, const void *b)
{
	const struct letw_region *x = *(const struct letw_region *const *)a;
	const struct letw_region *y = *(const struct letw_region *const *)b;
	int64_t dx = (x->flags & LETW_REG_DEAD) ? x->death_ns : INT64_MAX;
	int64_t dy = (y->flags & LETW_REG_DEAD) ? y->death_ns : INT64_MAX;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->last_ns != y->last_ns)
		return x->last_ns > y->last_ns ? -1 : 1;
	return by_address(a, b);
}

/* The map's lines as they are built: e holds cap entries, n in use. */
struct lines {
	struct letw_map_entry *e;
	size_t n, cap;
};

/* A line inserted before e[at] (at == n: appended). The array grows by
 * realloc (letw_grow_small()), not letw_grow(): the caller free()s it.
 * Only the lines of the cluster being resolved (the last ones) move.
 * Returns 0 or -ENOMEM with the lines unchanged. */
static int put(struct lines *o, size_t at, uint64_t start, uint32_t size,
	       const char *name)
{
	void *p = o->e;

	/* Full only past one line a region: the test saves a call a line. */
	if (o->n == o->cap) {
		if (letw_grow_small(&p, &o->cap, o->n + 1, sizeof(*o->e)))
			return -ENOMEM;
		o->e = p;
	}
	if (at < o->n)
		memmove(&o->e[at + 1], &o->e[at], (o->n - at) * sizeof(*o->e));
	o->e[at].start = start;
	o->e[at].size = size;
	o->e[at].name = name;
	o->n++;
	return 0;
}

static uint64_t line_end(const struct letw_map_entry *e)
{
	uint64_t x = e->start + e->size;

	return x < e->start ? UINT64_MAX : x;
}

/* Writes the parts of r that no line in e[first..n) covers, as lines of
 * r's name, kept in e's address order. Those lines are sorted and do not
 * overlap (each region adds only what they leave free), so the ones r
 * touches are a run found by binary search, and r's pieces are the gaps
 * in that run. *touched: how many lines r overlaps (0: written whole);
 * *pieces: how many lines r became. Returns 0 or -ENOMEM. */
static int put_uncovered(struct lines *o, size_t first, const struct letw_region *r,
			 size_t *touched, size_t *pieces)
{
	uint64_t at = r->start, end = end_of(r);
	size_t lo = first, hi = o->n, mid;

	*touched = *pieces = 0;
	/* The first line ending past r's start (ends are sorted too). */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (line_end(&o->e[mid]) > r->start)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (; lo < o->n && o->e[lo].start < end; lo++) {
		(*touched)++;
		if (o->e[lo].start > at) {
			if (put(o, lo, at, (uint32_t)(o->e[lo].start - at), r->name))
				return -ENOMEM;
			(*pieces)++;
			lo++;
		}
		if (line_end(&o->e[lo]) > at)
			at = line_end(&o->e[lo]);
	}
	/* The tail, or r whole when it touches nothing (even of size 0,
	 * written as it always was). Start plus size, not end: end
	 * saturates at the top of the address space, the sum wraps to the
	 * right size. */
	if (at < end || !*touched) {
		if (put(o, lo, at, (uint32_t)(r->start + r->size - at), r->name))
			return -ENOMEM;
		(*pieces)++;
	}
	return 0;
}

/* The regions in address order, as pointers, into *out (malloc()ed):
 * a radix sort of (start, index) pairs (radix.h; stable, so equal
 * starts stay in index order), then each run of equal starts ordered by
 * by_address(). Why not sort the pointer array itself: the pairs are
 * built from the region array in one pass and the pointers from the
 * sorted pairs, so no copy of the array is made, and memory is the
 * cost that shows on a VM whose fresh pages fault in from the host
 * (~1-2 ms per MB of heap first touched, bench/README.md): the peak of
 * the build is the pairs and the sort's buffer (32 bytes a region),
 * where sorting a copy of the pointers next to the output held 72. */
static int sorted_regions(const struct letw_codemap *m, const struct letw_region ***out)
{
	struct keyed {
		uint64_t key;
		size_t i;
	} *k;
	const struct letw_region **v, *t;
	size_t n = m->n, i, j, l, run;

	*out = NULL;
	k = malloc(n * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		k[i].key = m->r[i].start;
		k[i].i = i;
	}
	if (letw_radix_sort(k, n, sizeof(*k))) {
		free(k);
		return -ENOMEM;
	}
	v = malloc(n * sizeof(*v));
	if (!v) {
		free(k);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		v[i] = &m->r[k[i].i];
	/* Equal starts (one address reused): insertion sort of each run,
	 * qsort for a long one. */
	for (i = 0; i < n; i = run) {
		for (run = i + 1; run < n && k[run].key == k[i].key; run++)
			;
		if (run - i > 32) {
			qsort(v + i, run - i, sizeof(*v), by_address);
			continue;
		}
		for (j = i + 1; j < run; j++) {
			t = v[j];
			for (l = j; l > i && by_address(&v[l - 1], &t) > 0; l--)
				v[l] = v[l - 1];
			v[l] = t;
		}
	}
	free(k);
	*out = v;
	return 0;
}

/* One cluster of distinct, transitively overlapping regions c[0..k):
 * its lines appended to o, in address order. Returns 0 or -ENOMEM. */
static int resolve_cluster(const struct letw_region **c, size_t k,
			   enum letw_map_mode mode, struct lines *o,
			   struct letw_reuse *reuse)
{
	size_t first = o->n, i, touched, pieces;

	if (k == 1)
		return put(o, o->n, c[0]->start, c[0]->size, c[0]->name);
	if (reuse->ranges < sizeof(reuse->example) / sizeof(reuse->example[0]))
		reuse->example[reuse->ranges] = c[0]->start;
	reuse->ranges++;
	reuse->regions += k;
	if (mode == LETW_MAP_ALL) {
		/* c is in address order (by_address): so are the lines, the
		 * overlapping ones as well. */
		for (i = 0; i < k; i++)
			if (put(o, o->n, c[i]->start, c[i]->size, c[i]->name))
				return -ENOMEM;
		return 0;
	}
	qsort(c, k, sizeof(*c), by_recency);
	/* By recency: each region is written where no more recent one is,
	 * so every address gets the name of the most recent code there; an
	 * older region partly covered becomes the piece(s) left free, not
	 * omitted (its other addresses would go unnamed), and one fully
	 * covered is omitted. Clusters are small (one allocator slot reused
	 * a few times): inserting into the sorted lines is fine. */
	for (i = 0; i < k; i++) {
		if (put_uncovered(o, first, c[i], &touched, &pieces))
			return -ENOMEM;
		if (!pieces)
			reuse->omitted++;
		else if (touched)
			reuse->trimmed++;
	}
	return 0;
}

int letw_codemap_build(const struct letw_codemap *m, enum letw_map_mode mode,
		       struct letw_map_entry **out_p, size_t *n_out,
		       struct letw_reuse *reuse)
{
	const struct letw_region **v = NULL, **c;
	struct lines o = { NULL, 0, 0 };
	size_t i, nv = 0, k;
	uint64_t cend;

	memset(reuse, 0, sizeof(*reuse));
	*out_p = NULL;
	*n_out = 0;
	if (!m->n)
		return 0;
	/* After the sort: the lines reuse the memory the sort's pairs held.
	 * One line a region, more only where latest mode cuts older code
	 * in pieces (put() grows the array then). */
	if (sorted_regions(m, &v))
		return -ENOMEM;
	o.cap = m->n;
	o.e = malloc(o.cap * sizeof(*o.e));
	if (!o.e) {
		free(v);
		return -ENOMEM;
	}
	/* Same code at the same place several times (unloaded and loaded
	 * again, or listed by several rundowns): one line, no ambiguity. */
	for (i = 0; i < m->n; i++) {
		if (nv && by_address(&v[nv - 1], &v[i]) == 0) {
			if (by_recency(&v[i], &v[nv - 1]) < 0)
				v[nv - 1] = v[i];
			reuse->merged++;
			continue;
		}
		v[nv++] = v[i];
	}
	/* Clusters are disjoint and come in address order, each one's
	 * lines in address order too: so is the map. */
	for (i = 0; i < nv; i += k) {
		c = &v[i];
		cend = end_of(c[0]);
		for (k = 1; i + k < nv && c[k]->start < cend; k++)
			if (end_of(c[k]) > cend)
				cend = end_of(c[k]);
		if (resolve_cluster(c, k, mode, &o, reuse)) {
			free(v);
			free(o.e);
			return -ENOMEM;
		}
	}
	free(v);
	*out_p = o.e;
	*n_out = o.n;
	return 0;
}
