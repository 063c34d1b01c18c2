/* SPDX-License-Identifier: MIT */
/*
 * Fork hooks, called by the runtime around fork() (we install no
 * pthread_atfork handlers: the runtime knows when it forks and which of its
 * own locks must be quiesced first).
 *
 * prepare: quiesces liburcu and tells lttng-ust (so the child registers
 *          with the sessiond and traces under its own vpid). It takes no
 *          lock of ours: lttng-ust's listener may be waiting for a pass
 *          while holding the locks lttng_ust_before_fork takes, so waiting
 *          here for the pass would close a cycle (internal.h).
 * child:   the control thread did not survive the fork; start a new one
 *          with a socket named after the child's pid. The table is kept:
 *          the child's address space holds the same code. Events from the
 *          child carry its own vpid.
 */
#include <unistd.h>

#include <urcu/urcu-bp.h>

#include "emit.h"
#include "internal.h"
#include "log.h"
#include "statedump.h"

LETW_API void letw_fork_prepare(void)
{
	urcu_bp_call_rcu_before_fork();
	urcu_bp_before_fork();
	letw_probe_fork_prepare();
}

LETW_API void letw_fork_parent(void)
{
	letw_probe_fork_parent();
	urcu_bp_after_fork_parent();
	urcu_bp_call_rcu_after_fork_parent();
}

LETW_API void letw_fork_child(void)
{
	/* First: lttng-ust's restart below runs the child's statedumps, whose
	 * callbacks must queue, not wait for a control thread not yet there. */
	letw_hook_fork_child();
	letw_probe_fork_child();
	letw_emit_set_pid();
	urcu_bp_after_fork_child();
	urcu_bp_call_rcu_after_fork_child();
	/* The parent's control thread may have held it at fork. */
	pthread_mutex_init(&letw_g.pass_lock, NULL);
	/* The parent's threads are gone; their fds are ours to close. */
	if (letw_g.control_running) {
		letw_g.control_running = 0;
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
