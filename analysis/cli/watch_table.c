/* SPDX-License-Identifier: MIT */
/* `watch`'s table of sessions and triggers (watch_table.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "watch_peer.h"
#include "watch_table.h"

/* Only when the notification thread can no longer walk the triggers (top
 * comment): the session is gone, none of its rotations is in progress, and
 * its name is not listed again. Returns 1 when dropped, 0 when the name is
 * back (the entry then serves the new session: seen, not gone). */
int letw_wt_drop(struct watch *w, int i)
{
	struct watched *x = &w->v[i];

	/* Listed now, or unknown (the triggers then stay: the safe way). */
	if (letw_lttng_session_exists(x->session) != 0) {
		x->seen = 1;
		x->gone = 0;
		return 0;
	}
	for (int k = 0; k < 2; k++) {
		if (x->cond[k])
			(void)lttng_notification_channel_unsubscribe(w->chan, x->cond[k]);
		if (x->trigger[k]) {
			int ret = lttng_unregister_trigger(x->trigger[k]);

			if (ret < 0)
				letw_err("watch: cannot unregister a trigger of `%s`: %s",
					 x->session, lttng_strerror(ret));
			lttng_trigger_destroy(x->trigger[k]);
		}
		lttng_condition_destroy(x->cond[k]);
	}
	if (w->verbose && !x->failed)
		letw_note("watch: `%s` is gone, its triggers unregistered", x->session);
	free(x->session);
	w->v[i] = w->v[--w->n];
	return 1;
}

/* Forget a session's triggers without unregistering them (exit while the
 * session exists: unregistering would crash a 2.13 sessiond later). */
void letw_wt_leave(struct watch *w, int i)
{
	struct watched *x = &w->v[i];

	for (int k = 0; k < 2; k++) {
		const char *name = NULL;

		if (x->trigger[k] && lttng_trigger_get_name(x->trigger[k], &name) ==
					     LTTNG_TRIGGER_STATUS_OK && name)
			letw_note("watch: leaving trigger %s of `%s` registered: lttng-sessiond 2.13 "
				  "crashes at a later rotation of a session whose rotation trigger was "
				  "removed; `lttng remove-trigger %s` once the session is destroyed",
				  name, x->session, name);
	}
	for (int k = 0; k < 2; k++)
		if (x->cond[k])
			(void)lttng_notification_channel_unsubscribe(w->chan, x->cond[k]);
	letw_wt_forget(w, i);
}

void letw_wt_forget(struct watch *w, int i)
{
	struct watched *x = &w->v[i];

	for (int k = 0; k < 2; k++) {
		lttng_trigger_destroy(x->trigger[k]);
		lttng_condition_destroy(x->cond[k]);
	}
	free(x->session);
	w->v[i] = w->v[--w->n];
}

static int add_trigger(struct watch *w, struct watched *x, int k)
{
	struct lttng_action *notify = lttng_action_notify_create();
	char name[LETW_WATCH_TAG_MAX + 16];
	int ret;

	x->cond[k] = k ? lttng_condition_session_rotation_completed_create()
		       : lttng_condition_session_rotation_ongoing_create();
	if (!notify || !x->cond[k] ||
	    lttng_condition_session_rotation_set_session_name(x->cond[k], x->session) !=
		    LTTNG_CONDITION_STATUS_OK ||
	    !(x->trigger[k] = lttng_trigger_create(x->cond[k], notify))) {
		lttng_action_destroy(notify);
		letw_err("out of memory");
		return -1;
	}
	lttng_action_destroy(notify); /* the trigger holds its own reference */
	snprintf(name, sizeof(name), "%s.%u", w->tag, w->next_id++);
	ret = lttng_register_trigger_with_name(x->trigger[k], name);
	if (ret != LTTNG_OK) {
		w->reg_failed = 1;
		letw_err("watch: cannot register a rotation trigger for `%s`: %s",
			 x->session, lttng_strerror(-ret));
		lttng_trigger_destroy(x->trigger[k]);
		x->trigger[k] = NULL;
		return -1;
	}
	if (lttng_notification_channel_subscribe(w->chan, x->cond[k]) !=
	    LTTNG_NOTIFICATION_CHANNEL_STATUS_OK) {
		letw_err("watch: cannot subscribe to the rotations of `%s`", x->session);
		w->reg_failed = 1;
		return -1;
	}
	return 0;
}

static int add(struct watch *w, const char *session)
{
	struct watched x = { .session = strdup(session) };
	int ret;

	if (w->n == w->cap) {
		int ncap = w->cap ? w->cap * 2 : 8;
		struct watched *nv = realloc(w->v, (size_t)ncap * sizeof(*nv));

		if (!nv) {
			free(x.session);
			letw_err("out of memory");
			return -1;
		}
		w->v = nv;
		w->cap = ncap;
	}
	if (!x.session) {
		letw_err("out of memory");
		return -1;
	}
	ret = add_trigger(w, &x, 0);
	if (!ret)
		ret = add_trigger(w, &x, 1);
	if (ret && !x.trigger[0] && !x.trigger[1]) {
		/* Nothing registered: nothing the sessiond can walk. Kept in
		 * the table, so that the failure is said once rather than at
		 * every refresh; a session of that name created anew after
		 * this one left the list is tried again. */
		for (int k = 0; k < 2; k++) {
			lttng_condition_destroy(x.cond[k]);
			x.cond[k] = NULL;
		}
		x.failed = 1;
	}
	/* Registered triggers stay in the table even on failure: they go by
	 * the rule of cmd_watch.c's top comment, like every other. */
	x.seen = 1;
	w->v[w->n++] = x;
	if (!ret && w->verbose)
		letw_note("watch: watching the rotations of `%s`", session);
	return ret;
}

struct watched *letw_wt_find(struct watch *w, const char *session)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->v[i].session, session))
			return &w->v[i];
	return NULL;
}

/* Watch new sessions; drop vanished ones once it is safe (cmd_watch.c's top comment). */
int letw_wt_refresh(struct watch *w)
{
	char **names = NULL;
	int n = letw_lttng_sessions(&names), i, k;

	if (n < 0)
		return n;
	for (i = 0; i < w->n; i++)
		w->v[i].seen = 0;
	for (k = 0; k < n; k++) {
		struct watched *x = letw_wt_find(w, names[k]);

		if (x) {
			x->seen = 1;
			x->gone = 0; /* a new session of that name: same list */
		} else if (letw_watch_wanted(w->only, w->nonly, names[k])) {
			(void)add(w, names[k]);
		}
		free(names[k]);
	}
	free(names);
	for (i = w->n - 1; i >= 0; i--) {
		struct watched *x = &w->v[i];

		if (x->seen)
			continue;
		/* The ONGOING of the destroy's rotation was queued before the
		 * session left the list: by the next refresh it is here. */
		/* gone 2: out of the list for two refreshes (cmd_watch.c's top comment). */
		if (++x->gone >= 2 && !x->rotating)
			(void)letw_wt_drop(w, i);
	}
	return 0;
}
