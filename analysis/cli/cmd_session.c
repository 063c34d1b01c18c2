/* SPDX-License-Identifier: MIT */
/*
 * `start`, `stop` and `snapshot`: LTTng session commands with the waits a
 * complete rundown needs (DESIGN §4, README "Which command runs which
 * pass").
 *
 * A process using lttng-etw answers each session's statedump (`lttng
 * start`, `lttng regenerate statedump`) with a pass into that session.
 * lttng-sessiond's command returns when every process's statedump callback
 * returned, which is before the end of a pass longer than the callback's
 * bound: so after the command we ask each process (control socket STATUS)
 * until it has no statedump pass queued or running. A process that polls
 * instead (LETW_STATEDUMP=0, or an lttng-ust without the hook) learns of a
 * start from the enabled state only and of nothing from a regenerate: it is
 * sent a capture-state where the statedump would not reach it.
 *
 * SIGINT, SIGTERM and SIGHUP end the waits (letw_catch_interrupts): no
 * last step (`lttng stop`, `lttng snapshot record`), one line on what is
 * left, exit 130 (they killed it unsaid, `stop` leaving the session active
 * with its DCEnd events on). Nothing done is undone: the passes asked for
 * go on, and disabling the events (maybe the user's) or stopping a started
 * session would cut them. A signal during the last call, which
 * liblttng-ctl does not cut short, lets it finish: then said, exit 130. A
 * second signal kills the command at once (a hung sessiond), after the
 * note letw_session_kill_note() prepared of what it may leave.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl.h"
#include "procs.h"
#include "session_left.h"

/* How long listing waits for one process before taking it for busy. */
#define LIST_REPLY_S 1.0

static int parse(int argc, char **argv, const char *cmd, struct session_opts *o,
		 void (*usage)(FILE *))
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "pid", required_argument, NULL, 'p' },
		{ "channel", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t t;
	pid_t *np;
	int c;

	memset(o, 0, sizeof(*o));
	o->timeout_s = 30;
	while ((c = getopt_long(argc, argv, "t:p:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (letw_parse_u64(optarg, &t) || !t || t > 86400) {
				letw_err("%s: bad --timeout `%s` (seconds, 1..86400)", cmd, optarg);
				return LETW_EXIT_USAGE;
			}
			o->timeout_s = (double)t;
			break;
		case 'p':
			np = realloc(o->pids, (size_t)(o->npids + 1) * sizeof(*np));
			if (!np) {
				letw_err("out of memory");
				return LETW_EXIT_ERROR;
			}
			o->pids = np;
			if (letw_parse_pid(optarg, &np[o->npids])) {
				letw_err("%s: bad --pid `%s`", cmd, optarg);
				return LETW_EXIT_USAGE;
			}
			o->npids++;
			break;
		case 'c': o->channel = optarg; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return LETW_EXIT_USAGE;
		}
	}
	/* Only stop enables events (the DCEnd ones), in a channel. */
	if (o->channel && strcmp(cmd, "stop") != 0) {
		letw_err("%s: --channel is for stop only", cmd);
		usage(stderr);
		return LETW_EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		letw_err("%s: expected exactly one SESSION", cmd);
		usage(stderr);
		return LETW_EXIT_USAGE;
	}
	o->session = argv[optind];
	return 0;
}

/*
 * What every command starts with: its options, then the processes' state
 * before the session is touched. Returns -1 to go on (*o and *v filled),
 * else the exit status (--help, usage error, no memory).
 */
