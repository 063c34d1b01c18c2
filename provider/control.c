/* SPDX-License-Identifier: MIT */
/*
 * The control thread: turns LTTng session state into ETW control requests.
 * Every pass runs here, on this thread, one at a time.
 *
 * Sessions reach us two ways:
 *  - the statedump hook (statedump.c): each session's start and each
 *    `lttng regenerate statedump` queue a request naming the session; we
 *    answer it with a pass into that session alone, with ETW's keyword
 *    semantics per session (sessions.c, letw_sessmem_decide). Sessions
 *    already started when the hook was connected (their statedump came
 *    before it) are adopted once, with an ENABLE pass each. Statedumps
 *    beyond the hook's queue are answered together by one capture-state
 *    into every session (statedump.c, overflow), which counts as served
 *    for each session it reached. A statedump whose session stopped
 *    recording the events while it waited in the queue runs no pass. A
 *    session whose pass could not begin (no memory for the walker's
 *    buffer) is not taken for served: it is served again by this thread
 *    about once a second until its pass runs (retry_owed), since lttng-ust
 *    does not ask again;
 *  - polling, the fallback where the hook is unavailable: a tracepoint's
 *    enabled state flips when a session that enabled it starts, and back at
 *    stop; we poll each provider's live keyword mask every poll_ms and
 *    synthesise ENABLE_PROVIDER / DISABLE_PROVIDER, with passes written into
 *    every session. With the hook, polling still reports the runtime
 *    provider and DISABLE_PROVIDER of the rundown provider, but runs no pass.
 * CAPTURE_STATE also comes from the control socket or letw_capture_state,
 * written into every session that records the rundown events.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <urcu/compiler.h>
#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "clock.h"
#include "emit.h"
#include "internal.h"
#include "log.h"
#include "sessions.h"
#include "statedump.h"
#include "walker.h"

/* One pass as the sink sees it: letw_lttng_sink's callbacks get &sink
 * as their ctx, and `begin` finds the rest around it. */
struct run_ctx {
	struct letw_sink_ctx sink;
	int passes;
	struct letw_tp_pass_init init;
};

/*
 * The retry of passes owed to sessions (control thread only, like the
 * session memory further down). lttng-ust runs a session's statedump once
 * per `lttng start` or regenerate, so a pass into it that could not begin
 * (run_pass: the walker's copy buffer could not be mapped) is answered by
 * nobody unless this thread serves it again. retry_at: CLOCK_MONOTONIC ns
 * from which the sessions still owed a pass are served again (retry_owed),
 * 0 when none is; a retry that fails too puts it RETRY_NS later, so while
 * memory stays short the mapping is tried about once a second, never in a
 * loop. A pass that runs makes it due at once: the buffer, once mapped, is
 * kept, so the owed passes can run too.
 */
#define RETRY_NS 1000000000ull
static uint64_t retry_at;
/* Failed passes since the streak began (said at its end). */
static uint64_t streak_failed;
/* The folded events of an overflow pass that could not begin. */
static uint32_t retry_all_events;

/* The same for polling, the fallback (poll_keywords): from then on, the
 * ENABLE of the rundown provider whose pass could not begin is asked for
 * again; 0 when none failed. Its own, since polling writes into every
 * session and remembers none. */
static uint64_t poll_retry_at;

/* The walker's `begin`: the Init events, at the pass's start instant. */
static void emit_inits(void *ctx, uint64_t accounted_from_ns)
{
	struct run_ctx *rc = caa_container_of(ctx, struct run_ctx, sink);

	rc->init.accounted_from_ns = accounted_from_ns;
	for (int f = 0; f < LETW_NR_FLAVOURS; f++)
		if (rc->passes & (1 << f))
			letw_emit_pass_init(&rc->sink.target, (enum letw_flavour)f, &rc->init);
}

