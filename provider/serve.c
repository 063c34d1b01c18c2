/* SPDX-License-Identifier: MIT */
/*
 * Sessions served through the statedump hook (control.c's top comment):
 * each queued statedump answered with a pass into its session, adoption
 * of the sessions started before the hook, the overflow's pass into every
 * session, the memory of what each session was served (sessions.c), and
 * the retry of the passes that could not begin. All of it runs on the
 * control thread, which owns every variable here without a lock; passes
 * run through letw_control_dispatch under pass_lock, as control.c's do.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "internal.h"
#include "log.h"
#include "serve.h"
#include "sessions.h"
#include "statedump.h"

/*
 * The retry of passes owed to sessions. lttng-ust runs a session's
 * statedump once per `lttng start` or regenerate, so a pass into it that
 * could not begin (control.c, run_pass: the walker's copy buffer could
 * not be mapped) is answered by nobody unless this thread serves it
 * again. retry_at: CLOCK_MONOTONIC ns from which the sessions still owed
 * a pass are served again (letw_serve_retry), 0 when none is; a retry
 * that fails too puts it LETW_RETRY_NS later, so while memory stays short
 * the mapping is tried about once a second, never in a loop. A pass that
 * runs makes it due at once (letw_serve_pass_ran): the buffer, once
 * mapped, is kept, so the owed passes can run too.
 */
static uint64_t retry_at;
/* Failed passes since the streak began (said at its end). */
static uint64_t streak_failed;
/* The folded events of an overflow pass that could not begin. */
static uint32_t retry_all_events;

/* This thread only: the sessions it served through the statedump hook,
 * and the live sessions of its last walk (kept from walk to walk, so a
 * steady number of sessions allocates nothing). */
static struct letw_sessmem served;
static struct letw_sess_set live;
static uint64_t unremembered_said;
static int truncated_said;

/* Off lttng-ust's locks (this thread): a list of the sessions cut short
 * (said once per run of such lists, not at every wake-up)... */
static void say_collect(int collect_ret)
{
	if (collect_ret && !truncated_said)
		letw_warn("cannot list every session past %d (%s): none is "
			  "forgotten until a whole list", live.n, strerror(-collect_ret));
	truncated_said = collect_ret != 0;
}

/* ... and sessions served that the memory could not grow to hold. */
static void say_unremembered(void)
{
	if (served.unremembered > unremembered_said)
		letw_warn("out of memory: %llu sessions served but not remembered "
			  "(their next statedump runs as a first ENABLE)",
			  (unsigned long long)served.unremembered);
	unremembered_said = served.unremembered;
}

/* A session's (or the overflow's) pass could not begin: said when it
 * begins a streak (retry_later then counts it; the streak's end says how
 * many). The retry's failures, and statedumps failing meanwhile, are not
 * said again: the retry is tried about once a second. */
static void say_if_streak_begins(const struct letw_pass_result *res)
{
	if (!streak_failed)
		letw_control_say_not_run(res);
}

/*
 * Caller holds pass_lock. `merged`: the request answers several
 * statedumps (statedump.h), so it captures the session's whole event set
 * whatever the change since the last one served.
 *
 * The request may have waited in the queue while its session was stopped
 * or destroyed, or stopped recording the events: then no pass runs (it
 * would write nothing, only walk the table). A destroyed session is freed
 * by lttng-ust after a grace period, so target->session must never be
 * dereferenced here; letw_sess_events only compares it with the sessions
 * the live probes lead to, under lttng-ust's tracepoint RCU read lock
 * (letw_fanout.h), so the check is safe. A new session allocated at the
 * same address and recording the events gets the pass: it is live, and
 * its own start's statedump was merged into this request or comes after
 * it. The events are narrowed to those still recorded: the sink counts a
 * pass's records for the events it names, and LTTng writes none of one
 * disabled since.
 *
 * The session is remembered as served (with its mask) once its pass ran,
 * or when none was to run (tracing off, no trigger keyword): remembered
 * before, a session whose pass could not begin was taken for served, its
 * next statedump for a capture-state, and adoption and the retry skipped
 * it, so its DCStart was lost for good. Returns 0, or the failed pass's
 * -errno (the session is then still owed its pass: letw_sessmem_failed).
 */
