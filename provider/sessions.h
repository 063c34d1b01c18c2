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
 * The sessions a walk of the probe arrays found, sorted by address (each
 * once, with its event set). Owned by the control thread (or one test):
 * the array is grown as the sessions grow and kept between walks, so a
 * steady number of sessions allocates nothing.
 */
struct letw_sess_set {
	struct letw_sess *v;
	int n;
	int cap;         /* entries v holds room for */
	int truncated;   /* memory ran out: sessions past v[0..n) went unlisted */
};

/*
 * Every active session that records at least one rundown event, into
 * set (sorted by address); *any (may be NULL) gets the union of their
 * event sets. Only event recorders count: an event notifier (trigger) is
 * no session and asks for no rundown. Returns 0; or -ENOMEM (no memory
 * to grow into) or -EAGAIN (sessions kept coming faster than three walks)
 * with set->truncated set and the sessions found in the room there was:
 * then a session missing from the set may still be live, never take it
 * for gone. Allocates (realloc, outside lttng-ust's read-side section, which
 * it enters without a mutex): the control thread only, never a publish
 * path or the statedump callback.
 */
int letw_sess_collect(struct letw_sess_set *set, uint32_t *any);

/* Frees set's array (its owner, when no walk can use it any more). */
void letw_sess_set_free(struct letw_sess_set *set);

/* The union of every active session's rundown events (letw_sess_collect's
 * *any, without listing or allocating: any thread). */
uint32_t letw_sess_any(void);

/* The rundown events one session records (0: none, or not active). */
uint32_t letw_sess_events(const struct lttng_ust_session *session);

/*
 * The control thread's memory of the sessions it served: for each, the
 * rundown keyword mask of its last pass. Grown with the number of live
 * sessions (there is no fixed bound: a table of 64 evicted sessions still
 * live, so a 65th session's regenerate ran as a first ENABLE), pruned of
 * sessions that stopped or vanished. Only the control thread touches it
 * (and fork's child, alone, which keeps the parent's copy of the array).
 */
struct letw_sessmem {
	struct letw_sessmem_ent {
		struct lttng_ust_session *session;
		uint64_t mask;
		/* Its pass could not begin: owed again. owed_code and
		 * owed_run are that pass (the retry runs it, not a new
		 * decision), owed_mask the statedump's mask it answered
		 * (remembered once it ran). */
		int owed;
		int owed_code;
		uint64_t owed_run, owed_mask;
		/* Held only for that mark: never served, so it decides as
		 * a session the memory does not hold (a first ENABLE). */
		int unserved;
	} *e;
	int n, cap;
	/* Sessions not remembered because the array could not grow (their
	 * next statedump is taken for a first one again); the control thread
	 * logs when this rises. */
	uint64_t unremembered;
	/* Every live session the memory does not hold is owed its ENABLE:
	 * set by the control thread for adoption (sessions started before
	 * the statedump hook), and here when a failed pass's mark found no
	 * room; cleared by the control thread once a whole list of the live
	 * sessions was served or marked. Otherwise a session the memory does
	 * not hold asked for nothing yet (e.g. its events were enabled while
	 * it ran, without a regenerate, or its statedump is on its way). */
	int owe_unknown;
	/* Marks that found no room (letw_sessmem_failed). */
	uint64_t unmarked;
};

/*
 * A statedump of `session` whose rundown mask is now `mask`: which control
 * code to synthesise and with which mask (ETW's semantics per session):
 *  - a session seen for the first time: ENABLE_PROVIDER with its mask;
 *  - a session whose mask gained trigger keywords (RUNDOWN_START/END) since
 *    its last pass: ENABLE_PROVIDER with only the new trigger keywords (and
 *    the kinds), so enabling *dcend* then regenerating runs a DCEnd pass;
 *  - otherwise: CAPTURE_STATE with the whole mask.
 * Changes nothing: the caller remembers the session (letw_sessmem_served)
 * once its pass ran, or when none was to run. A pass that could not begin
 * leaves the session as it was, so the same question asked again (the
 * control thread's retry) gets the same answer: remembered before its
 * pass, a session whose first pass failed was taken for served, and its
 * DCStart was lost for good.
 */
