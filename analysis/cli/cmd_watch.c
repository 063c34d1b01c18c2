/* SPDX-License-Identifier: MIT */
/*
 * `watch`: give every trace chunk of a rotating session its own rundown.
 *
 * A small daemon on liblttng-ctl's notification API: for each session it
 * finds (lttng_list_sessions, refreshed every second) it registers a trigger
 * on the session-rotation-ongoing condition with a notify action (and one on
 * rotation-completed, see below), and subscribes to the conditions. When a session's rotation begins, the new
 * chunk is already the one being written, so regenerating the session's
 * statedump then makes each traced process write a capture-state pass into
 * the new chunk. Triggers are named after the watch (letw_watch_tag():
 * lttng-etw-watch.<pid>-<start ns, hex>-<start tick>.<n>), which is how
 * another watch of the same sessions is told (watch_peer.h).
 *
 * When a trigger may be unregistered (lttng-sessiond 2.13): unregistering a
 * session-rotation trigger does not remove it from the notification
 * thread's per-session trigger list (notification-thread-events.c; 2.14
 * fixed it with remove_trigger_from_session_trigger_list()). That list lives
 * as long as the session has channels, i.e. until the session is released,
 * which for a destroyed session that was ever rotated is after the
 * implicit rotation `lttng destroy` performs has completed. Any rotation
 * command the notification thread handles for the session after the
 * unregistration walks the freed trigger and the whole sessiond dies
 * (SIGSEGV in lttng_condition_get_type()). So a session's triggers go only
 * once the notification thread can no longer walk them:
 *  - the session left the session list (destroyed: no rotation can start
 *    any more) and no rotation of it is in progress: a second trigger, on
 *    rotation-completed, tells when the last one (the destroy's) is done;
 *    the ONGOING of that last rotation is queued before the session leaves
 *    the list, so one more refresh period passes before a vanished session
 *    with no rotation seen in progress is dropped;
 *  - and no session of that name exists again: the notification thread
 *    keys its per-session state by name, and a session created again under
 *    the name (a script's `lttng destroy S; lttng create S`) takes the
 *    registered triggers into its list. Dropping the gone session's
 *    triggers on its COMPLETED crashed sessiond at the new session's next
 *    rotation (an audit: 3 runs of 4). So a name must have stayed out of
 *    the list for two refreshes (the quarantine, >= 1 s), and the list is
 *    asked again right before the unregistration: a name back in it keeps
 *    its triggers, which serve the new session as they are (conditions
 *    match by name). What remains is a session of the name created in the
 *    milliseconds between that listing and the unregistration;
 *  - never while the session exists: on a signal (or a closed standard
 *    output) the triggers of sessions still listed are left registered
 *    (they only notify; the daemon says so; `lttng remove-trigger` is
 *    safe once `lttng destroy` of the session has returned). For the same
 *    reason a failed subscription keeps its registered trigger in the
 *    table, to go by the rule above.
 *
 * lttng-sessiond going away (stopped, crashed) takes its sessions and
 * every trigger with it: watch forgets its table (nothing to unregister or
 * leave), says so, and waits for a sessiond to come back, whose sessions
 * it then watches anew (sessiond_gone(), reconnect()). It used to exit 1
 * saying it left triggers registered that no longer existed. Another
 * watch started on the new sessiond before this one is back makes this
 * one exit 1, as it refuses to start beside one (reconnect()).
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
#include <unistd.h>

#include <lttng/lttng.h>

#include "cli.h"
#include "procs.h"
#include "watch_hold.h"
#include "watch_peer.h"
#include "watch_table.h"

#define POLL_MS 50
#define REFRESH_MS 1000
#define CAPTURE_TIMEOUT_S 5.0
#define LIST_REPLY_S 0.2
#define LIST_TOTAL_S 1.0
static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	quit = sig;
}

/* A process that polls (LETW_STATEDUMP=0, an lttng-ust without the
 * statedump hook) hears nothing of the regenerate: like `start` and
 * `snapshot`, send it a capture-state, so the new chunk gets its pass. */
/* The lttng-etw processes and their state, quickly: asked in turn,
 * serially, while the next rotation's notification waits, so a short bound
 * each and one for the listing (a stopped or busy one held it 5 s per
 * rotation, and the chunks then got no pass). A hook process that does
 * not answer is busy: its pass is under way. NULL after saying why. */
static struct letw_proc *list_quickly(int *n)
{
	return letw_procs_list(NULL, 0, n, 0, LIST_REPLY_S, letw_now_s() + LIST_TOTAL_S, 1);
}

/* Every polling process listed (traced by the session or not) gets a
 * capture-state for the new chunk; a busy one is not asked this time. */
