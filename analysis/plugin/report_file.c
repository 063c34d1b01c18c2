/* SPDX-License-Identifier: MIT */
/*
 * Where the report goes: a device or FIFO (or a link to one) is written in
 * place; a regular file is written aside, next to it, and put in its place
 * once the report is whole (a failed or interrupted read leaves it as it
 * was), through a symbolic link as a shell's `>` writes, keeping the
 * file's mode; never into a CTF trace's directory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "replace_file.h"
#include "report.h"

#define LETW_LOG_SELF_COMP (r->base.self)
#include "log.h"

/* The report is complete in tmp_path: make it output_path. */
int letw_report_put_in_place(struct letw_report *r)
{
	int err = letw_replace_file(r->tmp_path, r->output_path);

	if (err < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot rename `%s` to `%s`: %s", r->tmp_path,
					  r->output_path, strerror(-err));
		return -1; /* finalize removes tmp_path */
	}
	if (err > 0)
		BT_COMP_LOGW("%s is in place, but the file it replaced (now `%s`) cannot be removed: %s",
			     r->output_path, r->tmp_path, strerror(err));
	free(r->tmp_path);
	r->tmp_path = NULL;
	return 0;
}

/*
 * r->out on a new file in output_path's directory (same filesystem, for
 * the rename), hidden (src.ctf.fs skips dot files, should the directory
 * be the trace's), under a name nobody can guess or plant a link at.
 */
int letw_report_open_temp(struct letw_report *r, int probe)
{
	const char *slash = strrchr(r->output_path, '/');
	int dlen = slash ? (int)(slash - r->output_path + 1) : 0, fd, e;
	char *hidden;
	struct stat st;
	/* lstat: a link still here is another user's, not followed
	 * (letw_output_target): it is replaced, and what it names lends
	 * the new file neither its mode nor its owner (a re-audit: root's
	 * report became the link planter's, mode 0777). */
	int exists = lstat(r->output_path, &st) == 0 && S_ISREG(st.st_mode);

	/* As a shell's `>`: a file the caller may not write is not replaced
	 * (rename() asks only for the directory's permission). */
	if (exists && access(r->output_path, W_OK) != 0) {
		e = errno;
		BT_COMP_LOGE_APPEND_CAUSE("cannot write the report to `%s`: %s", r->output_path,
					  strerror(e));
		return -e;
	}
	/* Named with the writer's pid (letw_temp_path): a supervisor
	 * removes it should the writer die. */
	if (asprintf(&hidden, "%.*s.%s", dlen, r->output_path, r->output_path + dlen) < 0)
		hidden = NULL;
	fd = hidden ? letw_temp_path(hidden, &r->tmp_path) : -ENOMEM;
	if (fd) {
		free(hidden);
		r->tmp_path = NULL;
		BT_COMP_LOGE_APPEND_CAUSE("cannot write the report to `%s`: %s", r->output_path,
					  letw_temp_path_why(fd));
		return fd;
	}
	free(hidden);
	/* Once, when the component is made: what an earlier report to the
	 * same file left, killed while it wrote (babeltrace2 catches SIGINT
	 * only): best effort, a live writer's file stays. */
	if (probe)
		(void)letw_remove_stale_temps(r->tmp_path);
	fd = letw_create_temp(r->tmp_path);
	if (fd < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot create `%s` (to become `%s`): %s",
					  r->tmp_path, r->output_path, strerror(-fd));
		/* Not ours to remove: the name may be another's file. */
		free(r->tmp_path);
		r->tmp_path = NULL;
		return fd;
	}
	/* The new file keeps the old one's mode (and, made by root, its
	 * owner), as a file written through `>` does; best effort: the
	 * report is still whole without. */
	if (!probe && exists && (fchmod(fd, st.st_mode & 07777) != 0 ||
		       (geteuid() == 0 && fchown(fd, st.st_uid, st.st_gid) != 0)))
		BT_COMP_LOGW("%s: the new file does not keep the old one's mode or owner: %s",
			     r->output_path, strerror(errno));
	r->out = fdopen(fd, "w");
	if (!r->out) {
		e = errno;
		BT_COMP_LOGE_APPEND_CAUSE("cannot write `%s`: %s", r->tmp_path, strerror(e));
		close(fd);
		return -e; /* finalize removes tmp_path */
	}
	return 0;
}

