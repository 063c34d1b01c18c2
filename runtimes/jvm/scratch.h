/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_SCRATCH_H
#define LETW_JVM_SCRATCH_H

#include <stdint.h>

#include <jvmti.h>
#include <lttng-etw/lttng-etw.h>

/*
 * Per-thread working memory of the CompiledMethodLoad path, so the
 * callback needs no malloc of its own in the steady state: allocated on a
 * thread's first compiled-method event (~105 KiB), grown only when a method
 * needs more line rows than any before it on that thread (doubling, at
 * most LETW_LINES_MAX + 1 rows), freed when the thread exits (pthread key
 * destructor). Callback threads are few and long-lived: the ServiceThread,
 * the thread calling GenerateEvents, now and then a compiler thread.
 * Nothing in it survives a callback except the buffers themselves.
 */

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
	int busy; /* re-entry guard: a nested callback on this thread gets none */
	struct letw_line *rows;
	uint32_t rows_cap;
	uint32_t mc_used;
	struct jvm_mcache mc[JVM_MCACHE_SIZE];
	uint32_t mc_slots[JVM_MCACHE_SIZE]; /* used slots, for the cleanup */
	const char *files[LETW_FILES_MAX];
	uint32_t nfiles;
	uint32_t pool_used;
	char pool[LETW_FILES_BYTES_MAX]; /* file names, NULs included */
	/* The record's strings, and the compiled method's class signature in
	 * UTF-8 (csig), kept for the line table's first file. */
	char ns[JVM_NAME_BUF], name[JVM_NAME_BUF], sig[JVM_NAME_BUF], csig[JVM_NAME_BUF];
	char tmp[JVM_NAME_BUF], tmp2[JVM_NAME_BUF], path[JVM_NAME_BUF]; /* lines.c */
};

int jvm_scratch_init(void); /* once, at agent load */

/* This thread's scratch, marked busy; NULL when out of memory or already
 * busy. Release with jvm_scratch_put. */
struct jvm_scratch *jvm_scratch_get(void);
void jvm_scratch_put(struct jvm_scratch *s);

/* Make room for need rows; 0 or -ENOMEM (the old buffer stays). */
int jvm_scratch_rows(struct jvm_scratch *s, uint64_t need);

#endif
