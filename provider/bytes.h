/* SPDX-License-Identifier: MIT */
/*
 * Equality of short byte strings on the publish path (intern.c, icache.c).
 */
#ifndef LETW_BYTES_H
#define LETW_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * n bytes equal? Eight at a time, the partial last word as the eight bytes
 * ending at p + n (already-compared bytes compare again; no read outside
 * [p, p + n)), the differences or'ed so that there is one branch per
 * string, not one per word: the strings compared are short (a namespace, a
 * signature) and of a few recurring lengths, where libc's memcmp, a call
 * with a size dispatch, cost more than the comparison itself.
 */
static inline int letw_bytes_eq(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;
	uint64_t x, y, d = 0;
	size_t i;

	if (n < 8) {
		for (i = 0; i < n; i++)
			d |= (uint64_t)(p[i] ^ q[i]);
		return !d;
	}
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&x, p + i, sizeof(x)); /* unaligned loads, no aliasing */
		memcpy(&y, q + i, sizeof(y));
		d |= x ^ y;
	}
	if (i < n) {
		memcpy(&x, p + n - 8, sizeof(x));
		memcpy(&y, q + n - 8, sizeof(y));
		d |= x ^ y;
	}
	return !d;
}

#endif
