/* SPDX-License-Identifier: MIT */
/*
 * fork() for the scripts: a Lua script forks through LuaJIT's FFI
 * (ffi.C.fork, which LuaJIT resolves with dlsym(RTLD_DEFAULT): this
 * executable's exported fork comes first) and goes on running Lua,
 * compiling traces, in the child. lttng-etw's hooks give that child its own
 * control thread and socket and lttng-ust's registration.
 *
 * A wrapper, not pthread_atfork(): the hooks must take lttng-etw's pass
 * lock before lttng-ust's locks (provider/fork.c). When liblttng-ust-fork.so
 * is preloaded, its fork() takes lttng-ust's locks and then calls the real
 * fork, which runs atfork handlers: a prepare hook there waited for the pass
 * lock with lttng-ust's perf lock held, while the control thread, holding the
 * pass lock, may take that perf lock (its first event into a channel with a
 * perf:thread context). Here prepare runs first, then the next fork() in
 * the lookup order (the preloaded wrapper, or libc's), as fork.c documents.
 * popen() and os.execute() spawn with vfork/posix_spawn and never come here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>

#include "fork.h"

/* Set by the main thread before the script runs; read by whichever thread
 * forks later (a script's fork comes after lua_pcall started). */
static int hooks_on;

void lh_fork_hooks_on(void)
{
	__atomic_store_n(&hooks_on, 1, __ATOMIC_RELEASE);
}

__attribute__((visibility("default"))) pid_t fork(void)
{
	static pid_t (*next)(void);
	pid_t (*f)(void) = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	int on = __atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE), saved;
	pid_t pid;

	if (!f) {
		/* Every thread resolves the same pointer: a race stores it twice. */
		*(void **)&f = dlsym(RTLD_NEXT, "fork");
		if (!f) {
			errno = ENOSYS;
			return -1;
		}
		__atomic_store_n(&next, f, __ATOMIC_RELEASE);
	}
	if (on)
		letw_fork_prepare();
	pid = f();
	saved = errno;
	if (on) {
		if (pid == 0)
			letw_fork_child();
		else
			letw_fork_parent();
	}
	errno = saved;
	return pid;
}
