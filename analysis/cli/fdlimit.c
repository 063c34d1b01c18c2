/* SPDX-License-Identifier: MIT */
/*
 * babeltrace2's src.ctf.fs opens a file of every stream of a trace when
 * the graph starts and keeps one open to the end, so a trace of more
 * streams than RLIMIT_NOFILE allows failed half-way, with
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cli.h"
#include "ctf_index.h"
#include "fdlimit.h"
#include "grow.h"

/* Descriptors the reader needs besides one per stream: stdio, the pipe
 * to the supervisor, the metadata and index files it reads while
 * starting, the output file, /proc files of the memory watch. Measured:
 * a trace of 102 streams read at a limit of 108 (`report`, the limit not
 * raised), so 6; 16 leaves room for what that run did not open. */
#define LETW_FD_RESERVE 16

struct sid {
	uint64_t stream_id, instance_id;
};

static int sid_cmp(const void *a, const void *b)
{
	const struct sid *x = a, *y = b;

	if (x->stream_id != y->stream_id)
		return x->stream_id < y->stream_id ? -1 : 1;
	return (x->instance_id > y->instance_id) - (x->instance_id < y->instance_id);
}

/* The stream a stream file belongs to, from its first packet's header;
 * *unique when it cannot be told (not LTTng's layout, unreadable): then
 * it counts as a stream of its own. 32 as the width of `unsigned long`:
 * only the header is used, and the shorter context fits either trace's
 * first packet. */
static void stream_of(const char *dir, const char *name, struct sid *id, int *unique)
{
	struct letw_first_packet fp;
	char *path = NULL;

	*unique = 1;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return;
	if (letw_ctf_first_packet(path, 32, &fp) == 0) {
		id->stream_id = fp.stream_id;
		id->instance_id = fp.instance_id;
		*unique = 0;
	}
	free(path);
}

/*
 * Streams of dir as src.ctf.fs opens them: it keeps one file of each
 * stream open, not every file: the pieces of a stream LTTng split
 * (`--tracefile-size`: CHANNEL_CPU_N) are read one after the other (a
 * trace of 35 such files read at a limit of 10). Stream files are the
 * regular, non-empty, non-hidden files but the metadata. -errno when dir
 * cannot be read (the pre-checks or the reader say why).
 */
static long count_streams(const char *dir)
{
	DIR *d = opendir(dir);
	struct sid *ids = NULL, id;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	long streams = 0;
	int unique;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "metadata") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode) ||
		    !st.st_size)
			continue;
		stream_of(dir, de->d_name, &id, &unique);
		if (unique) {
			streams++;
			continue;
		}
		if (letw_grow_small((void **)&ids, &cap, n + 1, sizeof(*ids))) {
			/* Counted as files: more, never fewer. */
			streams += 1 + (long)n;
			n = 0;
			continue;
		}
		ids[n++] = id;
	}
	closedir(d);
	if (n) {
		qsort(ids, n, sizeof(*ids), sid_cmp);
		streams++;
		for (size_t i = 1; i < n; i++)
			streams += sid_cmp(&ids[i - 1], &ids[i]) != 0;
	}
	free(ids);
	return streams;
}

int letw_fd_limit_check(char **dirs, size_t ndirs)
{
	struct rlimit rl;
	uint64_t streams = 0;
	size_t i;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max == RLIM_INFINITY)
		return 0;
	for (i = 0; i < ndirs; i++) {
		long n = count_streams(dirs[i]);

		if (n > 0)
			streams += (uint64_t)n;
	}
	if (streams + LETW_FD_RESERVE <= (uint64_t)rl.rlim_max)
		return 0;
	letw_err("the trace has %" PRIu64 " streams, and babeltrace2 keeps a file of each open while it reads: with the about %d other files the reader needs, more than the %" PRIu64 " files a process may have open (ulimit -n, the hard limit): raise it (ulimit -Hn as root, LimitNOFILE= in a systemd unit, nofile in limits.conf) and try again",
		 streams, LETW_FD_RESERVE, (uint64_t)rl.rlim_max);
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