static int serve_session_locked(const struct letw_sess *target, int merged)
{
	struct letw_sess now = {
		.session = target->session,
		.events = target->events & letw_sess_events(target->session),
	};
	uint64_t mask = letw_rd_events_mask(now.events), run_mask;
	struct letw_pass_result res;
	int code;

	if (!now.events) {
		letw_debug("statedump of a session that stopped recording the "
			   "rundown events before its pass: no pass");
		return 0;
	}
	code = letw_sessmem_decide(&served, now.session, mask, &run_mask);
	if (merged) {
		code = LETW_CONTROL_CAPTURE_STATE;
		run_mask = mask;
	}
	letw_control_dispatch(code, run_mask, LETW_PROVIDER_RUNDOWN, &now, &res);
	if (res.passes < 0) {
		say_if_streak_begins(&res);
		(void)letw_sessmem_failed(&served, now.session, code, run_mask, mask);
		return res.passes;
	}
	letw_sessmem_served(&served, now.session, mask);
	return 0;
}

/*
 * Caller holds pass_lock. The pass owed to a live session (serve_owed):
 * the one that could not begin (letw_sessmem_owed_pass), narrowed to the
 * events the session still records, or adoption's ENABLE. Returns 0, or
 * the pass's -errno: the session stays owed, a mark as it was.
 */
static int retry_session_locked(const struct letw_sess *target)
{
	struct letw_sess now = {
		.session = target->session,
		.events = target->events & letw_sess_events(target->session),
	};
	uint64_t run_mask, served_mask;
	struct letw_pass_result res;
	int marked, code;

	if (!now.events)
		return 0; /* stopped recording them since it was listed */
	code = letw_sessmem_owed_pass(&served, now.session, letw_rd_events_mask(now.events),
				      &run_mask, &served_mask, &marked);
	letw_control_dispatch(code, run_mask, LETW_PROVIDER_RUNDOWN, &now, &res);
	if (res.passes < 0) {
		say_if_streak_begins(&res);
		if (!marked)
			(void)letw_sessmem_failed(&served, now.session, code, run_mask,
						  served_mask);
		return res.passes;
	}
	letw_sessmem_served(&served, now.session, served_mask);
	return 0;
}

/* A session owed a pass that this round will not run (one failed before
 * it): marked, so it is owed still once owe_unknown is cleared. */
static void mark_owed(const struct letw_sess *s)
{
	uint64_t run_mask, served_mask;
	int marked;
	int code = letw_sessmem_owed_pass(&served, s->session, letw_rd_events_mask(s->events),
					  &run_mask, &served_mask, &marked);

	if (!marked)
		(void)letw_sessmem_failed(&served, s->session, code, run_mask, served_mask);
}

/*
 * Caller holds pass_lock. The overflow (statedump.c): a capture-state
 * into every session, of the folded event sets' union as far as a live
 * session still records it. The folded sessions are not named in it, so
 * every session listed before the pass that records some of its events
 * is remembered as served (letw_sessmem_served_all): a folded one's next
 * statedump is then no first ENABLE, and adoption does not serve it again.
 * Listed before: a session started during the pass got part of it only.
 * A pass that could not begin remembers nothing and leaves its events to
 * the retry (retry_all_events): returns its -errno, else 0.
 */
static int serve_all_locked(const struct letw_sess *folded)
{
	struct letw_pass_result res;
	uint32_t any;
	int ret = letw_sess_collect(&live, &any);
	struct letw_sess all = { .session = NULL, .events = folded->events & any };

	say_collect(ret);
	if (!all.events)
		return 0; /* every session recording them stopped meanwhile */
	letw_control_dispatch(LETW_CONTROL_CAPTURE_STATE, letw_rd_events_mask(all.events),
			      LETW_PROVIDER_RUNDOWN, &all, &res);
	if (res.passes < 0) {
		say_if_streak_begins(&res);
		retry_all_events |= folded->events;
		return res.passes;
	}
	if (res.passes > 0)
		letw_sessmem_served_all(&served, live.v, live.n, all.events);
	return 0;
}

