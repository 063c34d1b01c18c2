/* SPDX-License-Identifier: MIT */
/*
 * The run phase: call live JIT'd code until a deadline or a stop request.
 * The first nhot functions loop ~100x longer than the others, so they take
 * most of the CPU time (what a profiler of this process should show);
 * every round also calls a rotating handful of cold functions and one stub.
 */
#ifndef MINIJIT_HOTLOOP_H
#define MINIJIT_HOTLOOP_H

#include <signal.h>
#include <stdint.h>

#include "jitrt.h"

struct hotloop_stats {
	uint64_t rounds, calls, mismatches;
	double seconds;
	int hook_error; /* the hook's failure, which ended the run */
};

/* Work the run phase does between two rounds (outside any read-side
 * section) when *flag becomes non-zero, e.g. on a signal. */
struct hotloop_hook {
	volatile sig_atomic_t *flag;
	int (*fn)(void *arg); /* 0 or a negative errno (ends the run) */
	void *arg;
};

/* Runs for `seconds` or until *stop becomes non-zero; reader side only
 * (safe while the churn thread rewrites the table), except for the hook
 * (may be NULL), which may change the table itself. */
void hotloop_run(const struct jitrt *rt, double seconds, volatile sig_atomic_t *stop,
		 const struct hotloop_hook *hook, struct hotloop_stats *st);

#endif