static void run_pass(int passes, int code, uint64_t mask,
		     const struct letw_sess *target,
		     struct letw_pass_result *res)
{
	struct letw_table *t = letw_g.table; /* stable: only shutdown clears it,
					       after joining this thread */
	struct letw_walk_sink sink = letw_lttng_sink;
	struct letw_walk_stats st;
	uint64_t pass_id = ++letw_g.pass_seq;
	struct run_ctx pc = {
		.sink = { .target = *target },
		.passes = passes,
		.init = {
			.pass_id = pass_id,
			.match_any_keyword = mask,
			.control_code = (uint32_t)code,
			.instance_id = letw_g.instance_id,
		},
	};
	uint64_t t0 = letw_clock_ns(CLOCK_MONOTONIC);
	int ret;

	sink.begin = emit_inits;
	sink.ctx = &pc.sink;
	sink.instance_id = letw_g.instance_id;
	sink.cancel = &letw_g.stopping;
	ret = letw_walk(t, (unsigned int)passes, &sink, &st);
	if (ret == -ECANCELED) {
		/* Exit or shutdown: no Complete, so the trace shows the pass
		 * as truncated rather than claiming it whole. */
		letw_info("rundown pass %llu cut short: the provider is stopping",
			  (unsigned long long)pass_id);
		return;
	}
	if (ret) {
		/* The walk never began (its copy buffer could not be mapped):
		 * no Init went out, so no Complete either. A Complete alone
		 * read as a pass whose Init the session lost (the report
		 * blamed the trace), and moving last_pass_id told `lttng-etw
		 * stop` its DCEnd had run. Not a pass then: the counters and
		 * last ids stay, the requester gets the error (letw_capture_state,
		 * the socket's reply status), and the next pass maps again.
		 * Said by the caller (letw_control_say_not_run), which knows
		 * whether it is news: a retry's would be said once a second. */
		uatomic_inc(&letw_g.passes_failed);
		if (res) {
			res->passes = ret;
			res->pass_id = pass_id;
		}
		return;
	}
	for (int f = 0; f < LETW_NR_FLAVOURS; f++) {
		struct letw_tp_pass_complete done = {
			.pass_id = pass_id,
			.emitted = st.emitted[f],
			.skipped_raced = st.skipped_raced,
			.duration_ns = letw_clock_ns(CLOCK_MONOTONIC) - t0,
			.instance_id = letw_g.instance_id,
		};

		if (!(passes & (1 << f)))
			continue;
		letw_emit_pass_complete(target, (enum letw_flavour)f, &done);
		/* Readers (socket STATUS on this thread, stats elsewhere). */
		uatomic_set(&letw_g.last_pass_id[f], pass_id);
		uatomic_add(&letw_g.rundown_emitted, st.emitted[f]);
	}
	uatomic_add(&letw_g.rundown_skipped, st.skipped_raced);
	if (retry_at) /* the buffer is mapped now: the owed passes can run */
		retry_at = letw_clock_ns(CLOCK_MONOTONIC);
	uatomic_set(&letw_g.last_pass_emitted, st.emitted[0] + st.emitted[1]);
	uatomic_set(&letw_g.last_pass_bytes, pc.sink.bytes);
	uatomic_inc(&letw_g.passes);
	uatomic_set(&letw_g.last_pass_max_section_ns, st.max_section_ns);
	uatomic_set(&letw_g.last_pass_max_section_start_ns, st.max_section_start_ns);
	uatomic_set(&letw_g.last_pass_sections, st.sections);
	if (st.max_section_ns > uatomic_read(&letw_g.max_section_ns))
		uatomic_set(&letw_g.max_section_ns, st.max_section_ns);
	letw_debug("pass %llu (%s%s) into %s: %llu+%llu emitted, %llu raced, %llu sections, "
		   "longest %llu ns, %llu ns read side",
		   (unsigned long long)pass_id,
		   (passes & LETW_PASS_DCSTART) ? "dcstart" : "",
		   (passes & LETW_PASS_DCEND) ? " dcend" : "",
		   target->session ? "its session" : "every session",
		   (unsigned long long)st.emitted[0], (unsigned long long)st.emitted[1],
		   (unsigned long long)st.skipped_raced, (unsigned long long)st.sections,
		   (unsigned long long)st.max_section_ns,
		   (unsigned long long)st.read_side_ns);
	if (res) {
		res->passes = passes;
		res->pass_id = pass_id;
		res->emitted = st.emitted[0] + st.emitted[1];
		res->skipped_raced = st.skipped_raced;
	}
}