/* output_path is a device, a FIFO or a link to one (/dev/stdout): the
 * report goes into it when written, in place (replace_file.h). */
static int open_direct(struct letw_report *r)
{
	/* O_APPEND: through /proc/self/fd/N (/dev/stdout) a regular file
	 * opens anew at offset 0, and would overwrite what the shell, or the
	 * report of a chunk before, wrote; devices and FIFOs ignore it. */
	int fd = open(r->output_path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_APPEND), e;

	if (fd < 0) {
		e = errno;
		BT_COMP_LOGE_APPEND_CAUSE("cannot open `%s`: %s", r->output_path, strerror(e));
		return -e;
	}
	r->out = fdopen(fd, "w");
	if (!r->out) {
		e = errno;
		BT_COMP_LOGE_APPEND_CAUSE("cannot write `%s`: %s", r->output_path, strerror(e));
		close(fd);
		return -e;
	}
	return 0;
}

/* In a CTF trace's directory (or its index/), or named `metadata`, the
 * report would replace one of the trace's files, or be read as a damaged
 * stream of it, or make its directory read as a trace: refused (the
 * sinks cannot know which trace the graph reads: any trace's). */
static int in_a_trace(struct letw_report *r, const char *path)
{
	gchar *base = g_path_get_basename(path), *dir = g_path_get_dirname(path);
	gchar *dbase = g_path_get_basename(dir), *up = g_path_get_dirname(dir);
	gchar *meta = g_build_filename(dir, "metadata", NULL);
	gchar *upmeta = g_build_filename(up, "metadata", NULL);
	int bad = 1;

	if (strcmp(base, "metadata") == 0)
		BT_COMP_LOGE_APPEND_CAUSE("will not write the report to `%s`: a file named `metadata` makes its directory read as a CTF trace",
					  r->output_path);
	else if (g_file_test(meta, G_FILE_TEST_EXISTS))
		BT_COMP_LOGE_APPEND_CAUSE("will not write the report to `%s`: `%s` is a CTF trace's directory (it holds `metadata`), whose files the report would replace or join",
					  r->output_path, dir);
	else if (strcmp(dbase, "index") == 0 && g_file_test(upmeta, G_FILE_TEST_EXISTS))
		BT_COMP_LOGE_APPEND_CAUSE("will not write the report to `%s`: `%s` holds the index files of the CTF trace in `%s`",
					  r->output_path, dir, up);
	else
		bad = 0;
	g_free(base);
	g_free(dir);
	g_free(dbase);
	g_free(up);
	g_free(meta);
	g_free(upmeta);
	return bad;
}

int letw_report_open_output(struct letw_report *r)
{
	int in_place = letw_output_in_place(r->output_path), e;
	char *target;

	if (in_place < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot write the report to `%s`: %s", r->output_path,
					  strerror(-in_place));
		return in_place;
	}
	if (in_place)
		return open_direct(r);
	target = letw_output_target(r->output_path);
	if (!target) {
		e = errno;
		BT_COMP_LOGE_APPEND_CAUSE("cannot write the report to `%s`: %s", r->output_path,
					  strerror(e));
		return -e;
	}
	if (in_a_trace(r, target)) {
		free(target);
		return -EINVAL;
	}
	/* From here on the file a link led to: it is what gets replaced. */
	free(r->output_path);
	r->output_path = target;
	/* Made and removed: the report can be written there. Kept open
	 * through the read, it outlived a reader that died. */
	e = letw_report_open_temp(r, 1);
	if (r->out)
		fclose(r->out);
	r->out = NULL;
	if (r->tmp_path)
		unlink(r->tmp_path);
	free(r->tmp_path);
	r->tmp_path = NULL;
	return e;
}
