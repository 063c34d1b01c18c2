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
 * request per session.
 *
 * Overflow: only QUEUE_LEN sessions each waiting for a pass fill the
 * queue. A further session's statedump is then folded into one overflow
 * request (the union of the folded event sets; later ones merge into it
 * while it is not taken), which the control thread serves as a
 * capture-state into every session, like the control socket's: the
 * callback cannot allocate, and the listener may bring any number of
 * sessions. It is taken after the requests queued before it was made
 * (ovf_after), and its callbacks wait for it as the others do for
 * theirs. The other sessions recording those events get one more pass
 * (one that records fewer of them than the union sees fewer records than
 * its Complete counts). Counted in letw_store_stats and the socket's
 * STATUS, and logged by the control thread.
 *
 * hook_lock guards the queue, the overflow request, `serving`, the done
 * counters and the overflow count not yet logged. Taken, each time for a
 * few stores, a scan of at most QUEUE_LEN entries or a condition wait, by:
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
/* The overflow request (top of the file); its seqs count apart from the
 * queue's, since it is not served in the queue's order. */
static uint32_t ovf_events;      /* folded event sets; 0: none waits to be taken */
static uint64_t ovf_seq;         /* the last overflow request made */
static uint64_t ovf_done;        /* every overflow request <= ovf_done is over */
static uint64_t ovf_after;       /* q_tail when it was made: taken after those */
static uint64_t overflowed;      /* not logged yet */
/* Since letw_init; written under hook_lock, read with atomics anywhere. */
static uint64_t total_coalesced, total_overflowed;

static void init_cond(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&hook_cond, &a);
	pthread_condattr_destroy(&a);
}

/* Under hook_lock: fold a statedump into the overflow request. */
static struct letw_hook_ticket fold_overflow(uint32_t events)
{
	if (!ovf_events) { /* none waiting to be taken: a new one */
		ovf_seq++;
		ovf_after = q_tail;
	}
	ovf_events |= events;
	overflowed++;
	__atomic_add_fetch(&total_overflowed, 1, __ATOMIC_RELAXED);
	return (struct letw_hook_ticket){ .seq = ovf_seq, .overflow = 1 };
}

struct letw_hook_ticket letw_hook_request(struct lttng_ust_session *session,
					  uint32_t events)
{
	struct letw_hook_ticket t = { 0, 0 };
	uint64_t one = 1;

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
			t.seq = s;
			__atomic_add_fetch(&total_coalesced, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	if (!t.seq) {
		if (q_tail - q_head == QUEUE_LEN) { /* QUEUE_LEN other sessions */
			t = fold_overflow(events);
		} else {
			t.seq = ++q_tail;
			queue[t.seq % QUEUE_LEN] = (struct letw_hook_req){
				.target = { .session = session, .events = events },
				.seq = t.seq };
		}
	}
	if (serving)
		(void)!write(letw_g.wake_fd, &one, sizeof(one));
	pthread_mutex_unlock(&hook_lock);
	return t;
}

/* Under hook_lock: the ticket's pass is over. */
static int ticket_done(struct letw_hook_ticket t)
{
	return t.overflow ? ovf_done >= t.seq : done_seq >= t.seq;
}

/* lttng-ust's listener thread; see the top of the file for what it holds. */
static void on_statedump_start(void *data, struct lttng_ust_session *session)
{
	uint32_t events;
	struct letw_hook_ticket t;
	struct timespec until;

	(void)data;
	if (__atomic_load_n(&letw_g.stopping, __ATOMIC_ACQUIRE))
		return;
	/* Most statedumps are other sessions' (every `lttng start` on the
	 * machine reaches every traced process): answer those at once. */
	events = letw_sess_events(session);
	if (!events)
		return;
	t = letw_hook_request(session, events);
	letw_deadline_after(CLOCK_MONOTONIC, &until, wait_ms); /* hook_cond's clock */
	pthread_mutex_lock(&hook_lock);
	/* Not serving: queued for a control thread that is not there yet. */
	while (!ticket_done(t) && serving &&
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
static void report_overflowed(uint64_t n)
{
	if (n)
		letw_warn("%llu session statedumps overflowed: %d other sessions "
			  "were waiting for a pass; one capture-state into every "
			  "session answers them", (unsigned long long)n, QUEUE_LEN);
}

/* Under hook_lock: nothing queued, nothing counted (stop, fork child). */
static void reset_locked(void)
{
	q_head = q_tail = done_seq = 0;
	ovf_events = 0;
	ovf_seq = ovf_done = ovf_after = overflowed = 0;
	__atomic_store_n(&total_coalesced, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&total_overflowed, 0, __ATOMIC_RELAXED);
}

void letw_hook_stop(void)
{
	uint64_t n;

	if (!active)
		return;
	letw_hook_serving(0);
	/* lttng-ust waits for a grace period before it returns, so no
	 * listener is still inside on_statedump_start afterwards. */
	(void)unregister_probe(STATEDUMP_PROVIDER, STATEDUMP_EVENT,
			       (void (*)(void))on_statedump_start, NULL);
	active = 0;
	/* The queue goes (nobody serves it any more), and so does the count
	 * of overflows the control thread had not reported yet: reported
	 * here, where logging is allowed, rather than by a later letw_init's
	 * control thread, which would blame its own sessions for them. */
	pthread_mutex_lock(&hook_lock);
	n = overflowed;
	reset_locked();
	pthread_mutex_unlock(&hook_lock);
	report_overflowed(n);
}

int letw_hook_active(void)
{
	return active;
}

int letw_hook_take(struct letw_hook_req *out)
{
	int got = 0;
	uint64_t n;

	pthread_mutex_lock(&hook_lock);
	if (ovf_events && q_head >= ovf_after) {
		/* Every request queued before it was taken: its turn. Taken,
		 * it may have begun, so a later overflow is a new request. */
		*out = (struct letw_hook_req){
			.target = { .session = NULL, .events = ovf_events },
			.seq = ovf_seq, .all_sessions = 1 };
		ovf_events = 0;
		got = 1;
	} else if (q_head != q_tail) {
		*out = queue[++q_head % QUEUE_LEN];
		got = 1;
	}
	n = overflowed;
	overflowed = 0;
	pthread_mutex_unlock(&hook_lock);
	report_overflowed(n);
	return got;
}

void letw_hook_done(const struct letw_hook_req *r)
{
	pthread_mutex_lock(&hook_lock);
	if (r->all_sessions) {
		if (r->seq > ovf_done)
			ovf_done = r->seq;
	} else if (r->seq > done_seq) {
		done_seq = r->seq;
	}
	pthread_cond_broadcast(&hook_cond);
	pthread_mutex_unlock(&hook_lock);
}

void letw_hook_counts(uint64_t *coalesced, uint64_t *overflowed_out)
{
	*coalesced = __atomic_load_n(&total_coalesced, __ATOMIC_RELAXED);
	*overflowed_out = __atomic_load_n(&total_overflowed, __ATOMIC_RELAXED);
}

uint32_t letw_hook_pending(void)
{
	uint64_t n;

	pthread_mutex_lock(&hook_lock);
	/* The overflow request counts once, queued or being served. */
	n = q_tail - done_seq + (ovf_seq - ovf_done);
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
	/* The child's totals count its own sessions' statedumps: the
	 * parent's overflows are not the child's to report (STATUS,
	 * `lttng-etw status --pid CHILD`). */
	reset_locked();
}