/* A pass owed to a session (or the overflow's) could not begin: served
 * again from LETW_RETRY_NS on. Said once per streak, when it begins. */
static void retry_later(void)
{
	if (!streak_failed) {
		letw_warn("a session's rundown pass could not begin: the passes owed "
			  "are tried again about once a second until they run");
	}
	streak_failed++;
	retry_at = letw_clock_ns(CLOCK_MONOTONIC) + LETW_RETRY_NS;
}

/*
 * Every queued statedump request, oldest first. hook_lock (inside take
 * and done) is taken under pass_lock, like every hook_lock taken by this
 * thread: letw_fork_prepare holds pass_lock, so a fork never happens while
 * this thread holds hook_lock — with liblttng-ust-fork.so preloaded, the
 * child's listener runs statedump callbacks (hook_lock) before the
 * runtime's letw_fork_child re-initialises it.
 */
void letw_serve_statedumps(void)
{
	struct letw_hook_req r;

	pthread_mutex_lock(&letw_g.pass_lock);
	while (!__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE) &&
	       letw_hook_take(&r)) {
		int ret = r.all_sessions ? serve_all_locked(&r.target) :
					   serve_session_locked(&r.target, r.merged);

		/* Marked (or retry_all_events set) before the request is
		 * done: a STATUS (served on this thread) never sees it
		 * neither pending nor owed. */
		if (ret < 0)
			retry_later();
		letw_hook_done(&r);
	}
	pthread_mutex_unlock(&letw_g.pass_lock);
	say_unremembered();
}

/*
 * Every live session owed a pass (letw_sessmem_owes: its pass could not
 * begin, or, while served.owe_unknown is set, one the memory does not
 * hold) gets it, and a failed overflow pass is run again first (it may
 * serve some of them). Only those: a session unknown or with trigger
 * keywords gained may not have asked yet (its events are being enabled,
 * its statedump is on its way), and served here it got an ENABLE, maybe
 * of a partial event set, and its statedump then a capture-state. Used
 * twice:
 *  - once when the thread starts with the hook connected (adoption):
 *    sessions started before it (lttng-ust ran their statedump before our
 *    probe was there, e.g. while letw_init loaded lttng-ust) get their
 *    ENABLE pass now, however many there are. Queued requests go first,
 *    so a session they served (the overflow's included) is not adopted
 *    again;
 *  - by letw_serve_retry, for the passes that could not begin.
 * One pass_lock hold per pass, as serve_session did: a fork waits for one
 * pass, not for all of them. The first pass that fails ends it (the next
 * would map the same buffer): the sessions left are marked, and a whole
 * list served or marked ends adoption. Returns 1 when a pass failed, 0
 * when none did (what is still owed, e.g. past a list cut short, is
 * letw_control_owed's: a list cut short is no failed pass), -ECANCELED
 * when the thread is stopping, or -EAGAIN when statedumps were queued
 * meanwhile: those go first, at the next wake-up, or a session whose
 * start's statedump is among them would get an ENABLE here and a
 * capture-state there.
 */
static int serve_owed(void)
{
	int ret, failed = 0;
	uint64_t unmarked = served.unmarked;

	pthread_mutex_lock(&letw_g.pass_lock);
	if (letw_hook_pending()) {
		pthread_mutex_unlock(&letw_g.pass_lock);
		return -EAGAIN;
	}
	if (retry_all_events) {
		struct letw_sess folded = { .session = NULL, .events = retry_all_events };

		retry_all_events = 0; /* set again if it fails */
		failed = serve_all_locked(&folded);
	}
	pthread_mutex_unlock(&letw_g.pass_lock);
	ret = letw_sess_collect(&live, NULL);
	say_collect(ret);
	/* A whole list: a mark of a session gone is owed nothing (else it
	 * was counted owed until letw_serve_watch pruned it, after us). */
	if (!ret)
		letw_sessmem_prune(&served, live.v, live.n);
	/* retry_session_locked does not walk into `live`: it stays as listed. */
	for (int i = 0; i < live.n; i++) {
		if (!letw_sessmem_owes(&served, live.v[i].session,
				       letw_rd_events_mask(live.v[i].events)))
			continue;
		if (__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE))
			return -ECANCELED; /* no pass will run: nothing to retry */
		if (failed) {
			mark_owed(&live.v[i]);
			continue;
		}
		pthread_mutex_lock(&letw_g.pass_lock);
		failed = retry_session_locked(&live.v[i]);
		pthread_mutex_unlock(&letw_g.pass_lock);
	}
	/* Every session listed was served or marked: one not known now
	 * has its statedump to come, or asked for nothing. */
	if (!ret && served.unmarked == unmarked)
		served.owe_unknown = 0;
	say_unremembered();
	return failed != 0;
}