void letw_control_say_not_run(const struct letw_pass_result *res)
{
	letw_err("rundown pass %llu not run, nothing written: %s",
		 (unsigned long long)res->pass_id, strerror(-res->passes));
}

void letw_control_dispatch(int code, uint64_t mask, int provider,
			   const struct letw_sess *target,
			   struct letw_pass_result *res)
{
	letw_control_fn fn = letw_g.control_fn;
	struct letw_sess all;
	int passes;

	if (res)
		*res = (struct letw_pass_result){ .mask = mask };
	if (fn)
		fn(code, LETW_LEVEL_VERBOSE, mask, provider, letw_g.control_ctx);
	passes = letw_rundown_pass(code, mask, provider);
	if (passes <= 0 || !letw_g.tracing)
		return;
	if (!target) {
		all = (struct letw_sess){ .session = NULL, .events = letw_sess_any() };
		target = &all;
	}
	run_pass(passes, code, mask, target, res);
}

/*
 * Session state changes land in the app a few tracepoints at a time, so a
 * mask read in the middle of `lttng start` can be partial (Init enabled,
 * the records not yet; the benchmarks saw DCEnd events switch on more than
 * 1 ms after the DCStart ones of the same session). Re-read until the mask
 * has held for STABLE_READS reads 2 ms apart (at most ~100 ms).
 */
#define STABLE_READS 3

static uint64_t stable_mask(int provider)
{
	uint64_t a = letw_live_mask(provider), b;
	int same = 0;

	for (int i = 0; i < 50 && same < STABLE_READS; i++) {
		struct timespec ts = { 0, 2000000 };

		nanosleep(&ts, NULL);
		b = letw_live_mask(provider);
		same = (a == b) ? same + 1 : 0;
		a = b;
	}
	return a;
}

/* The keywords polling last served are live again (the session whose
 * change asked for the failed pass stopped, or dropped the events): no
 * pass is owed. Left set, the retry stayed pending for good, and the next
 * change's failed pass was taken for a try of it: neither its error nor
 * the streak's warning was said. */
static void poll_retry_gone(int p)
{
	if (p != LETW_PROVIDER_RUNDOWN || !poll_retry_at)
		return;
	letw_info("the rundown pass polling asked for is owed no more: "
		  "the keywords that asked for it are gone");
	poll_retry_at = 0;
}

/*
 * ETW re-enables a provider with the session's new keyword set whenever it
 * changes. The masks polled here are unions over every session (the
 * runtime provider's enabled state is global per tracepoint; the rundown
 * mask is the union of the sessions' event sets), so polling sees "new"
 * in the union only: a trigger keyword (RUNDOWN_START/END) that was
 * already live is dropped from the reported mask, so enabling the *dcend*
 * events in a session while another records *dcstart* asks for a DCEnd
 * pass only, and losing a keyword never runs a pass. With the statedump
 * hook the rundown provider gets ETW's semantics per session instead
 * (letw_sessmem_decide); this approximation is the fallback's.
 */
