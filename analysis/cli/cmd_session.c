/* SPDX-License-Identifier: MIT */
/*
 * `start` and `stop`: lttng start/stop wrapped with the rundowns LTTng
 * alone cannot trigger (DESIGN §4). Tracepoint enablement is global per
 * process, so a session starting while another already enabled the rundown
 * events flips nothing (start asks those processes for a capture-state),
 * and a DCEnd rundown needs its events enabled in the running session
 * before the stop (stop enables them, waits, then stops).
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
static struct proc *snapshot(const pid_t *only, int nonly, int *n, int dcend,
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
		v[i].mask_before = r.rundown_mask;
		v[i].last_before = dcend ? r.last_dcend_pass_id : r.last_dcstart_pass_id;
	}
	free(pids);
	*n = np;
	return v;
}

/* Wait until every live process completed a pass of the flavour after its
 * snapshot. give_up_s: a process whose live mask still lacks the flavour's
 * keyword after that long is not traced by this session; skip it. */
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
			last = dcend ? r.last_dcend_pass_id : r.last_dcstart_pass_id;
			if (last > v[i].last_before) {
				v[i].done = 1;
				continue;
			}
			if (!(r.rundown_mask & kw) && now_s() - t0 > give_up_s) {
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
			letw_err("pid %d: no %s complete within %.0f s", (int)v[i].pid,
				 dcend ? "DCEnd" : "DCStart", timeout_s);
			late++;
		}
	}
	return late;
}

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

static void start_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s start SESSION [--timeout S] [--pid PID]...\n"
		"\n"
		"`lttng start SESSION`, then make sure every lttng-etw process ran a DCStart\n"
		"rundown into it: a process whose rundown events were already enabled by\n"
		"another started session does not notice this start (LTTng's enabled state is\n"
		"global), so it is sent a capture-state; the others start their rundown on\n"
		"their own and are waited for.\n"
		"\n"
		"  -t, --timeout S  wait at most S seconds for the rundowns (default 30)\n"
		"  -p, --pid PID    only these processes (default: all lttng-etw processes)\n"
		"  -h, --help\n", letw_prog);
}

int letw_cmd_start(int argc, char **argv)
{
	struct session_opts o;
	struct proc *v;
	char *lttng_argv[] = { "lttng", "start", NULL, NULL };
	int n = 0, i, ret, failed = 0;

	ret = parse(argc, argv, "start", &o, start_usage);
	if (ret) {
		free(o.pids);
		return ret < 0 ? LETW_EXIT_OK : ret;
	}
	v = snapshot(o.pids, o.npids, &n, 0, o.timeout_s);
	if (!v) {
		free(o.pids);
		return LETW_EXIT_ERROR;
	}
	lttng_argv[2] = (char *)o.session;
	ret = letw_run(lttng_argv, 0);
	if (ret != 0) {
		letw_err("`lttng start %s` failed", o.session);
		failed = 1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!v[i].alive || !(v[i].mask_before & KW_RUNDOWN_START))
			continue;
		printf("pid %d: rundown already enabled by another session: capture-state\n",
		       (int)v[i].pid);
		failed |= capture(&v[i], 0, o.timeout_s) != 0;
	}
	/* A process the session does not trace keeps a mask without
	 * RUNDOWN_START: a few poll periods tell, then it is skipped. */
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
		"Run a DCEnd rundown in every traced lttng-etw process, then `lttng stop`:\n"
		"enables `letw_rundown:*dcend*` in the running SESSION (which makes each\n"
		"process run a DCEnd pass), waits until each process reports a DCEnd complete\n"
		"newer than before (or exits, or the timeout passes), then stops the session.\n"
		"If DCEnd events were already enabled, enabling flips nothing, so processes\n"
		"are sent a DCEnd capture-state instead.\n"
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
	char *filter = NULL, *chan = NULL, *ev_argv[12];
	char *stop_argv[] = { "lttng", "stop", NULL, NULL };
	int n = 0, i, k = 0, ret, failed = 0, already = 0;

	ret = parse(argc, argv, "stop", &o, stop_usage);
	if (ret) {
		free(o.pids);
		return ret < 0 ? LETW_EXIT_OK : ret;
	}
	v = snapshot(o.pids, o.npids, &n, 1, o.timeout_s);
	if (!v || (o.npids && !(filter = vpid_filter(o.pids, o.npids)))) {
		free(o.pids);
		free(v);
		return LETW_EXIT_ERROR;
	}
	for (i = 0; i < n; i++)
		already |= v[i].alive && (v[i].mask_before & KW_RUNDOWN_END);
	/* The dcend events go where the session's rundown events are: a
	 * channel cannot be added to a started session, and a blocking or
	 * large channel chosen for the rundown should serve DCEnd too. */
	if (!o.channel)
		o.channel = chan = letw_session_rundown_channel(o.session);
	ev_argv[k++] = "lttng";
	ev_argv[k++] = "enable-event";
	ev_argv[k++] = "-u";
	ev_argv[k++] = "-s";
	ev_argv[k++] = (char *)o.session;
	if (o.channel) {
		ev_argv[k++] = "-c";
		ev_argv[k++] = (char *)o.channel;
	}
	if (filter) {
		ev_argv[k++] = "--filter";
		ev_argv[k++] = filter;
	}
	ev_argv[k++] = "letw_rundown:*dcend*";
	ev_argv[k] = NULL;
	ret = letw_run(ev_argv, already);
	if (ret != 0 && !already) {
		letw_err("cannot enable the dcend events in session `%s`", o.session);
		failed = 1;
		goto stop;
	}
	/* Processes whose DCEnd events were enabled before did not see a
	 * change: ask them directly, DCEnd flavour only. */
	for (i = 0; i < n; i++)
		if (v[i].alive && (v[i].mask_before & KW_RUNDOWN_END))
			failed |= capture(&v[i], (v[i].mask_before & ~KW_RUNDOWN_START) |
						 KW_RUNDOWN_END, o.timeout_s) != 0;
	failed |= wait_passes(v, n, 1, o.timeout_s, 1.0) != 0;
stop:
	stop_argv[2] = (char *)o.session;
	if (letw_run(stop_argv, 0) != 0) {
		letw_err("`lttng stop %s` failed", o.session);
		failed = 1;
	}
	free(filter);
	free(chan);
	free(v);
	free(o.pids);
	return failed ? LETW_EXIT_ERROR : LETW_EXIT_OK;
}
