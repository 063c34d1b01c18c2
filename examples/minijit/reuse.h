/* SPDX-License-Identifier: MIT */
/*
 * --reuse: one address range holding two functions over time, the case a
 * perf map cannot name right (it has no time) and a jitdump can. Before
 * the run, fn_0 is rebuilt alone in a chunk of its own and fn_3 is
 * unpublished; on SIGUSR1 the run phase frees fn_0 (unpublish, grace
 * period, release: its chunk goes back to the heap's emptied free list)
 * and compiles fn_3, which lands at the very address fn_0 had. Both are
 * hot functions, so samples fall in the range before and after.
 *
 * What happened is written to FILE (FILE.tmp renamed), CLOCK_MONOTONIC ns:
 *   old fn_0 0xADDR SIZE T_BEFORE_UNPUBLISH
 *   new fn_3 0xADDR SIZE T_AFTER_PUBLISH HEX_BYTES
 */
#ifndef MINIJIT_REUSE_H
#define MINIJIT_REUSE_H

#include <stdint.h>

#include "jitrt.h"

#define REUSE_OLD 0u /* fn_0 */
#define REUSE_NEW 3u /* fn_3: hot, never pinned by a stub (3 divides it) */

struct reuse {
	struct jitrt *rt;
	const char *path;
	uint64_t addr;
	int done;
};

/* After jitrt_setup: needs --hot 4 or more and no churn thread. Prints
 * what failed; 0 or a negative errno. */
int reuse_prepare(struct reuse *r, struct jitrt *rt, const char *path);

/* The swap (a hotloop hook: call it between rounds). */
int reuse_swap(void *reuse);

#endif
