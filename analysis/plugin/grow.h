/* SPDX-License-Identifier: MIT */
/*
 * Arrays that double as a trace is read (a process's regions: 10^5 and
 * more of them). Past 2 MiB an array is a mapping of its own, grown with
 * mremap(): the kernel moves its pages instead of realloc() copying them
 * into fresh memory, which on this kind of VM costs a page clear per new
 * page (the copies were 3 % of `lttng-etw report` on bench/analysis.sh's
 * trace, in clear_page_erms under realloc). Mappings are advised
 * MADV_HUGEPAGE when the CLI put the reader's heap on huge pages
 * (analysis/cli/hugeheap.c: large traces, not LETW_HUGEHEAP=never); in
 * babeltrace2's own process they are not.
 *
 * Small arrays (a report's processes, passes, discards; the streams and
 * files of trace facts) stay with realloc (letw_grow_small()): below
 * 2 MiB this is the same.
 *
 * When the kernel refuses a mapping (a memory limit: RLIMIT_DATA counts
 * private mappings as it counts the heap), the array falls back to malloc,
 * so that a refusal is also a failed malloc, which the CLI's allocation
 * watch reports as the memory limit (analysis/cli/allocwatch.c).
 */
#ifndef LETW_BT_GROW_H
#define LETW_BT_GROW_H

#include <stddef.h>

/* An array's storage: p holds cap elements; mapped says how to free it. */
struct letw_grow {
	void *p;
	size_t cap;
	unsigned mapped;
};

/* Make room for at least need elements of elem bytes (doubling; the
 * first elements keep their values, the array may move). Returns 0 or
 * -ENOMEM with the array unchanged. */
int letw_grow(struct letw_grow *g, size_t elem, size_t need);

/* A small array *p of *cap elements of elem bytes, by realloc(): room
 * for at least need elements (doubling, from 16). Returns 0 or -ENOMEM
 * with the array unchanged. */
int letw_grow_small(void **p, size_t *cap, size_t need, size_t elem);

/* Whether new mappings are advised MADV_HUGEPAGE (default no). Set once,
 * before the graph runs: a plain variable, read by the graph's thread. */
void letw_grow_huge_pages(int on);

/* Frees the storage and zeroes *g. */
void letw_grow_free(struct letw_grow *g, size_t elem);

#endif /* LETW_BT_GROW_H */
