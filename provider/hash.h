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

/*
 * One step of the interned strings' hash (intern.c): a string's bytes
 * eight at a time, each word folded in with a rotate, an xor and one
 * multiply (FxHash's step). record.c runs it in the same pass that checks
 * the string is ASCII, so a namespace or signature is read once for both;
 * intern.c combines the strings' hashes and letw_hash_u64 finishes.
 */
#define LETW_STR_HASH_K 0x9e3779b97f4a7c15ull

static inline uint64_t letw_str_hash_step(uint64_t h, uint64_t w)
{
	return (((h << 26) | (h >> 38)) ^ w) * LETW_STR_HASH_K;
}

#endif
