/* SPDX-License-Identifier: MIT */
/* Is another `lttng-etw watch` running (watch_peer.h)? */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "cli.h"
#include "readerproc.h"
#include "watch_peer.h"

#define TAG "lttng-etw-watch."

/* The start time of process pid in clock ticks since boot (/proc/PID/stat,
 * field 22): with the pid, it names one process of this boot whatever its
 * binary is called or runs under (a renamed copy, valgrind: both escaped
 * the command-line test this replaces). 0 when it cannot be read (no
 * /proc, hidepid); -1 for a zombie (an exited watch not yet reaped) or a
 * process gone since the caller saw it. */
static long long start_ticks(pid_t pid)
{
	struct letw_child_stat cs;
	int ret = letw_proc_stat(pid, &cs);

	/* Gone since the caller's kill(pid, 0) (not hidden by hidepid,
	 * where the process still exists): no peer, not an unknown one. */
	if (ret == -ENOENT && kill(pid, 0) != 0 && errno == ESRCH)
		return -1;
	if (ret || cs.start_ticks > LLONG_MAX)
		return 0;
	return cs.state == 'Z' ? -1 : (long long)cs.start_ticks;
}

int letw_watch_tag(char *tag, size_t len)
{
	struct timespec ts;
	long long t = start_ticks(getpid());

	clock_gettime(CLOCK_REALTIME, &ts);
	/* The realtime part keeps the names of two runs apart where the
	 * start time cannot be read (0). */
	return snprintf(tag, len, TAG "%d-%llx-%lld", (int)getpid(),
			(unsigned long long)ts.tv_sec * 1000000000ull +
				(unsigned long long)ts.tv_nsec,
			t > 0 ? t : 0) < (int)len ? 0 : -ENAMETOOLONG;
}

/* The watch in a trigger name of ours (letw_watch_tag()): its pid and start
 * time, or 0. A name without the start time (a watch from before it was
 * in the name) cannot tell its watch from a process that reused the pid:
 * no peer. */
static pid_t tag_pid(const char *name, long long *start)
{
	char *end;
	long v;

	if (!name || strncmp(name, TAG, strlen(TAG)) != 0)
		return 0;
	errno = 0;
	v = strtol(name + strlen(TAG), &end, 10);
	if (errno || *end != '-' || v <= 0 || v > 0x7fffffff)
		return 0;
	(void)strtoull(end + 1, &end, 16);
	if (*end != '-')
		return 0;
	*start = strtoll(end + 1, &end, 10);
	return errno || *end != '.' || *start < 0 ? 0 : (pid_t)v;
}

/* The watch that named its triggers with (pid, start) is still running:
 * the pid exists and started at that tick. One whose start cannot be read
 * (hidepid, another user's under a restricted /proc), or that could not
 * read its own, is taken for alive if it exists. A watch in another pid
 * namespace is not found: its pid names another process here (started at
 * another tick), or none. */
static int watch_alive(pid_t pid, long long start)
{
	long long now;

	if (kill(pid, 0) != 0 && errno != EPERM)
		return 0;
	now = start_ticks(pid);
	return now >= 0 && (!now || !start || now == start);
}

int letw_watch_wanted(const char *const *only, int nonly, const char *session)
{
	if (!nonly)
		return 1;
	for (int i = 0; i < nonly; i++)
		if (!strcmp(only[i], session))
			return 1;
	return 0;
}

/* Calls fn on each trigger of lttng-sessiond (its name, NULL when it has
 * none) until fn returns non-zero, which is returned; 0 after them all, or
 * -EIO when they cannot be listed. */
static int each_trigger(int (*fn)(const struct lttng_trigger *t, const char *name, void *arg),
			void *arg)
{
	struct lttng_triggers *all = NULL;
	unsigned int n = 0;
	int ret = 0;

	if (lttng_list_triggers(&all) != LTTNG_OK || !all)
		return -EIO;
	if (lttng_triggers_get_count(all, &n) != LTTNG_TRIGGER_STATUS_OK)
		n = 0;
	for (unsigned int i = 0; i < n && !ret; i++) {
		const struct lttng_trigger *t = lttng_triggers_get_at_index(all, i);
		const char *name = NULL;

		if (t && lttng_trigger_get_name(t, &name) != LTTNG_TRIGGER_STATUS_OK)
			name = NULL;
		if (t)
			ret = fn(t, name, arg);
	}
	lttng_triggers_destroy(all);
	return ret;
}

struct peer_query {
	const char *const *only;
	int nonly;
	pid_t self, *peer;
	char **session;
};

static int is_peer(const struct lttng_trigger *t, const char *name, void *arg)
{
	struct peer_query *q = arg;
	const struct lttng_condition *c = lttng_trigger_get_const_condition(t);
	const char *s = NULL;
	long long start = 0;
	pid_t pid = tag_pid(name, &start);

	if (!c || !pid || pid == q->self ||
	    lttng_condition_session_rotation_get_session_name(c, &s) != LTTNG_CONDITION_STATUS_OK ||
	    !s || !letw_watch_wanted(q->only, q->nonly, s) || !watch_alive(pid, start))
		return 0;
	if (!(*q->session = strdup(s)))
		return -ENOMEM;
	*q->peer = pid;
	return 1;
}

int letw_watch_peer(const char *const *only, int nonly, pid_t self, pid_t *peer,
		    char **session)
{
	struct peer_query q = { only, nonly, self, peer, session };

	return each_trigger(is_peer, &q);
}

int letw_watch_refuse_peer(const char *const *only, int nonly, int back)
{
	pid_t peer = 0;
	char *ps = NULL;
	int p = letw_watch_peer(only, nonly, getpid(), &peer, &ps);

	if (p == 1 && back) {
		letw_err("watch: another `%s watch` (pid %d) started watching session `%s` on the new lttng-sessiond before this one came back: two would regenerate its statedump twice at each rotation (two passes a chunk); this one stops",
			 letw_prog, (int)peer, ps);
		free(ps);
		return -EEXIST;
	}
	if (p == 1) {
		letw_err("watch: another `%s watch` (pid %d) already watches session `%s`: a second one would regenerate its statedump again at each rotation (two passes a chunk); not started (stop pid %d first, or watch other sessions with --session)",
			 letw_prog, (int)peer, ps, (int)peer);
		free(ps);
		return -EEXIST;
	}
	if (p < 0)
		letw_note("watch: cannot list the triggers: another watch of the same sessions would go unnoticed");
	return 0;
}

/* Our triggers are named TAG.<n>: the '.' keeps a tag from matching
 * another that begins with it (pid 12 and pid 123 with the same time). */
static int has_tag(const struct lttng_trigger *t, const char *name, void *tag)
{
	size_t l = strlen(tag);

	(void)t;
	return name && !strncmp(name, tag, l) && name[l] == '.';
}

int letw_watch_tag_registered(const char *tag)
{
	return each_trigger(has_tag, (void *)tag);
}
