/* SPDX-License-Identifier: MIT */
/*
 * Why: the sinks keep a few hundred bytes per code region (regions, their
 * names, the start index, the arrays the map is built in), ~40 MB for
 * the bench trace's 2*10^5 functions, and every 4 KiB page of that is
 * one page fault when first touched. On a virtual machine a fault is
 * dear (a bare loop touching 40 MB took 120 ms here in 4 KiB pages,
 * 2.5 ms in transparent huge pages), and perfmap's 9000 faults more
 * than the reading's own were the largest single cost of the sink.
 * With THP in `madvise` mode (the usual distribution default) only
 * memory that asks gets huge pages, and glibc's malloc asks only when
 * its tunables say so (glibc.malloc.hugetlb=1), read once at startup.
 *
 * Instead of starting the program again with the tunables set (what this
 * file did first: a second start, ~6 ms, most of it loading lttng-ctl's
 * libraries again), the reader's child does in place what the tunables
 * would have done: it grows malloc's main heap once by a reserve sized
 * from the trace (M_TOP_PAD, then one allocation past the top chunk) and
 * advises that range MADV_HUGEPAGE. brk() only reserves addresses; a
 * page is allocated, 2 MiB at a time, when the sinks first touch it, so
 * an unused reserve costs no memory, only RLIMIT_DATA headroom (hence
 * the reserve is at most half of what the limit leaves). Arrays of up to
 * 32 MiB come from that heap (M_MMAP_THRESHOLD) instead of mmap()s of
 * their own, whose unaligned ends stay in 4 KiB pages and which are
 * unmapped at free and faulted in again for the next array of that size;
 * and the heap is never trimmed (M_TRIM_THRESHOLD): the child exits when
 * the graph ends. On the bench trace (38 MB), perfmap's page faults go
 * from 10,600 to ~1,050 (the dummy sink's reading alone: ~1,200; the
 * re-exec with the tunables: ~2,200).
 *
 * Only for a trace of LETW_HUGEHEAP_MIN_BYTES or more: a 2 MiB page is
 * cleared whole even when little of it is used. Measured with the
 * reservation (wall time with / without, medians of 11-21 interleaved
 * runs, report / perfmap / jitdump): 0.9 MB trace 0.99 / 0.98 / 0.77,
 * 3 MB 0.95 / 0.87 / 0.79, 8 MB 0.87 / 0.79 / 0.75 (jitdump's 1 MiB
 * write buffer is a heap array then, not an mmap() of its own). Nothing
 * was lost even at 0.9 MB, but nothing gained either for two commands:
 * the threshold stays above that.
 *
 * Single-threaded: the child runs the graph on one thread, so main_arena
 * is the only arena that grows, and nothing allocates between the
 * reservation and the madvise().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "hugeheap.h"
#include "sanitizer.h"
#include "traces.h"

#if defined(__GLIBC__) && !defined(LETW_OWN_MALLOC)
#define LETW_HUGEHEAP_ON 1
#endif

#ifdef LETW_HUGEHEAP_ON
#define HUGE_SZ ((uint64_t)2 << 20)
#define MMAP_MAX (32 << 20) /* arrays up to this size from the heap */
#define RESERVE_MIN ((uint64_t)32 << 20)
#define RESERVE_MAX ((uint64_t)1 << 30) /* mallopt() takes an int */
/* perfmap's heap peaked at 1.1x the bench trace (massif, with glib's hash
 * table as the start index then; addrindex.h's is about as big); the
 * index and the region array grow by doubling. */
#define RESERVE_PER_TRACE_BYTE 3

/* THP is available unless the system turned it off. */
static int thp_enabled(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	int on;

	if (!f)
		return 0;
	on = fgets(buf, sizeof(buf), f) && !strstr(buf, "[never]");
	fclose(f);
	return on;
}

static uint64_t seen; /* nftw() callbacks take no argument */

static int add_size(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		seen += (uint64_t)st->st_size;
	return seen >= RESERVE_MAX; /* enough: stop walking */
}

/* Bytes of regular files under TRACE, up to RESERVE_MAX. Links under it
 * are not followed (nor are they by the reader), but TRACE itself may
 * be one. */
static uint64_t trace_bytes(const char *trace)
{
	char *root = realpath(trace, NULL);

	if (!root)
		return 0;
	seen = 0;
	(void)nftw(root, add_size, 16, FTW_PHYS);
	free(root);
	return seen;
}

#endif /* LETW_HUGEHEAP_ON */

int letw_hugeheap_prepare(const char *trace, uint64_t room)
{
#ifdef LETW_HUGEHEAP_ON
	const char *tun = getenv("GLIBC_TUNABLES");
	const char *mode = getenv("LETW_HUGEHEAP");
	int always = mode && !strcmp(mode, "always");
	uint64_t bytes, reserve;
	uintptr_t lo, hi;
	struct mallinfo2 mi;
	char *before, *after;
	void *p;

	/* LETW_HUGEHEAP=never: nothing; =always: whatever the trace's size
	 * (the tests' traces are small: it lets them run this path). A
	 * user's own glibc.malloc.hugetlb tunable is their choice: glibc
	 * acts on it (1) or it says no (0). */
	if ((mode && !strcmp(mode, "never")) || (tun && strstr(tun, "glibc.malloc.hugetlb")) ||
	    letw_trace_is_live(trace) || !thp_enabled())
		return 0;
	bytes = trace_bytes(trace);
	if (!always && bytes < LETW_HUGEHEAP_MIN_BYTES)
		return 0;
	reserve = bytes * RESERVE_PER_TRACE_BYTE;
	if (reserve < RESERVE_MIN)
		reserve = RESERVE_MIN;
	if (reserve > RESERVE_MAX)
		reserve = RESERVE_MAX;
	if (room && reserve > room / 2)
		reserve = room / 2;
	if (reserve < HUGE_SZ * 2)
		return -ENOMEM;

	if (!mallopt(M_MMAP_THRESHOLD, MMAP_MAX) || !mallopt(M_TRIM_THRESHOLD, INT_MAX) ||
	    !mallopt(M_TOP_PAD, (int)reserve))
		return -EINVAL;
	/* One allocation bigger than the top chunk makes malloc call sbrk()
	 * once, for it plus the pad; freed, it merges back into the top,
	 * which the trim threshold keeps. */
	before = sbrk(0);
	mi = mallinfo2();
	p = malloc(mi.keepcost + 4096);
	free(p);
	after = sbrk(0);
	/* The pad back to a step like the tunable's: growth past the
	 * reserve stays in 4 KiB pages rather than reserving again. */
	(void)mallopt(M_TOP_PAD, (int)HUGE_SZ);
	if (!p || before == (void *)-1 || after == (void *)-1 || after <= before)
		return -ENOMEM;
	lo = ((uintptr_t)before + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1);
	hi = (uintptr_t)after & ~(uintptr_t)(HUGE_SZ - 1);
	if (hi <= lo)
		return -ENOMEM;
	return madvise((void *)lo, hi - lo, MADV_HUGEPAGE) ? -errno : 1;
#else
	(void)trace;
	(void)room;
	return 0; /* another allocator: glibc's heap layout does not apply */
#endif
}
