/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "grow.h"
#include "traces.h"

/* Appends s (malloc()ed, NULL: out of memory), which t then owns. */
static int push(struct letw_traces *t, char *s)
{
	if (!s)
		return -1;
	if (letw_grow_small((void **)&t->dir, &t->cap, t->n + 1, sizeof(*t->dir))) {
		free(s);
		return -1;
	}
	t->dir[t->n++] = s;
	return 0;
}

static struct letw_traces *walk; /* nftw has no user pointer */
static int walk_failed;
/* The walk runs over the resolved root (see letw_traces_find); paths are
 * shown and kept as the user wrote them: walk_root (its trailing slashes
 * dropped) in place of the first walk_skip characters. */
static const char *walk_root;
static size_t walk_root_len, walk_skip;

/* PATH (under the resolved root) as the user would write it, malloc()ed
 * (NULL: out of memory). */
static char *shown_path(const char *path, size_t len)
{
	char *s;

	if (len < walk_skip)
		len = walk_skip;
	if (asprintf(&s, "%.*s%.*s", (int)walk_root_len, walk_root,
		     (int)(len - walk_skip), path + walk_skip) < 0)
		return NULL;
	return s;
}

static int on_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	size_t len;

	(void)st;
	/* nftw skips what it cannot read without a word: a trace under an
	 * unreadable directory would just be "not found". */
	if (flag == FTW_DNR || flag == FTW_NS) {
		struct stat tmp;
		int e = flag == FTW_NS ? (lstat(path, &tmp) != 0 ? errno : EACCES) :
			(access(path, R_OK | X_OK) != 0 ? errno : EACCES);
		char *shown = shown_path(path, strlen(path));

		letw_err("cannot read `%s`: %s", shown ? shown : path, strerror(e));
		free(shown);
		walk_failed = 1;
		return 1;
	}
	/* A link named metadata too (FTW_PHYS reports it, not its target):
	 * the pre-checks then say what it leads to (nothing, a device, ...)
	 * rather than "no trace found". */
	if ((flag != FTW_F && flag != FTW_SL && flag != FTW_SLN) ||
	    strcmp(path + ftw->base, "metadata") != 0)
		return 0;
	len = (size_t)ftw->base;
	return push(walk, shown_path(path, len > 1 ? len - 1 : len));
}

int letw_traces_find(const char *root, struct letw_traces *t)
{
	struct stat st;
	char *real;
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
	/* nftw's FTW_PHYS (no link followed: no loop, no trace read twice)
	 * applies to the root too: a TRACE that is a link to a directory
	 * would be the link alone, holding nothing. Walk where it leads. */
	real = realpath(root, NULL);
	if (!real) {
		letw_err("cannot resolve the trace `%s`: %s", root, strerror(errno));
		return -1;
	}
	walk = t;
	walk_failed = 0;
	walk_root = root;
	walk_root_len = strlen(root);
	while (walk_root_len > 0 && root[walk_root_len - 1] == '/')
		walk_root_len--; /* to none when real is "/": paths start with it */
	walk_skip = strcmp(real, "/") == 0 ? 0 : strlen(real);
	errno = 0;
	r = nftw(real, on_entry, 16, FTW_PHYS);
	walk = NULL;
	free(real);
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

int letw_trace_is_live(const char *trace)
{
	return strncmp(trace, "net://", 6) == 0 || strncmp(trace, "net4://", 7) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An archived chunk's index: LTTng names it BEGIN-END-INDEX (each
 * YYYYMMDDTHHMMSS+HHMM), or -1 for another name. */
static long long archive_index(const char *rel)
{
	const char *name = letw_trace_chunk_name(rel), *dash = strrchr(name, '-');
	char *end;
	long long v;

	if (!dash || dash == name || !isdigit((unsigned char)dash[1]))
		return -1;
	v = strtoll(dash + 1, &end, 10);
	return *end ? -1 : v;
}

/* Names x and y carrying the numbers nx and ny (-1: none), in the order
 * of their numbers, by name when one does not say: chunks and snapshots
 * in the order they were recorded, which the names' order is not ("...-10"
 * sorts before "...-9"). */
static int by_number(const char *x, long long nx, const char *y, long long ny)
{
	if (nx >= 0 && ny >= 0 && nx != ny)
		return (nx > ny) - (nx < ny);
	return strcmp(x, y);
}

/* Archived chunks by index: two rotations in one second give names of
 * the same times (an audit's merged dump named 10 of 84,305 samples
 * wrong with chunk 10 read before chunk 9). */
static int cmp_archive(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	return by_number(x, archive_index(x), y, archive_index(y));
}

/* "archives/NAME", malloc()ed (NULL: out of memory). */
static char *archived(const char *name)
{
	char *s;

	return asprintf(&s, "archives/%s", name) < 0 ? NULL : s;
}

const char *letw_trace_chunk_name(const char *rel)
{
	const char *slash = strrchr(rel, '/');

	return slash ? slash + 1 : rel;
}

/*
 * 1 when the directory NAME in the directory AT holds a `metadata` file at any depth
 * (what letw_traces_find looks for, links below NAME not followed either),
 * 0 when it holds none, -1 when part of it cannot be read (it may hold
 * one). nofollow: NAME itself is not followed when it is a link.
 */
static int holds_trace(int at, const char *name, int nofollow)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
				     (nofollow ? O_NOFOLLOW : 0));
	int found = 0, failed = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	errno = 0;
	while (!found && (de = readdir(d))) {
		unsigned char type = de->d_type;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
				failed = 1;
				errno = 0;
				continue;
			}
			type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (type != DT_DIR)
			found = strcmp(de->d_name, "metadata") == 0;
		else
			switch (holds_trace(dirfd(d), de->d_name, 1)) {
			case 1: found = 1; break;
			case -1: failed = 1; break;
			}
		errno = 0;
	}
	if (!found && errno)
		failed = 1;
	closedir(d);
	return found ? 1 : failed ? -1 : 0;
}

