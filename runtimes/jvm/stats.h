/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_STATS_H
#define LETW_JVM_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The agent's counters: relaxed atomic increments from any callback
 * thread (no lock), read for the summary lines the agent logs after an
 * attach replay and at VM death. */
enum jvm_stat {
	JVM_ST_METHODS,           /* method records published */
	JVM_ST_METHOD_REPLAY_DUP, /* -EEXIST during GenerateEvents (already live) */
	JVM_ST_METHOD_OVERLAP,    /* -EEXIST outside a replay */
	JVM_ST_METHOD_FAILED,     /* any other publish error */
	JVM_ST_NAME_FAILED,       /* a JVMTI name lookup failed: not published */
	JVM_ST_MH_INTRINSICS,     /* of them method handle intrinsics (naming.h) */
	JVM_ST_WRONG_PHASE,       /* JVMTI_ERROR_WRONG_PHASE: VM dying, dropped */
	JVM_ST_LINES,             /* methods published with a line table */
	JVM_ST_LINES_INLINED,     /* ...of which with inlined frames */
	JVM_ST_LINES_TRUNCATED,   /* tables cut at the row or file limits */
	JVM_ST_LINES_REFUSED,     /* table refused by lttng-etw: published without */
	JVM_ST_LINES_NO_SCRATCH,  /* every scratch block busy: published without */
	JVM_ST_UNLOADS,           /* method records unpublished */
	JVM_ST_UNLOAD_UNKNOWN,    /* unload of code we never published (-ENOENT) */
	JVM_ST_STUBS,             /* stub records published */
	JVM_ST_STUB_REPLAY_DUP,   /* -EEXIST during GenerateEvents */
	JVM_ST_STUB_OVERLAP,      /* -EEXIST outside a replay */
	JVM_ST_STUB_FAILED,
	JVM_ST_STUB_STALE,        /* unpublished: a compiled method was reported over it */
	JVM_ST_MODULES,           /* class-loader modules published */
	JVM_ST_MODULES_FREED,     /* ...unpublished when their loader died */
	JVM_ST_MODULE_RACES,      /* two threads tagged one loader (see modules.c) */
	JVM_ST_LATE,              /* events after VM death, ignored */
	JVM_ST__COUNT
};

void jvm_stat_inc(enum jvm_stat s);
uint64_t jvm_stat_get(enum jvm_stat s);

/* "methods=12 method_replay_dup=0 ..." into out; returns its length. */
size_t jvm_stats_format(char *out, size_t cap);

#endif
