/* SPDX-License-Identifier: MIT */
/*
 * The code table's key mixer (splitmix64's finaliser). cds_lfht orders
 * nodes by the bit-reversed hash, so both ends of the hash must be well
 * mixed. Shared with the benchmarks, which compare against a plain
 * cds_lfht keyed the same way.
 */
#ifndef LETW_HASH_H
#define LETW_HASH_H

#include <stdint.h>

static inline unsigned long letw_hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (unsigned long)x;
}

#endif
