/* SPDX-License-Identifier: MIT */
/*
 * `watch`'s table of watched sessions and their rotation triggers: when a
 * session's triggers are registered, refreshed against lttng-sessiond's
 * session list, and dropped or left registered (cmd_watch.c's top comment
 * says why dropping waits). Single-threaded, as the daemon loop is.
 */
#ifndef LETW_WATCH_TABLE_H
#define LETW_WATCH_TABLE_H

#include <stdint.h>

#include <lttng/lttng.h>

#include "watch_peer.h"

struct watched {
	char *session;
	/* [0]: rotation ongoing (regenerates the statedump); [1]: rotation
	 * completed (tells when dropping becomes safe, see the top comment). */
	struct lttng_condition *cond[2];
	struct lttng_trigger *trigger[2];
	int seen;	/* in the last session list */
	int gone;	/* refreshes since it left the session list, 0: listed */
	int rotating;	/* an ONGOING seen, its COMPLETED not yet */
	uint64_t rotation_id; /* of that ONGOING */
	int failed;	/* no trigger registered (said once): not retried
			 * until the session leaves the list */
	double last_regen_s; /* letw_now_s() of its last regenerate, 0: none */
};

struct watch {
	struct lttng_notification_channel *chan;
	struct watched *v;
	int n, cap;
	unsigned next_id;
	char tag[LETW_WATCH_TAG_MAX]; /* letw_watch_tag(): unique per run,
			 * so a later watch with the same pid (pid reuse, another
			 * pid namespace) does not collide with the triggers an
			 * earlier one left registered */
	int reg_failed;	/* a session could not be watched: exit status 1 */
	int out_failed;	/* a line could not be written (a closed pipe, a full
			 * disk): stopped as on a signal, since what it is run
			 * for, telling which rotations were handled, is lost */
	const char *const *only; /* --session names, or NULL: every session */
	int nonly;
	int verbose;
};

/* Only when the notification thread can no longer walk the triggers:
 * unregisters session i's triggers and removes it from the table (1), or,
 * its name listed again, keeps it to serve the new session (0). */
int letw_wt_drop(struct watch *w, int i);
/* Forgets session i's triggers, leaving them registered (said). */
void letw_wt_leave(struct watch *w, int i);
/* Forgets session i and its triggers, unsaid: they went with their
 * lttng-sessiond (no channel to unsubscribe from either). */
void letw_wt_forget(struct watch *w, int i);
struct watched *letw_wt_find(struct watch *w, const char *session);
/* Watches the sessions newly listed (those wanted), drops the vanished
 * ones once it is safe. 0, or the negative errno of letw_lttng_sessions()
 * when the list could not be had (unsaid: the caller tells a sessiond
 * gone from an error). */
int letw_wt_refresh(struct watch *w);

#endif
