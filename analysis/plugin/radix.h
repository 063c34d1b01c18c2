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
	size_t count[256], i, shift, sum, c;

	if (n < 2)
		return 0;
	tmp = malloc(n * size);
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(letw_radix_key(src + i * size) >> shift) & 0xff]++;
		if (count[(letw_radix_key(src) >> shift) & 0xff] == n)
			continue;
		for (sum = 0, i = 0; i < 256; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			memcpy(dst + size * count[(letw_radix_key(src + i * size) >> shift) & 0xff]++,
			       src + i * size, size);
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != (char *)base)
		memcpy(base, src, n * size);
	free(tmp);
	return 0;
}

#endif /* LETW_BT_RADIX_H */
