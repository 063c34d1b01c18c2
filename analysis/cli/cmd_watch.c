/* SPDX-License-Identifier: MIT */
/*
 * `watch`: give every trace chunk of a rotating session its own rundown.
 *
 * A small daemon on liblttng-ctl's notification API: for each session it
 * finds (lttng_list_sessions, refreshed every second) it registers a trigger
 * on the session-rotation-ongoing condition with a notify action, and
 * subscribes to the condition. When a session's rotation begins, the new
 * chunk is already the one being written, so regenerating the session's
 * statedump then makes each traced process write a capture-state pass into
 * the new chunk. Triggers are named lttng-etw-watch.<pid>.<n> and
 * unregistered on SIGINT/SIGTERM, when their session vanishes, and on every
 * error path: the daemon never leaves a registration behind.
 *
 * Single-threaded: lttng_notification_channel_has_pending_notification
 * never blocks, so the loop polls it every POLL_MS between signal checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "cli.h"

#define POLL_MS 50
#define REFRESH_MS 1000

struct watched {
	char *session;
	struct lttng_condition *cond;
	struct lttng_trigger *trigger;
	int seen; /* in the last session list */
};

struct watch {
	struct lttng_notification_channel *chan;
	struct watched *v;
	int n, cap;
	unsigned next_id;
	const char *const *only; /* --session names, or NULL: every session */
	int nonly;
	int verbose;
};

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	quit = sig;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL); /* a signal cuts it short: fine */
}

static void drop(struct watch *w, int i)
{
	struct watched *x = &w->v[i];

	if (x->cond)
		(void)lttng_notification_channel_unsubscribe(w->chan, x->cond);
	if (x->trigger) {
		int ret = lttng_unregister_trigger(x->trigger);

		if (ret < 0)
			letw_err("watch: cannot unregister the trigger of `%s`: %s",
				 x->session, lttng_strerror(ret));
		lttng_trigger_destroy(x->trigger);
	}
	lttng_condition_destroy(x->cond);
	free(x->session);
	w->v[i] = w->v[--w->n];
}

static int add(struct watch *w, const char *session)
{
	struct lttng_action *notify = lttng_action_notify_create();
	struct watched x = { .session = strdup(session) };
	char name[64];
	int ret;

	if (w->n == w->cap) {
		int ncap = w->cap ? w->cap * 2 : 8;
		struct watched *nv = realloc(w->v, (size_t)ncap * sizeof(*nv));

		if (!nv)
			goto nomem;
		w->v = nv;
		w->cap = ncap;
	}
	x.cond = lttng_condition_session_rotation_ongoing_create();
	if (!notify || !x.session || !x.cond ||
	    lttng_condition_session_rotation_set_session_name(x.cond, session) !=
		    LTTNG_CONDITION_STATUS_OK ||
	    !(x.trigger = lttng_trigger_create(x.cond, notify)))
		goto nomem;
	snprintf(name, sizeof(name), "lttng-etw-watch.%d.%u", (int)getpid(), w->next_id++);
	ret = lttng_register_trigger_with_name(x.trigger, name);
	if (ret != LTTNG_OK) {
		letw_err("watch: cannot register a rotation trigger for `%s`: %s",
			 session, lttng_strerror(-ret));
		lttng_trigger_destroy(x.trigger);
		x.trigger = NULL;
		goto fail;
	}
	if (lttng_notification_channel_subscribe(w->chan, x.cond) !=
	    LTTNG_NOTIFICATION_CHANNEL_STATUS_OK) {
		letw_err("watch: cannot subscribe to the rotations of `%s`", session);
		(void)lttng_unregister_trigger(x.trigger);
		lttng_trigger_destroy(x.trigger);
		x.trigger = NULL;
		goto fail;
	}
	lttng_action_destroy(notify);
	x.seen = 1;
	w->v[w->n++] = x;
	if (w->verbose)
		letw_note("watch: watching the rotations of `%s`", session);
	return 0;
nomem:
	letw_err("out of memory");
fail:
	lttng_action_destroy(notify);
	lttng_condition_destroy(x.cond);
	free(x.session);
	return -1;
}

static int wanted(const struct watch *w, const char *session)
{
	if (!w->nonly)
		return 1;
	for (int i = 0; i < w->nonly; i++)
		if (!strcmp(w->only[i], session))
			return 1;
	return 0;
}

