/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_SCRATCH_H
#define LETW_JVM_SCRATCH_H

#include <stdatomic.h>
#include <stdint.h>

#include <jvmti.h>
#include <lttng-etw/lttng-etw.h>

#include "linerows.h"

/*
 * Working memory of the line-table builder on the CompiledMethodLoad path.
 * The callback must not take libc's malloc lock, so the memory is a small
 * pool of blocks allocated once at agent load (jvm_scratch_init, only when
 * line tables are on), never grown, never freed (the agent is -z nodelete
 * and lives as long as the process). A callback claims a block with a
 * compare-and-swap on its busy flag and never waits: when every block is
 * busy it gets none, and the method is published without its line table
 * (counted as lines_no_scratch). CompiledMethodLoad comes from the
 * ServiceThread and the thread calling GenerateEvents (attach replay), so
 * two blocks are in use at most in practice; four leave room.
 *
 * A block holds at most JVM_SCRATCH_ROWS rows: longer tables are cut
 * (linerows' truncated, counted as lines_truncated).
 */

#define JVM_SCRATCH_BLOCKS 4u
#define JVM_SCRATCH_ROWS 16384u /* 256 KiB of rows; < LETW_LINES_MAX + 1 */
#define JVM_NAME_BUF (LETW_STRING_MAX + 1)
#define JVM_MCACHE_SIZE 1024u /* distinct methods per compiled method; power of 2 */

/* One method met in the current compiled method's inlining tree. */
struct jvm_mcache {
	jmethodID method;           /* NULL: free slot */
	uint32_t file;              /* index into files, or UINT32_MAX: none */
	uint32_t first_line;
	jvmtiLineNumberEntry *tab;  /* JVMTI-allocated until the callback ends */
	jint ntab;
};

struct jvm_scratch {
	atomic_int busy; /* 1 while a callback holds the block */
	uint32_t mc_used;
	struct jvm_mcache mc[JVM_MCACHE_SIZE];
	uint32_t mc_slots[JVM_MCACHE_SIZE]; /* used slots, for the cleanup */
	const char *files[LETW_FILES_MAX];
	uint32_t nfiles;
	uint32_t pool_used;
	char pool[LETW_FILES_BYTES_MAX]; /* file names, NULs included */
	char tmp[JVM_NAME_BUF], tmp2[JVM_NAME_BUF], path[JVM_NAME_BUF]; /* lines.c */
	struct letw_line rows[JVM_SCRATCH_ROWS];
};

/* Allocates the pool, once (again: no-op); 0 or -ENOMEM. At agent load,
 * before any event is enabled. */
int jvm_scratch_init(void);

/* A free block, marked busy; NULL when there is no pool or every block is
 * busy (that second case counted as lines_no_scratch). Lock-free: one
 * compare-and-swap per block, no wait. Release with jvm_scratch_put. */
struct jvm_scratch *jvm_scratch_get(void);
void jvm_scratch_put(struct jvm_scratch *s);

/* Points r at the block's rows, capped at JVM_SCRATCH_ROWS. */
void jvm_scratch_rows(struct jvm_scratch *s, struct jvm_rows *r);

#endif
