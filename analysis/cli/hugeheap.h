/* SPDX-License-Identifier: MIT */
/* The reader's heap on transparent huge pages (hugeheap.c). */
#ifndef LETW_CLI_HUGEHEAP_H
#define LETW_CLI_HUGEHEAP_H

#include <stdint.h>

/* Below this many bytes of trace files the 2 MiB pages, each cleared
 * whole, cost more than the faults they save (hugeheap.c). */
#define LETW_HUGEHEAP_MIN_BYTES ((uint64_t)2 << 20)

/* In the reader's child, before the graph allocates: for a trace
 * directory of at least LETW_HUGEHEAP_MIN_BYTES, reserves a part of
 * malloc's heap sized from the trace (at most ROOM / 2 bytes when ROOM,
 * the memory limit left, is not 0) and advises it MADV_HUGEPAGE, unless
 * THP is off, the trace is live, the user set glibc.malloc.hugetlb, or
 * malloc is not glibc's. LETW_HUGEHEAP=never turns it off, =always on
 * whatever the trace's size. Returns 1 when the heap was advised, 0 when
 * there was nothing to do, a negative errno when it could not (nothing is
 * wrong then: the heap is in 4 KiB pages). */
int letw_hugeheap_prepare(const char *trace, uint64_t room);

#endif
