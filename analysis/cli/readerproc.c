/* SPDX-License-Identifier: MIT */
/*
 * What the supervisor (supervise.c) reads of the reader's child in /proc:
 * progress counters for the stall watch, the trace files it has open for
 * the stall message, and what it sleeps on. The child is ours (forked, same
 * credentials), so /proc/PID/syscall and /proc/PID/mem are readable to us
 * under ptrace's access rules (Yama's scope 1 admits a parent).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "readerproc.h"

int letw_proc_stat(pid_t pid, struct letw_child_stat *cs)
{
	char path[64], buf[1024], *p;
	unsigned long long minflt = 0, majflt = 0, ut = 0, st = 0, start = 0;
	char state = 0;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? -ENOENT : -EIO;
	n = (int)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	/* After the command name in parentheses (which may hold blanks and
	 * parentheses: the last ')'): state ppid pgrp session tty tpgid
	 * flags minflt cminflt majflt cmajflt utime stime cutime cstime
	 * priority nice num_threads itrealvalue starttime */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %llu %llu "
			 "%*d %*d %*d %*d %*d %*d %llu",
			 &state, &minflt, &majflt, &ut, &st, &start) != 6)
		return -EIO;
	cs->state = state;
	cs->start_ticks = start;
	cs->cpu_ticks = ut + st;
	cs->faults = minflt + majflt;
	return 0;
}

int letw_child_stat(pid_t pid, struct letw_child_stat *cs)
{
	char path[64], buf[1024];
	FILE *f;

	if (letw_proc_stat(pid, cs))
		return -1;
	cs->rchar = cs->wchar = 0;
	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	f = fopen(path, "r");
	if (f) {
		/* rchar comes first, then wchar. */
		while (fgets(buf, sizeof(buf), f))
			if (sscanf(buf, "rchar: %llu", &cs->rchar) != 1 &&
			    sscanf(buf, "wchar: %llu", &cs->wchar) == 1)
				break;
		fclose(f);
	}
	return 0;
}

/* Is the absolute path `p` a file under one of dirs (not a dir itself)? */
static int in_trace(const char *p, char **dirs, size_t ndirs)
{
	char real[PATH_MAX];

	for (size_t i = 0; i < ndirs; i++) {
		size_t l;

		if (!realpath(dirs[i], real))
			continue;
		l = strlen(real);
		if (strncmp(p, real, l) == 0 && p[l] == '/')
			return 1;
	}
	return 0;
}

void letw_child_open_files(pid_t pid, char **dirs, size_t ndirs, char *out, size_t len)
{
	char path[64], link[PATH_MAX];
	struct dirent *de;
	size_t used = 0;
	DIR *d;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char fdp[384];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fdp, sizeof(fdp), "%s/%s", path, de->d_name);
		n = readlink(fdp, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (in_trace(link, dirs, ndirs) && used + strlen(link) + 5 < len)
			used += (size_t)snprintf(out + used, len - used, "%s`%s`",
						 used ? ", " : "", link);
	}
	closedir(d);
}

/* The path argument of a blocked open()/openat(), read from the child's
 * memory (it cannot move: the child sleeps in the call). */
static int child_string(pid_t pid, unsigned long long addr, char *out, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, out, len - 1, (off_t)addr);
	close(fd);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return memchr(out, '\0', (size_t)n) ? 0 : -1;
}

/*
 * /proc/PID/syscall holds "NR ARG1 ... ARG6 SP PC" while the task sleeps
 * in a system call ("running" or "-1 SP PC" otherwise). What counts: an
 * open of a trace file, where a FIFO waits for a writer, and a read of
 * one, where it waits for data. A write does not (the child writing its
 * output to a pager nobody scrolls is not a damaged trace).
 */
int letw_child_waits_on_input(pid_t pid, char **dirs, size_t ndirs, char *out, size_t len)
{
	char path[64], buf[256], name[PATH_MAX], real[PATH_MAX];
	unsigned long long a[3] = { 0 };
	long nr;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fgets(buf, sizeof(buf), f) &&
	     sscanf(buf, "%ld %llx %llx %llx", &nr, &a[0], &a[1], &a[2]) == 4;
	fclose(f);
	if (!ok)
		return 0;
	if (nr == SYS_openat) {
		/* A relative path is resolved against the child's working
		 * directory, ours (forked); against another dirfd it is not
		 * judged. */
		if (child_string(pid, a[1], name, sizeof(name)) ||
		    (name[0] != '/' && (int)a[0] != AT_FDCWD))
			return 0;
#ifdef SYS_open
	} else if (nr == SYS_open) {
		if (child_string(pid, a[0], name, sizeof(name)))
			return 0;
#endif
	} else if (nr == SYS_read || nr == SYS_pread64) {
		char fdp[64];
		ssize_t n;

		snprintf(fdp, sizeof(fdp), "/proc/%d/fd/%llu", (int)pid, a[0]);
		n = readlink(fdp, name, sizeof(name) - 1);
		if (n <= 0)
			return 0;
		name[n] = '\0';
	} else {
		return 0;
	}
	/* realpath: a FIFO's path resolves without opening it. */
	if (!realpath(name, real) || !in_trace(real, dirs, ndirs))
		return 0;
	snprintf(out, len, "%s", real);
	return 1;
}
