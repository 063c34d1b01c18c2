/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "addrindex.h"

#define FIRST_BITS 10 /* 8 KiB: a small process's whole map */

static void set_seen(struct letw_addrindex *ix, uint32_t tag)
{
	size_t b = letw_addrindex_seen_bit(ix, tag);

	ix->seen[b / 8] |= (uint8_t)(1u << (b % 8));
}

/* Slots go where their tags hash, whatever region they name: no region
 * is read, and no two slots name the same address. The queue stays as
 * it is; only its bits move to the new bitmap. */
static int grow(struct letw_addrindex *ix)
{
	struct letw_addrindex n = { .bits = ix->bits ? ix->bits + 1 : FIRST_BITS };
	size_t old = ix->bits ? (size_t)1 << ix->bits : 0, mask;

	/* bits + 2 must stay a valid shift of a 32-bit hash, and the
	 * arrays' sizes a size_t. */
	if (n.bits > 30 || n.bits >= sizeof(size_t) * 8 - 4)
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
		set_seen(&n, (uint32_t)(v >> 32));
	}
	for (unsigned k = 0; k < ix->lag_n; k++)
		set_seen(&n, (uint32_t)(ix->lag[(ix->lag_head + k) % LETW_ADDRINDEX_LAG] >> 32));
	free(ix->slot);
	free(ix->seen);
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
		if ((uint32_t)(w >> 32) == tag &&
		    letw_addrindex_start_at(base, stride, (uint32_t)w - 1) == start)
			break;
	}
	ix->slot[i] = v;
}

int letw_addrindex_put(struct letw_addrindex *ix, size_t idx, const void *base,
		       size_t stride)
{
	uint32_t tag = letw_addrindex_tag(letw_addrindex_start_at(base, stride, idx));

	/* idx + 1 must fit the low half of a slot, and not be 0. */
	if (idx >= UINT32_MAX - 1)
		return -ENOMEM;
	/* At most half full, counting the queue (each may take a slot): a
	 * miss then ends within a few slots, mostly in its first line. */
	if (!ix->bits || (ix->used + ix->lag_n + 1) * 2 > (size_t)1 << ix->bits) {
		int ret = grow(ix);

		if (ret)
			return ret;
	}
	if (ix->lag_n == LETW_ADDRINDEX_LAG) {
		insert(ix, ix->lag[ix->lag_head], base, stride);
		ix->lag_head = (ix->lag_head + 1) % LETW_ADDRINDEX_LAG;
		ix->lag_n--;
	}
	ix->lag[(ix->lag_head + ix->lag_n) % LETW_ADDRINDEX_LAG] =
		((uint64_t)tag << 32) | (uint64_t)(idx + 1);
	ix->lag_n++;
	set_seen(ix, tag);
	/* For insert(), LETW_ADDRINDEX_LAG puts from now: written to. */
	__builtin_prefetch(&ix->slot[letw_addrindex_home(ix, tag)], 1);
	return 0;
}

void letw_addrindex_free(struct letw_addrindex *ix)
{
	free(ix->slot);
	free(ix->seen);
	memset(ix, 0, sizeof(*ix));
}
