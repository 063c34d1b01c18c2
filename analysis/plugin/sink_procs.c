/* SPDX-License-Identifier: MIT */
/*
 * Naming a sink's processes for its outputs: a process is its vpid in its
 * pid namespace (letw_sink_proc_of_ns() in sink_common.c keys them while
 * events are read); when a trace holds several namespaces, labels say which
 * and each namespace's files go into a pidns-INO directory of their own.
 * Called while writing the outputs, never per event.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace_file.h"
#include "sink_common.h"

#define LETW_LOG_SELF_COMP (s->self)
#include "log.h"

uint64_t letw_sink_proc_pidns(const struct letw_sink *s, int64_t key)
{
	uint32_t i = (uint32_t)((uint64_t)key >> 32);

	return i < s->npidns ? s->pidns[i] : 0;
}

const char *letw_sink_proc_label(const struct letw_sink *s, int64_t key,
				 char buf[LETW_PROC_LABEL_MAX])
{
	if (letw_sink_many_pidns(s))
		snprintf(buf, LETW_PROC_LABEL_MAX, "%lld (pid_ns %llu)",
			 (long long)letw_proc_vpid(key),
			 (unsigned long long)letw_sink_proc_pidns(s, key));
	else
		snprintf(buf, LETW_PROC_LABEL_MAX, "%lld", (long long)letw_proc_vpid(key));
	return buf;
}

/*
 * A pidns-INO directory found in place is used only if it is a directory
 * (not a symlink: lstat) of ours or root's: in an output directory others
 * can write to (a /tmp), another user's directory or link would have root
 * write its files wherever that user chose.
 */
static int pidns_dir_check(struct letw_sink *s, const char *dir)
{
	char why[PATH_MAX + 128];

	if (letw_own_dir_check(dir, why, sizeof(why))) {
		BT_COMP_LOGE_APPEND_CAUSE("%s", why);
		return -1;
	}
	return 0;
}

int letw_sink_proc_dir(struct letw_sink *s, int64_t key, const char *dir, char **out)
{
	int n;

	if (!letw_sink_many_pidns(s))
		n = asprintf(out, "%s", dir);
	else
		n = asprintf(out, "%s/pidns-%llu", dir,
			     (unsigned long long)letw_sink_proc_pidns(s, key));
	if (n < 0) {
		*out = NULL;
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return -ENOMEM;
	}
	if (letw_sink_many_pidns(s) && mkdir(*out, 0755) == 0) {
		/* Ours: taken back by letw_sink_fini() if the file meant for
		 * it is not written (a full disk, an interrupt). */
		if (letw_made_dirs_add(&s->made, *out)) {
			(void)rmdir(*out);
			BT_COMP_LOGE_APPEND_CAUSE("out of memory");
			free(*out);
			*out = NULL;
			return -ENOMEM;
		}
	} else if (letw_sink_many_pidns(s) && errno != EEXIST) {
		int e = errno;

		BT_COMP_LOGE_APPEND_CAUSE("cannot create `%s`: %s", *out, strerror(e));
		free(*out);
		*out = NULL;
		return -e;
	}
	if (letw_sink_many_pidns(s) && pidns_dir_check(s, *out)) {
		free(*out);
		*out = NULL;
		return -EPERM;
	}
	return 0;
}
