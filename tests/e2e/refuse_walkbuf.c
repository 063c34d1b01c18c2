/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim for test_retry.sh: the walker's copy buffer (rundown/
 * walker.c, buf_get: one 8 MiB mmap at the first pass, kept) is refused
 * while the file named by LETW_REFUSE_MMAP exists, as when the process is
 * out of memory. Only mappings of at least 8 MiB made by the thread named
 * letw-control are refused (the library reserves its other big mappings
 * in letw_init, on the runtime's thread); every other call passes through.
 * Each refusal appends a line to LETW_REFUSE_MMAP.refused, so the test
 * knows the pass failed, and how many times it was tried.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int refusing(size_t len)
{
	const char *path = getenv("LETW_REFUSE_MMAP");
	char name[16] = "";

	return len >= (8u << 20) && path && *path && !access(path, F_OK) &&
	       !prctl(PR_GET_NAME, name, 0, 0, 0) && !strcmp(name, "letw-control");
}

static void note_refused(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s.refused", getenv("LETW_REFUSE_MMAP"));
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)!write(fd, "refused\n", 8);
		close(fd);
	}
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (refusing(len)) {
		note_refused();
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