static int begin(int argc, char **argv, const char *cmd, void (*usage)(FILE *),
		 int dcend, struct session_opts *o, struct letw_proc **v, int *n)
{
	int ret = parse(argc, argv, cmd, o, usage);

	if (ret) {
		free(o->pids);
		return ret < 0 ? LETW_EXIT_OK : ret;
	}
	letw_catch_interrupts();
	letw_set_kill_note("%s: killed by a second signal: nothing changed in session `%s`",
			   cmd, o->session);
	/* Before anything is asked of it: sessiond refuses a command on a
	 * session that does not exist with "Fatal error of the session
	 * daemon" for some (enable-event) and liblttng-ctl prints a PERROR. */
	int enabled = 0, snapshot = 0;

	ret = letw_lttng_session_state(o->session, &enabled, &snapshot);
	if (ret <= 0) {
		if (!ret)
			letw_err("%s: no tracing session named `%s` (`lttng list` shows them)",
				 cmd, o->session);
		free(o->pids);
		return LETW_EXIT_ERROR;
	}
	/* Refused before anything is changed, so bad input loses nothing:
	 * stop would enable the DCEnd events of a session that then runs
	 * them at its start, snapshot regenerate into a session it cannot
	 * snapshot, and a mistyped --channel made stop fail its enable and
	 * stop the session without its DCEnd. */
	if (!strcmp(cmd, "stop") && !enabled) {
		letw_err("stop: session `%s` is not started: no DCEnd pass to run; nothing changed",
			 o->session);
		free(o->pids);
		return LETW_EXIT_ERROR;
	}
	if (!strcmp(cmd, "snapshot") && !snapshot) {
		letw_err("snapshot: session `%s` is not a snapshot session (`lttng create --snapshot`); nothing changed",
			 o->session);
		free(o->pids);
		return LETW_EXIT_ERROR;
	}
	if (o->channel && (ret = letw_lttng_channel_exists(o->session, o->channel)) != 1) {
		if (!ret)
			letw_err("stop: session `%s` has no user-space channel `%s` (a started session takes no new one); nothing changed",
				 o->session, o->channel);
		free(o->pids);
		return LETW_EXIT_ERROR;
	}
	/* One deadline for every phase: --timeout is the user's bound on
	 * the command, which used to give it to each process in turn. */
	o->deadline = letw_now_s() + o->timeout_s;
	*v = letw_procs_list(o->pids, o->npids, n, dcend, LIST_REPLY_S, o->deadline, 0);
	if (!*v || letw_interrupted) {
		ret = *v ? letw_session_interrupted(cmd, o, LEFT_NOTHING, 0) : LETW_EXIT_ERROR;
		free(*v);
		free(o->pids);
		return ret;
	}
	/* A pid the user named that is not an lttng-etw process (a typo, one
	 * that exited), or any listed process that answered with an error,
	 * is said and ignored; the command still runs for the others but
	 * cannot say it did what was asked. */
	for (int i = 0; i < *n; i++)
		o->missing += (o->npids && !(*v)[i].alive) || (*v)[i].unreachable;
	return -1;
}

/* Said when none of the --pid processes answered (a mistyped pid, or all
 * gone): start and stop then refuse before anything changes, since the
 * rerun with the right pid would find the session already started, or
 * stopped without its DCEnd pass. */
static void none_answered(const char *cmd, const char *session, const char *state,
			  const char *plain)
{
	char *q = letw_shell_quote(session);

	letw_err("%s: none of the --pid processes answered: nothing changed, `%s` %s (rerun with the right --pid, or %s: `lttng %s %s`)",
		 cmd, session, state, plain, cmd, q ? q : session);
	free(q);
}

static void start_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s start SESSION [--timeout S] [--pid PID]...\n"
		"\n"
		"`lttng start SESSION`, then wait until every lttng-etw process finished the\n"
		"DCStart rundown it runs into SESSION (each process answers the session's\n"
		"statedump with a pass into that session; `lttng start` alone returns before\n"
		"a long pass ends). A process that polls instead (LETW_STATEDUMP=0) is sent a\n"
		"capture-state once the session has started. A session with no enabled rule\n"
		"matching a DCStart event (letw_rundown:*dcstart*; DCEnd events only, runtime\n"
		"events only) gets no DCStart pass: it is started, and nothing is waited for.\n"
		"\n"
		"  -t, --timeout S  wait at most S seconds in all (default 30); a process that\n"
		"                   does not answer (in a long pass, or stopped) is waited for,\n"
		"                   then named, and the exit status is 1\n"
		"  -p, --pid PID    only these processes (default: all lttng-etw processes); a\n"
		"                   PID that is not an lttng-etw process is said, ignored, and\n"
		"                   makes the exit status 1; when none answers, the session\n"
		"                   is not started\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 started and every process's pass waited for, 1 otherwise\n"
		"(said on stderr), 2 usage error, 130 interrupted by SIGINT, SIGTERM or\n"
		"SIGHUP (what is left, and how to go on, is said).\n", letw_prog);
}

