/* SPDX-License-Identifier: MIT */
/* The threads of this process by name (/proc/self/task/TID/comm): the
 * library's threads name themselves once they run (letw-control,
 * letw-reclaim), which tests find and count this way. */
#ifndef LETW_TEST_TASK_NAMES_H
#define LETW_TEST_TASK_NAMES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

/* How many threads are named want; the first one's tid in *tid (when
 * not NULL and one is found). */
static inline int tasks_named(const char *want, long *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char path[300], name[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue; /* the thread has exited */
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
		if (strcmp(name, want))
			continue;
		if (!n++ && tid)
			*tid = strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return n;
}

#endif /* LETW_TEST_TASK_NAMES_H */
