/* SPDX-License-Identifier: MIT */
/*
 * The statedump hook (DESIGN §4). lttng-ust runs a statedump per session at
 * every session start and every `lttng regenerate statedump`: its listener
 * thread fires lttng_ust_statedump:start once per such session, with the
 * session as argument (lttng-ust-statedump.c, trace_statedump_start). We
 * connect our own probe to that tracepoint with lttng-ust's public
 * lttng_ust_tracepoint_provider_register (resolved through the probe
 * object: liblttng-etw never links lttng-ust), so every session gets its
 * own rundown, written into it alone (probes_rundown.c).
 *
 * The callback runs on lttng-ust's listener thread with ust_lock and
 * ust_fork_mutex held, inside lttng-ust's tracepoint RCU read-side section,
 * and lttng-sessiond waits for the reply to its command until it returns
 * (handle_message runs the statedump before send_reply). So it only reads
 * the session's event set, queues a request for the control thread, and
 * waits for that pass's Complete at most wait_ms (default 1 s, well under
 * sessiond's 5 s app socket timeout, which would make sessiond drop the
 * process); a longer pass goes on after it returned. It never logs (the
 * runtime's log callback must not run under lttng-ust's locks), never
 * allocates and never takes a lock but hook_lock. The bound matters for
 * fork too: letw_fork_prepare holds pass_lock (no pass can run) while it
 * waits for ust_fork_mutex, which a waiting listener holds (internal.h).
 *
 * Requests coalesce: one for a session that already has a request queued
 * and not yet taken is merged into it (the later event set wins, and the
 * pass is a capture-state of all of it: see struct letw_hook_req), since
 * that pass starts after both arrived and a statedump asks for the state
 * at or after it. So a burst of `lttng regenerate statedump` during a long
 * pass costs one more pass, not one each, and the queue holds at most one
 * request per session: only QUEUE_LEN sessions each waiting for a pass
 * fill it, and a further session's request is then dropped (counted in
 * letw_store_stats and the socket's STATUS, logged by the control thread).
 *
 * hook_lock guards the queue, `serving`, the done counter and the drop
 * count not yet logged. Taken, each time for a few stores, a scan of at
 * most QUEUE_LEN entries or a condition wait, by:
 *  - the listener (holding ust_lock and ust_fork_mutex), in the callback;
 *  - the control thread, always under pass_lock (letw_hook_take/done
 *    around each pass it serves, letw_hook_pending for the socket's
 *    STATUS): since letw_fork_prepare holds pass_lock, no fork happens
 *    while the control thread holds hook_lock, so a child whose listener
 *    runs before letw_fork_child (liblttng-ust-fork.so preloaded) never
 *    finds it locked by a thread that is gone;
 *  - letw_control_start and letw_control_stop_timed (letw_hook_serving),
 *    under lifecycle_lock, or from the exit handler or the fork child,
 *    and letw_hook_stop;
 *  - letw_hook_fork_child re-initialises it (a parent's thread may have
 *    held it at the fork).
 * Nothing is taken while holding it, so no cycle can go through it. The
 * running totals (letw_hook_counts) are atomics read without it: their
 * reader, letw_get_store_stats, runs on any runtime thread, and one that
 * held hook_lock across the runtime's fork would leave it locked for the
 * child's listener (see the control thread's case above).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "sessions.h"
#include "statedump.h"

#define STATEDUMP_PROVIDER "lttng_ust_statedump"
#define STATEDUMP_EVENT "start"
/* lttng-ust-statedump-provider.h: LTTNG_UST_TP_ARGS(struct lttng_ust_session *,
 * session), stringified by the tracepoint macros; registration connects
 * only a probe whose signature matches the call site's exactly. */
#define STATEDUMP_SIGNATURE "struct lttng_ust_session *, session"

#define DEFAULT_WAIT_MS 1000
#define MAX_WAIT_MS 4000
#define QUEUE_LEN 64

typedef int (*reg_fn)(const char *, const char *, void (*)(void), void *, const char *);
typedef int (*unreg_fn)(const char *, const char *, void (*)(void), void *);