static void poll_keywords(uint64_t prev[2], uint64_t rundown_mask)
{
	for (int p = LETW_PROVIDER_RUNTIME; p <= LETW_PROVIDER_RUNDOWN; p++) {
		uint64_t mask = p == LETW_PROVIDER_RUNDOWN ? rundown_mask :
							     letw_live_mask(p);
		struct letw_pass_result res = { .passes = 0 };

		if (mask == prev[p]) {
			poll_retry_gone(p);
			continue;
		}
		/* A failed ENABLE pass left prev as it was, so the change is
		 * seen again; it is run again from poll_retry_at on. */
		if (p == LETW_PROVIDER_RUNDOWN && mask && poll_retry_at &&
		    letw_clock_ns(CLOCK_MONOTONIC) < poll_retry_at)
			continue;
		mask = stable_mask(p);
		if (mask == prev[p]) {
			poll_retry_gone(p);
			continue;
		}
		pthread_mutex_lock(&letw_g.pass_lock);
		if (mask == 0) {
			letw_control_dispatch(LETW_CONTROL_DISABLE_PROVIDER, 0, p,
					      NULL, NULL);
		} else if (p == LETW_PROVIDER_RUNTIME || !letw_hook_active()) {
			uint64_t reported = mask;

			if (p == LETW_PROVIDER_RUNDOWN)
				reported &= ~(prev[p] & LETW_RD_TRIGGER_KEYWORDS);
			letw_control_dispatch(LETW_CONTROL_ENABLE_PROVIDER, reported,
					      p, NULL, &res);
		}
		/* else: the statedump hook serves each session's ENABLE. */
		pthread_mutex_unlock(&letw_g.pass_lock);
		if (res.passes < 0) {
			/* Could not begin (no memory for the walker's buffer):
			 * nobody asks again, so this thread does, about once a
			 * second, with the keywords as they are then. Said
			 * once, by the first failure. */
			if (!poll_retry_at) {
				letw_control_say_not_run(&res);
				letw_warn("the rundown pass polling asked for could not begin: "
					  "it is tried again about once a second until it runs");
			}
			poll_retry_at = letw_clock_ns(CLOCK_MONOTONIC) + RETRY_NS;
			continue;
		}
		if (p == LETW_PROVIDER_RUNDOWN && poll_retry_at) {
			if (res.passes > 0)
				letw_info("the rundown pass polling asked for ran after all");
			poll_retry_at = 0;
		}
		prev[p] = mask;
	}
}

static void serve_in_process_request(void)
{
	uint64_t seq, mask;
	struct letw_pass_result res;

	pthread_mutex_lock(&letw_g.req_lock);
	seq = letw_g.req_seq;
	mask = letw_g.req_mask;
	letw_g.req_mask = 0;
	pthread_mutex_unlock(&letw_g.req_lock);
	if (seq == letw_g.req_done_seq)
		return;
	if (!mask)
		mask = letw_live_mask(LETW_PROVIDER_RUNDOWN);
	pthread_mutex_lock(&letw_g.pass_lock);
	letw_control_dispatch(LETW_CONTROL_CAPTURE_STATE, mask,
			      LETW_PROVIDER_RUNDOWN, NULL, &res);
	pthread_mutex_unlock(&letw_g.pass_lock);
	if (res.passes < 0)
		letw_control_say_not_run(&res); /* each request's: no retry */
	pthread_mutex_lock(&letw_g.req_lock);
	letw_g.req_result = res;
	letw_g.req_done_seq = seq;
	pthread_cond_broadcast(&letw_g.req_cond);
	pthread_mutex_unlock(&letw_g.req_lock);
}

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
 * again from RETRY_NS on. Said once per streak, when it begins. */
static void retry_later(void)
{
	if (!streak_failed) {
		letw_warn("a session's rundown pass could not begin: the passes owed "
			  "are tried again about once a second until they run");
	}
	streak_failed++;
	retry_at = letw_clock_ns(CLOCK_MONOTONIC) + RETRY_NS;
}

/*
 * Every queued statedump request, oldest first. hook_lock (inside take
 * and done) is taken under pass_lock, like every hook_lock taken by this
 * thread: letw_fork_prepare holds pass_lock, so a fork never happens while
 * this thread holds hook_lock — with liblttng-ust-fork.so preloaded, the
 * child's listener runs statedump callbacks (hook_lock) before the
 * runtime's letw_fork_child re-initialises it.
 */
