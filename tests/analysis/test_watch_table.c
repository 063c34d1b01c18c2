/* SPDX-License-Identifier: MIT */
/* watch's session table (analysis/cli/watch_table.c) when lttng-sessiond's
 * session list cannot be had, and the name its triggers carry
 * (watch_peer.c): linked with both, the session lister stubbed (no
 * sessiond is asked). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli.h"
#include "watch_peer.h"
#include "watch_table.h"

const char *letw_prog = "test";
static int list_ret;
static const char *list_names[2];

void letw_err(const char *fmt, ...)
{
	(void)fmt;
}

void letw_note(const char *fmt, ...)
{
	(void)fmt;
}

/* list_ret < 0: the lister's error; else list_names[0..list_ret). */
int letw_lttng_sessions(char ***names)
{
	char **v;

	if (list_ret < 0)
		return list_ret;
	v = calloc((size_t)list_ret + 1, sizeof(*v));
	cr_assert_not_null(v);
	for (int i = 0; i < list_ret; i++)
		cr_assert_not_null(v[i] = strdup(list_names[i]));
	*names = v;
	return list_ret;
}

int letw_lttng_session_exists(const char *session)
{
	(void)session;
	return 1;
}

/* The caller says why it stops (or that sessiond went away) from the
 * errno: -1 said nothing of it. */
Test(watch_table, refresh_returns_the_listers_errno)
{
	static const int errs[] = { -ECONNREFUSED, -EPERM, -ENOMEM, -EIO };
	struct watch w = { 0 };

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		list_ret = errs[i];
		cr_expect_eq(letw_wt_refresh(&w), errs[i], "lister %d: refresh returned %d",
			     errs[i], letw_wt_refresh(&w));
	}
	cr_expect_eq(w.n, 0);
}

/* Sessions listed that are not wanted: nothing to register, 0. */
Test(watch_table, refresh_skips_unwanted_sessions)
{
	static const char *const only[] = { "wanted" };
	struct watch w = { .only = only, .nonly = 1 };

	list_names[0] = "other";
	list_names[1] = "another";
	list_ret = 2;
	cr_expect_eq(letw_wt_refresh(&w), 0);
	cr_expect_eq(w.n, 0);
	free(w.v);
}

/* The tag names this process by pid and start tick (/proc/self/stat
 * field 22), which the peer check compares: a renamed binary or valgrind
 * changes neither. */
Test(watch_table, tag_names_pid_and_start_tick)
{
	char tag[LETW_WATCH_TAG_MAX], buf[1024], want[64], *p;
	unsigned long long ns;
	long long ticks = -1;
	int pid = 0, field;
	FILE *f = fopen("/proc/self/stat", "r");

	cr_assert_not_null(f);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')') + 2;
	for (field = 3; field < 22; field++)
		p = strchr(p, ' ') + 1;
	cr_assert_eq(sscanf(p, "%lld", &ticks), 1);
	cr_assert_eq(letw_watch_tag(tag, sizeof(tag)), 0);
	cr_assert_eq(sscanf(tag, "lttng-etw-watch.%d-%llx-", &pid, &ns), 2, "tag %s", tag);
	cr_expect_eq(pid, (int)getpid());
	snprintf(want, sizeof(want), "-%lld", ticks);
	cr_expect(strlen(tag) > strlen(want) && !strcmp(tag + strlen(tag) - strlen(want), want),
		  "tag %s does not end in the start tick %lld", tag, ticks);
	cr_expect_eq(letw_watch_tag(tag, 20), -ENAMETOOLONG);
}
