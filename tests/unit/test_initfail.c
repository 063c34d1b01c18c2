/* SPDX-License-Identifier: MIT */
/*
 * letw_init when the control thread cannot be created (pthread_create
 * refused: EAGAIN, out of memory or of threads), white-box. letw_init
 * fails and must leave nothing behind: in particular not the statedump
 * hook, which letw_control_start connects to lttng-ust before creating
 * the thread. It used to stay connected (unregistered only by
 * letw_shutdown, which answers -ESHUTDOWN after a failed init): every
 * statedump of a session recording the rundown events still queued a
 * request that nobody would serve, and a runtime that unloaded the
 * library then left lttng-ust calling into unmapped code.
 *
 * The failure is injected by this executable's own pthread_create: with
 * `refuse` set it fails the calls made from this executable's code (the
 * internals archive is linked in; lttng-ust's and liburcu's threads are
 * created from their own libraries and pass through). The probe object
 * is the build's (LETW_TEST_PROBE): the hook needs lttng-ust.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>
#include "internal.h"
#include "statedump.h"

static int refuse;

static int from_this_executable(const void *ret_addr)
{
	Dl_info here, caller;

	return dladdr((const void *)&from_this_executable, &here) &&
	       dladdr(ret_addr, &caller) && caller.dli_fbase == here.dli_fbase;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

	if (__atomic_load_n(&refuse, __ATOMIC_ACQUIRE) &&
	    from_this_executable(__builtin_return_address(0)))
		return EAGAIN;
	*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	return real ? real(t, attr, fn, arg) : ENOSYS;
}

Test(initfail, no_control_thread_leaves_no_statedump_hook, .timeout = 60)
{
	unsetenv("LETW_DISABLE");
	unsetenv("LETW_STATEDUMP");
	setenv("LETW_PROBE_PATH", LETW_TEST_PROBE, 1);
	refuse = 1;
	cr_assert_eq(letw_init(NULL), -EAGAIN);
	cr_assert_eq(letw_g.tracing, 1, "the probe object did not load: nothing to hook");
	cr_expect_eq(letw_hook_active(), 0, "the statedump hook outlived a failed letw_init");
	cr_expect_eq(letw_shutdown(), -ESHUTDOWN);

	/* Threads back: a second letw_init runs, hooked. */
	refuse = 0;
	cr_assert_eq(letw_init(NULL), 0);
	cr_expect_eq(letw_hook_active(), 1);
	cr_assert_eq(letw_shutdown(), 0);
	cr_expect_eq(letw_hook_active(), 0);
}
