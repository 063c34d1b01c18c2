/* SPDX-License-Identifier: MIT */
/*
 * Process-wide provider state, private to provider/.
 *
 * Threads and what they touch:
 *  - runtime threads: letw_*_publish/unpublish read `table` under
 *    urcu_bp_read_lock and touch nothing else here;
 *  - the control thread (control.c; serve.c: the sessions served through
 *    the statedump hook and the retry): polls keyword state, serves the
 *    control socket and in-process capture requests, runs every pass;
 *  - callers of letw_capture_state / fork hooks / init / shutdown: take
 *    req_lock or pass_lock (never on a publish path).
 *
 * Locks (none is ever taken by a publish/unpublish path):
 *  - req_lock: guards the in-process request slot. Held for a few stores,
 *    never across a pass or a callback, and nothing is taken under it.
 *  - pass_lock: held by the control thread for the duration of each
 *    dispatch (callback + pass) and of each table maintenance, by
 *    letw_set_control_fn for two stores, and by letw_fork_prepare until
 *    the fork is done, so a child never inherits a walk or a resize in
 *    progress. Taken under it, on the control thread: malloc, the cds_lfht
 *    resize mutex and grace-period waits (maintenance, and the walker's
 *    own ticks), lttng-ust's urcu registry lock and perf lock (a first
 *    event of a thread / into a channel with a perf:thread context),
 *    lttng-ust's ring-buffer paths, and whatever the runtime's control
 *    and log callbacks take; and hook_lock, by the control thread only
 *    (statedump.c: so that no fork happens while it holds hook_lock).
 *    req_lock is never taken under it. Nothing takes pass_lock while
 *    holding hook_lock (nothing at all is taken under hook_lock). Order: pass_lock -> lttng-ust's locks everywhere:
 *    letw_fork_prepare takes pass_lock before lttng_ust_before_fork
 *    (ust_fork_mutex, ust_lock, registry, perf lock), and when
 *    liblttng-ust-fork.so's fork() wrapper takes them instead, it does so
 *    between our prepare and parent/child hooks, with pass_lock held.
 *    lttng-ust's listener holds ust locks while a statedump callback
 *    waits for a pass, but bounded (LETW_STATEDUMP_WAIT_MS, statedump.c),
 *    so a forker holding pass_lock and waiting for ust_fork_mutex waits
 *    that long at most: no deadlock. Grace periods under it wait only for
 *    publishers, which never take pass_lock. The runtime must not hold,
 *    across letw_fork_prepare, a lock its control callback takes.
 *  - the statedump hook's hook_lock: see statedump.c.
 */
#ifndef LETW_INTERNAL_H
#define LETW_INTERNAL_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/types.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>
#include "table.h"
#include "log.h"

struct letw_pass_result {
	int passes;              /* LETW_PASS_* bits run, or the walk's -errno */
	uint64_t pass_id;
	uint64_t emitted;
	uint64_t skipped_raced;
	uint64_t mask;
};

struct letw_state {
	struct letw_table *table; /* RCU-published; NULL outside init..shutdown */
	uint16_t instance_id;
	int tracing;              /* probe object loaded */
	uint32_t poll_ms;
	uint32_t flags;

	/* Control callback pair, read on the control thread only. */
	letw_control_fn control_fn;
	void *control_ctx;

	pthread_t control_thread;
	pid_t control_pid;     /* the process control_thread runs in */
	pid_t owner_pid;       /* the process letw_init (or letw_fork_child) ran in */
	int control_running;
	int stopping;  /* C11-style __atomic accesses, so TSan sees the pairing */
	int wake_fd;   /* eventfd: wakes the control thread */
	int listen_fd; /* control socket, -1 when disabled */

	pthread_mutex_t pass_lock;
	pthread_mutex_t req_lock;
	pthread_cond_t req_cond;
	uint64_t req_seq, req_done_seq;
	uint64_t req_mask;
	struct letw_pass_result req_result;

