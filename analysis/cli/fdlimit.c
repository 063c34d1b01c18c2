/* SPDX-License-Identifier: MIT */
/*
 * babeltrace2's src.ctf.fs opens every stream file of a trace when the
 * graph starts and keeps it open to the end (one FILE each), so a trace
 * of more stream files than RLIMIT_NOFILE allows failed half-way, with
 * "Cannot open file: Too many open files" naming whichever stream file
 * came last: an innocent one. A per-CPU, per-process session (--buffers-pid
 * on a many-core machine) passes the usual soft limit of 1024 while
 * healthy. The soft limit is raised to the hard one in the reader only
 * (as many tools do): nothing it runs uses select(), which breaks past
 * 1024 descriptors, and the parent's own children keep the usual limit.
 * A trace that would still need more is refused before reading, saying
 * so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cli.h"
#include "fdlimit.h"

/* Descriptors the reader needs besides its stream files: stdio, the
 * pipe to the supervisor, the metadata and index files it reads while
 * starting, the output file, /proc files of the memory watch, plugins
 * being loaded. Generous: a few spare ones cost nothing. */
#define LETW_FD_RESERVE 64

/* Stream files of dir as src.ctf.fs takes them: regular, not empty, not
 * hidden, not the metadata. -errno when dir cannot be read (the
 * pre-checks or the reader say why). */
static long count_streams(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	long n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "metadata") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size > 0)
			n++;
	}
	closedir(d);
	return n;
}

int letw_fd_limit_check(char **dirs, size_t ndirs)
{
	struct rlimit rl;
	uint64_t files = 0;
	size_t i;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max == RLIM_INFINITY)
		return 0;
	for (i = 0; i < ndirs; i++) {
		long n = count_streams(dirs[i]);

		if (n > 0)
			files += (uint64_t)n;
	}
	if (files + LETW_FD_RESERVE <= (uint64_t)rl.rlim_max)
		return 0;
	letw_err("the trace has %" PRIu64 " stream files, and babeltrace2 keeps each one open while it reads: with the about %d other files the reader needs, more than the %" PRIu64 " files a process may have open (ulimit -n, the hard limit): raise it (ulimit -Hn as root, LimitNOFILE= in a systemd unit, nofile in limits.conf) and try again",
		 files, LETW_FD_RESERVE, (uint64_t)rl.rlim_max);
	return -1;
}

int letw_fd_limit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -errno;
	if (rl.rlim_cur == rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0 ? 0 : -errno;
}
