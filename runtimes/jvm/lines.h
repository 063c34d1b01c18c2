/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_LINES_H
#define LETW_JVM_LINES_H

#include <jni.h>
#include <jvmti.h>
#include <lttng-etw/lttng-etw.h>

#include "scratch.h"

/*
 * A compiled method's line table, from inside its CompiledMethodLoad
 * callback (the only time compile_info, map and the jmethodIDs in them
 * may be used). Rows come from linerows.c; this file resolves frames:
 * per distinct method, GetMethodDeclaringClass + GetClassSignature +
 * GetSourceFileName for its file (package path + SourceFile, deduplicated
 * per table) and GetLineNumberTable for bci -> line. A bci before the
 * first entry, or negative (HotSpot's synchronization / method-entry
 * scopes), gets the method's first line. What JVMTI refuses (no line
 * table: -g:none, native code, a lookup failing) gives line 0.
 *
 * Fills opts (pointing into s) and returns the number of rows (0: publish
 * without a table). *inlined is set when some row has inline_depth > 0.
 * jvm_lines_release must follow, after the publish.
 */
uint32_t jvm_lines_build(jvmtiEnv *jvmti, JNIEnv *jni, struct jvm_scratch *s,
			 jmethodID method, jclass klass, const char *class_sig, jint code_size,
			 const void *code_addr, jint map_length,
			 const jvmtiAddrLocationMap *map, const void *compile_info,
			 int inlining, struct letw_method_opts *opts, int *inlined,
			 int *truncated);

void jvm_lines_release(jvmtiEnv *jvmti, struct jvm_scratch *s);

#endif
