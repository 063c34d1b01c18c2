/* SPDX-License-Identifier: MIT */
/*
 * Which LTTng sessions record which of our rundown events, read from
 * lttng-ust's probe arrays (letw_fanout.h says why that is safe), and what
 * the control thread remembers about the sessions it ran passes into.
 */
#ifndef LETW_SESSIONS_H
#define LETW_SESSIONS_H

#include <stdint.h>

#include <lttng-etw/lttng-etw.h>
#include "letw_session.h"

/* The letw_rundown events, as bits of a per-session event set. */
enum letw_rd_event {
	LETW_RD_DCSTART_INIT,
	LETW_RD_DCSTART_COMPLETE,
	LETW_RD_DCEND_INIT,
	LETW_RD_DCEND_COMPLETE,
	LETW_RD_METHOD_DCSTART,
	LETW_RD_METHOD_DCEND,
	LETW_RD_STUB_DCSTART,
	LETW_RD_STUB_DCEND,
	LETW_RD_MODULE_DCSTART,
	LETW_RD_MODULE_DCEND,
	LETW_RD_LINES_START,
	LETW_RD_LINES_END,
	LETW_RD_CODE_START,
	LETW_RD_CODE_END,
	LETW_RD_NR,
};
#define LETW_RD_BIT(e) (1u << (e))

/* The keywords that ask for a pass (ETW's rundown triggers); the others
 * only say what a pass writes. */
#define LETW_RD_TRIGGER_KEYWORDS (LETW_KW_RUNDOWN_START | LETW_KW_RUNDOWN_END)

/* The rundown keyword mask an event set enables (pure). */
uint64_t letw_rd_events_mask(uint32_t events);

/*
 * A started session and the rundown events it records. Also where a pass
 * goes: that session alone (the one whose statedump asked), or, session
 * NULL, every session (the polling fallback and capture-state) with the
 * union of their event sets; the walker sink counts a record as emitted
 * only for the events it names, read when the pass began.
 */
struct letw_sess {
	struct lttng_ust_session *session;
	uint32_t events;
};

/*
 * Every active session that records at least one rundown event, at most
 * max of them, into out (NULL when max is 0); *any gets the union of the
 * event sets of all of them, listed or not. Only event
 * recorders count: an event notifier (trigger) is no session and asks for
 * no rundown. Returns how many sessions were found (>= 0). Any thread;
 * takes lttng-ust's tracepoint RCU read lock (never a mutex).
 */
int letw_sess_list(struct letw_sess *out, int max, uint32_t *any);

/* The union of every active session's rundown events (letw_sess_list's
 * *any without the list). */
uint32_t letw_sess_any(void);

/* The rundown events one session records (0: none, or not active). */
uint32_t letw_sess_events(const struct lttng_ust_session *session);

/*
 * The control thread's memory of the sessions it served: for each, the
 * rundown keyword mask of its last pass. Small (sessions enabling our
 * rundown at once are few), pruned of sessions that stopped or vanished.
 * Only the control thread touches it (and fork's child, alone).
 */
#define LETW_SESSMEM_MAX 64

struct letw_sessmem {
	struct {
		struct lttng_ust_session *session;
		uint64_t mask;
		uint64_t used;   /* for eviction when full: oldest use goes */
	} e[LETW_SESSMEM_MAX];
	int n;
	uint64_t clock;
};

/*
 * A statedump of `session` whose rundown mask is now `mask`: which control
 * code to synthesise and with which mask (ETW's semantics per session):
 *  - a session seen for the first time: ENABLE_PROVIDER with its mask;
 *  - a session whose mask gained trigger keywords (RUNDOWN_START/END) since
 *    its last pass: ENABLE_PROVIDER with only the new trigger keywords (and
 *    the kinds), so enabling *dcend* then regenerating runs a DCEnd pass;
 *  - otherwise: CAPTURE_STATE with the whole mask.
 * Remembers the session with its new mask. Pure but for *m.
 */
int letw_sessmem_statedump(struct letw_sessmem *m, struct lttng_ust_session *session,
			   uint64_t mask, uint64_t *run_mask);

/* 1 when the session has been served (and not pruned since). */
int letw_sessmem_known(const struct letw_sessmem *m,
		       const struct lttng_ust_session *session);

/* Forget every session not in live[0..n). */
void letw_sessmem_prune(struct letw_sessmem *m, const struct letw_sess *live, int n);

#endif
