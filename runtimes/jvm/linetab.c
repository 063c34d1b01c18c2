/* SPDX-License-Identifier: MIT */
#include "linetab.h"

static int before(const jvmtiLineNumberEntry *a, const jvmtiLineNumberEntry *b)
{
	return a->start_location < b->start_location ||
	       (a->start_location == b->start_location && a->line_number < b->line_number);
}

static void sift_down(jvmtiLineNumberEntry *tab, jint root, jint n)
{
	for (;;) {
		jint child = 2 * root + 1;
		jvmtiLineNumberEntry t;

		if (child >= n)
			return;
		if (child + 1 < n && before(&tab[child], &tab[child + 1]))
			child++;
		if (!before(&tab[root], &tab[child]))
			return;
		t = tab[root];
		tab[root] = tab[child];
		tab[child] = t;
		root = child;
	}
}

/*
 * Heapsort rather than qsort: glibc's qsort (before 2.37) mallocs a merge
 * buffer for arrays past a few hundred bytes, which would take the malloc
 * lock on the callback path; heapsort is in place and O(n log n) worst
 * case. javac writes tables in code order, so the check first usually ends
 * it in one pass.
 */
void jvm_linetab_sort(jvmtiLineNumberEntry *tab, jint n)
{
	jvmtiLineNumberEntry t;
	jint i;

	for (i = 1; i < n && !before(&tab[i], &tab[i - 1]); i++)
		;
	if (i >= n)
		return;
	for (i = n / 2 - 1; i >= 0; i--)
		sift_down(tab, i, n);
	for (i = n - 1; i > 0; i--) {
		t = tab[0];
		tab[0] = tab[i];
		tab[i] = t;
		sift_down(tab, 0, i);
	}
}

/* First index in [0, n) whose start is > key (or >= key when !strict). */
static jint bound(const jvmtiLineNumberEntry *tab, jint n, jlocation key, int strict)
{
	jint lo = 0, hi = n;

	while (lo < hi) {
		jint mid = lo + (hi - lo) / 2;

		if (strict ? tab[mid].start_location <= key : tab[mid].start_location < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t jvm_linetab_line(const jvmtiLineNumberEntry *tab, jint n, jint bci, uint32_t fallback)
{
	jint i;

	if (bci < 0 || n <= 0)
		return fallback;
	i = bound(tab, n, bci, 1);
	if (i == 0)
		return fallback;
	/* The first of the entries sharing that start (sorted by line among
	 * themselves), as the old scan kept the first it met. */
	i = bound(tab, i, tab[i - 1].start_location, 0);
	return (uint32_t)tab[i].line_number;
}
