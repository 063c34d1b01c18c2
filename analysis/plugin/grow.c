/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "grow.h"

/* A transparent huge page: mappings are whole ones, so that every part of
 * the array can be one. */
#define MAP_UNIT ((size_t)2 << 20)

static int huge_pages;

void letw_grow_huge_pages(int on)
{
	huge_pages = on;
}

static size_t map_len(size_t bytes)
{
	return (bytes + MAP_UNIT - 1) & ~(MAP_UNIT - 1);
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Advice only: without THP the array works the same. */
	if (huge_pages)
		(void)madvise(p, len, MADV_HUGEPAGE);
	return p;
}

/* The capacity, doubled from cap (first from first), that holds need
 * elements of elem bytes; 0 when that many bytes do not fit a size_t. */
static size_t doubled(size_t cap, size_t first, size_t need, size_t elem)
{
	size_t ncap = cap ? cap : first;

	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return 0;
		ncap *= 2;
	}
	return ncap;
}

int letw_grow_small(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	if (!(ncap = doubled(*cap, 16, need, elem)) || !(np = realloc(*p, ncap * elem)))
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

int letw_grow(struct letw_grow *g, size_t elem, size_t need)
{
	size_t ncap, bytes, used = g->cap * elem;
	void *np;

	if (need <= g->cap)
		return 0;
	if (!(ncap = doubled(g->cap, 64, need, elem)))
		return -ENOMEM;
	bytes = ncap * elem;
	if (bytes > SIZE_MAX - MAP_UNIT)
		return -ENOMEM;
	if (g->mapped) {
		np = mremap(g->p, map_len(used), map_len(bytes), MREMAP_MAYMOVE);
		if (np != MAP_FAILED) {
			g->p = np;
			g->cap = map_len(bytes) / elem;
			return 0;
		}
		/* Refused: the heap gets its chance (and the CLI's
		 * allocation watch sees a refusal there). */
		np = malloc(bytes);
		if (!np)
			return -ENOMEM;
		memcpy(np, g->p, used);
		munmap(g->p, map_len(used));
		g->mapped = 0;
	} else if (bytes >= MAP_UNIT && (np = map(map_len(bytes)))) {
		if (used)
			memcpy(np, g->p, used);
		free(g->p);
		g->p = np;
		g->cap = map_len(bytes) / elem;
		g->mapped = 1;
		return 0;
	} else {
		np = realloc(g->p, bytes);
		if (!np)
			return -ENOMEM;
	}
	g->p = np;
	g->cap = ncap;
	return 0;
}

void letw_grow_free(struct letw_grow *g, size_t elem)
{
	if (g->mapped)
		munmap(g->p, map_len(g->cap * elem));
	else
		free(g->p);
	memset(g, 0, sizeof(*g));
}
