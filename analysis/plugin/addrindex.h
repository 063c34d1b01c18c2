/* SPDX-License-Identifier: MIT */
/*
 * Code start address -> the newest region there, for the sinks' process
 * maps (codemap.c, jitdump_proc.c), whose regions live in one array each
 * and begin with their uint64_t start.
 *
 * Why not glib's GHashTable (used before): a DCStart pass adds a region
 * at an address the map has not seen for nearly every record (10^5 and
 * more), each one a lookup that misses and then an insert. glib keeps
 * hashes, keys and values in three arrays, so that pair touched up to
 * three cache lines far apart and probed twice. Here a slot is 8 bytes
 * in one array (a 32-bit tag of the address, the region's index + 1):
 * the miss and the insert read and write the same line, and the address
 * itself is compared in the region only when a tag matches (a hit, or a
 * rare tag collision). The hash is of the tag alone, so growing moves
 * slots without reading a region.
 *
 * Linear probing, at most half full. Entries are never removed: a newer
 * region at an address takes the slot over (letw_addrindex_put).
 * Single-threaded, like the sinks.
 */
#ifndef LETW_BT_ADDRINDEX_H
#define LETW_BT_ADDRINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct letw_addrindex {
	uint64_t *slot; /* (tag << 32) | (index + 1); 0: empty */
	uint32_t bits;  /* log2 of the slot count (0: no array yet) */
	size_t used;
};

/* Any start: within one process's code, addresses 4 GiB apart or less
 * get distinct tags. */
static inline uint32_t letw_addrindex_tag(uint64_t start)
{
	return (uint32_t)(start ^ (start >> 32));
}

static inline size_t letw_addrindex_home(const struct letw_addrindex *ix, uint32_t tag)
{
	/* Fibonacci hashing: code addresses share their low bits
	 * (alignment), the product's high bits mix them all. */
	return (size_t)((uint32_t)(tag * 2654435769u) >> (32 - ix->bits));
}

static inline uint64_t letw_addrindex_start_at(const void *base, size_t stride, size_t i)
{
	uint64_t s;

	memcpy(&s, (const char *)base + i * stride, sizeof(s));
	return s;
}

/* 1 + the index of the region at start in base (an array of stride-byte
 * regions, each beginning with its start), or 0. */
static inline size_t letw_addrindex_find(const struct letw_addrindex *ix, uint64_t start,
					 const void *base, size_t stride)
{
	uint32_t tag = letw_addrindex_tag(start);
	size_t mask, i;

	if (!ix->bits)
		return 0;
	mask = ((size_t)1 << ix->bits) - 1;
	for (i = letw_addrindex_home(ix, tag);; i = (i + 1) & mask) {
		uint64_t v = ix->slot[i];

		if (!v)
			return 0;
		if ((uint32_t)(v >> 32) == tag &&
		    letw_addrindex_start_at(base, stride, (uint32_t)v - 1) == start)
			return (uint32_t)v;
	}
}

/* Makes region idx of base the one at its start, replacing the region
 * there if any. Returns 0, or -ENOMEM (no memory to grow, or idx past
 * UINT32_MAX - 1), the index unchanged. */
int letw_addrindex_put(struct letw_addrindex *ix, size_t idx, const void *base,
		       size_t stride);

void letw_addrindex_free(struct letw_addrindex *ix);

#endif /* LETW_BT_ADDRINDEX_H */