/* Watch new sessions, forget vanished ones. */
static int refresh(struct watch *w)
{
	char **names = NULL;
	int n = letw_lttng_sessions(&names), i, k;

	if (n < 0)
		return -1;
	for (i = 0; i < w->n; i++)
		w->v[i].seen = 0;
	for (k = 0; k < n; k++) {
		for (i = 0; i < w->n && strcmp(w->v[i].session, names[k]); i++)
			;
		if (i < w->n)
			w->v[i].seen = 1;
		else if (wanted(w, names[k]))
			(void)add(w, names[k]);
		free(names[k]);
	}
	free(names);
	for (i = w->n - 1; i >= 0; i--)
		if (!w->v[i].seen)
			drop(w, i);
	return 0;
}

static void on_rotation(struct watch *w, struct lttng_notification *nt)
{
	const struct lttng_condition *c = lttng_notification_get_condition(nt);
	const struct lttng_evaluation *e = lttng_notification_get_evaluation(nt);
	const char *session = NULL;
	uint64_t id = 0;
	int ret;

	if (!c || lttng_condition_get_type(c) != LTTNG_CONDITION_TYPE_SESSION_ROTATION_ONGOING ||
	    lttng_condition_session_rotation_get_session_name(c, &session) !=
		    LTTNG_CONDITION_STATUS_OK)
		return;
	if (e)
		(void)lttng_evaluation_session_rotation_get_id(e, &id);
	/* The new chunk is the one being written: the passes land there.
	 * `lttng destroy` and `lttng stop` rotate too, into no new chunk:
	 * the session is then gone or stopped, and nothing is to be done. */
	ret = lttng_regenerate_statedump(session);
	if (ret == 0)
		printf("session `%s`: rotation %llu began, statedump regenerated\n",
		       session, (unsigned long long)id);
	else if (ret != -LTTNG_ERR_SESS_NOT_FOUND && ret != -LTTNG_ERR_SESSION_NOT_STARTED &&
		 ret != -LTTNG_ERR_NO_SESSION)
		letw_err("watch: cannot regenerate the statedump of `%s`: %s", session,
			 lttng_strerror(ret));
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s watch [--session NAME]... [-v]\n"
		"\n"
		"Run until SIGINT/SIGTERM: whenever a rotation of a watched session begins\n"
		"(`lttng rotate`, or a rotation schedule), regenerate that session's\n"
		"statedump, so every lttng-etw process writes a rundown pass into the new\n"
		"trace chunk and each chunk can be symbolized on its own. Watches every\n"
		"session (new ones within a second), or only the --session ones.\n"
		"\n"
		"  -s, --session NAME  watch this session (repeatable)\n"
		"  -v, --verbose       say which sessions are watched\n"
		"  -h, --help\n", letw_prog);
}

int letw_cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct watch w = { 0 };
	const char **only = NULL, **no;
	struct sigaction sa = { .sa_handler = on_signal };
	long since_refresh = REFRESH_MS;
	int c, failed = 0;

	while ((c = getopt_long(argc, argv, "s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			no = realloc(only, (size_t)(w.nonly + 1) * sizeof(*no));
			if (!no) {
				free(only);
				return LETW_EXIT_ERROR;
			}
			only = no;
			only[w.nonly++] = optarg;
			break;
		case 'v': w.verbose = 1; break;
		case 'h': usage(stdout); free(only); return LETW_EXIT_OK;
		default: usage(stderr); free(only); return LETW_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		free(only);
		return LETW_EXIT_USAGE;
	}
	w.only = only;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	w.chan = lttng_notification_channel_create(lttng_session_daemon_notification_endpoint);
	if (!w.chan) {
		letw_err("watch: cannot open a notification channel to lttng-sessiond");
		free(only);
		return LETW_EXIT_ERROR;
	}
	while (!quit) {
		bool pending = false;

		if (since_refresh >= REFRESH_MS) {
			if (refresh(&w)) {
				failed = 1;
				break;
			}
			since_refresh = 0;
		}
		if (lttng_notification_channel_has_pending_notification(w.chan, &pending) !=
		    LTTNG_NOTIFICATION_CHANNEL_STATUS_OK) {
			letw_err("watch: the notification channel to lttng-sessiond broke");
			failed = 1;
			break;
		}
		if (pending) {
			struct lttng_notification *nt = NULL;

			if (lttng_notification_channel_get_next_notification(w.chan, &nt) ==
				    LTTNG_NOTIFICATION_CHANNEL_STATUS_OK && nt) {
				on_rotation(&w, nt);
				lttng_notification_destroy(nt);
			}
			continue;
		}
		sleep_ms(POLL_MS);
		since_refresh += POLL_MS;
	}
	while (w.n)
		drop(&w, w.n - 1);
	free(w.v);
	lttng_notification_channel_destroy(w.chan);
	free(only);
	if (quit && w.verbose)
		letw_note("watch: stopped by signal %d", (int)quit);
	return failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
}
