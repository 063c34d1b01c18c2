/* SPDX-License-Identifier: MIT */
/*
 * A whole jitdump put in place (jitdump_write.h, letw_jd_write_file): the
 * sink's dumps and the CLI's merged ones are written the same way, only
 * their records differ.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitdump_write.h"
#include "replace_file.h"

/* "DIR/.NAME" for "DIR/NAME": src.ctf.fs skips dot files, so a dump
 * being written into a trace's directory is never read as a trace file. */
static char *hidden_of(const char *path)
{
	const char *base = strrchr(path, '/');
	char *h;

	base = base ? base + 1 : path;
	if (asprintf(&h, "%.*s.%s", (int)(base - path), path, base) < 0)
		return NULL;
	return h;
}

int letw_jd_write_file(const char *path, int (*fill)(struct letw_jd_out *o, void *data),
		       int (*stop)(void *data), void *data, struct letw_jd_file_err *e)
{
	struct letw_jd_out o = { .fd = -1 };
	char *hidden = hidden_of(path);
	int fd, err, close_err;

	memset(e, 0, sizeof(*e));
	/* Named by our pid: the supervisor removes it should we die before
	 * the rename (replace_file.h). */
	err = hidden ? letw_temp_path(hidden, &e->tmp) : -ENOMEM;
	if (err) {
		free(hidden);
		e->step = "name";
		return err;
	}
	free(hidden);
	/* A fresh name nobody can guess: the directory may be a /tmp that
	 * others write to, and a link planted there is never followed. */
	fd = letw_create_temp(e->tmp);
	if (fd < 0) {
		/* Not ours to remove: the name may be another's file. */
		e->step = "create";
		return fd;
	}
	e->step = "write";
	err = letw_jd_out_init(&o, fd);
	o.stop = stop;
	o.stop_data = data;
	if (!err)
		err = fill(&o, data);
	/* Always: it flushes the buffer and frees it. Its error, when there
	 * is one, is the failed write's own errno (ENOSPC...): said rather
	 * than what a record writer may have returned in consequence. */
	close_err = letw_jd_out_close(&o);
	if (close_err)
		err = close_err;
	if (close(fd) != 0 && !err)
		err = -errno;
	/* The last moment a SIGTERM can still leave the old dump in place. */
	if (!err && stop && stop(data))
		err = -EINTR;
	if (!err) {
		/* A new file under the final name: the process's placeholder
		 * stays mapped (its inode lives on), perf inject opens the
		 * new one. */
		e->step = "rename";
		err = letw_replace_file(e->tmp, path);
		if (err > 0) {
			e->kept = err;
			err = 0;
		}
	}
	if (err)
		unlink(e->tmp);
	return err;
}
