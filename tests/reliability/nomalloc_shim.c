/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim: libc's allocator made fatal for chosen threads. A
 * thread that called letw_test_nomalloc(1) aborts, with a message naming
 * the function, the moment it enters malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc, memalign, valloc or pvalloc — every entry
 * into glibc's allocator and its arena locks. Other threads allocate
 * normally (through glibc's __libc_* entry points).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static __thread int armed;

__attribute__((visibility("default"))) void letw_test_nomalloc(int on)
{
	armed = on;
}

static void trip(const char *fn)
{
	static const char pre[] = "nomalloc: ";
	static const char post[] = " called from a publishing thread after warm-up\n";

	armed = 0;
	(void)!write(2, pre, sizeof(pre) - 1);
	(void)!write(2, fn, strlen(fn));
	(void)!write(2, post, sizeof(post) - 1);
	abort();
}

#define GUARD(fn) do { if (__builtin_expect(armed, 0)) trip(fn); } while (0)

void *malloc(size_t n)
{
	GUARD("malloc");
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	GUARD("calloc");
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	GUARD("realloc");
	return __libc_realloc(p, n);
}

void free(void *p)
{
	GUARD("free");
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	GUARD("posix_memalign");
	if (!(p = __libc_memalign(align, n)))
		return 12; /* ENOMEM */
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	GUARD("aligned_alloc");
	return __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
	GUARD("memalign");
	return __libc_memalign(align, n);
}

void *valloc(size_t n)
{
	GUARD("valloc");
	return __libc_valloc(n);
}

void *pvalloc(size_t n)
{
	GUARD("pvalloc");
	return __libc_pvalloc(n);
}