static int start_capture(struct letw_proc *p, const struct letw_ctl_reply *r, double timeout_s)
{
	(void)r;
	printf("pid %d: polls: capture-state\n", (int)p->pid);
	return letw_proc_capture(p, 0, 0, timeout_s);
}

int letw_cmd_start(int argc, char **argv)
{
	struct session_opts o;
	struct letw_proc *v;
	int n = 0, i, ret, failed = 0, started = 0, no_dcstart;

	ret = begin(argc, argv, "start", start_usage, 0, &o, &v, &n);
	if (ret >= 0)
		return ret;
	if (o.npids && o.missing >= n) {
		none_answered("start", o.session, "not started", "start it without waiting");
		failed = 1;
		goto out;
	}
	/* A session that enables none of the DCStart events (DCEnd events
	 * only, or the runtime's loads only) gets no DCStart pass from any
	 * process. Nothing to wait for, and "ran no
	 * DCStart pass" would call a session set up as its user wanted a
	 * failure. When it cannot tell (said), the wait runs as for any
	 * session. */
	no_dcstart = letw_lttng_may_record_dcstart(o.session) == 0;
	letw_session_kill_note("start", &o);
	if (letw_lttng_start(o.session)) {
		failed = 1;
		goto out;
	}
	started = 1;
	if (no_dcstart) {
		letw_note("start: session `%s` records no DCStart rundown (no enabled rule matches letw_rundown:*dcstart*): started, no pass to wait for",
			  o.session);
		goto out;
	}
	/* A polling process runs a pass when its rundown events switch on,
	 * which says nothing of which sessions were started by then: a
	 * second session started at the same moment (its mask read before
	 * the first one's start) took the first one's pass for its own and
	 * had none (3 of 8 runs). mask_before cannot tell: every polling
	 * process gets a capture-state, after `lttng start` returned, so its
	 * pass is one the session was there for; the session may then hold
	 * two DCStart passes. */
	for (i = 0; i < n && !letw_interrupted; i++) {
		if (!v[i].alive || v[i].hook)
			continue;
		failed |= start_capture(&v[i], NULL, letw_left_s(o.deadline, o.timeout_s)) != 0;
	}
	failed |= letw_procs_wait_passes(v, n, 0, o.timeout_s, o.deadline, 1.0, o.npids > 0,
			      start_capture) != 0;
out:
	ret = failed || o.missing ? LETW_EXIT_ERROR : LETW_EXIT_OK;
	if (letw_interrupted)
		ret = letw_session_interrupted("start", &o, started ? LEFT_STARTED : LEFT_NOTHING, 0);
	free(v);
	free(o.pids);
	return ret;
}

static void stop_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s stop SESSION [--timeout S] [--pid PID]... [--channel NAME]\n"
		"\n"
		"Run a DCEnd rundown into SESSION in every traced lttng-etw process, then\n"
		"`lttng stop`: enables `letw_rundown:*dcend*` in the running SESSION,\n"
		"regenerates its statedump (each process then runs a DCEnd pass into SESSION\n"
		"only: the session gained the DCEnd keyword), waits until each process is done\n"
		"(or exits, or the timeout passes), then stops the session. If the DCEnd events\n"
		"were already enabled, the statedump runs a capture-state of both flavours;\n"
		"when the session's own rules record every DCEnd event (`letw_rundown:*`, with\n"
		"or without a filter; with --channel, that channel's), none is added: they\n"
		"and their filters decide what is recorded.\n"
		"A session not started or a --channel it lacks is refused with nothing\n"
		"changed; if enabling the events or the regenerate fails, SESSION is left\n"
		"running (stopping it would lose its DCEnd for good): exit status 1.\n"
		"\n"
		"  -t, --timeout S    wait at most S seconds in all (default 30); a process\n"
		"                     that does not answer (in a long pass, or stopped) is\n"
		"                     waited for; at the timeout the session is stopped\n"
		"                     anyway, the late processes named, and the exit status is 1\n"
		"  -p, --pid PID      only these processes (pids as this shell sees them); the\n"
		"                     dcend events are then enabled with a filter on their\n"
		"                     vpids; a PID that is not an lttng-etw process is said,\n"
		"                     ignored, and makes the exit status 1\n"
		"  -c, --channel NAME channel of SESSION to enable the dcend events in\n"
		"                     (default: the channel holding the session's\n"
		"                     letw_rundown events, else its other letw_ events,\n"
		"                     else its only channel, else channel0)\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 every process's DCEnd pass waited for and SESSION stopped, 1\n"
		"otherwise (said on stderr), 2 usage error, 130 interrupted by SIGINT, SIGTERM\n"
		"or SIGHUP (what is left, and how to go on, is said).\n", letw_prog);
}

