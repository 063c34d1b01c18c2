/* SPDX-License-Identifier: MIT */
/*
 * Loading the probe object (LTTng-UST dynamic linkage). liblttng-etw itself
 * never links against liblttng-ust: the probes, and with them lttng-ust,
 * come in only here. Failing to load them is not an error for the runtime:
 * it runs on, untraced, and we say why through the log callback.
 *
 * The probe object is never dlclose()d: lttng-ust documents that unloading
 * a registered provider while sessions may use it is unsafe, and a runtime
 * has no reason to unload it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

#define PROBE_SONAME "liblttng-etw-tp.so.0"

static void *probe_handle;

/* lttng-ust's fork hooks (lttng/ust-fork.h), resolved through the probe
 * object's dependency on liblttng-ust: we never link against it. NULL
 * when tracing is off or when liblttng-ust-fork.so does the job. */
static void (*ust_before_fork)(sigset_t *);
static void (*ust_after_fork_parent)(sigset_t *);
static void (*ust_after_fork_child)(sigset_t *);
static sigset_t ust_fork_sigset;

void (*letw_ust_init_thread)(void);

/*
 * lttng-ust's fork hooks are not reentrant (they take liburcu's registry
 * locks), and its liblttng-ust-fork.so preload already calls them from a
 * fork() wrapper: when that preload is present, leave the job to it.
 */
static void resolve_ust_fork_hooks(void)
{
	void *preload = dlopen("liblttng-ust-fork.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (preload) {
		dlclose(preload); /* drops only the reference NOLOAD took */
		return;
	}
	*(void **)&ust_before_fork = dlsym(probe_handle, "lttng_ust_before_fork");
	*(void **)&ust_after_fork_parent = dlsym(probe_handle, "lttng_ust_after_fork_parent");
	*(void **)&ust_after_fork_child = dlsym(probe_handle, "lttng_ust_after_fork_child");
}

static int env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/* The probe object installed next to this library. */
static int sibling_path(char *buf, size_t len)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)&letw_probe_load, &info) || !info.dli_fname)
		return -ENOENT;
	slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return -ENOENT;
	if (snprintf(buf, len, "%.*s/%s", (int)(slash - info.dli_fname),
		     info.dli_fname, PROBE_SONAME) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int letw_probe_load(void)
{
	const char *override = getenv("LETW_PROBE_PATH");
	char path[PATH_MAX];

	if (env_true("LETW_DISABLE")) {
		letw_info("LETW_DISABLE is set: tracing disabled");
		return 0;
	}
	if (probe_handle)
		return 1;
	if (override && *override) {
		probe_handle = dlopen(override, RTLD_NOW | RTLD_LOCAL);
	} else {
		if (sibling_path(path, sizeof(path)) == 0)
			probe_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!probe_handle)
			probe_handle = dlopen(PROBE_SONAME, RTLD_NOW | RTLD_LOCAL);
	}
	if (!probe_handle) {
		letw_warn("tracing disabled: cannot load the probe object: %s",
			  dlerror());
		return 0;
	}
	resolve_ust_fork_hooks();
	*(void **)&letw_ust_init_thread = dlsym(probe_handle, "lttng_ust_init_thread");
	return 1;
}

void *letw_probe_handle(void)
{
	return probe_handle;
}

/*
 * Called from the fork hooks (fork.c). lttng-ust must be told about a fork
 * for the child to register with the session daemon and trace.
 */
void letw_probe_fork_prepare(void)
{
	if (ust_before_fork)
		ust_before_fork(&ust_fork_sigset);
}

void letw_probe_fork_parent(void)
{
	if (ust_after_fork_parent)
		ust_after_fork_parent(&ust_fork_sigset);
}

void letw_probe_fork_child(void)
{
	if (ust_after_fork_child)
		ust_after_fork_child(&ust_fork_sigset);
}
