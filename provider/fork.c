/* SPDX-License-Identifier: MIT */
/*
 * Fork hooks, called by the runtime around fork() (we install no
 * pthread_atfork handlers: the runtime knows when it forks and which of its
 * own locks must be quiesced first).
 *
 * prepare: tells lttng-ust first (so the child registers with the
 *          sessiond and traces under its own vpid; lttng-ust takes its
 *          ust_lock there), then waits for the control thread to be idle
 *          (pass_lock: no pass, no table resize — whose liburcu mutex the
 *          child would inherit locked), then quiesces liburcu. Order:
 *          ust_lock before pass_lock, never the reverse: the control
 *          thread never takes ust_lock. (With liblttng-ust-fork.so
 *          preloaded, its fork() wrapper takes ust_lock after us; a
 *          listener thread waiting for the control thread meanwhile only
 *          waits for its own bounded timeout.)
 * child:   the control thread did not survive the fork; start a new one
 *          with a socket named after the child's pid. The table is kept:
 *          the child's address space holds the same code. Events from the
 *          child carry its own vpid.
 */
#include <unistd.h>

#include <urcu/urcu-bp.h>

#include "walker.h"
#include "internal.h"
#include "jitdump_mark.h"
#include "log.h"
#include "statedump.h"

LETW_API void letw_fork_prepare(void)
{
	letw_probe_fork_prepare();
	pthread_mutex_lock(&letw_g.pass_lock);
	urcu_bp_call_rcu_before_fork();
	urcu_bp_before_fork();
}

LETW_API void letw_fork_parent(void)
{
	urcu_bp_after_fork_parent();
	urcu_bp_call_rcu_after_fork_parent();
	pthread_mutex_unlock(&letw_g.pass_lock);
	letw_probe_fork_parent();
}

LETW_API void letw_fork_child(void)
{
	/* First: lttng-ust's restart (letw_probe_fork_child) runs the child's
	 * statedumps, whose callbacks must queue, not wait for a control
	 * thread not yet there. */
	letw_hook_fork_child();
	urcu_bp_after_fork_child();
	urcu_bp_call_rcu_after_fork_child();
	pthread_mutex_unlock(&letw_g.pass_lock);
	letw_probe_fork_child();
	letw_copy_code_set_pid();
	letw_jitdump_mark_fork_child();
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