static void capture_polling(const char *session, struct letw_proc *v, int n)
{
	int failed = letw_procs_capture_polling(v, n, CAPTURE_TIMEOUT_S,
						letw_now_s() + CAPTURE_TIMEOUT_S);

	if (failed)
		letw_err("watch: `%s`: %d polling process(es) got no capture-state for the new chunk",
			 session, failed);
}

/* Why a rotation of SESSION, whose listed processes are v, is held back,
 * or NULL (watch_hold.h). Only a size rotation can be a pass's: the
 * session's rotation size is asked for then only. */
static const char *held_back(const char *session, const struct watched *x,
			     const struct letw_proc *v, int n, char *reason, size_t len)
{
	double since = letw_now_s() - x->last_regen_s;
	uint64_t size = 0;

	if (since >= LETW_WATCH_OWN_PASS_BUSY_S || letw_lttng_rotation_size(session, &size) != 1)
		return NULL;
	return letw_watch_held_back(since, size, v, n, reason, len);
}

static void on_rotation(struct watch *w, struct lttng_notification *nt)
{
	const struct lttng_condition *c = lttng_notification_get_condition(nt);
	const struct lttng_evaluation *e = lttng_notification_get_evaluation(nt);
	const char *session = NULL;
	struct watched *x;
	enum lttng_condition_type type;
	struct letw_proc *v;
	uint64_t id = 0;
	int ret, n = 0;
	const char *why;
	char reason[256];

	if (!c || lttng_condition_session_rotation_get_session_name(c, &session) !=
			  LTTNG_CONDITION_STATUS_OK)
		return;
	type = lttng_condition_get_type(c);
	x = letw_wt_find(w, session);
	if (type == LTTNG_CONDITION_TYPE_SESSION_ROTATION_COMPLETED) {
		if (!x)
			return;
		x->rotating = 0;
		/* The notification thread handled its last command walking
		 * this session's triggers: a gone session's can go, once out
		 * of the list long enough (letw_wt_refresh()). */
		if (x->gone >= 2)
			(void)letw_wt_drop(w, (int)(x - w->v));
		return;
	}
	if (type != LTTNG_CONDITION_TYPE_SESSION_ROTATION_ONGOING)
		return;
	if (!e || lttng_evaluation_session_rotation_get_id(e, &id) !=
			  LTTNG_EVALUATION_STATUS_OK)
		e = NULL; /* no id: handled, as before */
	/* Each trigger on the condition notifies: an earlier watch's (a
	 * watch leaves its triggers registered, see letw_wt_leave()) doubled every
	 * ONGOING, so every chunk got two passes. One statedump per
	 * rotation: the ONGOING of the rotation under way is skipped (only
	 * while it is under way: a session of the same name created again
	 * counts its rotations from 0). */
	if (x && e && x->rotating && x->rotation_id == id)
		return;
	if (x) {
		x->rotating = 1;
		x->rotation_id = id;
	}
	v = list_quickly(&n);
	if (x && x->last_regen_s && (why = held_back(session, x, v, n, reason, sizeof(reason)))) {
		/* Its pass goes on into the new chunk; the next rotation
		 * that is not its own gets a pass again. */
		letw_err("watch: `%s`: rotation %llu began %s: not regenerating (%s)",
			 session, (unsigned long long)id, why, reason);
		free(v);
		return;
	}
	/* The new chunk is the one being written: the passes land there.
	 * `lttng destroy` and `lttng stop` rotate too, into no new chunk:
	 * the session is then gone or stopped, and nothing is to be done. */
	ret = letw_lttng_regenerate(session, 1);
	if (ret == 0) {
		if (x)
			x->last_regen_s = letw_now_s();
		if (letw_out_line("session `%s`: rotation %llu began, statedump regenerated",
				  session, (unsigned long long)id))
			w->out_failed = 1; /* said at exit (main.c) */
		if (v)
			capture_polling(session, v, n);
	} else if (ret != -LTTNG_ERR_SESS_NOT_FOUND && ret != -LTTNG_ERR_SESSION_NOT_STARTED &&
		 ret != -LTTNG_ERR_NO_SESSION) {
		letw_err("watch: cannot regenerate the statedump of `%s`: %s", session,
			 lttng_strerror(ret));
	}
	free(v);
}

/* Handle whatever notification is already queued; 0, or -1 if the channel
 * broke. */
static int drain(struct watch *w)
{
	for (;;) {
		struct lttng_notification *nt = NULL;
		bool pending = false;

		if (lttng_notification_channel_has_pending_notification(w->chan, &pending) !=
		    LTTNG_NOTIFICATION_CHANNEL_STATUS_OK)
			return -1;
		if (!pending)
			return 0;
		if (lttng_notification_channel_get_next_notification(w->chan, &nt) ==
			    LTTNG_NOTIFICATION_CHANNEL_STATUS_OK && nt) {
			on_rotation(w, nt);
			lttng_notification_destroy(nt);
		}
	}
}

