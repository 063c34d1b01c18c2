/* SPDX-License-Identifier: MIT */
/*
 * The host's view of LuaJIT's live traces, mirrored into lttng-etw.
 *
 * LuaJIT identifies a trace by a small number that it reuses: after a
 * flush every number starts again at 1, and a number freed by the garbage
 * collector (a root trace flushed alone with jit.flush(f)) is handed to
 * the next trace. The map is indexed by that number and remembers the
 * code address it published, so a reused number retires the old record
 * first. Everything here runs on the Lua thread that owns the lua_State,
 * inside LuaJIT's trace event callback: no locking.
 */
#ifndef LETW_LUAJIT_TRACEMAP_H
#define LETW_LUAJIT_TRACEMAP_H

#include <stdint.h>
#include <stdio.h>

#include "tracelines.h"

/* What the "start" and "stop" trace events tell about one trace. */
struct lh_trace_info {
	unsigned int traceno;
	uint64_t code_start; /* jit.util.tracemc address */
	uint32_t code_size;  /* bytes of machine code */
	const char *source;  /* chunk name as LuaJIT reports it ("@file.lua") */
	unsigned int line;   /* source line where recording started */
	unsigned int parent; /* parent trace of a side trace, 0 for a root */
	unsigned int exitno; /* parent's exit the side trace hangs off */
	const char *linktype; /* traceinfo(tr).linktype: "loop", "root", ... */
	uint32_t loop_offset; /* tracemc's loop offset into the code, 0: none */
	const struct lh_rec *recs; /* the bytecodes recorded, in order */
	uint32_t nrecs;
	const char *const *files;  /* chunk names the recs' file indexes name */
	uint32_t nfiles;
};

struct lh_counters {
	uint64_t published, unpublished, replaced, flushes, errors;
};

struct lh_tracemap;

/* verbose: a FILE to narrate every publish/unpublish to, or NULL. */
struct lh_tracemap *lh_tracemap_new(FILE *verbose);

/* A trace number is being (re)used: retire the record it named before. */
void lh_tracemap_start(struct lh_tracemap *m, unsigned int traceno);

/* A trace was committed: publish its module (once per chunk) and itself.
 * Returns 0 or the negative errno of the failed publish. */
int lh_tracemap_stop(struct lh_tracemap *m, const struct lh_trace_info *t);

/* LuaJIT freed all traces and their machine code. */
void lh_tracemap_flush(struct lh_tracemap *m);

/* The lua_State is about to close (its machine code dies with it):
 * unpublish every trace and module, report the final counters in *out
 * (may be NULL), then free the map. */
void lh_tracemap_close(struct lh_tracemap *m, struct lh_counters *out);

#endif /* LETW_LUAJIT_TRACEMAP_H */
