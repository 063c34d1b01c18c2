/* SPDX-License-Identifier: MIT */
/*
 * What the CLI asks of lttng-sessiond, through liblttng-ctl (the library
 * the `lttng` command itself is built on): errors come back as LTTng error
 * codes, printed with lttng_strerror.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include <lttng/lttng.h>

#include "cli.h"

static int fail(const char *what, const char *session, int ret)
{
	letw_err("%s `%s`: %s", what, session, lttng_strerror(ret));
	return -1;
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

int letw_lttng_regenerate(const char *session)
{
	int ret = lttng_regenerate_statedump(session);

	return ret < 0 ? fail("cannot regenerate the statedump of", session, ret) : 0;
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

int letw_lttng_enable_dcend(const char *session, const char *channel,
			    const char *filter, int *already)
{
	struct lttng_handle *h = ust_handle(session);
	struct lttng_event *ev = lttng_event_create();
	int ret;

	*already = 0;
	if (!h || !ev) {
		lttng_destroy_handle(h);
		lttng_event_destroy(ev);
		letw_err("out of memory");
		return -1;
	}
	ev->type = LTTNG_EVENT_TRACEPOINT;
	ev->loglevel = -1;
	strcpy(ev->name, "letw_rundown:*dcend*");
	ret = lttng_enable_event_with_exclusions(h, ev, channel, filter, 0, NULL);
	lttng_event_destroy(ev);
	lttng_destroy_handle(h);
	if (ret == -LTTNG_ERR_UST_EVENT_ENABLED) {
		*already = 1;
		return 0;
	}
	return ret < 0 ? fail("cannot enable letw_rundown:*dcend* in session", session, ret) : 0;
}

char *letw_session_rundown_channel(const char *session)
{
	struct lttng_handle *h = ust_handle(session);
	struct lttng_channel *chans = NULL;
	char *found = NULL;
	int n, i;

	if (!h)
		return NULL;
	n = lttng_list_channels(h, &chans);
	for (i = 0; i < n && !found; i++) {
		struct lttng_event *evs = NULL;
		int ne = lttng_list_events(h, chans[i].name, &evs);

		for (int k = 0; k < ne && !found; k++)
			if (!strncmp(evs[k].name, "letw_rundown", strlen("letw_rundown")))
				found = strdup(chans[i].name);
		free(evs);
	}
	free(chans);
	lttng_destroy_handle(h);
	return found;
}

int letw_lttng_sessions(char ***names)
{
	struct lttng_session *s = NULL;
	int n = lttng_list_sessions(&s), k = 0;
	char **v;

	if (n < 0) {
		letw_err("cannot list sessions: %s", lttng_strerror(n));
		return -1;
	}
	v = calloc((size_t)n + 1, sizeof(*v));
	for (int i = 0; v && i < n; i++)
		if ((v[k] = strdup(s[i].name)))
			k++;
	free(s);
	if (!v)
		return -1;
	*names = v;
	return k;
}
