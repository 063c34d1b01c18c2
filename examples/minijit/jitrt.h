/* SPDX-License-Identifier: MIT */
/*
 * The minijit runtime: a table of JIT'd functions, each with at most one
 * live native code version, plus a few stubs. Every code version and stub
 * is reported to lttng-etw when it becomes callable and before its memory
 * is released, which is the ordering the trace (and any perf map derived
 * from it) relies on.
 *
 * Threads: one writer at a time changes the table (the main thread during
 * setup, the churn thread afterwards). Callers read fn->code inside an
 * urcu-bp read-side critical section; the writer waits for a grace period
 * before it frees a version it replaced or removed.
 */
#ifndef MINIJIT_JITRT_H
#define MINIJIT_JITRT_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "codegen.h"
#include "codeheap.h"
#include "kernel.h"

#define JITRT_NARGS 2
#define JITRT_MAX_STUBS 17 /* 16 jump stubs and one stub block */

/* One native code version; immutable once published. */
struct jit_code {
	struct code_alloc mem;
	uint64_t version;
	enum codegen_tier tier;
	struct codegen_marks marks; /* source position of each code range */
	struct jit_code *retire_next; /* writer-only: waiting to be freed */
};

struct jit_fn {
	uint32_t index;
	uint64_t method_id;
	uint32_t module; /* index into the runtime's modules */
	int hot;
	int pinned; /* a stub jumps here: never re-tiered or freed */
	struct kernel k;
	int64_t arg[JITRT_NARGS];
	int64_t expect[JITRT_NARGS]; /* kernel_eval() of arg[] */
	_Atomic(struct jit_code *) code; /* NULL once freed */
	uint64_t last_version; /* writer-only */
	uint32_t src_line; /* its "fn" line in the source listing (source.h) */
};

struct jit_stub {
	struct code_alloc mem;
	uint32_t kind;     /* LETW_STUB_* */
	uint64_t owner;    /* method id, or 0 for the block */
	uint32_t target;   /* function index the (first) slot jumps to */
	uint32_t nslots;   /* jump slots in it, each CODEGEN_STUB_SIZE bytes */
	char name[48];
};

struct jit_counters {
	uint64_t compiled, retiered, freed, regenerated;
};

struct jitrt {
	struct codeheap heap;
	struct jit_fn *fns;
	uint32_t nfns, nhot, nmodules;
	struct jit_stub *stubs;
	uint32_t nstubs;
	struct jit_counters n;
	struct jit_code *retired; /* unpublished, waiting for a grace period */
	const char *source; /* listing path: publish line tables into it, or NULL */
};

typedef int64_t (*jit_entry_fn)(int64_t);

static inline jit_entry_fn jit_entry(const struct jit_code *c)
{
	return (jit_entry_fn)(uintptr_t)c->mem.addr;
}

/* Allocates the table and computes every reference result. Publishes
 * nothing. Returns 0 or a negative errno. */
int jitrt_init(struct jitrt *rt, uint32_t nfns, uint32_t nhot, uint32_t nmodules);
/* Frees the table and unmaps all code; call after letw_shutdown. */
void jitrt_destroy(struct jitrt *rt);

/* The initial state: modules, every function at the quick tier, every
 * third re-tiered, a few freed, stubs. Prints what failed to stderr. */
int jitrt_setup(struct jitrt *rt);

/*
 * Writer side, also used by the churn thread. Each step below prints its
 * own error to stderr and returns a negative errno.
 *
 * jitrt_build compiles new versions of fns[idx[0..n)] into one sealed
 * batch and checks each against the reference; jitrt_swap publishes them,
 * installs them and unpublishes the versions they replace (which go to
 * the retired list); jitrt_remove unpublishes and uninstalls functions;
 * jitrt_reclaim waits for a grace period and frees the retired list.
 */
int jitrt_build(struct jitrt *rt, const uint32_t *idx, uint32_t n,
		const enum codegen_tier *tiers, struct jit_code **out);
int jitrt_swap(struct jitrt *rt, const uint32_t *idx, uint32_t n, struct jit_code **fresh);
int jitrt_remove(struct jitrt *rt, uint32_t index);
void jitrt_reclaim(struct jitrt *rt);

/* Writes the live set sorted by address (see README); with
 * JITRT_LIST_HOT, appends "hot <name>" lines, with JITRT_LIST_CODE
 * "code <name> <hex bytes>" lines of the hot functions' live code. Then
 * FILE.tmp -> FILE, then FILE.ready. */
#define JITRT_LIST_HOT 0x1
#define JITRT_LIST_CODE 0x2
int jitrt_write_list(struct jitrt *rt, const char *path, int flags);
/* Removes a stale PATH.ready (an earlier run's): 0 or a negative errno
 * (said). */
int jitrt_unready_list(const char *path);

/* "<hex>" of a code version's bytes to out (the code is readable: RX). */
void jitrt_write_hex(FILE *out, const struct jit_code *c);

/* Checks one call's result against the reference (reader side). */
static inline int jitrt_call_ok(const struct jit_fn *f, const struct jit_code *c, unsigned v)
{
	return jit_entry(c)(f->arg[v]) == f->expect[v];
}

#endif
