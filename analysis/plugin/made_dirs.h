/* SPDX-License-Identifier: MIT */
/*
 * The directories a run made for its outputs, taken back when it wrote
 * nothing into them (it failed, was interrupted or stopped, or the trace
 * held nothing for them): a run leaves no empty directory of its own, and
 * never removes one it did not make or one that holds anything.
 */
#ifndef LETW_BT_MADE_DIRS_H
#define LETW_BT_MADE_DIRS_H

#include <glib.h>

/* Zero-initialised: empty (the array is made at the first note). */
struct letw_made_dirs {
	GPtrArray *dir; /* of g_malloc()ed paths, freed with it */
};

/* Note the directories a mkdir -p of dir is about to make (dir and its
 * missing parents: those not there now). 0 or -ENOMEM. */
int letw_made_dirs_note_missing(struct letw_made_dirs *m, const char *dir);

/* Note dir, made by the caller (a mkdir() that did not fail with
 * EEXIST). 0 (glib aborts when out of memory; -ENOMEM kept for the
 * callers' checks). */
int letw_made_dirs_add(struct letw_made_dirs *m, const char *dir);

/* Note the pidns-* subdirectories of dir that are not in had (the names
 * letw_made_dirs_subdirs() listed before the run): those a writer that
 * could not say so (it died by a signal) made. 0 or -ENOMEM. */
int letw_made_dirs_new_subdirs(struct letw_made_dirs *m, const char *dir,
			       const struct letw_made_dirs *had);

/* The names of the pidns-* subdirectories of dir now, into had (none
 * when dir is missing). 0 or -ENOMEM. */
int letw_made_dirs_subdirs(struct letw_made_dirs *had, const char *dir);

/* rmdir() each, deepest first: only an empty one goes. Then forgets
 * them. */
void letw_made_dirs_take_back(struct letw_made_dirs *m);

/* Forgets them, removing none. */
void letw_made_dirs_fini(struct letw_made_dirs *m);

#endif /* LETW_BT_MADE_DIRS_H */
