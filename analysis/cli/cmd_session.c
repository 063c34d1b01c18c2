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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ctl.h"

#define KW_RUNDOWN_START 0x40ull
#define KW_RUNDOWN_END   0x100ull
#define POLL_MS 20

struct proc {
	pid_t pid;
	int alive;
	int done;
	int hook;             /* serves statedumps (else: polls) */
	uint64_t mask_before, last_before;
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The control thread answers between passes, so a process in a long walk
 * (a blocking channel paced by the consumer) answers late, not never. */
static int status_of(pid_t pid, struct letw_ctl_reply *r, double timeout_s)
{
	int ret = letw_ctl_call(pid, LETW_CTL_STATUS, 0, 1, (int)(timeout_s * 1000), r);

	return ret ? ret : r->status;
}

static int gone(int err)
{
	return err == -ECONNREFUSED || err == -ENOENT;
}

/* The processes to act on: the --pid list, or every lttng-etw process,
 * with their state before we touch the session. */
static struct proc *list_procs(const pid_t *only, int nonly, int *n, int dcend,
			       double timeout_s)
{
	pid_t *pids = NULL;
	struct proc *v;
	int i, np;

	if (nonly) {
		np = nonly;
	} else {
		np = letw_ctl_list(&pids);
		if (np < 0) {
			letw_err("cannot read /proc/net/unix: %s", strerror(-np));
			return NULL;
		}
	}
	v = calloc((size_t)np + 1, sizeof(*v));
	if (!v) {
		free(pids);
		return NULL;
	}
	for (i = 0; i < np; i++) {
		struct letw_ctl_reply r;

		v[i].pid = nonly ? only[i] : pids[i];
		v[i].alive = status_of(v[i].pid, &r, timeout_s) == 0;
		if (!v[i].alive) {
			/* Listed processes may exit meanwhile; a --pid the
			 * user named deserves a word. */
			if (nonly)
				letw_err("pid %d: no lttng-etw control socket answers; ignored",
					 (int)v[i].pid);
			continue;
		}
		v[i].hook = (r.passes & LETW_CTL_STATUS_HOOK) != 0;
		v[i].mask_before = r.rundown_mask;
		v[i].last_before = dcend ? r.last_dcend_pass_id : r.last_dcstart_pass_id;
	}
	free(pids);
	*n = np;
	return v;
}

/*
 * After a session command: wait until each live process is done with it.
 * A statedump-served process is done when it has no statedump pass queued
 * or running. A polling process is done when it completed a pass of the
 * flavour after list_procs, or, after give_up_s, if its live mask still
 * lacks the flavour's keyword (the session does not trace it).
 */
static int wait_passes(struct proc *v, int n, int dcend, double timeout_s,
		       double give_up_s)
{
	uint64_t kw = dcend ? KW_RUNDOWN_END : KW_RUNDOWN_START;
	double t0 = now_s();
	int i, pending, late = 0, ret;

	for (;;) {
		pending = 0;
		for (i = 0; i < n; i++) {
			struct letw_ctl_reply r;
			uint64_t last;

			if (!v[i].alive || v[i].done)
				continue;
			ret = status_of(v[i].pid, &r, 1.0);
			if (gone(ret)) {
				v[i].alive = 0; /* exited: nothing left to wait for */
				continue;
			}
			if (ret) { /* busy in a walk, or a transient error */
				pending++;
				continue;
			}
			if (v[i].hook) {
				v[i].done = r.pending_statedumps == 0;
				pending += !v[i].done;
				continue;
			}
			last = dcend ? r.last_dcend_pass_id : r.last_dcstart_pass_id;
			if (last > v[i].last_before ||
			    (!(r.rundown_mask & kw) && now_s() - t0 > give_up_s)) {
				v[i].done = 1;
				continue;
			}
			pending++;
		}
		if (!pending)
			return 0;
		if (now_s() - t0 > timeout_s)
			break;
		sleep_ms(POLL_MS);
	}
	for (i = 0; i < n; i++) {
		if (v[i].alive && !v[i].done) {
			letw_err("pid %d: %s not done within %.0f s", (int)v[i].pid,
				 dcend ? "DCEnd pass" : "rundown pass", timeout_s);
			late++;
		}
	}
	return late;
}

/* A polling process the statedump does not reach: ask it directly. */
static int capture(struct proc *p, uint64_t mask, double timeout_s)
{
	struct letw_ctl_reply r;
	int ret = letw_ctl_call(p->pid, LETW_CTL_CAPTURE_STATE, mask, 1,
				(int)(timeout_s * 1000), &r);

	if (!ret)
		ret = r.status;
	if (gone(ret))
		return 0; /* exited meanwhile */
	if (ret) {
		letw_err("pid %d: capture-state: %s", (int)p->pid, letw_ctl_strerror(ret));
		return -1;
	}
	p->done = 1;
	return 0;
}

struct session_opts {
	const char *session, *channel;
	pid_t *pids;
	int npids;
	double timeout_s;
};

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
			if (!np)
				return LETW_EXIT_ERROR;
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
		 int dcend, struct session_opts *o, struct proc **v, int *n)
{
	int ret = parse(argc, argv, cmd, o, usage);

	if (ret) {
		free(o->pids);
		return ret < 0 ? LETW_EXIT_OK : ret;
	}
	*v = list_procs(o->pids, o->npids, n, dcend, o->timeout_s);
	if (!*v) {
		free(o->pids);
		return LETW_EXIT_ERROR;
	}
	return -1;
}

