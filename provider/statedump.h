/* SPDX-License-Identifier: MIT */
/*
 * The statedump hook: a probe on lttng-ust's own lttng_ust_statedump:start
 * tracepoint, through which each LTTng session's start and each `lttng
 * regenerate statedump` reach us with that session (statedump.c).
 */
#ifndef LETW_STATEDUMP_H
#define LETW_STATEDUMP_H

#include <stdint.h>

#include "sessions.h"

struct letw_hook_req {
	struct letw_sess target; /* the session (compared by address only) and
				    its rundown events at the statedump */
	uint64_t seq;
	/* Later statedumps of the session were merged into it: served as a
	 * capture-state of its whole event set (serve.c), which answers
	 * each of them, where its own event set's change alone (an ENABLE
	 * of the keywords gained) would not answer a regenerate. */
	int merged;
	/* The overflow request (statedump.c): session NULL, the union of
	 * the folded statedumps' event sets, served as a capture-state into
	 * every session; its seq counts apart from the queue's. */
	int all_sessions;
};

/* What a statedump callback waits for: its request's pass, or, folded
 * into the overflow request, that one's. */
struct letw_hook_ticket {
	uint64_t seq;
	int overflow;
};

/*
 * Connect the hook (probe object loaded, LETW_STATEDUMP not "0"). Returns 1
 * when connected, 0 when the polling fallback must serve the sessions.
 * Called by letw_control_start before the control thread exists.
 */
int letw_hook_start(void *probe_handle);
/* Let callbacks wait for the control thread (it is running) or not. */
void letw_hook_serving(int on);
/* Disconnect (letw_shutdown, after the control thread was joined). Waits
 * for lttng-ust's grace period: no callback runs after it returns. */
void letw_hook_stop(void);
/* 1 while the hook is connected. */
int letw_hook_active(void);

/* The listener's half of a statedump (and the unit tests' way in): queue a
 * request of session with its rundown events, or merge it into the one
 * already queued for that session, or, the queue full of other sessions'
 * requests, fold it into the overflow request (counted); wake the control
 * thread when it serves. Takes hook_lock only. */
struct letw_hook_ticket letw_hook_request(struct lttng_ust_session *session,
					  uint32_t events);

/* Control thread: the oldest queued request (1), or 0 when none. The
 * overflow request comes after the requests queued before it was made. */
int letw_hook_take(struct letw_hook_req *out);
/* Control thread: the request's pass is over (or ran nothing). */
void letw_hook_done(const struct letw_hook_req *r);
/* Requests queued or being served (for STATUS); requests coalesced into
 * one count once, and so do the statedumps folded into one overflow. */
uint32_t letw_hook_pending(void);
/* Statedumps merged into a request already queued for their session, and
 * folded into the overflow request (the queue full of other sessions'
 * requests: served by an all-sessions capture-state), since letw_init.
 * Any thread; takes no lock. */
void letw_hook_counts(uint64_t *coalesced, uint64_t *overflowed);

/* Fork child, before lttng-ust restarts its listeners in it. */
void letw_hook_fork_child(void);

#endif