	uint64_t pass_seq;
	uint64_t last_pass_id[2]; /* per flavour, for LETW_CTL_STATUS */
	uint64_t passes, rundown_emitted, rundown_skipped;
	uint64_t passes_failed;     /* walks that could not begin (-ENOMEM) */
	uint64_t last_pass_emitted; /* records of the last completed pass (STATUS) */
	uint64_t last_pass_bytes;   /* its payload bytes (emit.h; STATUS) */
	uint64_t last_pass_max_section_ns, max_section_ns, last_pass_sections;
	uint64_t last_pass_max_section_start_ns;
};

extern struct letw_state letw_g;

/* The absolute time ms from now on clk, for the timed waits (a condition
 * variable's clock, or CLOCK_REALTIME for pthread_timedjoin_np). */
static inline void letw_deadline_after(clockid_t clk, struct timespec *ts, long ms)
{
	clock_gettime(clk, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* The calling thread is the control thread (a control or log callback):
 * what would join or wait for it must refuse. */
static inline int letw_on_control_thread(void)
{
	/* Acquire: pairs with letw_control_start's release, after which
	 * control_thread is written. Read by any thread, without a lock. */
	return __atomic_load_n(&letw_g.control_running, __ATOMIC_ACQUIRE) &&
	       pthread_equal(pthread_self(), letw_g.control_thread);
}

/*
 * A child forked without letw_fork_prepare/letw_fork_child: the table,
 * control_running and the locks are the parent's copies, but not the
 * parent's threads. A lock one of them held at the fork stays held for
 * ever here, the control thread to join or wake is not there (its eventfd
 * is shared with the parent's), and neither is liburcu's call_rcu thread
 * (its before-fork hook waits for that thread for ever). So every
 * lifecycle call and the fork hooks check this before taking anything.
 * getpid() is a system call: no publish path calls this.
 */
static inline int letw_forked_without_hooks(void)
{
	pid_t owner = __atomic_load_n(&letw_g.owner_pid, __ATOMIC_RELAXED);

	return owner && getpid() != owner;
}

/* What letw_init, letw_shutdown and letw_capture_state refuse with
 * -EDEADLK: the control thread (shutdown joins it while holding
 * lifecycle_lock), and any thread inside the runtime's log callback (init
 * logs while it holds lifecycle_lock: LETW_DISABLE, the probe's load, a bad
 * LETW_POLL_MS, the jitdump directory). */
static inline int letw_reentry_refused(void)
{
	return letw_on_control_thread() || letw_log_in_callback();
}

/* api.c */
void letw_lifecycle_fork_child(void);

/* tp.c: tracepoint calls stay safe during the process's exit. */
void letw_tp_keep_at_exit(void);

/* control.c */
int letw_control_start(void);
void letw_control_stop(void);
int letw_control_stop_timed(int timeout_ms);
/* Run one control request on the control thread: callback, decision, pass
 * into target (NULL: every session recording the rundown events). Caller
 * holds pass_lock. */
struct letw_sess;
void letw_control_dispatch(int code, uint64_t mask, int provider,
			   const struct letw_sess *target,
			   struct letw_pass_result *res);
/* Says (letw_err) that the pass of res (res->passes < 0) could not begin:
 * the callers of letw_control_dispatch do, when it is news. */
void letw_control_say_not_run(const struct letw_pass_result *res);
/* serve.c: sessions owed a pass that could not begin, to be run again
 * (control thread only: the socket's STATUS counts them as pending). */
uint32_t letw_control_owed(void);

/* ctlsock.c: the per-process control socket, served by the control thread */
int letw_ctlsock_open(void);
void letw_ctlsock_close(void);
int letw_ctlsock_pollfds(struct pollfd *fds, int max);
void letw_ctlsock_service(const struct pollfd *fds, int nfds);

/* probe.c */
int letw_probe_load(void);
/* lttng-ust's lttng_ust_init_thread, or NULL (no probe object). */
extern void (*letw_ust_init_thread)(void);
void *letw_probe_handle(void); /* NULL when not loaded */
void letw_probe_fork_prepare(void);
void letw_probe_fork_parent(void);
void letw_probe_fork_child(void);

#endif
