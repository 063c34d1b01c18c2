/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim for map_minijit_e2e: the process that creates an output's
 * temporary file (a name holding ".tmp.", opened O_CREAT: perfmap's and
 * jitdump's writers, replace_file.c) dies right after, as a crash or a
 * hang while writing would leave it: LETW_TMP_CRASH=segv raises SIGSEGV,
 * =spin burns CPU until the supervisor kills it as hung. Unset: nothing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int open_and_die(const char *path, int flags, mode_t mode)
{
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	const char *how = getenv("LETW_TMP_CRASH");
	int fd;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	fd = real(path, flags, mode);
	if (fd < 0 || !how || !(flags & O_CREAT) || !path || !strstr(path, ".tmp."))
		return fd;
	if (strcmp(how, "segv") == 0)
		raise(SIGSEGV);
	if (strcmp(how, "spin") == 0)
		for (volatile unsigned long n = 0;; n++)
			;
	return fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return open_and_die(path, flags, mode);
}

/* The same call under its large-file name (one function in glibc on
 * 64-bit systems). */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));
