/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "addrindex.h"

#define FIRST_BITS 10 /* 8 KiB: a small process's whole map */

/* Slots go where their tag hashes, whatever region they name: no
 * region is read, and no two slots name the same address. */
static int grow(struct letw_addrindex *ix)
{
	struct letw_addrindex n = { .bits = ix->bits ? ix->bits + 1 : FIRST_BITS };
	size_t old = ix->bits ? (size_t)1 << ix->bits : 0, mask;

	if (n.bits > 32 || n.bits >= sizeof(size_t) * 8 - 4)
		return -ENOMEM;
	n.slot = calloc((size_t)1 << n.bits, sizeof(*n.slot));
	if (!n.slot)
		return -ENOMEM;
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
	n.used = ix->used;
	free(ix->slot);
	*ix = n;
	return 0;
}

int letw_addrindex_put(struct letw_addrindex *ix, size_t idx, const void *base,
		       size_t stride)
{
	uint64_t start = letw_addrindex_start_at(base, stride, idx);
	uint32_t tag = letw_addrindex_tag(start);
	uint64_t v = ((uint64_t)tag << 32) | (uint64_t)(idx + 1);
	size_t mask, i;

	/* idx + 1 must fit the slot's low half, and not be 0. */
	if (idx >= UINT32_MAX - 1)
		return -ENOMEM;
	/* At most half full: a miss then ends within a few slots, mostly
	 * in the cache line it started in. */
	if (!ix->bits || (ix->used + 1) * 2 > (size_t)1 << ix->bits) {
		int ret = grow(ix);

		if (ret)
			return ret;
	}
	mask = ((size_t)1 << ix->bits) - 1;
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
	return 0;
}

void letw_addrindex_free(struct letw_addrindex *ix)
{
	free(ix->slot);
	memset(ix, 0, sizeof(*ix));
}
