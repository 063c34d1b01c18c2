/* SPDX-License-Identifier: MIT */
/*
 * A LuaJIT trace's line table, from what the host can learn through
 * jit.attach / jit.util: the bytecodes the recorder went through (the
 * "record" event: function, pc and frame depth of each), and the machine
 * code's size and loop offset (jit.util.tracemc).
 *
 * How precise this is: the *lines* are exact — every row is a source line
 * the trace's code implements, with the frames LuaJIT inlined into it as
 * an inlining stack (call site outermost). The *offsets* are an estimate:
 * LuaJIT keeps no machine code → bytecode map (it assembles IR backwards,
 * and only exit snapshots point back at bytecode; jit.util exposes neither
 * snapshot PCs nor IR → machine code offsets), so the recorded bytecodes
 * are spread evenly, in recording order, over the code before the loop
 * and, for a looping trace, again over the loop part (LuaJIT emits the
 * loop body twice: the first iteration, then the optimised loop). A
 * sample's line is a line the trace runs, not necessarily the one the
 * sampled instruction came from; hot lines of a long trace blur into
 * their neighbours.
 */
#ifndef LETW_LUAJIT_TRACELINES_H
#define LETW_LUAJIT_TRACELINES_H

#include <stdint.h>

#include <lttng-etw/lttng-etw.h>

/* One recorded bytecode. */
struct lh_rec {
	uint32_t line;  /* source line, 0 when unknown */
	uint32_t depth; /* frame depth in the trace (0: the trace's start frame) */
	uint32_t file;  /* index into the trace's file names */
};

#define LH_LINES_MAX 8192u /* rows per trace (inlining stacks included) */

/*
 * Fills rows[0..LH_LINES_MAX) from recs and returns how many were
 * written (0: nothing usable). code_size > 0; loop_offset < code_size, 0
 * for a trace without a loop.
 */
uint32_t lh_trace_lines(const struct lh_rec *recs, uint32_t nrecs,
			uint32_t code_size, uint32_t loop_offset,
			struct letw_line *rows);

#endif
