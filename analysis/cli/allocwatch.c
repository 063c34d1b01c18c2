/* SPDX-License-Identifier: MIT */
/*
 * Why: under the reader's memory limit (memlimit.c, RLIMIT_DATA) the
 * allocation that crosses it fails wherever it happens to be, and not
 * every caller says so: glib aborts with one of several messages, and
 * babeltrace2 2.0's reader dereferences some results unchecked (a SIGSEGV
 * with nothing logged, seen under --memory-limit 3). The supervisor then
 * saw a crash and blamed the trace. These wrappers of the allocation
 * entry points note, in memory the supervisor shares, that an allocation
 * of the reader's child failed, so that it reports the limit whatever
 * the child did next.
 *
 * They interpose on glibc's (an executable's definitions come first in
 * the lookup scope of every library and plugin it loads) and forward to
 * glibc's own __libc_* entry points: the same allocator, so free() and
 * malloc_usable_size() stay glibc's. Not in sanitizer builds, whose
 * runtime owns malloc (and where the limit is not applied).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stddef.h>

#include "allocwatch.h"
#include "sanitizer.h"

#if defined(__GLIBC__) && !defined(LETW_OWN_MALLOC)
/* Written by the child only; read by the parent after the child ended. */
static volatile int *failed;

void letw_allocwatch_arm(volatile int *flag)
{
	failed = flag;
}

static void *noted(void *p)
{
	if (!p && failed)
		*failed = 1;
	return p;
}

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

#define LETW_INTERPOSE __attribute__((visibility("default")))

LETW_INTERPOSE void *malloc(size_t n)
{
	return noted(__libc_malloc(n));
}

LETW_INTERPOSE void *calloc(size_t n, size_t size)
{
	return noted(__libc_calloc(n, size));
}

LETW_INTERPOSE void *realloc(void *p, size_t n)
{
	void *q = __libc_realloc(p, n);

	/* realloc(p, 0) frees p and may return NULL: not a failure. */
	return n ? noted(q) : q;
}

LETW_INTERPOSE int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	/* glibc's own checks: a power of two, a multiple of sizeof(void *). */
	if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || !align)
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p) {
		noted(p);
		return ENOMEM;
	}
	*out = p;
	return 0;
}

LETW_INTERPOSE void *aligned_alloc(size_t align, size_t n)
{
	return noted(__libc_memalign(align, n));
}

LETW_INTERPOSE void *memalign(size_t align, size_t n)
{
	return noted(__libc_memalign(align, n));
}

/* glibc serves these two without calling memalign (reallocarray does call
 * realloc through the PLT, so the wrapper above sees it). */
LETW_INTERPOSE void *valloc(size_t n)
{
	return noted(__libc_valloc(n));
}

LETW_INTERPOSE void *pvalloc(size_t n)
{
	return noted(__libc_pvalloc(n));
}
#else
void letw_allocwatch_arm(volatile int *flag)
{
	(void)flag; /* another allocator: nothing to watch here */
}
#endif