/* After serve_owed: a failed pass goes on with the streak; sessions still
 * owed without one (past a list cut short, which say_collect said) are
 * tried again LETW_RETRY_NS later too, but that is no pass that could not
 * begin: not said as one, nor counted in the streak (it used to be, with
 * the cut list counted as an owed session). None left ends the streak,
 * said with its count of failed passes. */
static void owed_left(int ret)
{
	/* Statedumps first, then again at the next wake-up: adoption too,
	 * which no failure made due (it used to be dropped for good). */
	if (ret == -EAGAIN && !retry_at)
		retry_at = letw_clock_ns(CLOCK_MONOTONIC);
	if (ret < 0)
		return; /* or stopping */
	if (ret) {
		retry_later();
		return;
	}
	if (letw_control_owed()) {
		retry_at = letw_clock_ns(CLOCK_MONOTONIC) + LETW_RETRY_NS;
		return;
	}
	/* Ran, or their sessions stopped recording the events. */
	if (streak_failed)
		letw_info("no rundown pass is owed any more (%llu could not begin)",
			  (unsigned long long)streak_failed);
	streak_failed = 0;
	retry_at = 0;
}

void letw_serve_adopt(void)
{
	owed_left(serve_owed());
}

/* Each wake-up, once the statedumps are served: the owed passes, when the
 * streak's next try is due. */
void letw_serve_retry(void)
{
	if (!retry_at || letw_clock_ns(CLOCK_MONOTONIC) < retry_at)
		return;
	owed_left(serve_owed());
}

/*
 * STATUS (ctlsock.c, on this thread): the passes owed, counted from what
 * is owed rather than tallied, so each session counts once however often
 * its pass failed (a tally counted a session whose second statedump
 * failed too twice, until the next retry recounted): the sessions marked,
 * a failed overflow pass, and one for the sessions owed that the memory
 * does not hold (adoption not done, a list cut short, a mark without
 * room). A list cut short counts only that way: it used to count one
 * whatever was owed.
 */
uint32_t letw_control_owed(void)
{
	return (uint32_t)letw_sessmem_marked(&served) + (retry_all_events != 0) +
	       (served.owe_unknown != 0);
}

/*
 * Each wake-up: one walk of the probe arrays serves both uses. Sessions
 * that stopped or vanished are forgotten (a session started again is new,
 * ENABLE, and a new session reusing an old one's address is not taken for
 * it), and the rundown provider's live mask, the union of the sessions'
 * event sets, feeds the polling. A list cut short by memory forgets
 * nothing: a session missing from it may be live.
 */
uint32_t letw_serve_watch(void)
{
	uint32_t any;
	int ret = letw_sess_collect(&live, &any);

	say_collect(ret);
	if (served.n && !ret)
		letw_sessmem_prune(&served, live.v, live.n);
	return any;
}

void letw_serve_pass_ran(void)
{
	if (retry_at) /* the buffer is mapped now: the owed passes can run */
		retry_at = letw_clock_ns(CLOCK_MONOTONIC);
}

void letw_serve_reset(void)
{
	/* Nothing served yet. The arrays stay: in a fork child they are its
	 * own copies of the parent's, which no thread of the child uses. */
	served.n = 0;
	served.unremembered = unremembered_said = 0;
	truncated_said = 0;
	retry_at = streak_failed = 0;
	/* Adoption: the sessions started before the hook are owed (only
	 * with the hook: polling serves every session, remembers none). */
	served.owe_unknown = letw_hook_active();
	served.unmarked = 0;
	retry_all_events = 0;
}

void letw_serve_free(void)
{
	letw_sessmem_free(&served);
	letw_sess_set_free(&live);
}