static void start_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s start SESSION [--timeout S] [--pid PID]...\n"
		"\n"
		"`lttng start SESSION`, then wait until every lttng-etw process finished the\n"
		"DCStart rundown it runs into SESSION (each process answers the session's\n"
		"statedump with a pass into that session; `lttng start` alone returns before\n"
		"a long pass ends). A process that polls instead and whose rundown events\n"
		"another session had already enabled is sent a capture-state.\n"
		"\n"
		"  -t, --timeout S  wait at most S seconds for the rundowns (default 30)\n"
		"  -p, --pid PID    only these processes (default: all lttng-etw processes)\n"
		"  -h, --help\n", letw_prog);
}

int letw_cmd_start(int argc, char **argv)
{
	struct session_opts o;
	struct proc *v;
	int n = 0, i, ret, failed = 0;

	ret = begin(argc, argv, "start", start_usage, 0, &o, &v, &n);
	if (ret >= 0)
		return ret;
	if (letw_lttng_start(o.session)) {
		failed = 1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!v[i].alive || v[i].hook || !(v[i].mask_before & KW_RUNDOWN_START))
			continue;
		printf("pid %d: polls, and its rundown events were already enabled: capture-state\n",
		       (int)v[i].pid);
		failed |= capture(&v[i], 0, o.timeout_s) != 0;
	}
	failed |= wait_passes(v, n, 0, o.timeout_s, 1.0) != 0;
out:
	free(v);
	free(o.pids);
	return failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
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
		"were already enabled, the statedump runs a capture-state of both flavours.\n"
		"\n"
		"  -t, --timeout S    wait at most S seconds (default 30); the session is\n"
		"                     stopped anyway, and the exit status is 1\n"
		"  -p, --pid PID      only these processes; the dcend events are then enabled\n"
		"                     with a filter on their vpid\n"
		"  -c, --channel NAME channel to enable the dcend events in (default: the\n"
		"                     channel holding the session's letw_rundown events,\n"
		"                     else channel0)\n"
		"  -h, --help\n", letw_prog);
}

static char *vpid_filter(const pid_t *pids, int n)
{
	char *f = NULL, *nf;
	int i;

	for (i = 0; i < n; i++) {
		if (asprintf(&nf, "%s%s$ctx.vpid == %d", f ? f : "", f ? " || " : "",
			     (int)pids[i]) < 0) {
			free(f);
			return NULL;
		}
		free(f);
		f = nf;
	}
	return f;
}

int letw_cmd_stop(int argc, char **argv)
{
	struct session_opts o;
	struct proc *v;
	char *filter = NULL, *chan = NULL;
	int n = 0, i, ret, failed = 0, already = 0;

	ret = begin(argc, argv, "stop", stop_usage, 1, &o, &v, &n);
	if (ret >= 0)
		return ret;
	if (o.npids && !(filter = vpid_filter(o.pids, o.npids))) {
		free(o.pids);
		free(v);
		return LETW_EXIT_ERROR;
	}
	/* The dcend events go where the session's rundown events are: a
	 * channel cannot be added to a started session, and a blocking or
	 * large channel chosen for the rundown should serve DCEnd too. */
	if (!o.channel)
		o.channel = chan = letw_session_rundown_channel(o.session);
	if (letw_lttng_enable_dcend(o.session, o.channel, filter, &already) ||
	    letw_lttng_regenerate(o.session)) {
		failed = 1;
		goto stop;
	}
	/* A polling process hears nothing of the statedump; one whose DCEnd
	 * events were already enabled did not see a change either. */
	for (i = 0; i < n; i++)
		if (v[i].alive && !v[i].hook && (v[i].mask_before & KW_RUNDOWN_END))
			failed |= capture(&v[i], (v[i].mask_before & ~KW_RUNDOWN_START) |
						 KW_RUNDOWN_END, o.timeout_s) != 0;
	failed |= wait_passes(v, n, 1, o.timeout_s, 1.0) != 0;
stop:
	if (letw_lttng_stop(o.session))
		failed = 1;
	free(filter);
	free(chan);
	free(v);
	free(o.pids);
	return failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
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
		"  -h, --help\n", letw_prog);
}

int letw_cmd_snapshot(int argc, char **argv)
{
	struct session_opts o;
	struct proc *v;
	int n = 0, i, ret, failed = 0;

	ret = begin(argc, argv, "snapshot", snapshot_usage, 0, &o, &v, &n);
	if (ret >= 0)
		return ret;
	if (letw_lttng_regenerate(o.session)) {
		failed = 1;
	} else {
		for (i = 0; i < n; i++)
			if (v[i].alive && !v[i].hook &&
			    (v[i].mask_before & (KW_RUNDOWN_START | KW_RUNDOWN_END)))
				failed |= capture(&v[i], 0, o.timeout_s) != 0;
		failed |= wait_passes(v, n, 0, o.timeout_s, 1.0) != 0;
	}
	if (letw_lttng_snapshot(o.session))
		failed = 1;
	else
		printf("snapshot of `%s` recorded\n", o.session);
	free(v);
	free(o.pids);
	return failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
}
