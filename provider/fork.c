/* SPDX-License-Identifier: MIT */
/*
 * Fork hooks, called by the runtime around fork() (we install no
 * pthread_atfork handlers: the runtime knows when it forks and which of its
 * own locks must be quiesced first).
 *
 * prepare: first waits for the control thread to be idle (pass_lock: no
 *          pass, no table maintenance — a cds_lfht resize holds a liburcu
 *          mutex the child would inherit locked), then tells lttng-ust
 *          (lttng_ust_before_fork: ust_fork_mutex, ust_lock, lttng-ust's
 *          urcu registry and grace-period locks, fd tracker, perf lock; so
 *          the child registers with the sessiond and traces under its own
 *          vpid), then quiesces liburcu. Order: pass_lock -> ust locks, the
 *          same order everywhere: the control thread, holding pass_lock,
 *          can take lttng-ust's registry lock (a thread's first tracepoint)
 *          and perf lock (first event into a perf:thread context channel),
 *          and liblttng-ust-fork.so's fork() wrapper, when preloaded, takes
 *          the ust locks after this hook returned. lttng-ust's listener
 *          holds ust locks while a statedump callback waits for a pass, but
 *          only for LETW_STATEDUMP_WAIT_MS (statedump.c): a forker holding
 *          pass_lock and waiting for ust_fork_mutex waits that long at most.
 * parent:  releases in the reverse order.
 * child:   the same, but the statedump hook and the lifecycle lock
 *          (letw_capture_state may have held it) are reset first; the control
 *          thread did not survive the fork, so a new one starts with a
 *          socket named after the child's pid. The table is kept: the
 *          child's address space holds the same code; the records other
 *          threads were in the middle of publishing or unpublishing are
 *          backed out or finished first (table_fork.c). Events from the
 *          child carry its own vpid.
 *
 * Out of order (a caller's mistake) the hooks do nothing rather than hang
 * or abort: a second prepare would wait on pass_lock it holds itself (and
 * urcu's prepare has blocked every signal by then, so nothing could end
 * it); parent/child without a prepare would release locks they do not hold
 * and restore a signal mask never saved. A per-thread flag tells: prepare,
 * fork, parent and child all run in the forking thread (the child's copy
 * of it).
 */
#include <unistd.h>

#include <urcu/urcu-bp.h>

#include "walker.h"
#include "internal.h"
#include "jitdump_mark.h"
#include "log.h"
#include "statedump.h"

static __thread int fork_prepared;

LETW_API void letw_fork_prepare(void)
{
	/* From a control callback (forbidden): the control thread holds
	 * pass_lock for the dispatch, and taking it again would hang for
	 * good. Nothing is prepared, so the parent and child hooks that
	 * follow do nothing, as after a missing prepare. */
	if (fork_prepared || letw_on_control_thread())
		return;
	/* In a child forked without the hooks, urcu_bp_call_rcu_before_fork
	 * waits for good for the parent's call_rcu thread to pause (an audit's
	 * grandchild hung in it), and pass_lock may be held by a parent
	 * thread: out of order, so nothing, and a grandchild forked then gets
	 * no fresh control thread either. */
	if (letw_forked_without_hooks())
		return;
	fork_prepared = 1;
	pthread_mutex_lock(&letw_g.pass_lock);
	letw_probe_fork_prepare();
	urcu_bp_call_rcu_before_fork();
	urcu_bp_before_fork();
}

LETW_API void letw_fork_parent(void)
{
	if (!fork_prepared)
		return;
	fork_prepared = 0;
	urcu_bp_after_fork_parent();
	urcu_bp_call_rcu_after_fork_parent();
	letw_probe_fork_parent();
	pthread_mutex_unlock(&letw_g.pass_lock);
}

LETW_API void letw_fork_child(void)
{
	/* First: lttng-ust's restart (letw_probe_fork_child) starts the
	 * child's listeners, whose statedump callbacks must find the hook's
	 * lock fresh and queue, not wait for a control thread not yet there. */
	if (!fork_prepared)
		return;
	fork_prepared = 0;
	letw_hook_fork_child();
	letw_lifecycle_fork_child();
	urcu_bp_after_fork_child();
	urcu_bp_call_rcu_after_fork_child();
	/* Still the child's only thread, after liburcu's hooks (the repair
	 * runs cds_lfht operations in a read-side section) and before
	 * lttng-ust's listeners or our control thread start: the records
	 * the parent's other threads were publishing or unpublishing at the
	 * fork, half done and never finished here, are backed out or
	 * finished (table_fork.c). letw_init and letw_shutdown do not run
	 * across a fork, so the table pointer holds still. */
	if (letw_g.table)
		letw_table_fork_child(letw_g.table);
	letw_probe_fork_child();
	pthread_mutex_unlock(&letw_g.pass_lock);
	__atomic_store_n(&letw_g.owner_pid, getpid(), __ATOMIC_RELAXED);
	letw_copy_code_set_pid();
	letw_jitdump_mark_fork_child();
	/* The parent's threads are gone; their fds are ours to close. */
	if (__atomic_load_n(&letw_g.control_running, __ATOMIC_RELAXED)) {
		__atomic_store_n(&letw_g.control_running, 0, __ATOMIC_RELAXED);
		letw_ctlsock_close();
		if (letw_g.wake_fd >= 0)
			close(letw_g.wake_fd);
		letw_g.wake_fd = -1;
		pthread_mutex_init(&letw_g.req_lock, NULL);
		pthread_cond_init(&letw_g.req_cond, NULL);
		if (letw_g.table && letw_control_start())
			letw_err("fork: cannot restart the control thread in the child");
	}
}
