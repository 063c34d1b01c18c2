/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_LINEROWS_H
#define LETW_JVM_LINEROWS_H

#include <stdint.h>

#include <jvmti.h>
#include <jvmticmlr.h>
#include <lttng-etw/lttng-etw.h>

/*
 * Line-table rows for letw_method_publish_opts from what CompiledMethodLoad
 * gives: HotSpot's inline record (JVMTI_CMLR_INLINE_INFO, one PCStackInfo
 * per PcDesc) or, without it, the address -> bci map of the outer method.
 * Pure: frames are resolved to (file index, line) by the caller's function.
 *
 * How HotSpot's data becomes rows:
 *  - A PcDesc at pc P describes the code up to and including P, after the
 *    previous PcDesc (HotSpot's own pc -> scope lookup, pc_desc_near, is
 *    "prev < pc <= P"; a call's PcDesc sits at its return address). So the
 *    row of PcDesc i starts at P(i-1) + 1 (the first at offset 0), and
 *    code after the last PcDesc (exception and deopt handlers) gets a row
 *    with line 0 (unknown).
 *  - PCStackInfo lists the frames innermost first (methods[0] is the
 *    deepest inlinee, methods[numstackframes-1] the compiled method: see
 *    create_inline_record in HotSpot's jvmtiExport.cpp); rows are
 *    outermost first, so frame k becomes inline_depth numstackframes-1-k.
 *  - A PcDesc whose whole stack resolves to the rows already in force adds
 *    nothing (the previous rows extend over it).
 *  - PcDescs out of pc order or outside [code_start, code_start+size) are
 *    skipped and counted; stacks deeper than JVM_ROWS_MAX_DEPTH keep their
 *    outermost frames; when cap rows are reached the table ends with an
 *    unknown row where the next one would have started (truncated = 1).
 */

#define JVM_ROWS_MAX_DEPTH 64u

typedef void (*jvm_frame_fn)(void *ctx, jmethodID method, jint bci, uint32_t *file,
			     uint32_t *line);

struct jvm_rows {
	struct letw_line *rows; /* cap entries, caller-owned */
	uint32_t cap;           /* >= 2 */
	uint32_t n;
	int truncated;
	uint32_t skipped_pcs;   /* out of order or outside the code */
	uint32_t cut_frames;    /* frames dropped beyond JVM_ROWS_MAX_DEPTH */
};

void jvm_rows_from_inline(struct jvm_rows *r, const PCStackInfo *pcs, jint npcs,
			  uint64_t code_start, uint32_t code_size, int inlining,
			  jvm_frame_fn fn, void *ctx);

void jvm_rows_from_map(struct jvm_rows *r, const jvmtiAddrLocationMap *map, jint n,
		       jmethodID method, uint64_t code_start, uint32_t code_size,
		       jvm_frame_fn fn, void *ctx);

/* The inline record in compile_info, or NULL (version-checked). */
const jvmtiCompiledMethodLoadInlineRecord *jvm_inline_record(const void *compile_info);

/* Rows needed at most for these inputs (frames + the final row). */
uint64_t jvm_rows_bound_inline(const PCStackInfo *pcs, jint npcs, int inlining);

#endif