/*
 * LTTng names the chunk a rotated session records into BEGIN-N in the
 * session's directory (BEGIN: YYYYMMDDTHHMMSS+HHMM, N: the chunk's index),
 * and moves it to archives/BEGIN-END-N once it is over (next rotation,
 * destroy). 1 when NAME reads as such a current chunk.
 */
static int current_chunk_name(const char *name)
{
	static const char pat[] = "DDDDDDDDTDDDDDDZDDDD-";
	size_t i;

	/* A name shorter than pat stops at its NUL, which fits nothing. */
	for (i = 0; pat[i]; i++) {
		char c = name[i];

		if (pat[i] == 'D' ? !isdigit((unsigned char)c) :
		    pat[i] == 'Z' ? c != '+' && c != '-' : c != pat[i])
			return 0;
	}
	if (!name[i])
		return 0;
	for (; name[i]; i++)
		if (!isdigit((unsigned char)name[i]))
			return 0;
	return 1;
}

/* LTTng names a snapshot's output NAME-YYYYMMDD-HHMMSS-N (the session's
 * snapshot count N last): N, or -1 for another name. */
static long long snapshot_number(const char *name)
{
	size_t l = strlen(name), i = l, k;

	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	if (i == l || i < 18 || name[i - 1] != '-' || l - i > 18)
		return -1;
	k = i - 1; /* the '-' before N */
	for (size_t j = k - 15; j < k; j++)
		if (j != k - 7 && !isdigit((unsigned char)name[j]))
			return -1;
	if (name[k - 7] != '-' || name[k - 16] != '-')
		return -1;
	return strtoll(name + i, NULL, 10);
}

static int cmp_snapshot(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	return by_number(x, snapshot_number(x), y, snapshot_number(y));
}

/*
 * Two or more snapshots of one session, and no other trace, under ROOT:
 * read together they are one trace (one UUID) whose packets repeat and
 * overlap, and every pass came out "overwritten" several times over. What
 * holds no trace is no reason to merge them: files and directories without
 * a `metadata` file anywhere, such as the CLI's own output written there
 * (`report SN -o SN/report.txt`, `perfmap SN -o SN/maps`), which turned the
 * next run's verdict around. Another trace in ROOT leaves it a plain trace
 * (said), unreadable entries too (letw_traces_find then says why).
 */
static int snapshot_chunks(const char *root, struct letw_traces *t)
{
	struct dirent *de;
	DIR *d = opendir(root);
	char *other = NULL; /* a trace in ROOT that is no snapshot */
	int plain = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;
		int held;

		if (de->d_name[0] == '.')
			continue;
		/* ROOT itself a trace. */
		if (!strcmp(de->d_name, "metadata")) {
			plain = 1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, 0) != 0) {
			plain = 1;
			break;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		held = holds_trace(dirfd(d), de->d_name, 0);
		if (held == 0)
			continue;
		if (held < 0) {
			plain = 1;
			break;
		}
		if (snapshot_number(de->d_name) < 0) {
			/* Said below when ROOT holds snapshots after all. */
			if (!other && !(other = strdup(de->d_name)))
				goto oom;
			continue;
		}
		if (push(t, strdup(de->d_name)))
			goto oom;
	}
	closedir(d);
	if (!plain && other && t->n >= 2)
		letw_note("`%s` holds %zu snapshots and `%s`, a trace that is none: all read as one trace (the snapshots' packets overlap)",
			  root, t->n, other);
	free(other);
	if (plain || other || t->n < 2) {
		letw_traces_fini(t);
		return 0;
	}
	qsort(t->dir, t->n, sizeof(*t->dir), cmp_snapshot);
	return 0;
