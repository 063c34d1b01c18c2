/* SPDX-License-Identifier: MIT */
#ifndef LETW_ABI_H
#define LETW_ABI_H

#include <errno.h>
#include <stddef.h>

/*
 * Size-prefixed structs (libbpf's rule): a caller built against a newer
 * header passes a larger size; fields this library does not know are
 * accepted only while they are zero (unused), since ignoring a set one
 * would silently drop what the caller asked for. Sizes past a page are
 * refused without reading them (a garbage size, not a newer struct).
 * 0, or -E2BIG.
 */
static inline int letw_abi_tail(const void *p, size_t known, size_t size)
{
	const unsigned char *b = p;

	if (size <= known)
		return 0;
	if (size > 4096)
		return -E2BIG;
	for (size_t i = known; i < size; i++)
		if (b[i])
			return -E2BIG;
	return 0;
}

#endif /* LETW_ABI_H */