/* How long a broken channel waits for lttng-sessiond to be seen gone (it
 * closes its clients before it removes its socket) before it asks whether
 * the one answering is a new daemon, and in all. */
#define GONE_WAIT_MS 2000
#define GONE_GIVE_UP_MS 10000

/*
 * The notification channel or the session list failed: if lttng-sessiond
 * went away, its sessions and every trigger went with it (a new one
 * starts with none: triggers are not saved). Nothing is left to
 * unregister or to leave: the table is forgotten, the channel closed, and
 * watch waits for a sessiond (main loop), whose sessions it then watches
 * anew. Returns 1 then, 0 if sessiond still answers (a real failure).
 */
static int sessiond_gone(struct watch *w)
{
	int ours = 0;

	for (int i = 0; i < w->n; i++)
		ours |= w->v[i].trigger[0] || w->v[i].trigger[1];
	for (long waited = 0; lttng_session_daemon_alive() == 1; waited += POLL_MS) {
		/* Still answering after GONE_WAIT_MS: a new daemon already
		 * (ours went with the old one: none of our triggers is there),
		 * or the old one shutting down slowly (many sessions, a
		 * consumer flushing: waited for up to GONE_GIVE_UP_MS), or a
		 * channel that broke under a live daemon, an error. */
		if (waited >= GONE_WAIT_MS && ours && letw_watch_tag_registered(w->tag) == 0)
			break;
		if (waited >= GONE_GIVE_UP_MS)
			return 0;
		letw_sleep_ms(POLL_MS);
	}
	while (w->n)
		letw_wt_forget(w, w->n - 1);
	lttng_notification_channel_destroy(w->chan);
	w->chan = NULL;
	letw_note("watch: lttng-sessiond went away, its sessions and this watch's triggers with it (none is left registered); waiting for an lttng-sessiond to watch again");
	return 1;
}

/* Back to a sessiond (sessiond_gone): 0 once the channel is open;
 * -ENOTCONN while no sessiond answers, -ECONNREFUSED when one does but
 * refuses a notification channel, or -EEXIST (said) when another watch of
 * these sessions started there meanwhile: it found none of our triggers
 * (they died with the old sessiond), so it is for this one to step back,
 * before it registers any. */
static int reconnect(struct watch *w)
{
	int ret = lttng_session_daemon_alive();

	if (ret != 1)
		return -ENOTCONN;
	w->chan = lttng_notification_channel_create(lttng_session_daemon_notification_endpoint);
	if (!w->chan)
		return -ECONNREFUSED;
	ret = letw_watch_refuse_peer(w->only, w->nonly, 1);
	if (ret) {
		lttng_notification_channel_destroy(w->chan);
		w->chan = NULL;
		return ret;
	}
	letw_note("watch: lttng-sessiond is back: watching again");
	return 0;
}

#define EXIT_WAIT_MS 10000

/*
 * On exit: sessions destroyed meanwhile are dropped once their last
 * rotation has completed (waiting for its COMPLETED notification, at most
 * EXIT_WAIT_MS: a rotation that fails never sends one); sessions that
 * still exist keep their triggers (top comment).
 */
