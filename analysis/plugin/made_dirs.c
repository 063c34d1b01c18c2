/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "made_dirs.h"

int letw_made_dirs_add(struct letw_made_dirs *m, const char *dir)
{
	if (!m->dir)
		m->dir = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(m->dir, g_strdup(dir));
	return 0;
}

int letw_made_dirs_note_missing(struct letw_made_dirs *m, const char *dir)
{
	char *p = g_strdup(dir);
	size_t len = strlen(p);
	struct stat st;

	/* "a/b//" is "a/b": noted once, not under both names. */
	while (len > 1 && p[len - 1] == '/')
		p[--len] = '\0';
	while (lstat(p, &st) != 0 && errno == ENOENT) {
		char *up;

		(void)letw_made_dirs_add(m, p);
		up = g_path_get_dirname(p);
		/* "." and "/" are their own parents: nothing above. */
		if (!strcmp(up, p)) {
			g_free(up);
			break;
		}
		g_free(p);
		p = up;
	}
	g_free(p);
	return 0;
}

static int is_pidns(const char *name)
{
	return strncmp(name, "pidns-", 6) == 0;
}

static int listed(const struct letw_made_dirs *had, const char *name)
{
	for (guint i = 0; had->dir && i < had->dir->len; i++)
		if (!strcmp(g_ptr_array_index(had->dir, i), name))
			return 1;
	return 0;
}

/* For each pidns-* entry of dir that is not in skip (NULL: none), fn. */
static int each_pidns(const char *dir, const struct letw_made_dirs *skip,
		      int (*fn)(struct letw_made_dirs *, const char *dir, const char *name),
		      struct letw_made_dirs *m)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return 0;
	while (!ret && (de = readdir(d)))
		if (is_pidns(de->d_name) && (!skip || !listed(skip, de->d_name)))
			ret = fn(m, dir, de->d_name);
	closedir(d);
	return ret;
}

static int add_name(struct letw_made_dirs *m, const char *dir, const char *name)
{
	(void)dir;
	return letw_made_dirs_add(m, name);
}

static int add_path(struct letw_made_dirs *m, const char *dir, const char *name)
{
	char *p;
	struct stat st;
	int ret;

	p = g_strdup_printf("%s/%s", dir, name);
	/* A link is no directory of ours: rmdir() would fail on it anyway. */
	ret = lstat(p, &st) == 0 && S_ISDIR(st.st_mode) ? letw_made_dirs_add(m, p) : 0;
	g_free(p);
	return ret;
}

int letw_made_dirs_subdirs(struct letw_made_dirs *had, const char *dir)
{
	return each_pidns(dir, NULL, add_name, had);
}

int letw_made_dirs_new_subdirs(struct letw_made_dirs *m, const char *dir,
			       const struct letw_made_dirs *had)
{
	return each_pidns(dir, had, add_path, m);
}

/* Longest first: a directory's path is longer than its parent's. */
static gint deeper_first(gconstpointer a, gconstpointer b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

void letw_made_dirs_take_back(struct letw_made_dirs *m)
{
	if (!m->dir)
		return;
	g_ptr_array_sort(m->dir, deeper_first);
	/* rmdir(2) removes only an empty directory: one the run wrote into,
	 * or that someone else filled meanwhile, stays. */
	for (guint i = 0; i < m->dir->len; i++)
		(void)rmdir(g_ptr_array_index(m->dir, i));
	letw_made_dirs_fini(m);
}

void letw_made_dirs_fini(struct letw_made_dirs *m)
{
	if (m->dir)
		g_ptr_array_unref(m->dir);
	m->dir = NULL;
}
