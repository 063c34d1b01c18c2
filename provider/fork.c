/* SPDX-License-Identifier: MIT */
/*
 * Fork hooks, called by the runtime around fork() (we install no
 * pthread_atfork handlers: the runtime knows when it forks and which of its
 * own locks must be quiesced first).
 *
 * prepare: waits for a pass or a table resize in progress to end
 *          (pass_lock) so the child never inherits a walk in progress or
 *          the table's resize mutex held, then quiesces liburcu and
 *          tells lttng-ust (so the child registers with the sessiond and
 *          traces under its own vpid).
 * child:   the control thread did not survive the fork; start a new one
 *          with a socket named after the child's pid. The table is kept:
 *          the child's address space holds the same code. Events from the
 *          child carry its own vpid.
 */
#include <unistd.h>

#include <urcu/urcu-bp.h>

#include "internal.h"
#include "log.h"

LETW_API void letw_fork_prepare(void)
{
	pthread_mutex_lock(&letw_g.pass_lock);
	urcu_bp_call_rcu_before_fork();
	urcu_bp_before_fork();
	letw_probe_fork_prepare();
}

LETW_API void letw_fork_parent(void)
{
	letw_probe_fork_parent();
	urcu_bp_after_fork_parent();
	urcu_bp_call_rcu_after_fork_parent();
	pthread_mutex_unlock(&letw_g.pass_lock);
}

LETW_API void letw_fork_child(void)
{
	letw_probe_fork_child();
	urcu_bp_after_fork_child();
	urcu_bp_call_rcu_after_fork_child();
	pthread_mutex_unlock(&letw_g.pass_lock);
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
