/* SPDX-License-Identifier: MIT */
/*
 * What the CLI asks of lttng-sessiond, through liblttng-ctl (the library
 * the `lttng` command itself is built on): errors come back as LTTng error
 * codes, printed with lttng_strerror.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <lttng/lttng.h>

#include "cli.h"

/* An LTTng error code (negative) as a negative errno: what every function
 * here returns (letw_lttng_sessions unsaid, for callers that say the cause
 * themselves; the others after printing lttng_strerror's). */
static int lttng_errno(int ret)
{
	switch (-ret) {
	case LTTNG_ERR_NO_SESSIOND: return -ECONNREFUSED;
	case LTTNG_ERR_EPERM: return -EPERM;
	case LTTNG_ERR_NOMEM: return -ENOMEM;
	default: return -EIO;
	}
}

static int fail(const char *what, const char *session, int ret)
{
	letw_err("%s `%s`: %s", what, session, lttng_strerror(ret));
	return lttng_errno(ret);
}

int letw_lttng_start(const char *session)
{
	int ret = lttng_start_tracing(session);

	return ret < 0 ? fail("cannot start session", session, ret) : 0;
}

int letw_lttng_stop(const char *session)
{
	/* Waits until the consumers flushed everything: the trace on disk is
	 * whole when we return. */
	int ret = lttng_stop_tracing(session);

	return ret < 0 ? fail("cannot stop session", session, ret) : 0;
}

int letw_lttng_regenerate(const char *session, int quiet)
{
	int ret = lttng_regenerate_statedump(session);

	if (ret < 0 && !quiet)
		letw_err("cannot regenerate the statedump of `%s`: %s", session,
			 lttng_strerror(ret));
	return ret < 0 ? ret : 0;
}

int letw_lttng_snapshot(const char *session)
{
	/* NULL output: the session's own snapshot output(s); wait 1 keeps
	 * the record complete on disk when it returns. */
	int ret = lttng_snapshot_record(session, NULL, 1);

	return ret < 0 ? fail("cannot record a snapshot of", session, ret) : 0;
}

static struct lttng_handle *ust_handle(const char *session)
{
	struct lttng_domain dom;

	memset(&dom, 0, sizeof(dom));
	dom.type = LTTNG_DOMAIN_UST;
	dom.buf_type = LTTNG_BUFFER_PER_UID;
	return lttng_create_handle(session, &dom);
}

/* The DCEnd events (tracepoints/letw_rundown_tp.h): what
 * `letw_rundown:*dcend*` enables. Listed by name since the CLI does not
 * build the provider's tracepoints; unit.dcend_events keeps the two the
 * same. */
static const char *const dcend_events[] = {
	"letw_rundown:dcend_init", "letw_rundown:dcend_complete", "letw_rundown:method_dcend",
	"letw_rundown:stub_dcend", "letw_rundown:module_dcend",
};
#define N_DCEND (sizeof(dcend_events) / sizeof(dcend_events[0]))

/* The DCStart events: any of them enabled turns a process's DCStart
 * keyword on (provider/sessions.c, START_EVENTS); unit.dcend_events checks
 * this list too. */
static const char *const dcstart_events[] = {
	"letw_rundown:dcstart_init", "letw_rundown:dcstart_complete",
	"letw_rundown:method_dcstart", "letw_rundown:stub_dcstart",
	"letw_rundown:module_dcstart",
};
#define N_DCSTART (sizeof(dcstart_events) / sizeof(dcstart_events[0]))

/*
 * Which of names[0..n) an enabled tracepoint rule of an enabled user-space
 * channel (`channel` only, unless NULL) matches: hit[i] set for each.
 * plain: only rules without exclusion and for every log level count.
 * Returns the session's channel count, or lttng_list_channels's negative
 * error. LTTng's patterns have `*` alone as a wildcard; fnmatch() reads
 * `?` and `[` too, which event names do not hold.
 */
static int rules_matching(struct lttng_handle *h, const char *channel, int plain,
			  const char *const *names, size_t n, int *hit)
{
	struct lttng_channel *chans = NULL;
	int nch = lttng_list_channels(h, &chans);

	for (int i = 0; i < nch; i++) {
		struct lttng_event *evs = NULL;
		int ne;

		/* A disabled channel records nothing, whatever its rules. */
		if (!chans[i].enabled || (channel && strcmp(chans[i].name, channel)))
			continue;
		ne = lttng_list_events(h, chans[i].name, &evs);
		for (int k = 0; k < ne; k++) {
			const struct lttng_event *e = &evs[k];

			if (!e->enabled || e->type != LTTNG_EVENT_TRACEPOINT ||
			    (plain && (e->exclusion || e->loglevel_type != LTTNG_EVENT_LOGLEVEL_ALL)))
				continue;
			for (size_t d = 0; d < n; d++)
				hit[d] |= fnmatch(e->name, names[d], 0) == 0;
		}
		free(evs);
	}
	free(chans);
	return nch;
}

