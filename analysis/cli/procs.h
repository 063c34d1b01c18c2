/* SPDX-License-Identifier: MIT */
/* The traced lttng-etw processes a session command acts on, over their
 * control sockets (ctl.h): their state before the command, and the
 * capture-state a polling process needs where a statedump would not reach
 * it (start, snapshot, and watch on each new chunk). */
#ifndef LETW_CLI_PROCS_H
#define LETW_CLI_PROCS_H

#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"

#define LETW_KW_RUNDOWN_START 0x40ull
#define LETW_KW_RUNDOWN_END   0x100ull
/* The wire's `passes` bits of a capture-state reply (lttng-etw.h). */
#define LETW_PASS_DCSTART 0x1u
#define LETW_PASS_DCEND   0x2u

struct letw_proc {
	pid_t pid;
	int alive;
	int done;
	int hook;             /* serves statedumps (else: polls) */
	int ran;              /* a pass of the flavour since the list */
	int busy;             /* no reply while listed: state before unknown */
	int unreachable;      /* listed, but answered with an error */
	int exited;           /* gone while a command waited for its pass */
	int untraced;         /* tracing off there (LETW_CTL_STATUS_UNTRACED) */
	uint64_t mask_before, last_before;
	int sized;            /* last_records known (LETW_CTL_STATUS_EMITTED) */
	uint64_t last_records; /* records of its last completed pass */
	uint64_t last_bytes;  /* their payload bytes (ctlproto.h) */
};

/* STATUS of pid: 0 with *r, or a negative errno / the reply's status. */
int letw_proc_status(pid_t pid, struct letw_ctl_reply *r, double timeout_s);
/* 1 when err says the process has exited. */
int letw_proc_gone(int err);
/* What is left of deadline (letw_now_s() time), at most cap, at least a
 * moment: the bound of one request. */
double letw_left_s(double deadline, double cap);
/* The processes to act on: the `only` list, or every lttng-etw process,
 * with their state before the session is touched (last_before: of the
 * DCEnd flavour if dcend). Each is given letw_left_s(deadline, reply_s) to
 * answer; one that does not is kept as busy (said unless quiet_busy). One
 * answering with an error other than exit is unreachable (said).
 * Interrupted (letw_interrupted), the processes not asked yet are left
 * zeroed (not alive), unsaid. calloc()ed, *n entries; NULL after printing
 * why. */
struct letw_proc *letw_procs_list(const pid_t *only, int nonly, int *n, int dcend,
				  double reply_s, double deadline, int quiet_busy);
/* Ask one process for a capture-state pass of mask (0: its live mask),
 * done then, and `ran` when a pass of the flavour waited for (DCEnd if
 * dcend) ran; 0 (also when it exited meanwhile), -1 after printing why
 * (unsaid when interrupted: letw_interrupted). */
int letw_proc_capture(struct letw_proc *p, uint64_t mask, int dcend, double timeout_s);
/* A statedump (lttng regenerate) reaches hook processes only: a capture-
 * state for each live polling process with rundown events enabled.
 * Each is given letw_left_s(deadline, cap_s). Returns how many failed
 * (each printed). */
int letw_procs_capture_polling(struct letw_proc *v, int n, double cap_s, double deadline);

/*
 * `stop --pid`: the filter (malloc()ed) on the DCEnd events for the
 * processes that answered. An event's vpid is its pid inside its own pid
 * namespace, not the host pid the user gave: a containerised process's
 * pid is translated (ctl.c). A process in another namespace with the same
 * vpid passes the filter too; its extra pass is harmless to the analysis,
 * which keys processes by (pid_ns, vpid). Returns NULL with *oom set when out of memory, NULL
 * without it when no process answered.
 */
char *letw_procs_vpid_filter(const struct letw_proc *v, int n, int *oom);

/* ---- procs_wait.c ---- */

/* What a command sends a polling process the statedump does not reach,
 * given its STATUS reply r; for one first heard from in
 * letw_procs_wait_passes. */
typedef int (*letw_late_capture_fn)(struct letw_proc *p, const struct letw_ctl_reply *r,
				    double timeout_s);

/*
 * After a session command: wait until each live process is done with it,
 * until deadline (letw_now_s() time; timeout_s is for the message).
 * A statedump-served process is done when it has no statedump pass queued
 * or running. A polling process is done when it completed a pass of the
 * flavour after list_procs, or, after give_up_s, if its live mask still
 * lacks the flavour's keyword (the session does not trace it). With named
 * (the user's --pid list), a process done without a pass of the flavour
 * is said and counted: the session does not trace it, or does not enable
 * the flavour's events, and the user asked for its pass. A process busy
 * while listed is learned of at its first reply: a polling one is then
 * sent late_fn()'s capture-state.
 */
int letw_procs_wait_passes(struct letw_proc *v, int n, int dcend, double timeout_s,
			   double deadline, double give_up_s, int named,
			   letw_late_capture_fn late_fn);

#endif /* LETW_CLI_PROCS_H */