static int stop_capture(struct letw_proc *p, const struct letw_ctl_reply *r, double timeout_s)
{
	if (!(r->rundown_mask & LETW_KW_RUNDOWN_END))
		return 0;
	return letw_proc_capture(p, r->rundown_mask & ~LETW_KW_RUNDOWN_START, 1, timeout_s);
}

int letw_cmd_stop(int argc, char **argv)
{
	struct session_opts o;
	struct letw_proc *v;
	char *filter = NULL, *chan = NULL;
	const char *channel;
	int n = 0, i, ret, oom, failed = 0, asked = 0, status = -1;

	ret = begin(argc, argv, "stop", stop_usage, 1, &o, &v, &n);
	if (ret >= 0)
		return ret;
	if (o.npids && !(filter = letw_procs_vpid_filter(v, n, &oom))) {
		if (oom) {
			letw_err("out of memory");
			free(o.pids);
			free(v);
			return LETW_EXIT_ERROR;
		}
		none_answered("stop", o.session, "left running",
			      "stop it without a DCEnd rundown");
		failed = 1;
		goto out;
	}
	/* The dcend events go where the session's rundown events are: a
	 * channel cannot be added to a started session, and a blocking or
	 * large channel chosen for the rundown should serve DCEnd too. */
	channel = o.channel ? o.channel : (chan = letw_session_rundown_channel(o.session));
	letw_session_kill_note("stop", &o);
	ret = letw_lttng_enable_dcend(o.session, channel, filter, o.channel != NULL);
	if (!ret && !letw_interrupted) {
		ret = letw_lttng_regenerate(o.session, 0);
		asked = !ret;
	}
	if (ret) {
		/* No DCEnd pass was asked for: stopping now would lose it
		 * for good. Left running, for the user to fix and rerun. */
		char *q = letw_shell_quote(o.session);

		letw_err("stop: no DCEnd rundown asked for: `%s` left running (rerun, or `lttng stop %s`)",
			 o.session, q ? q : o.session);
		free(q);
		failed = 1;
		goto out;
	}
	/* A polling process hears nothing of the statedump, and the DCEnd
	 * pass its events' switching on may run is no proof that this
	 * session was enabled by then (another `stop` at the same moment):
	 * a capture-state, as at start, of the DCEnd flavour only, and only
	 * where some session now records DCEnd for it. Where none does, a
	 * forced DCEnd walk would write into no session and still look like
	 * an answer: letw_procs_wait_passes gives up on it and says so for a --pid. */
	/* Interrupted: nothing more asked (the message says what was). */
	for (i = 0; i < n && !letw_interrupted; i++) {
		struct letw_ctl_reply r;

		if (!v[i].alive || v[i].hook)
			continue;
		ret = letw_proc_status(v[i].pid, &r, letw_left_s(o.deadline, LIST_REPLY_S));
		if (letw_proc_gone(ret)) {
			v[i].alive = 0;
			v[i].exited = 1;
			continue;
		}
		if (ret == -ETIMEDOUT) {
			v[i].busy = 1; /* asked when it answers (letw_procs_wait_passes) */
			continue;
		}
		if (!ret)
			failed |= stop_capture(&v[i], &r, letw_left_s(o.deadline, o.timeout_s)) != 0;
	}
	failed |= letw_procs_wait_passes(v, n, 1, o.timeout_s, o.deadline, 1.0, o.npids > 0,
			      stop_capture) != 0;
	/* Interrupted, the loops above asked nothing more: not stopped. */
	if (letw_interrupted) {
		status = letw_session_interrupted("stop", &o, asked ? LEFT_DCEND_ASKED : LEFT_DCEND_ON, 0);
		goto out;
	}
	if (letw_lttng_stop(o.session)) {
		failed = 1;
		if (letw_interrupted)
			status = letw_session_interrupted("stop", &o, LEFT_STOP_FAILED, 0);
	} else if (letw_interrupted) {
		status = letw_session_interrupted("stop", &o, LEFT_STOPPED, failed || o.missing);
	}
out:
	if (status < 0)
		status = failed || o.missing ? LETW_EXIT_ERROR : LETW_EXIT_OK;
	free(filter);
	free(chan);
	free(v);
	free(o.pids);
	return status;
}