/*
 * Whether the session's own enabled rules, in `channel` (NULL: any), record
 * every DCEnd event already: then stop adds none. A rule of ours beside
 * them is one more way in: LTTng records an event any rule lets through,
 * so an unfiltered (or --pid) rule of ours let in what the session's
 * filter keeps out (an audit: a session filtered to `$ctx.vpid == 1` got a
 * process's whole DCEnd pass). Only plain rules count (no exclusion, any
 * log level): anything else may leave a DCEnd event out, and ours is
 * then added as before.
 */
static int dcend_covered(struct lttng_handle *h, const char *channel)
{
	int covered[N_DCEND] = { 0 }, all = 1;
	int nch = rules_matching(h, channel, 1, dcend_events, N_DCEND, covered);

	for (size_t d = 0; d < N_DCEND; d++)
		all &= covered[d];
	return nch > 0 && all;
}

int letw_lttng_may_record_dcstart(const char *session)
{
	struct lttng_handle *h = ust_handle(session);
	int hit[N_DCSTART] = { 0 }, n, may = 0;

	if (!h)
		return -ENOMEM;
	/* Filters, exclusions and log levels are not weighed: any of them
	 * may let the event through, so a matching rule counts (the caller
	 * then waits, as it did for every session). */
	n = rules_matching(h, NULL, 0, dcstart_events, N_DCSTART, hit);
	lttng_destroy_handle(h);
	if (n < 0)
		return fail("cannot list the channels of session", session, n);
	for (size_t d = 0; d < N_DCSTART; d++)
		may |= hit[d];
	return may;
}

int letw_lttng_enable_dcend(const char *session, const char *channel,
			    const char *filter, int explicit_channel)
{
	struct lttng_handle *h = ust_handle(session);
	struct lttng_event *ev = lttng_event_create();
	int ret;

	if (!h || !ev) {
		lttng_destroy_handle(h);
		lttng_event_destroy(ev);
		letw_err("out of memory");
		return -ENOMEM;
	}
	/* The session's rules decide what it records (with their filters):
	 * nothing to add. A --channel asks for that channel, where only its
	 * own rules count. */
	if (dcend_covered(h, explicit_channel ? channel : NULL)) {
		lttng_event_destroy(ev);
		lttng_destroy_handle(h);
		return 0;
	}
	ev->type = LTTNG_EVENT_TRACEPOINT;
	ev->loglevel = -1;
	strcpy(ev->name, "letw_rundown:*dcend*");
	ret = lttng_enable_event_with_exclusions(h, ev, channel, filter, 0, NULL);
	lttng_event_destroy(ev);
	lttng_destroy_handle(h);
	/* Already enabled: polling processes are told by their mask
	 * (cmd_session.c), the statedump reaches the others either way. */
	if (ret == -LTTNG_ERR_UST_EVENT_ENABLED)
		return 0;
	return ret < 0 ? fail("cannot enable letw_rundown:*dcend* in session", session, ret) : 0;
}

char *letw_session_rundown_channel(const char *session)
{
	struct lttng_handle *h = ust_handle(session);
	struct lttng_channel *chans = NULL;
	char *rundown = NULL, *runtime = NULL;
	int n, i;

	if (!h)
		return NULL;
	n = lttng_list_channels(h, &chans);
	for (i = 0; i < n && !rundown; i++) {
		struct lttng_event *evs = NULL;
		int ne = lttng_list_events(h, chans[i].name, &evs);

		for (int k = 0; k < ne && !rundown; k++) {
			if (!strncmp(evs[k].name, "letw_rundown", strlen("letw_rundown")))
				rundown = strdup(chans[i].name);
			else if (!runtime && !strncmp(evs[k].name, "letw_", strlen("letw_")))
				runtime = strdup(chans[i].name);
		}
		free(evs);
	}
	/* No rundown events: the channel of the runtime's, else the only
	 * channel there is. A started session takes no new channel, so the
	 * lttng default (channel0) would be refused where it does not exist
	 * (stop then failed for a session recording runtime events only in a
	 * channel of its own). */
	if (!rundown && !runtime && n == 1)
		runtime = strdup(chans[0].name);
	if (rundown)
		free(runtime);
	free(chans);
	lttng_destroy_handle(h);
	return rundown ? rundown : runtime;
}

