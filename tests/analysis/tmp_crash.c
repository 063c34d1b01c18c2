/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim for map_minijit_e2e: the process that creates an output's
 * temporary file (a name holding ".tmp.", opened O_CREAT: perfmap's and
 * jitdump's writers, replace_file.c) dies right after, as a crash or a
 * hang while writing would leave it: LETW_TMP_CRASH=segv raises SIGSEGV,
 * =spin burns CPU until the supervisor kills it as hung. =slow is a long
 * write that makes progress: the first SLOW_WRITES write()s to that file
 * each burn SLOW_BURN_S of CPU time, then write one byte (a short write,
 * which the writer continues), so the CPU time spent writing exceeds a
 * 1 s stall limit while the bytes written grow. Unset: nothing.
 * LETW_TMP_CRASH_NTH=N: the Nth temporary file the process creates is the
 * one (default 1): the report makes one when its sink is created (a probe,
 * removed at once) and its real one at the end, after the trace is read.
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
#include <time.h>
#include <unistd.h>

#define SLOW_WRITES 5
#define SLOW_BURN_S 0.4

static int slow_fd = -1;
static int slowed;
static int temps; /* temporary files created so far */

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_and_die(const char *path, int flags, mode_t mode)
{
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	const char *how = getenv("LETW_TMP_CRASH"), *nth;
	int fd;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	fd = real(path, flags, mode);
	if (fd < 0 || !how || !(flags & O_CREAT) || !path || !strstr(path, ".tmp."))
		return fd;
	nth = getenv("LETW_TMP_CRASH_NTH");
	if (++temps != (nth ? atoi(nth) : 1))
		return fd;
	if (strcmp(how, "segv") == 0)
		raise(SIGSEGV);
	if (strcmp(how, "spin") == 0)
		for (volatile unsigned long n = 0;; n++)
			;
	if (strcmp(how, "slow") == 0)
		slow_fd = fd;
	return fd;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t (*real)(int, const void *, size_t) =
		(ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (fd == slow_fd && n && slowed < SLOW_WRITES) {
		double until = cpu_s() + SLOW_BURN_S;

		slowed++;
		while (cpu_s() < until)
			;
		n = 1;
	}
	return real(fd, buf, n);
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
