/* SPDX-License-Identifier: MIT */
/*
 * The sink classes' parameters and output directory, checked when a
 * component is initialised: each error is a cause appended to the
 * component's error chain, for babeltrace2 and the CLI to print.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "replace_file.h"
#include "sink_common.h"

/* access(W_OK) says yes to root for any directory, /proc's and /sys's
 * included, where no file can be made: that was found only after the
 * whole trace was read. A file made says it before: an unnamed one
 * (O_TMPFILE: nothing to remove, whatever happens next), else, whatever
 * the reason (EOPNOTSUPP: /proc, /sys, some network or FUSE filesystems,
 * which may answer with any errno; EISDIR: a kernel without O_TMPFILE;
 * EACCES: then the next fails the same), a temporary name made and
 * removed (replace_file.h: the CLI's supervisor removes it should we die
 * in between), whose failure is the one said. */
static int probe_dir(bt_self_component *self, const char *dir)
{
	char *probe, *tmp = NULL;
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	probe = g_build_filename(dir, ".letw-probe", NULL);
	fd = letw_temp_path(probe, &tmp);
	if (!fd)
		fd = letw_create_temp(tmp);
	g_free(probe);
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
		free(tmp);
		return 0;
	}
	free(tmp);
	BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
		"cannot create files in output directory `%s`: %s", dir, strerror(-fd));
	return -1;
}

/* How much the longest path a sink writes under its output directory adds
 * to it: /pidns-INO/.jit-PID.dump.tmp.PID.XXXXXX, its numbers at their
 * widest (perfmap's perf-PID.map is shorter). */
static size_t longest_below(void)
{
	return (size_t)snprintf(NULL, 0, "/pidns-%llu/.jit-%lld.dump.tmp.%ld.XXXXXX",
				ULLONG_MAX, LLONG_MIN, (long)getpid());
}

int letw_sink_output_dir(struct letw_sink *s, const char *dir)
{
	bt_self_component *self = s->self;
	char *meta;
	int is_trace;
	struct stat st;

	/* Said before anything is made or read: a file under it failed
	 * with "File name too long" only when written, after the whole
	 * trace was read. */
	if (strlen(dir) + longest_below() >= PATH_MAX) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"output directory `%s` is too long (%zu bytes): the paths of the files written in it (DIR/pidns-INO/.jit-PID.dump.tmp.PID.XXXXXX, up to %zu bytes more) would be longer than PATH_MAX (%d)",
			dir, strlen(dir), longest_below(), PATH_MAX);
		return -1;
	}

	/* Kept for letw_sink_fini() to take back those the run wrote
	 * nothing into (a trace that did not open left them, empty). */
	if (letw_made_dirs_note_missing(&s->made, dir)) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self, "out of memory");
		return -1;
	}
	/* glib's mkdir -p: an existing path that is not a directory is
	 * ENOTDIR (a hand-written one took EEXIST for success). Whether
	 * files can be made in it is probe_dir()'s, last: access(W_OK)
	 * here said yes to root for /proc. */
	if (g_mkdir_with_parents(dir, 0755) != 0) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"cannot create output directory `%s`: %s", dir, strerror(errno));
		return -1;
	}
	/* A link another user planted at the name (DIR/<chunk> in a shared,
	 * sticky directory: an audit's root run wrote into the directory it
	 * pointed to) is not followed, as the kernel's protected_symlinks
	 * would not follow it there; the caller's own links and root's are. */
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != 0 &&
	    st.st_uid != geteuid()) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"output directory `%s` is a link of another user's (uid %u): not followed",
			dir, (unsigned)st.st_uid);
		return -1;
	}
	meta = g_build_filename(dir, "metadata", NULL);
	is_trace = g_file_test(meta, G_FILE_TEST_EXISTS);
	g_free(meta);
	if (is_trace) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"output directory `%s` is a CTF trace's (it holds `metadata`): its files would be read as damaged streams",
			dir);
		return -1;
	}
	/* What an earlier writer killed while it wrote left (babeltrace2
	 * catches SIGINT only; SIGTERM, SIGHUP and SIGKILL end it with no
	 * supervisor to clean up): best effort, a live writer's file stays. */
	(void)letw_remove_stale_temps_in(dir);
	return probe_dir(self, dir);
}

/* key's value in params: 1 with *v, 0 when absent, -1 after saying that
 * it is not of type (what: the type as a user writes it). */
static int param_of(bt_self_component *self, const bt_value *params, const char *key,
		    bt_value_type type, const char *what, const bt_value **v)
{
	*v = params && bt_value_is_map(params) ?
		bt_value_map_borrow_entry_value_const(params, key) : NULL;
	if (!*v)
		return 0;
	if (bt_value_get_type(*v) != type) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"parameter `%s` must be %s", key, what);
		return -1;
	}
	return 1;
}

int letw_param_string(bt_self_component *self, const bt_value *params,
		      const char *key, const char **out)
{
	const bt_value *v;
	int r = param_of(self, params, key, BT_VALUE_TYPE_STRING, "a string", &v);

	if (r > 0)
		*out = bt_value_string_get(v);
	return r < 0 ? -1 : 0;
}

int letw_param_path(bt_self_component *self, const bt_value *params,
		    const char *key, const char **out)
{
	const char *v = NULL;

	if (letw_param_string(self, params, key, &v))
		return -1;
	/* "" named no file: the report took it for one in the current
	 * directory and failed to rename its finished file to it only after
	 * reading the whole trace; the output directory said "Invalid
	 * argument". */
	if (v && !*v) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"parameter `%s` is an empty path (omit it for the default)", key);
		return -1;
	}
	if (v)
		*out = v;
	return 0;
}

int letw_param_bool(bt_self_component *self, const bt_value *params,
		    const char *key, int *out)
{
	const bt_value *v;
	int r = param_of(self, params, key, BT_VALUE_TYPE_BOOL, "a boolean (yes/no)", &v);

	if (r > 0)
		*out = bt_value_bool_get(v) == BT_TRUE;
	return r < 0 ? -1 : 0;
}

struct check_ctx {
	const char *const *allowed;
	const char *bad;
};

static bt_value_map_foreach_entry_const_func_status
check_key(const char *key, const bt_value *v, void *data)
{
	struct check_ctx *c = data;
	const char *const *a;

	for (a = c->allowed; *a; a++)
		if (strcmp(*a, key) == 0)
			return BT_VALUE_MAP_FOREACH_ENTRY_CONST_FUNC_STATUS_OK;
	c->bad = key;
	return BT_VALUE_MAP_FOREACH_ENTRY_CONST_FUNC_STATUS_INTERRUPT;
}

int letw_params_check(bt_self_component *self, const bt_value *params,
		      const char *const *allowed)
{
	struct check_ctx c = { allowed, NULL };

	if (!params || !bt_value_is_map(params))
		return 0;
	bt_value_map_foreach_entry_const(params, check_key, &c);
	if (c.bad) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(self,
			"unknown parameter `%s`", c.bad);
		return -1;
	}
	return 0;
}
