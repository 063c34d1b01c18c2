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

static int overlaps(const struct letw_region *a, const struct letw_region *b)
{
	return a->start < end_of(b) && b->start < end_of(a);
}

static void emit(struct letw_map_entry *out, size_t *n,
		 const struct letw_region *r)
{
	out[*n].start = r->start;
	out[*n].size = r->size;
	out[*n].name = r->name;
	(*n)++;
}

static int entry_by_address(const void *a, const void *b)
{
	const struct letw_map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
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

/* One cluster of distinct, transitively overlapping regions c[0..k). */
static void resolve_cluster(const struct letw_region **c, size_t k,
			    enum letw_map_mode mode, struct letw_map_entry *out,
			    size_t *n, struct letw_reuse *reuse)
{
	size_t first = *n, i, j;

	if (k == 1) {
		emit(out, n, c[0]);
		return;
	}
	if (reuse->ranges < sizeof(reuse->example) / sizeof(reuse->example[0]))
		reuse->example[reuse->ranges] = c[0]->start;
	reuse->ranges++;
	reuse->regions += k;
	if (mode == LETW_MAP_ALL) {
		for (i = 0; i < k; i++)
			emit(out, n, c[i]);
		return;
	}
	qsort(c, k, sizeof(*c), by_recency);
	/* Greedy by recency: a region is written unless a more recent one
	 * already covers part of its range. Clusters are small (one
	 * allocator slot reused a few times), so quadratic is fine. */
	for (i = 0; i < k; i++) {
		int hidden = 0;

		for (j = first; j < *n && !hidden; j++) {
			struct letw_region tmp = { .start = out[j].start,
						   .size = out[j].size };
			hidden = overlaps(c[i], &tmp);
		}
		if (hidden)
			reuse->omitted++;
		else
			emit(out, n, c[i]);
	}
}

int letw_codemap_build(const struct letw_codemap *m, enum letw_map_mode mode,
		       struct letw_map_entry **out_p, size_t *n_out,
		       struct letw_reuse *reuse)
{
	const struct letw_region **v = NULL, **c;
	struct letw_map_entry *out = NULL;
	size_t i, nv = 0, n = 0, k, first;
	uint64_t cend;

	memset(reuse, 0, sizeof(*reuse));
	*out_p = NULL;
	*n_out = 0;
	if (!m->n)
		return 0;
	/* After the sort: out reuses the memory the sort's pairs held. */
	if (sorted_regions(m, &v))
		return -ENOMEM;
	out = malloc(m->n * sizeof(*out));
	if (!out) {
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
	for (i = 0; i < nv; i += k) {
		c = &v[i];
		cend = end_of(c[0]);
		for (k = 1; i + k < nv && c[k]->start < cend; k++)
			if (end_of(c[k]) > cend)
				cend = end_of(c[k]);
		first = n;
		resolve_cluster(c, k, mode, out, &n, reuse);
		/* Clusters are disjoint and come in address order: sorting
		 * each one's lines sorts the map. */
		if (n - first > 1)
			qsort(out + first, n - first, sizeof(*out), entry_by_address);
	}
	free(v);
	*out_p = out;
	*n_out = n;
	return 0;
}