int letw_lttng_session_state(const char *session, int *enabled, int *snapshot)
{
	struct lttng_session *s = NULL;
	int n = lttng_list_sessions(&s), found = 0;

	if (n < 0) {
		letw_err("cannot list sessions: %s", lttng_strerror(n));
		return lttng_errno(n);
	}
	for (int i = 0; i < n && !found; i++) {
		found = strcmp(s[i].name, session) == 0;
		if (found) {
			*enabled = s[i].enabled != 0;
			*snapshot = s[i].snapshot_mode != 0;
		}
	}
	free(s);
	return found;
}

int letw_lttng_session_exists(const char *session)
{
	int enabled, snapshot;

	return letw_lttng_session_state(session, &enabled, &snapshot);
}

int letw_lttng_channel_exists(const char *session, const char *channel)
{
	struct lttng_handle *h = ust_handle(session);
	struct lttng_channel *chans = NULL;
	int n, found = 0;

	if (!h) {
		letw_err("out of memory");
		return -ENOMEM;
	}
	n = lttng_list_channels(h, &chans);
	lttng_destroy_handle(h);
	if (n < 0) {
		letw_err("cannot list the channels of `%s`: %s", session, lttng_strerror(n));
		return lttng_errno(n);
	}
	for (int i = 0; i < n && !found; i++)
		found = strcmp(chans[i].name, channel) == 0;
	free(chans);
	return found;
}

int letw_lttng_sessions(char ***names)
{
	struct lttng_session *s = NULL;
	int n = lttng_list_sessions(&s), k = 0;
	char **v;

	if (n < 0)
		return lttng_errno(n);
	v = calloc((size_t)n + 1, sizeof(*v));
	for (int i = 0; v && i < n; i++, k++) {
		if (!(v[k] = strdup(s[i].name))) {
			/* Fewer names would be sessions missed in silence. */
			while (k--)
				free(v[k]);
			free(v);
			v = NULL;
		}
	}
	free(s);
	if (!v)
		return -ENOMEM;
	*names = v;
	return k;
}

int letw_lttng_rotation_size(const char *session, uint64_t *bytes)
{
	struct lttng_rotation_schedules *all = NULL;
	unsigned int n = 0;
	int found = 0;

	*bytes = 0;
	if (lttng_session_list_rotation_schedules(session, &all) != LTTNG_OK || !all)
		return 0;
	if (lttng_rotation_schedules_get_count(all, &n) == LTTNG_ROTATION_STATUS_OK)
		for (unsigned int i = 0; i < n && !found; i++) {
			const struct lttng_rotation_schedule *sc =
				lttng_rotation_schedules_get_at_index(all, i);

			found = sc && lttng_rotation_schedule_get_type(sc) ==
					      LTTNG_ROTATION_SCHEDULE_TYPE_SIZE_THRESHOLD;
			if (found &&
			    lttng_rotation_schedule_size_threshold_get_threshold(sc, bytes) !=
				    LTTNG_ROTATION_STATUS_OK)
				*bytes = 0;
		}
	lttng_rotation_schedules_destroy(all);
	return found;
}

/* a is b or a directory above it ("/x/y" and "/x/y/z", not "/x/yz"). */
static int path_within(const char *a, const char *b)
{
	size_t n = strlen(a);

	while (n > 1 && a[n - 1] == '/')
		n--;
	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/');
}

char *letw_lttng_recording_into(const char *trace)
{
	struct lttng_session *v = NULL;
	char *want, *found = NULL;
	int n;

	if (!(want = realpath(trace, NULL)))
		return NULL;
	n = lttng_list_sessions(&v);
	for (int i = 0; i < n && !found; i++) {
		char *out;

		/* Network outputs (tcp://, net://) are another host's paths;
		 * a snapshot session's recorded snapshots are whole while it
		 * runs. */
		if (!v[i].enabled || v[i].snapshot_mode || v[i].path[0] != '/')
			continue;
		out = realpath(v[i].path, NULL);
		if (out && (path_within(out, want) || path_within(want, out)))
			found = strdup(v[i].name);
		free(out);
	}
	free(v);
	free(want);
	return found;
}
