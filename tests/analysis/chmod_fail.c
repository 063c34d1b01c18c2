/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD shim for output_safety_e2e: fchmod() fails with EPERM, as on
 * a filesystem that keeps no Unix modes. The report gives its new file
 * the mode of the file it replaces with fchmod() (report_file.c) and
 * warns when it cannot; nothing else in a run calls fchmod().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sys/stat.h>

int fchmod(int fd, mode_t mode)
{
	(void)fd;
	(void)mode;
	errno = EPERM;
	return -1;
}
