/* SPDX-License-Identifier: MIT */
/*
 * Why: the sinks keep a few hundred bytes per code region (regions, their
 * names, glib's hash table, the arrays the map is built in), ~40 MB for
 * the bench trace's 2*10^5 functions, and every 4 KiB page of that is
 * one page fault when first touched. On a virtual machine a fault is
 * dear (a bare loop touching 40 MB took 120 ms here in 4 KiB pages,
 * 2.5 ms in transparent huge pages), and perfmap's 9000 faults more
 * than the reading's own were the largest single cost of the sink.
 * With THP in `madvise` mode (the usual distribution default) only
 * memory that asks gets huge pages, and glibc's malloc asks only when
 * told so by its tunables, which it reads once at startup: hence a
 * re-exec with them set.
 *
 * The tunables: malloc advises huge pages for its heap and grows it in
 * 2 MiB steps (hugetlb=1), and arrays of up to 32 MiB come from that heap
 * instead of mmap()s of their own (whose unaligned ends stay in 4 KiB
 * pages, and which are unmapped at free and faulted in again when the
 * next array of that size comes). Both are needed: on the bench trace
 * hugetlb=1 alone left perfmap 8000 of its 10600 page faults, with the
 * threshold 2000 (the dummy sink's reading alone: 1350). A heap grown in
 * larger steps (top_pad) measured no better.
 *
 * Only for a trace of LETW_HUGEHEAP_MIN_BYTES or more: the exec costs a
 * second start (6 ms here: lttng-ctl's libraries are loaded again) and
 * a 2 MiB page is cleared whole even when little of it is used, so on a
 * 2.5 MB trace (10^4 functions) the three commands took 6-10 ms longer,
 * where on a 7.9 MB one (4*10^4) they took ~8% less and on the 38 MB
 * bench trace 20-25% less.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "hugeheap.h"
#include "traces.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LETW_OWN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LETW_OWN_MALLOC 1
#endif
#endif

#define TUNABLES "GLIBC_TUNABLES"
#define OURS "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432"

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

static off_t seen; /* nftw() callbacks take no argument */

static int add_size(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_F)
		seen += st->st_size;
	return seen >= LETW_HUGEHEAP_MIN_BYTES; /* enough: stop walking */
}

/* The trace holds at least LETW_HUGEHEAP_MIN_BYTES of files. Links
 * under it are not followed (nor are they by the reader), but TRACE
 * itself may be one. */
static int big_trace(const char *trace)
{
	char *root = realpath(trace, NULL);
	int big;

	if (!root)
		return 0;
	seen = 0;
	big = nftw(root, add_size, 16, FTW_PHYS) == 1;
	free(root);
	return big;
}

int letw_hugeheap_reexec(const char *trace)
{
#if defined(__GLIBC__) && !defined(LETW_OWN_MALLOC)
	const char *old = getenv(TUNABLES);
	const char *mode = getenv("LETW_HUGEHEAP");
	int always = mode && !strcmp(mode, "always");
	char *val = NULL;
	int err;

	/* LETW_HUGEHEAP=never: no re-exec; =always: whatever the trace's
	 * size (the tests' traces are small: it lets them run this path). */
	if (mode && !strcmp(mode, "never"))
		return 0;

	/* Set already: by our own exec (so never twice), or by a user who
	 * chose (glibc.malloc.hugetlb=0 turns this off). Not set-user-ID:
	 * glibc may then drop the variable, and the next start would not
	 * see it and exec again. */
	if ((old && strstr(old, "glibc.malloc.hugetlb")) || getauxval(AT_SECURE) ||
	    !letw_argv || letw_trace_is_live(trace) || (!always && !big_trace(trace)) ||
	    !thp_enabled())
		return 0;
	/* The user's other tunables first: theirs stay in force. */
	if (asprintf(&val, "%s%s%s", old ? old : "", old && *old ? ":" : "", OURS) < 0)
		return -ENOMEM;
	if (setenv(TUNABLES, val, 1) != 0) {
		err = -errno;
		free(val);
		return err;
	}
	free(val);
	fflush(NULL);
	execv("/proc/self/exe", letw_argv);
	/* Still here (no /proc, say): run as we are, environment as given. */
	err = -errno;
	if (old)
		setenv(TUNABLES, old, 1);
	else
		unsetenv(TUNABLES);
	return err;
#else
	(void)trace;
	return 0; /* another allocator: glibc's tunables do not apply */
#endif
}