static void serve_statedumps(void)
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
 *  - by retry_owed, for the passes that could not begin.
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
	 * was counted owed until watch_sessions pruned it, after us). */
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
 * tried again RETRY_NS later too, but that is no pass that could not
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
		retry_at = letw_clock_ns(CLOCK_MONOTONIC) + RETRY_NS;
		return;
	}
	/* Ran, or their sessions stopped recording the events. */
	if (streak_failed)
		letw_info("no rundown pass is owed any more (%llu could not begin)",
			  (unsigned long long)streak_failed);
	streak_failed = 0;
	retry_at = 0;
}

static void adopt_sessions(void)
{
	owed_left(serve_owed());
}

/* Each wake-up, once the statedumps are served: the owed passes, when the
 * streak's next try is due. */
static void retry_owed(void)
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
static void watch_sessions(uint64_t prev[2])
{
	uint32_t any;
	int ret = letw_sess_collect(&live, &any);

	say_collect(ret);
	if (served.n && !ret)
		letw_sessmem_prune(&served, live.v, live.n);
	poll_keywords(prev, letw_rd_events_mask(any));
}

#define MAX_POLLFDS 40

static void *control_main(void *arg)
{
	uint64_t prev[2] = { 0, 0 };
	sigset_t all;

	/* Signals belong to the runtime's threads, never to ours. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* Named so perf, top and gdb show which thread runs the passes.
	 * First liburcu's call_rcu worker (reclaim.c's batches): it is made
	 * on first use and a new thread takes its creator's name, so made by
	 * our first tick it was a second "letw-control", which perf, top and
	 * the benchmarks' thread lookup took for the walker. If the process
	 * has one already (the runtime uses urcu-bp's call_rcu), it is left
	 * as it is; in a forked child liburcu makes it in the fork handler,
	 * named after the forking thread. Takes liburcu's call_rcu mutex,
	 * holding nothing of ours (its fork handlers take it under
	 * pass_lock, which this thread does not hold here): no cycle. */
	pthread_setname_np(pthread_self(), "letw-reclaim");
	(void)urcu_bp_get_default_call_rcu_data();
	pthread_setname_np(pthread_self(), "letw-control");
	/* This thread's lttng-ust TLS and urcu registration (lttng-ust's
	 * registry lock) now, holding nothing: left to its first tracepoint,
	 * they would happen in a pass, under pass_lock. */
	if (letw_g.tracing)
		letw_emit_thread_init(letw_ust_init_thread);
	if (letw_hook_active()) {
		serve_statedumps();
		adopt_sessions();
	}

	while (!__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE)) {
		struct pollfd fds[MAX_POLLFDS];
		int nfds = 0, n;

		fds[nfds++] = (struct pollfd){ .fd = letw_g.wake_fd, .events = POLLIN };
		nfds += letw_ctlsock_pollfds(fds + nfds, MAX_POLLFDS - nfds);
		n = poll(fds, (nfds_t)nfds, (int)letw_g.poll_ms);
		if (n < 0 && errno != EINTR) {
			letw_err("control thread: poll: %s", strerror(errno));
			break;
		}
		if (n > 0 && (fds[0].revents & POLLIN)) {
			uint64_t v;

			(void)!read(letw_g.wake_fd, &v, sizeof(v));
		}
		if (__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE))
			break;
		if (!(letw_g.flags & LETW_CONFIG_NO_CONTROL_THREAD)) {
			serve_statedumps();
			retry_owed();
			watch_sessions(prev);
			serve_in_process_request();
		}
		/* Under pass_lock, so letw_fork_prepare excludes it like a
		 * pass: cds_lfht_resize holds the table's resize mutex (and
		 * allocates) across grace periods; a fork in the middle left
		 * the child that mutex locked, and its control thread hung on
		 * it at its first resize. No cycle: publishers, the only
		 * readers a grace period waits for, never take pass_lock. */
		pthread_mutex_lock(&letw_g.pass_lock);
		letw_table_maintain(letw_g.table);
		pthread_mutex_unlock(&letw_g.pass_lock);
		/* Also on timeouts: the socket code drops idle clients. */
		letw_ctlsock_service(fds + 1, nfds - 1);
	}
	return NULL;
}

