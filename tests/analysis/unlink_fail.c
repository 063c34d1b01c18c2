/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim for map_minijit_e2e: unlink() of a path holding ".tmp."
 * fails with EBUSY. perfmap and jitdump write their output under such a
 * temporary name and swap it with the previous output (renameat2
 * RENAME_EXCHANGE, analysis/plugin/replace_file.c); the old file then
 * carries the temporary name and its unlink() is the one step that may
 * fail after the new output is in place. Nothing else in a run unlinks
 * such a name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

int unlink(const char *path)
{
	int (*real)(const char *);

	if (path && strstr(path, ".tmp.")) {
		errno = EBUSY;
		return -1;
	}
	real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(path);
}