static void snapshot_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s snapshot SESSION [--timeout S] [--pid PID]...\n"
		"\n"
		"Record a snapshot of SESSION (a `lttng create --snapshot` session) that holds a\n"
		"complete rundown pass: regenerates SESSION's statedump (each traced lttng-etw\n"
		"process writes a capture-state pass into SESSION), waits until every process\n"
		"is done, then `lttng snapshot record`. The pass must fit in the channel that\n"
		"records the letw_rundown events: give them a channel of their own, sized for\n"
		"a pass (`lttng-etw report` says how many bytes an overwritten pass needed).\n"
		"\n"
		"  -t, --timeout S  wait at most S seconds for the passes (default 30); the\n"
		"                   snapshot is recorded anyway, and the exit status is 1\n"
		"  -p, --pid PID    only wait for these processes\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 a snapshot holding every process's pass recorded, 1 otherwise\n"
		"(said on stderr), 2 usage error, 130 interrupted by SIGINT, SIGTERM or\n"
		"SIGHUP (whether a snapshot was recorded is said).\n", letw_prog);
}

static int snapshot_capture(struct letw_proc *p, const struct letw_ctl_reply *r,
			    double timeout_s)
{
	if (!(r->rundown_mask & (LETW_KW_RUNDOWN_START | LETW_KW_RUNDOWN_END)))
		return 0;
	return letw_proc_capture(p, 0, 0, timeout_s);
}

int letw_cmd_snapshot(int argc, char **argv)
{
	struct session_opts o;
	struct letw_proc *v;
	int n = 0, ret, failed = 0;

	ret = begin(argc, argv, "snapshot", snapshot_usage, 0, &o, &v, &n);
	if (ret >= 0)
		return ret;
	letw_session_kill_note("snapshot", &o);
	if (letw_lttng_regenerate(o.session, 0)) {
		failed = 1;
	} else {
		failed |= letw_procs_capture_polling(v, n, o.timeout_s, o.deadline) != 0;
		failed |= letw_procs_wait_passes(v, n, 0, o.timeout_s, o.deadline, 1.0, o.npids > 0,
				      snapshot_capture) != 0;
	}
	if (letw_interrupted) { /* a snapshot now might hold a cut pass: none */
		ret = letw_session_interrupted("snapshot", &o, LEFT_NO_SNAPSHOT, 0);
	} else if (letw_lttng_snapshot(o.session)) {
		ret = letw_interrupted ? letw_session_interrupted("snapshot", &o, LEFT_RECORD_FAILED, 0)
				       : LETW_EXIT_ERROR;
	} else {
		letw_out_line("snapshot of `%s` recorded", o.session);
		ret = failed || o.missing ? LETW_EXIT_ERROR : LETW_EXIT_OK;
		if (letw_interrupted)
			ret = letw_session_interrupted("snapshot", &o, LEFT_RECORDED, failed || o.missing);
	}
	free(v);
	free(o.pids);
	return ret;
}