int letw_control_start(void)
{
	int ret;

	__atomic_store_n(&letw_g.stopping, 0, __ATOMIC_RELAXED); /* before the thread exists */
	letw_g.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (letw_g.wake_fd < 0)
		return -errno;
	letw_g.listen_fd = -1;
	/* Before the thread: it adopts the sessions the hook will not see.
	 * No hook without rundowns (NO_CONTROL_THREAD): a statedump would
	 * only wait out its timeout for a pass nobody runs. */
	if (letw_g.tracing && !(letw_g.flags & LETW_CONFIG_NO_CONTROL_THREAD))
		(void)letw_hook_start(letw_probe_handle());
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
	poll_retry_at = 0;
	if (!(letw_g.flags & (LETW_CONFIG_NO_CONTROL_SOCKET | LETW_CONFIG_NO_CONTROL_THREAD))) {
		ret = letw_ctlsock_open();
		if (ret)
			letw_warn("control socket unavailable (%s); capture-state "
				  "requests will not be served", strerror(-ret));
	}
	letw_hook_serving(1);
	ret = pthread_create(&letw_g.control_thread, NULL, control_main, NULL);
	if (ret) {
		letw_hook_serving(0);
		letw_ctlsock_close();
		close(letw_g.wake_fd);
		letw_g.wake_fd = -1;
		return -ret;
	}
	letw_g.control_pid = getpid();
	/* Release: letw_on_control_thread reads control_thread after its
	 * acquire load of this, from any thread, without a lock. */
	__atomic_store_n(&letw_g.control_running, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * timeout_ms < 0: wait as long as it takes. Returns -ETIMEDOUT (and leaves
 * the thread running) when a bounded wait expires: a pass can be stuck in a
 * blocking LTTng channel with nobody consuming.
 */
int letw_control_stop_timed(int timeout_ms)
{
	uint64_t one = 1;

	if (!__atomic_load_n(&letw_g.control_running, __ATOMIC_ACQUIRE))
		return 0;
	if (pthread_equal(pthread_self(), letw_g.control_thread))
		return -EDEADLK;
	__atomic_store_n(&letw_g.stopping, 1, __ATOMIC_RELEASE);
	letw_hook_serving(0); /* statedump callbacks stop waiting for us */
	(void)!write(letw_g.wake_fd, &one, sizeof(one));
	if (timeout_ms < 0) {
		pthread_join(letw_g.control_thread, NULL);
	} else {
		struct timespec ts;

		letw_deadline_after(CLOCK_REALTIME, &ts, timeout_ms);
		if (pthread_timedjoin_np(letw_g.control_thread, NULL, &ts))
			return -ETIMEDOUT;
	}
	__atomic_store_n(&letw_g.control_running, 0, __ATOMIC_RELAXED);
	letw_ctlsock_close();
	close(letw_g.wake_fd);
	letw_g.wake_fd = -1;
	/* Release in-process waiters: their pass will not run. */
	pthread_mutex_lock(&letw_g.req_lock);
	pthread_cond_broadcast(&letw_g.req_cond);
	pthread_mutex_unlock(&letw_g.req_lock);
	return 0;
}

/* letw_shutdown: also disconnect the statedump hook (not at exit, where
 * lttng-ust is being torn down: callbacks then return at once). */
void letw_control_stop(void)
{
	if (letw_control_stop_timed(-1) == 0) {
		letw_hook_stop();
		/* The thread is joined: nothing walks into them any more. */
		letw_sessmem_free(&served);
		letw_sess_set_free(&live);
	}
}