int letw_sessmem_decide(const struct letw_sessmem *m,
			const struct lttng_ust_session *session,
			uint64_t mask, uint64_t *run_mask);

/*
 * The session's pass (letw_sessmem_decide's answer for `mask`) ran, or no
 * pass was to run: remember it with `mask`, owing nothing (allocates when
 * the array is full; on failure counts it in m->unremembered).
 */
void letw_sessmem_served(struct letw_sessmem *m, struct lttng_ust_session *session,
			 uint64_t mask);

/*
 * The session's pass (control code `code`, keywords `run_mask`, answering
 * a statedump whose mask was `mask`) could not begin (no memory for the
 * walker's buffer): it is marked as owing that pass, until one serves it
 * (letw_sessmem_served, _served_all). What the session was served does
 * not change: never served, it still decides as a first ENABLE, and one
 * whose mask gained trigger keywords still has them to gain. A later
 * statedump's pass that fails too replaces the mark: it was decided
 * against the same last-served state, so it asks for every trigger the
 * session records then. Only marked sessions are owed: a live session
 * the memory does not know, or one that gained trigger keywords, may not
 * have asked yet (its statedump may be on its way), and served then it
 * got an ENABLE from the retry, maybe of a partial event set, and its
 * statedump a capture-state. A session not held gets an entry for the
 * mark (allocates); with no room, -ENOMEM, and every session not held is
 * taken as owed (m->owe_unknown) rather than this one lost. Else 0.
 */
int letw_sessmem_failed(struct letw_sessmem *m, struct lttng_ust_session *session,
			int code, uint64_t run_mask, uint64_t mask);

/*
 * The pass owed to `session` (letw_sessmem_owes), which records `mask`
 * now: the pass that could not begin (its control code; *run_mask its
 * keywords), narrowed to the keywords the session still records, and
 * *served_mask what to remember (letw_sessmem_served) once it ran. Not a
 * new decision: asked again, a merged statedump's capture-state came back
 * as a first ENABLE, and a session that enabled its DCEnd events while
 * its DCStart ENABLE was owed got a DCEnd pass nobody asked for, with
 * DCEnd remembered, so the regenerate that did ask for it (`lttng-etw
 * stop`) ran a capture-state. A session owed without a mark (adoption:
 * m->owe_unknown) gets letw_sessmem_decide's answer. *marked: 1 when a
 * mark holds it (a failed retry leaves the mark as it is). Pure.
 */
int letw_sessmem_owed_pass(const struct letw_sessmem *m,
			   const struct lttng_ust_session *session, uint64_t mask,
			   uint64_t *run_mask, uint64_t *served_mask, int *marked);

/*
 * 1 when a live session recording `mask` is owed a pass by the control
 * thread without a new request: its pass could not begin
 * (letw_sessmem_failed), or the memory does not hold it while
 * m->owe_unknown is set and its ENABLE runs a pass. Pure.
 */
int letw_sessmem_owes(const struct letw_sessmem *m,
		      const struct lttng_ust_session *session, uint64_t mask);

/* How many sessions hold a mark (letw_sessmem_failed): each once, however
 * often its pass failed. Pure. */
int letw_sessmem_marked(const struct letw_sessmem *m);

/*
 * An all-sessions capture-state of the rundown events `events` ran (the
 * statedump overflow, statedump.c): every session of live[0..n) that
 * records some of them got a pass of those, and is remembered as served
 * with their keywords (added to what it had), so its next statedump is no
 * first ENABLE and adoption does not serve it again. A session owed a
 * pass (letw_sessmem_failed) that this one is not is left as it is: an
 * owed ENABLE, or a capture-state of keywords the pass did not hold. It
 * used to be taken as served, so the retry (which runs a failed overflow
 * before the sessions owed) turned a session's owed first ENABLE into
 * this capture-state, and its DCStart ENABLE never came.
 */
void letw_sessmem_served_all(struct letw_sessmem *m, const struct letw_sess *live,
			     int n, uint32_t events);

/* Forget every session not in live[0..n), which is sorted by address
 * (letw_sess_collect's order). */
void letw_sessmem_prune(struct letw_sessmem *m, const struct letw_sess *live, int n);

/* Forget everything and free the array (its owner, no walk running). */
void letw_sessmem_free(struct letw_sessmem *m);

#endif
