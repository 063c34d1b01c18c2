/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash map from a 64-bit key (a code start address) to a
 * 32-bit value (an index into a region array). Insert-or-update and lookup
 * only: the map tracks "newest region at this address", which never needs
 * deleting. Single-threaded (a sink's consume method).
 */
#ifndef LETW_BT_U64MAP_H
#define LETW_BT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct letw_u64map_slot {
	uint64_t key;
	uint32_t val;
	uint32_t used;
};

struct letw_u64map {
	struct letw_u64map_slot *slots;
	size_t cap; /* power of two */
	size_t len;
};

/* Returns 0 or -ENOMEM. */
int letw_u64map_put(struct letw_u64map *m, uint64_t key, uint32_t val);
/* Returns 1 and *val when present, else 0. */
int letw_u64map_get(const struct letw_u64map *m, uint64_t key, uint32_t *val);
void letw_u64map_fini(struct letw_u64map *m);

#endif /* LETW_BT_U64MAP_H */
