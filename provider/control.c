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
 *    about once a second until its pass runs, since lttng-ust does not
 *    ask again. All of this is serve.c's; this file runs the passes;
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
#include "serve.h"
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

/* Polling's retry, the fallback's (poll_keywords): from then on, the
 * ENABLE of the rundown provider whose pass could not begin is asked for
 * again; 0 when none failed. Its own, not serve.c's: polling writes into
 * every session and remembers none, and runs rundown passes only without
 * the statedump hook, serve.c's retry only with it. Control thread only. */
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
	letw_serve_pass_ran();
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
			poll_retry_at = letw_clock_ns(CLOCK_MONOTONIC) + LETW_RETRY_NS;
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
		letw_serve_statedumps();
		letw_serve_adopt();
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
			letw_serve_statedumps();
			letw_serve_retry();
			poll_keywords(prev, letw_rd_events_mask(letw_serve_watch()));
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
	letw_serve_reset();
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
		letw_serve_free(); /* the thread is joined */
	}
}