static unreg_fn unregister_probe;
static int active;
static int serving;   /* under hook_lock: the control thread runs and serves requests */
static long wait_ms = DEFAULT_WAIT_MS;

static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hook_cond;
static struct letw_hook_req queue[QUEUE_LEN];
static uint64_t q_head, q_tail;  /* seq of the next request to take / to give */
static uint64_t done_seq;        /* every request <= done_seq is over */
static uint64_t dropped;         /* not logged yet */
/* Since letw_init; written under hook_lock, read with atomics anywhere. */
static uint64_t total_coalesced, total_dropped;

static void init_cond(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&hook_cond, &a);
	pthread_condattr_destroy(&a);
}

uint64_t letw_hook_request(struct lttng_ust_session *session, uint32_t events)
{
	uint64_t seq = 0, one = 1;

	/* The wake-up is written under hook_lock: letw_hook_serving(0) takes
	 * it before the control thread's eventfd is closed, so a callback never
	 * writes to a closed (or reused) descriptor. */
	pthread_mutex_lock(&hook_lock);
	/* Not taken yet (q_head+1..q_tail): its pass starts after now, and so
	 * answers this statedump too, with the session's latest event set. */
	for (uint64_t s = q_head + 1; s <= q_tail; s++) {
		struct letw_hook_req *r = &queue[s % QUEUE_LEN];

		if (r->target.session == session) {
			r->target.events = events;
			r->merged = 1;
			seq = s;
			__atomic_add_fetch(&total_coalesced, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	if (!seq) {
		if (q_tail - q_head == QUEUE_LEN) { /* QUEUE_LEN other sessions */
			dropped++;
			__atomic_add_fetch(&total_dropped, 1, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&hook_lock);
			return 0;
		}
		seq = ++q_tail;
		queue[seq % QUEUE_LEN] = (struct letw_hook_req){
			.target = { .session = session, .events = events }, .seq = seq };
	}
	if (serving)
		(void)!write(letw_g.wake_fd, &one, sizeof(one));
	pthread_mutex_unlock(&hook_lock);
	return seq;
}

/* lttng-ust's listener thread; see the top of the file for what it holds. */
static void on_statedump_start(void *data, struct lttng_ust_session *session)
{
	uint32_t events;
	uint64_t seq;
	struct timespec until;

	(void)data;
	if (__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE))
		return;
	/* Most statedumps are other sessions' (every `lttng start` on the
	 * machine reaches every traced process): answer those at once. */
	events = letw_sess_events(session);
	if (!events)
		return;
	seq = letw_hook_request(session, events);
	if (!seq)
		return; /* dropped */
	letw_deadline_after(CLOCK_MONOTONIC, &until, wait_ms); /* hook_cond's clock */
	pthread_mutex_lock(&hook_lock);
	/* Not serving: queued for a control thread that is not there yet. */
	while (done_seq < seq && serving &&
	       pthread_cond_timedwait(&hook_cond, &hook_lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&hook_lock);
}

static long env_wait_ms(void)
{
	const char *v = getenv("LETW_STATEDUMP_WAIT_MS");
	char *end;
	long ms;

	if (!v || !*v)
		return DEFAULT_WAIT_MS;
	ms = strtol(v, &end, 10);
	if (*end || ms < 0 || ms > MAX_WAIT_MS) {
		letw_warn("LETW_STATEDUMP_WAIT_MS=%s ignored (0..%d ms)", v, MAX_WAIT_MS);
		return DEFAULT_WAIT_MS;
	}
	return ms;
}

int letw_hook_start(void *probe_handle)
{
	const char *env = getenv("LETW_STATEDUMP");
	reg_fn reg;
	int ret;

	if (active)
		return 1;
	if (!probe_handle)
		return 0;
	if (env && !strcmp(env, "0")) {
		letw_info("LETW_STATEDUMP=0: sessions served by polling only");
		return 0;
	}
	*(void **)&reg = dlsym(probe_handle, "lttng_ust_tracepoint_provider_register");
	*(void **)&unregister_probe =
		dlsym(probe_handle, "lttng_ust_tracepoint_provider_unregister");
	if (!reg || !unregister_probe) {
		letw_warn("lttng-ust has no probe registration entry point: "
			  "sessions served by polling only");
		return 0;
	}
	wait_ms = env_wait_ms();
	init_cond();
	ret = reg(STATEDUMP_PROVIDER, STATEDUMP_EVENT, (void (*)(void))on_statedump_start,
		  NULL, STATEDUMP_SIGNATURE);
	if (ret) {
		letw_warn("cannot hook lttng_ust_statedump:start (%d): sessions "
			  "served by polling only", ret);
		return 0;
	}
	active = 1;
	return 1;
}

void letw_hook_serving(int on)
{
	pthread_mutex_lock(&hook_lock);
	serving = on;
	/* Waiting callbacks return now: no pass will answer them. */
	if (!on && active)
		pthread_cond_broadcast(&hook_cond);
	pthread_mutex_unlock(&hook_lock);
}

/* Off the listener (which must not log), outside hook_lock. */
static void report_dropped(uint64_t lost)
{
	if (lost)
		letw_warn("%llu statedump requests dropped: %d other sessions "
			  "were waiting for a pass", (unsigned long long)lost, QUEUE_LEN);
}

void letw_hook_stop(void)
{
	uint64_t lost;

	if (!active)
		return;
	letw_hook_serving(0);
	/* lttng-ust waits for a grace period before it returns, so no
	 * listener is still inside on_statedump_start afterwards. */
	(void)unregister_probe(STATEDUMP_PROVIDER, STATEDUMP_EVENT,
			       (void (*)(void))on_statedump_start, NULL);
	active = 0;
	/* The queue goes (nobody serves it any more), and so does the count
	 * of drops the control thread had not reported yet: reported here,
	 * where logging is allowed, rather than by a later letw_init's
	 * control thread, which would blame its own sessions for them. */
	pthread_mutex_lock(&hook_lock);
	lost = dropped;
	q_head = q_tail = done_seq = dropped = 0;
	__atomic_store_n(&total_coalesced, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&total_dropped, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&hook_lock);
	report_dropped(lost);
}

int letw_hook_active(void)
{
	return active;
}

int letw_hook_take(struct letw_hook_req *out)
{
	int got = 0;
	uint64_t lost;

	pthread_mutex_lock(&hook_lock);
	if (q_head != q_tail) {
		*out = queue[++q_head % QUEUE_LEN];
		got = 1;
	}
	lost = dropped;
	dropped = 0;
	pthread_mutex_unlock(&hook_lock);
	report_dropped(lost);
	return got;
}

void letw_hook_done(uint64_t seq)
{
	pthread_mutex_lock(&hook_lock);
	if (seq > done_seq)
		done_seq = seq;
	pthread_cond_broadcast(&hook_cond);
	pthread_mutex_unlock(&hook_lock);
}

void letw_hook_counts(uint64_t *coalesced, uint64_t *dropped_out)
{
	*coalesced = __atomic_load_n(&total_coalesced, __ATOMIC_RELAXED);
	*dropped_out = __atomic_load_n(&total_dropped, __ATOMIC_RELAXED);
}

uint32_t letw_hook_pending(void)
{
	uint64_t n;

	pthread_mutex_lock(&hook_lock);
	n = q_tail - done_seq;
	pthread_mutex_unlock(&hook_lock);
	return (uint32_t)n;
}

void letw_hook_fork_child(void)
{
	/* The parent's listeners are gone, one of them may have held the
	 * lock, and the sessions they queued are not the child's. */
	pthread_mutex_init(&hook_lock, NULL);
	serving = 0;
	if (active)
		init_cond();
	q_head = q_tail = done_seq = dropped = 0;
	/* The child's totals count its own sessions' statedumps: the
	 * parent's drops are not the child's to report (STATUS, `lttng-etw
	 * status --pid CHILD`). */
	__atomic_store_n(&total_coalesced, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&total_dropped, 0, __ATOMIC_RELAXED);
}
