/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getrandom */
#endif
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "addrindex.h"

#define FIRST_BITS 10 /* 8 KiB: a small process's whole map */
/* 2^29 regions: the slots' index half holds 2^32 - 2, and the bitmap's
 * bit (4 << bits) must stay within 32 bits on a 32-bit size_t too. */
#define MAX_BITS 30

/* The multiplier: unknown to whoever wrote the trace, so its addresses
 * cannot be chosen to share home slots. Any odd value is correct; only
 * the spread depends on it. */
static uint64_t draw_mul(const struct letw_addrindex *ix)
{
	uint64_t m = 0;
	struct timespec ts;

	if (getrandom(&m, sizeof(m), GRND_NONBLOCK) != (ssize_t)sizeof(m)) {
		/* No entropy yet (early boot): what a trace cannot know. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		m = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^
		    (uint64_t)(uintptr_t)ix ^ ((uint64_t)getpid() << 17);
		m *= 0x9e3779b97f4a7c15ull;
	}
	return m | 1;
}

static void set_seen(struct letw_addrindex *ix, uint64_t start)
{
	size_t b = letw_addrindex_seen_bit(ix, start);

	ix->seen[b / 8] |= (uint8_t)(1u << (b % 8));
}

/* Slots go where their tags say, whatever region they name, and no two
 * name the same address. The bitmap is made from every region put, in
 * index order (a sequential read; regions since replaced at their address
 * set the bit their successor sets too), the queued ones included. */
static int grow(struct letw_addrindex *ix, const void *base, size_t stride)
{
	struct letw_addrindex n = { .bits = ix->bits ? ix->bits + 1 : FIRST_BITS };
	size_t old = ix->bits ? (size_t)1 << ix->bits : 0, mask;

	if (n.bits > MAX_BITS)
		return -ENOMEM;
	n.slot = calloc((size_t)1 << n.bits, sizeof(*n.slot));
	n.seen = calloc((size_t)1 << n.bits >> 1, 1);
	if (!n.slot || !n.seen) {
		free(n.slot);
		free(n.seen);
		return -ENOMEM;
	}
	mask = ((size_t)1 << n.bits) - 1;
	for (size_t k = 0; k < old; k++) {
		uint64_t v = ix->slot[k];
		size_t i;

		if (!v)
			continue;
		for (i = letw_addrindex_home(&n, (uint32_t)(v >> 32)); n.slot[i]; i = (i + 1) & mask)
			;
		n.slot[i] = v;
	}
	for (size_t k = 0; k < ix->nput; k++)
		set_seen(&n, letw_addrindex_start_at(base, stride, k));
	free(ix->slot);
	free(ix->seen);
	if (!ix->mul)
		ix->mul = draw_mul(ix);
	ix->slot = n.slot;
	ix->seen = n.seen;
	ix->bits = n.bits;
	return 0;
}

/* The queued insert v, into its slot: a new one, or the one of the
 * same address, which it replaces (v is newer). */
static void insert(struct letw_addrindex *ix, uint64_t v, const void *base, size_t stride)
{
	uint32_t tag = (uint32_t)(v >> 32);
	uint64_t start = letw_addrindex_start_at(base, stride, (uint32_t)v - 1);
	size_t mask = ((size_t)1 << ix->bits) - 1, i;

	for (i = letw_addrindex_home(ix, tag);; i = (i + 1) & mask) {
		uint64_t w = ix->slot[i];

		if (!w) {
			ix->used++;
			break;
		}
		if (letw_addrindex_names(w, tag, start, base, stride))
			break;
	}
	ix->slot[i] = v;
}

int letw_addrindex_put(struct letw_addrindex *ix, size_t idx, const void *base,
		       size_t stride)
{
	uint64_t start = letw_addrindex_start_at(base, stride, idx);
	uint32_t tag;

	/* idx + 1 must fit the low half of a slot, and not be 0. */
	if (idx >= UINT32_MAX - 1)
		return -ENOMEM;
	/* At most half full, counting the queue (each may take a slot): a
	 * miss then ends within a few slots, mostly in its first line. */
	if (!ix->bits || (ix->used + ix->lag_n + 1) * 2 > (size_t)1 << ix->bits) {
		int ret = grow(ix, base, stride);

		if (ret)
			return ret;
	}
	if (ix->lag_n == LETW_ADDRINDEX_LAG) {
		insert(ix, ix->lag[ix->lag_head], base, stride);
		ix->lag_head = (ix->lag_head + 1) % LETW_ADDRINDEX_LAG;
		ix->lag_n--;
	}
	tag = letw_addrindex_tag(ix, start);
	ix->lag[(ix->lag_head + ix->lag_n) % LETW_ADDRINDEX_LAG] =
		((uint64_t)tag << 32) | (uint64_t)(idx + 1);
	ix->lag_n++;
	if (idx >= ix->nput)
		ix->nput = idx + 1;
	set_seen(ix, start);
#if defined(__GNUC__)
	/* For insert(), LETW_ADDRINDEX_LAG puts from now: written to. */
	__builtin_prefetch(&ix->slot[letw_addrindex_home(ix, tag)], 1);
#endif
	return 0;
}

void letw_addrindex_free(struct letw_addrindex *ix)
{
	free(ix->slot);
	free(ix->seen);
	memset(ix, 0, sizeof(*ix));
}
