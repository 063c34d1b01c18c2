/* SPDX-License-Identifier: MIT */
/* `start`, `stop` and `snapshot`'s wait for each process's passes
 * (procs.h), after the session command that asked for them. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "ctl.h"
#include "procs.h"

/* Between STATUS requests: a pass takes milliseconds to seconds. */
#define POLL_MS 20

int letw_procs_wait_passes(struct letw_proc *v, int n, int dcend, double timeout_s,
			   double deadline, double give_up_s, int named,
			   letw_late_capture_fn late_fn)
{
	uint64_t kw = dcend ? LETW_KW_RUNDOWN_END : LETW_KW_RUNDOWN_START;
	double t0 = letw_now_s();
	int i, pending, late = 0, late_failed = 0, ret;

	for (;;) {
		if (letw_interrupted)
			return 0; /* nothing said of the processes: see interrupted() */
		pending = 0;
		for (i = 0; i < n; i++) {
			struct letw_ctl_reply r;
			uint64_t last;

			if (!v[i].alive || v[i].done)
				continue;
			ret = letw_proc_status(v[i].pid, &r, letw_left_s(deadline, 1.0));
			if (letw_proc_gone(ret)) {
				v[i].alive = 0; /* exited: nothing left to wait for */
				v[i].exited = 1;
				continue;
			}
			if (ret) { /* busy in a walk, or a transient error */
				pending++;
				continue;
			}
			last = dcend ? r.last_dcend_pass_id : r.last_dcstart_pass_id;
			if (v[i].busy) {
				/* Its state before the command is lost: a
				 * hook process is done when no statedump pass
				 * is left (last_before 0: any pass of the
				 * flavour counts as ran); a polling one gets
				 * its capture-state now, as it would have. */
				v[i].busy = 0;
				v[i].hook = (r.passes & LETW_CTL_STATUS_HOOK) != 0;
				v[i].untraced = (r.passes & LETW_CTL_STATUS_UNTRACED) != 0;
				v[i].mask_before = r.rundown_mask;
				if (!v[i].hook) {
					v[i].last_before = last;
					if (late_fn && late_fn(&v[i], &r, letw_left_s(deadline, timeout_s))) {
						v[i].alive = 0; /* said; not waited for */
						late_failed++;
						continue;
					}
					if (v[i].done)
						continue;
				}
			}
			if (v[i].hook) {
				v[i].done = r.pending_statedumps == 0;
				v[i].ran = last > v[i].last_before;
				pending += !v[i].done;
				continue;
			}
			if (last > v[i].last_before ||
			    (!(r.rundown_mask & kw) && letw_now_s() - t0 > give_up_s)) {
				v[i].done = 1;
				v[i].ran = last > v[i].last_before;
				continue;
			}
			pending++;
		}
		if (!pending)
			break;
		if (letw_now_s() >= deadline)
			break;
		letw_sleep_ms(POLL_MS);
	}
	for (i = 0; i < n; i++) {
		if (v[i].alive && !v[i].done) {
			letw_err("pid %d: %s not done within %.0f s", (int)v[i].pid,
				 dcend ? "DCEnd pass" : "rundown pass", timeout_s);
			late++;
		} else if (named && v[i].exited) {
			/* Its pass, if one began, is cut: the report says
			 * "truncated (process exited)"; the command did not
			 * do what was asked for it. */
			letw_err("pid %d: exited before its %s pass was done", (int)v[i].pid,
				 dcend ? "DCEnd" : "rundown");
			late++;
		} else if (named && v[i].alive && !v[i].ran && v[i].untraced) {
			letw_err("pid %d: ran no %s pass: %s", (int)v[i].pid,
				 dcend ? "DCEnd" : "DCStart", letw_ctl_strerror(-ENOTCONN));
			late++;
		} else if (named && v[i].alive && !v[i].ran) {
			letw_err("pid %d: ran no %s pass: is it traced by the session (lttng track), with letw_rundown:*%s* enabled?",
				 (int)v[i].pid, dcend ? "DCEnd" : "DCStart", dcend ? "dcend" : "dcstart");
			late++;
		}
	}
	return late + late_failed;
}