oom:
	closedir(d);
	free(other);
	letw_traces_fini(t);
	letw_err("out of memory");
	return -1;
}

/*
 * A rotated session stopped (or still recording) but not destroyed: the
 * chunk it records into is not in archives/ yet but beside it, as
 * ROOT/BEGIN-N. Append it (they, should a sessiond have left several)
 * after the archived chunks. Other directories there are no chunk of the
 * session: the CLI's own output (`perfmap TRACE -o TRACE/maps`), or, when
 * they hold a trace, something to say we leave unread. Files are skipped.
 */
static int current_chunks(const char *root, struct letw_traces *t)
{
	size_t first = t->n;
	struct dirent *de;
	DIR *d = opendir(root);
	int ret = -1;

	if (!d) {
		letw_err("cannot read `%s`: %s", root, strerror(errno));
		return -1;
	}
	errno = 0;
	while ((de = readdir(d))) {
		struct stat st;
		int held;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "archives"))
			goto next;
		if (fstatat(dirfd(d), de->d_name, &st, 0) != 0) {
			letw_err("cannot read `%s/%s`: %s", root, de->d_name, strerror(errno));
			goto out;
		}
		if (!S_ISDIR(st.st_mode))
			goto next;
		held = holds_trace(dirfd(d), de->d_name, 0);
		if (!current_chunk_name(de->d_name)) {
			if (held)
				letw_note("`%s/%s` holds a trace but is no chunk of the rotated session (those are archives/* and the current chunk, BEGIN-INDEX): not read",
					  root, de->d_name);
		} else if (!held) {
			letw_note("`%s/%s`, the session's current chunk, holds no trace yet (no `metadata`): skipped",
				  root, de->d_name);
		} else if (push(t, strdup(de->d_name))) {
			/* Partly unreadable too (held < 0): letw_traces_find
			 * then says what. */
			letw_err("out of memory");
			goto out;
		}
next:
		errno = 0;
	}
	if (errno) {
		letw_err("cannot read `%s`: %s", root, strerror(errno));
		goto out;
	}
	qsort(t->dir + first, t->n - first, sizeof(*t->dir), cmp_str);
	ret = 0;
out:
	closedir(d);
	return ret;
}

int letw_trace_chunks(const char *root, struct letw_traces *t)
{
	struct dirent *de;
	char *dir = NULL;
	DIR *d;
	int ret = -1;

	memset(t, 0, sizeof(*t));
	if (letw_trace_is_live(root))
		return 0;
	if (asprintf(&dir, "%s/archives", root) < 0) {
		letw_err("out of memory");
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		/* No archives/: snapshots, or a plain trace (letw_traces_find
		 * judges it). */
		int e = errno;

		ret = e == ENOENT || e == ENOTDIR ? 0 : -1;
		/* A TRACE the user may not search fails here first: name it,
		 * not an archives/ it may not even hold. */
		if (ret && e == EACCES && access(root, R_OK | X_OK) != 0)
			letw_err("cannot read `%s`: %s", root, strerror(e));
		else if (ret)
			letw_err("cannot read `%s`: %s", dir, strerror(e));
		free(dir);
		return ret ? ret : snapshot_chunks(root, t);
	}
	errno = 0;
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) != 0) {
			letw_err("cannot read `%s/%s`: %s", dir, de->d_name, strerror(errno));
			goto out;
		}
		/* Every entry is a chunk LTTng wrote: anything else is not
		 * ours to skip without a word. */
		if (!S_ISDIR(st.st_mode)) {
			letw_err("`%s/%s` is not a trace chunk (a directory): a rotated session's archives/ holds chunks only",
				 dir, de->d_name);
			goto out;
		}
		if (push(t, archived(de->d_name))) {
			letw_err("out of memory");
			goto out;
		}
		errno = 0;
	}
	if (errno) {
		letw_err("cannot read `%s`: %s", dir, strerror(errno));
		goto out;
	}
	if (t->n)
		qsort(t->dir, t->n, sizeof(*t->dir), cmp_archive);
	ret = current_chunks(root, t);
out:
	closedir(d);
	free(dir);
	if (ret)
		letw_traces_fini(t);
	return ret;
}
