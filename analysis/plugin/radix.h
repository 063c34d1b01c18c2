/* SPDX-License-Identifier: MIT */
/*
 * Stable LSD radix sort of records by their leading uint64_t, 8 bits a
 * pass, skipping the passes where every key has the same byte (code
 * addresses share their high bytes). For the 10^5-record arrays of the
 * report and the perf map, where qsort with a comparison callback cost
 * 5-7% of a run. Inline so each caller's constant record size becomes
 * plain copies.
 */
#ifndef LETW_BT_RADIX_H
#define LETW_BT_RADIX_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t letw_radix_key(const char *rec)
{
	uint64_t k;

	memcpy(&k, rec, sizeof(k));
	return k;
}

/* Returns 0 or -ENOMEM (base untouched). */
static inline int letw_radix_sort(void *base, size_t n, size_t size)
{
	char *src = base, *dst, *tmp, *sw;
	size_t (*count)[256], i, pass, sum, c;

	if (n < 2)
		return 0;
	count = calloc(8, sizeof(*count));
	tmp = malloc(n * size);
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -ENOMEM;
	}
	/* The eight histograms in one read of the keys, not one read per
	 * pass (a byte's counts do not depend on the order). Counting a
	 * byte every key shares (the high bytes of addresses and times)
	 * increments one counter per key, each increment waiting for the
	 * previous one's store: one pass per byte made eight such chains in
	 * a row, most of the sort's time (perf annotate); side by side they
	 * overlap. */
	for (i = 0; i < n; i++) {
		uint64_t k = letw_radix_key(src + i * size);

		for (pass = 0; pass < 8; pass++)
			count[pass][(k >> (8 * pass)) & 0xff]++;
	}
	dst = tmp;
	for (pass = 0; pass < 8; pass++) {
		size_t *cnt = count[pass], shift = 8 * pass;

		/* Every key has the same byte here: nothing to move. */
		if (cnt[(letw_radix_key(src) >> shift) & 0xff] == n)
			continue;
		for (sum = 0, i = 0; i < 256; i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			memcpy(dst + size * cnt[(letw_radix_key(src + i * size) >> shift) & 0xff]++,
			       src + i * size, size);
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != (char *)base)
		memcpy(base, src, n * size);
	free(tmp);
	free(count);
	return 0;
}

#endif /* LETW_BT_RADIX_H */
