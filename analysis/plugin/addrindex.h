/* SPDX-License-Identifier: MIT */
/*
 * Code start address -> the newest region there, for the sinks' process
 * maps (codemap.c, jitdump_proc.c), whose regions live in one array each
 * and begin with their uint64_t start.
 *
 * Why not glib's GHashTable (used before): a DCStart pass adds a region
 * at an address the map has not seen for nearly every record (2*10^5 on
 * the bench/analysis.sh trace), each a lookup that misses and an insert,
 * and on this VM every one of those touched cache lines that were not in
 * the cache (~110 ns each): glib keeps hashes, keys and values in three
 * arrays and probes twice, and its misses alone were 3.6 % of a `jitdump`
 * run's samples. Here:
 *
 * - A slot is 8 bytes in one array (a 32-bit tag of the address, the
 *   region's index + 1), linear probing, at most half full. The address
 *   itself is compared in the region only when a tag matches (a hit, or
 *   a rare tag collision). The tag is the high half of the address times
 *   a random odd multiplier drawn per index (multiply-shift hashing), and
 *   the home slot its top bits: growing moves slots without reading a
 *   region, and no trace can choose addresses that pile up in one run of
 *   slots (with a fixed multiplier a crafted trace could: 10^5 such
 *   addresses took 7.7 s to insert; glib's table, keyed by the address's
 *   low 32 bits, piled up addresses 4 GiB apart the same way).
 * - A bitmap of 4 bits a slot (1/16 of the slots' bytes, at most 1/8 of
 *   its bits set) answers most misses without reading the slots: a clear
 *   bit proves the address absent. Its bit is the address's own 32-byte
 *   granule (modulo its size), not a hash: a pass listing code in the
 *   order it was allocated reads it in order too, from the cache, where
 *   a hashed bit was a cache miss of its own (perf annotate). An address
 *   sharing a bit with another (code within 32 bytes, or at the same
 *   granule of another window) only costs the probe. When the slots
 *   double, the bitmap is made again from the regions' starts, read in
 *   order (not from the slots, which hold no address; copying the old
 *   bitmap twice over, which keeps every bit right, set each early
 *   address's bit again at every doubling: half the bits of a 2*10^5
 *   region map, and half its misses probing the slots).
 * - An insert still has to read its slot's line. So it waits: put()
 *   prefetches the line and queues the insert; the insert is made
 *   LETW_ADDRINDEX_LAG puts later, when the line has arrived. find()
 *   searches the queue (newest first) before the slots.
 *
 * Entries are never removed: a newer region at an address takes the
 * older one's place. Single-threaded, like the sinks.
 */
#ifndef LETW_BT_ADDRINDEX_H
#define LETW_BT_ADDRINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LETW_ADDRINDEX_LAG 16

struct letw_addrindex {
	uint64_t mul;   /* odd; 0 until the first put draws it (a test may set it) */
	uint64_t *slot; /* (tag << 32) | (index + 1); 0: empty */
	uint8_t *seen;  /* 4 << bits bits: set for every tag in slot or lag */
	uint32_t bits;  /* log2 of the slot count (0: no array yet) */
	size_t used;    /* slots taken */
	size_t nput;    /* 1 + the highest index put: the regions to read */
	/* Inserts not made yet, oldest at lag_head: (tag << 32) | index + 1. */
	uint64_t lag[LETW_ADDRINDEX_LAG];
	unsigned lag_head, lag_n;
};

static inline uint64_t letw_addrindex_start_at(const void *base, size_t stride, size_t i)
{
	uint64_t s;

	memcpy(&s, (const char *)base + i * stride, sizeof(s));
	return s;
}

static inline uint32_t letw_addrindex_tag(const struct letw_addrindex *ix, uint64_t start)
{
	return (uint32_t)((start * ix->mul) >> 32);
}

static inline size_t letw_addrindex_home(const struct letw_addrindex *ix, uint32_t tag)
{
	return (size_t)(tag >> (32 - ix->bits));
}

/* The address's bit in seen: its 32-byte granule. */
static inline size_t letw_addrindex_seen_bit(const struct letw_addrindex *ix, uint64_t start)
{
	return (size_t)(start >> 5) & (((size_t)4 << ix->bits) - 1);
}

/* Slot value v names the region at start. */
static inline int letw_addrindex_names(uint64_t v, uint32_t tag, uint64_t start,
				       const void *base, size_t stride)
{
	return (uint32_t)(v >> 32) == tag &&
	       letw_addrindex_start_at(base, stride, (uint32_t)v - 1) == start;
}

/* 1 + the index of the newest region at start in base (an array of
 * stride-byte regions, each beginning with its start), or 0. */
static inline size_t letw_addrindex_find(const struct letw_addrindex *ix, uint64_t start,
					 const void *base, size_t stride)
{
	uint32_t tag = letw_addrindex_tag(ix, start);
	size_t mask, i, b;

	if (!ix->bits)
		return 0;
	b = letw_addrindex_seen_bit(ix, start);
	if (!(ix->seen[b / 8] & (1u << (b % 8))))
		return 0;
	/* Queued inserts are newer than any slot. */
	for (unsigned k = ix->lag_n; k-- > 0;) {
		uint64_t v = ix->lag[(ix->lag_head + k) % LETW_ADDRINDEX_LAG];

		if (letw_addrindex_names(v, tag, start, base, stride))
			return (uint32_t)v;
	}
	mask = ((size_t)1 << ix->bits) - 1;
	for (i = letw_addrindex_home(ix, tag);; i = (i + 1) & mask) {
		uint64_t v = ix->slot[i];

		if (!v)
			return 0;
		if (letw_addrindex_names(v, tag, start, base, stride))
			return (uint32_t)v;
	}
}

/* Makes region idx of base the newest at its start. Returns 0, or
 * -ENOMEM (no memory to grow, or idx past UINT32_MAX - 2), the index
 * unchanged. Regions 0 to idx must all be in base (it may have moved
 * since the last put): growing reads each of them. */
int letw_addrindex_put(struct letw_addrindex *ix, size_t idx, const void *base,
		       size_t stride);

void letw_addrindex_free(struct letw_addrindex *ix);

#endif /* LETW_BT_ADDRINDEX_H */