static void finish(struct watch *w, int channel_ok)
{
	long waited = 0;

	if (channel_ok) {
		/* Two refreshes: a session seen vanishing now gets the delay
		 * its last ONGOING needs (see letw_wt_refresh()). */
		for (int r = 0; r < 2; r++) {
			int ret = letw_wt_refresh(w);

			/* The lister no longer says why (it returns -errno):
			 * said here, as before, then the exit goes on. */
			if (ret) {
				letw_err("watch: cannot list the sessions of lttng-sessiond: %s",
					 strerror(-ret));
				break;
			}
			if (drain(w))
				channel_ok = 0;
			if (!r)
				letw_sleep_ms(POLL_MS);
		}
	}
	for (;;) {
		int waiting = 0;

		for (int i = w->n - 1; i >= 0; i--) {
			if (w->v[i].seen)
				letw_wt_leave(w, i);
			else if (w->v[i].rotating)
				waiting = 1;
			else if (!letw_wt_drop(w, i))
				letw_wt_leave(w, i); /* its name is back */
		}
		if (!waiting || !channel_ok || waited >= EXIT_WAIT_MS)
			break;
		letw_sleep_ms(POLL_MS);
		waited += POLL_MS;
		if (drain(w))
			channel_ok = 0;
	}
	while (w->n) /* rotations that never completed: the sessions are gone */
		if (!letw_wt_drop(w, w->n - 1))
			letw_wt_leave(w, w->n - 1);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s watch [--session NAME]... [-v]\n"
		"\n"
		"Run until SIGINT/SIGTERM/SIGHUP (its way to stop: exit status 0, as a\n"
		"service manager's stop expects), or until standard output is closed\n"
		"(exit status 1): whenever a rotation of a watched session begins\n"
		"(`lttng rotate`, or a rotation schedule), regenerate that session's\n"
		"statedump, so every lttng-etw process writes a rundown pass into the new\n"
		"trace chunk and each chunk can be symbolized on its own. Watches every\n"
		"session (new ones within a second), or only the --session ones. If\n"
		"lttng-sessiond goes away (its sessions and triggers with it), watch says so\n"
		"and waits for one to come back, then watches its sessions anew. Refuses to\n"
		"start (exit status 1) while another lttng-etw watch watches one of its\n"
		"sessions (two would give each chunk two passes), and exits 1 if one started\n"
		"on a new lttng-sessiond before this one watched it again.\n"
		"\n"
		"  -s, --session NAME  watch this session (repeatable)\n"
		"  -v, --verbose       say which sessions are watched\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 stopped by SIGINT, SIGTERM or SIGHUP, 1 error (said on\n"
		"stderr: no notification channel, or it broke while lttng-sessiond still\n"
		"answers; a trigger not registered; standard output closed; another watch\n"
		"of its sessions), 2 usage error.\n"
		"lttng-sessiond going away is no error: watch waits for the next one.\n", letw_prog);
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
	struct sigaction sa = { .sa_handler = on_signal }, old;
	long since_refresh = REFRESH_MS;
	int c, ret, failed = 0, announced = 0, last_reconnect = 0;

	while ((c = getopt_long(argc, argv, "s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			no = realloc(only, (size_t)(w.nonly + 1) * sizeof(*no));
			if (!no) {
				letw_err("out of memory");
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
		letw_err("watch: unexpected argument `%s`", argv[optind]);
		usage(stderr);
		free(only);
		return LETW_EXIT_USAGE;
	}
	w.only = only;
	if ((ret = letw_watch_tag(w.tag, sizeof(w.tag)))) {
		letw_err("watch: cannot name its triggers: %s", strerror(-ret));
		free(only);
		return LETW_EXIT_ERROR;
	}
	sigemptyset(&sa.sa_mask);
	letw_catch_unless_ignored(SIGINT, &sa, &old);
	letw_catch_unless_ignored(SIGTERM, &sa, &old);
	letw_catch_unless_ignored(SIGHUP, &sa, &old);
	w.chan = lttng_notification_channel_create(lttng_session_daemon_notification_endpoint);
	if (!w.chan) {
		letw_err("watch: cannot open a notification channel to lttng-sessiond");
		free(only);
		return LETW_EXIT_ERROR;
	}
	/* Before any trigger of ours (watch_peer.h). */
	if (letw_watch_refuse_peer(w.only, w.nonly, 0)) {
		lttng_notification_channel_destroy(w.chan);
		free(only);
		return LETW_EXIT_ERROR;
	}
	while (!quit && !w.out_failed) {
		if (!w.chan) { /* sessiond went away: tried every refresh */
			if (since_refresh >= REFRESH_MS) {
				ret = reconnect(&w);
				if (ret == -EEXIST) {
					failed = 1;
					break;
				}
				/* Said once per cause, not every second: no
				 * sessiond yet is what watch waits for. */
				if (ret && ret != -ENOTCONN && ret != last_reconnect)
					letw_err("watch: lttng-sessiond answers, but no notification channel to it opens (%s): trying again every second",
						 strerror(-ret));
				last_reconnect = ret;
				since_refresh = ret ? 0 : REFRESH_MS;
				continue;
			}
			letw_sleep_ms(POLL_MS);
			since_refresh += POLL_MS;
			continue;
		}
		if (since_refresh >= REFRESH_MS) {
			if ((ret = letw_wt_refresh(&w))) {
				if (sessiond_gone(&w))
					continue;
				letw_err("watch: cannot list the sessions of lttng-sessiond: %s",
					 strerror(-ret));
				failed = 1;
				break;
			}
			since_refresh = 0;
			/* A daemon started before its session is fine, but
			 * silence would look like a typo's effect. */
			for (int i = 0; !announced && i < w.nonly; i++)
				if (!letw_wt_find(&w, w.only[i]))
					letw_note("watch: no session `%s` yet: watched once it exists",
						  w.only[i]);
			announced = 1;
		}
		if (drain(&w)) {
			if (sessiond_gone(&w))
				continue;
			letw_err("watch: the notification channel to lttng-sessiond broke");
			failed = 1;
			break;
		}
		letw_sleep_ms(POLL_MS);
		since_refresh += POLL_MS;
	}
	finish(&w, !failed && w.chan);
	free(w.v);
	if (w.chan)
		lttng_notification_channel_destroy(w.chan);
	free(only);
	if (quit && w.verbose)
		letw_note("watch: stopped by signal %d", (int)quit);
	return failed || w.reg_failed || w.out_failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
}
