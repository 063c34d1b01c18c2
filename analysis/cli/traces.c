/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "traces.h"

static struct letw_traces *walk; /* nftw has no user pointer */
static int walk_failed;

static int on_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	char **nv;
	size_t len;

	(void)st;
	/* nftw skips what it cannot read without a word: a trace under an
	 * unreadable directory would just be "not found". */
	if (flag == FTW_DNR || flag == FTW_NS) {
		struct stat tmp;
		int e = flag == FTW_NS ? (lstat(path, &tmp) != 0 ? errno : EACCES) :
			(access(path, R_OK | X_OK) != 0 ? errno : EACCES);

		letw_err("cannot read `%s`: %s", path, strerror(e));
		walk_failed = 1;
		return 1;
	}
	if (flag != FTW_F || strcmp(path + ftw->base, "metadata") != 0)
		return 0;
	if (walk->n == walk->cap) {
		walk->cap = walk->cap ? walk->cap * 2 : 8;
		nv = realloc(walk->dir, walk->cap * sizeof(*nv));
		if (!nv)
			return -1;
		walk->dir = nv;
	}
	len = (size_t)ftw->base;
	walk->dir[walk->n] = strndup(path, len > 1 ? len - 1 : len);
	return walk->dir[walk->n++] ? 0 : -1;
}

int letw_traces_find(const char *root, struct letw_traces *t)
{
	struct stat st;
	int r;

	memset(t, 0, sizeof(*t));
	if (stat(root, &st) != 0) {
		letw_err("cannot open the trace `%s`: %s", root, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		letw_err("`%s` is not a directory (expected an LTTng trace or session output directory)", root);
		return -1;
	}
	walk = t;
	walk_failed = 0;
	errno = 0;
	r = nftw(root, on_entry, 16, FTW_PHYS);
	walk = NULL;
	if (walk_failed)
		goto fail;
	if (r != 0) {
		letw_err("cannot scan `%s`: %s", root, strerror(errno ? errno : ENOMEM));
		goto fail;
	}
	if (!t->n) {
		letw_err("no CTF trace under `%s` (no `metadata` file found)", root);
		goto fail;
	}
	return 0;
fail:
	letw_traces_fini(t);
	return -1;
}

void letw_traces_fini(struct letw_traces *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->dir[i]);
	free(t->dir);
	memset(t, 0, sizeof(*t));
}
