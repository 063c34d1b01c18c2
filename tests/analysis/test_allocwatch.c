/* SPDX-License-Identifier: MIT */
/* The reader child's allocation watch (analysis/cli/allocwatch.c): a
 * failed allocation through any wrapped entry point sets the flag, a
 * successful one or a realloc(p, 0) does not. Linked with allocwatch.c
 * itself, so this process's malloc is the wrapped one. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "allocwatch.h"
#include "sanitizer.h"

/* Sizes no allocator grants: the call fails without side effects. */
#define HUGE_REQ ((size_t)PTRDIFF_MAX - 4096)

static volatile int flag;

static void setup(void)
{
#ifdef LETW_OWN_MALLOC
	cr_skip_test("sanitizer build: its runtime owns malloc, nothing is wrapped");
#endif
	flag = 0;
}

/* Opaque to the compiler: a constant oversized request may be folded. */
static size_t (*volatile size_of)(size_t) = NULL;
static size_t same(size_t n)
{
	return n;
}

TestSuite(allocwatch, .init = setup);

Test(allocwatch, not_armed_sees_nothing)
{
	static volatile int other;

	size_of = same;
	letw_allocwatch_arm(NULL);
	cr_assert_null(malloc(size_of(HUGE_REQ)));
	cr_assert_eq(other, 0);
	cr_assert_eq(flag, 0);
}

Test(allocwatch, successes_and_frees_are_not_failures)
{
	void *p;

	size_of = same;
	letw_allocwatch_arm(&flag);
	p = malloc(size_of(64));
	cr_assert_not_null(p);
	p = realloc(p, size_of(4096));
	cr_assert_not_null(p);
	/* Frees p; may return NULL, which is no failure. */
	p = realloc(p, 0);
	free(p);
	p = calloc(4, size_of(16));
	cr_assert_not_null(p);
	free(p);
	cr_assert_eq(posix_memalign(&p, 3, 64), EINVAL); /* a caller's mistake */
	cr_assert_eq(flag, 0);
}

Test(allocwatch, malloc_failure)
{
	size_of = same;
	letw_allocwatch_arm(&flag);
	cr_assert_null(malloc(size_of(HUGE_REQ)));
	cr_assert_eq(flag, 1);
}

Test(allocwatch, calloc_failure)
{
	size_of = same;
	letw_allocwatch_arm(&flag);
	cr_assert_null(calloc(size_of(HUGE_REQ / 2), 4)); /* overflows */
	cr_assert_eq(flag, 1);
}

Test(allocwatch, realloc_failure)
{
	/* volatile: gcc's use-after-free warning does not know that a
	 * realloc() that returned NULL left the block alone. */
	char *volatile keep;
	char *q;

	size_of = same;
	letw_allocwatch_arm(&flag);
	keep = malloc(16);
	cr_assert_not_null(keep);
	keep[0] = 'x';
	q = realloc(keep, size_of(HUGE_REQ));
	cr_assert_null(q);
	cr_assert_eq(flag, 1);
	cr_assert_eq(keep[0], 'x');
	free(keep);
}

Test(allocwatch, aligned_failures)
{
	void *p = NULL;

	size_of = same;
	letw_allocwatch_arm(&flag);
	cr_assert_eq(posix_memalign(&p, 64, size_of(HUGE_REQ)), ENOMEM);
	cr_assert_eq(flag, 1);
	flag = 0;
	cr_assert_null(aligned_alloc(64, size_of(HUGE_REQ)));
	cr_assert_eq(flag, 1);
}

/* Entry points glibc serves without going through malloc or realloc. */
Test(allocwatch, page_aligned_failures)
{
	size_of = same;
	letw_allocwatch_arm(&flag);
	cr_assert_null(valloc(size_of(HUGE_REQ)));
	cr_assert_eq(flag, 1);
	flag = 0;
	cr_assert_null(pvalloc(size_of(HUGE_REQ)));
	cr_assert_eq(flag, 1);
}
