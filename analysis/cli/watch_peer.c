/* SPDX-License-Identifier: MIT */
/* Is another `lttng-etw watch` running (watch_peer.h)? */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "cli.h"
#include "watch_peer.h"

#define TAG "lttng-etw-watch."

/* pid is alive and runs `lttng-etw watch`: its command line's first word
 * ends in lttng-etw and its second is watch. A pid reused by another
 * program is no peer; one whose command line we cannot read (hidepid, or
 * another user's under a restricted /proc) is taken for alive if it
 * exists. A watch in another pid namespace is not found at all: its pid
 * names another process here, or none. */
static int watch_alive(pid_t pid)
{
	char path[64], buf[4096], *arg1;
	ssize_t n;
	size_t l0;
	int fd;

	if (kill(pid, 0) != 0 && errno != EPERM)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0; /* a zombie, or exiting */
	buf[n] = 0;
	l0 = strlen(buf);
	if ((ssize_t)l0 + 1 >= n)
		return 0;
	arg1 = buf + l0 + 1;
	return l0 >= strlen("lttng-etw") && !strcmp(buf + l0 - strlen("lttng-etw"), "lttng-etw") &&
	       !strcmp(arg1, "watch");
}

/* The watch pid in a trigger name of ours, or 0. */
static pid_t tag_pid(const char *name)
{
	char *end;
	long v;

	if (!name || strncmp(name, TAG, strlen(TAG)) != 0)
		return 0;
	errno = 0;
	v = strtol(name + strlen(TAG), &end, 10);
	return errno || *end != '-' || v <= 0 || v > 0x7fffffff ? 0 : (pid_t)v;
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
	pid_t pid = tag_pid(name);

	if (!c || !pid || pid == q->self ||
	    lttng_condition_session_rotation_get_session_name(c, &s) != LTTNG_CONDITION_STATUS_OK ||
	    !s || !letw_watch_wanted(q->only, q->nonly, s) || !watch_alive(pid))
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

int letw_watch_refuse_peer(const char *const *only, int nonly)
{
	pid_t peer = 0;
	char *ps = NULL;
	int p = letw_watch_peer(only, nonly, getpid(), &peer, &ps);

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

static int has_tag(const struct lttng_trigger *t, const char *name, void *tag)
{
	(void)t;
	return name && !strncmp(name, tag, strlen(tag));
}

int letw_watch_tag_registered(const char *tag)
{
	return each_trigger(has_tag, (void *)tag);
}
