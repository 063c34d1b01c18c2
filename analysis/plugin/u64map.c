/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Code addresses share their low bits (alignment) and high bits
	 * (one mapping): mix before masking. */
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int grow(struct letw_u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i, j;
	struct letw_u64map_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].used)
			continue;
		for (j = slot_of(m->slots[i].key, ncap); ns[j].used;
		     j = (j + 1) & (ncap - 1))
			;
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

int letw_u64map_put(struct letw_u64map *m, uint64_t key, uint32_t val)
{
	size_t j;

	if ((m->len + 1) * 4 > m->cap * 3) {
		int ret = grow(m);

		if (ret)
			return ret;
	}
	for (j = slot_of(key, m->cap); m->slots[j].used;
	     j = (j + 1) & (m->cap - 1)) {
		if (m->slots[j].key == key) {
			m->slots[j].val = val;
			return 0;
		}
	}
	m->slots[j].used = 1;
	m->slots[j].key = key;
	m->slots[j].val = val;
	m->len++;
	return 0;
}

int letw_u64map_get(const struct letw_u64map *m, uint64_t key, uint32_t *val)
{
	size_t j;

	if (!m->cap)
		return 0;
	for (j = slot_of(key, m->cap); m->slots[j].used;
	     j = (j + 1) & (m->cap - 1)) {
		if (m->slots[j].key == key) {
			*val = m->slots[j].val;
			return 1;
		}
	}
	return 0;
}

void letw_u64map_fini(struct letw_u64map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}
