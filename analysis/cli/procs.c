/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl.h"
#include "procs.h"

/* The control thread answers between passes, so a process in a long walk
 * (a blocking channel paced by the consumer) answers late, not never. */
int letw_proc_status(pid_t pid, struct letw_ctl_reply *r, double timeout_s)
{
	int ret = letw_ctl_call(pid, LETW_CTL_STATUS, 0, 1, (int)(timeout_s * 1000), r);

	return ret ? ret : r->status;
}

int letw_proc_gone(int err)
{
	return err == -ECONNREFUSED || err == -ENOENT;
}

double letw_left_s(double deadline, double cap)
{
	double left = deadline - letw_now_s();

	/* Past the deadline a process is still asked, briefly: a reply
	 * already on its way is taken rather than the process called late. */
	if (left < 0.05)
		left = 0.05;
	return left < cap ? left : cap;
}

struct letw_proc *letw_procs_list(const pid_t *only, int nonly, int *n, int dcend,
				  double reply_s, double deadline, int quiet_busy)
{
	pid_t *pids = NULL;
	struct letw_proc *v;
	int i, np;

	if (nonly) {
		np = nonly;
	} else {
		np = letw_ctl_list(&pids);
		if (np < 0) {
			letw_err("cannot list the lttng-etw control sockets: %s", strerror(-np));
			return NULL;
		}
	}
	v = calloc((size_t)np + 1, sizeof(*v));
	if (!v) {
		letw_err("out of memory");
		free(pids);
		return NULL;
	}
	for (i = 0; i < np; i++) {
		struct letw_ctl_reply r;
		double bound = letw_left_s(deadline, reply_s);
		int ret;

		v[i].pid = nonly ? only[i] : pids[i];
		/* A short bound: the control thread answers between passes,
		 * so a process in a long pass (or stopped) answers late, not
		 * never. It is kept, and waited for with the others within
		 * the caller's deadline; taking it for gone skipped it
		 * without a word (and the whole timeout went on this one
		 * call). Its state before the command is unknown: it is
		 * assumed served by the statedump until it answers. */
		ret = letw_proc_status(v[i].pid, &r, bound);
		if (letw_interrupted)
			break; /* the rest not asked: the caller stops */
		if (ret == -ETIMEDOUT) {
			v[i].alive = 1;
			v[i].busy = 1;
			v[i].hook = 1;
			if (!quiet_busy)
				letw_note("pid %d: no reply within %.1f s (in a rundown pass, or stopped): waited for with the others",
					  (int)v[i].pid, bound);
			continue;
		}
		v[i].alive = ret == 0;
		if (!v[i].alive) {
			/* Listed processes may exit meanwhile, and one with
			 * tracing off (LETW_DISABLE) has nothing to do: a
			 * word for a --pid the user named only. So for another
			 * user's process, whose socket refuses us (EACCES,
			 * EPERM; root is never refused): it cannot be asked
			 * anyway, and counting it would fail every all-process
			 * command of a non-root user on a machine running
			 * root's lttng-etw processes. Any other error is a
			 * process the command cannot serve, said and counted,
			 * named or not. */
			v[i].unreachable = !letw_proc_gone(ret) && ret != -ENOTCONN &&
					   !letw_ctl_denied(ret);
			if (nonly || v[i].unreachable)
				letw_err("pid %d: %s; ignored", (int)v[i].pid, letw_ctl_strerror(ret));
			continue;
		}
		v[i].hook = (r.passes & LETW_CTL_STATUS_HOOK) != 0;
		v[i].untraced = (r.passes & LETW_CTL_STATUS_UNTRACED) != 0;
		v[i].mask_before = r.rundown_mask;
		v[i].last_before = dcend ? r.last_dcend_pass_id : r.last_dcstart_pass_id;
		v[i].sized = (r.passes & LETW_CTL_STATUS_EMITTED) != 0;
		v[i].last_records = v[i].sized ? r.emitted : 0;
		v[i].last_bytes = v[i].sized ? r.skipped_raced : 0;
	}
	free(pids);
	*n = np;
	return v;
}

/* A polling process the statedump does not reach: ask it directly. */
int letw_proc_capture(struct letw_proc *p, uint64_t mask, int dcend, double timeout_s)
{
	struct letw_ctl_reply r;
	int ret = letw_ctl_call(p->pid, LETW_CTL_CAPTURE_STATE, mask, 1,
				(int)(timeout_s * 1000), &r);

	if (!ret)
		ret = r.status;
	if (letw_proc_gone(ret))
		return 0; /* exited meanwhile */
	if ((ret == -EINTR || ret == -EINPROGRESS) && letw_interrupted)
		return -1; /* its pass goes on; the caller says what is left */
	if (ret) {
		letw_err("pid %d: capture-state: %s", (int)p->pid, letw_ctl_strerror(ret));
		return -1;
	}
	p->done = 1;
	/* No pass of the flavour (its keyword not enabled): the session does
	 * not trace it, or does not record that flavour, which wait_passes
	 * says for a --pid. Another flavour's pass is no answer. */
	p->ran = (r.passes & (dcend ? LETW_PASS_DCEND : LETW_PASS_DCSTART)) != 0;
	return 0;
}

int letw_procs_capture_polling(struct letw_proc *v, int n, double cap_s, double deadline)
{
	int failed = 0;

	for (int i = 0; i < n; i++)
		if (v[i].alive && !v[i].hook &&
		    (v[i].mask_before & (LETW_KW_RUNDOWN_START | LETW_KW_RUNDOWN_END)))
			failed += letw_proc_capture(&v[i], 0, 0, letw_left_s(deadline, cap_s)) != 0;
	return failed;
}

char *letw_procs_vpid_filter(const struct letw_proc *v, int n, int *oom)
{
	char *f = NULL, *nf;
	pid_t vpid;
	int i;

	*oom = 0;
	for (i = 0; i < n; i++) {
		if (!v[i].alive)
			continue;
		if (letw_ctl_vpid(v[i].pid, &vpid))
			vpid = v[i].pid; /* exited meanwhile: nothing will match */
		if (asprintf(&nf, "%s%s$ctx.vpid == %d", f ? f : "", f ? " || " : "",
			     (int)vpid) < 0) {
			free(f);
			*oom = 1;
			return NULL;
		}
		free(f);
		f = nf;
	}
	return f;
}
