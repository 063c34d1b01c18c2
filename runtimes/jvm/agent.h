/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_AGENT_H
#define LETW_JVM_AGENT_H

#include <pthread.h>
#include <stdatomic.h>

#include <jni.h>
#include <jvmti.h>

#include "options.h"

/*
 * The agent's process-wide state. Everything but the atomics is written
 * once in Agent_OnLoad / Agent_OnAttach before any event is enabled, and
 * only read afterwards: the callbacks take no lock.
 */
struct jvm_agent {
	JavaVM *vm;
	struct jvm_opts opts;
	int can_lines;   /* got can_get_line_numbers + can_get_source_file_name */
	int can_modules; /* got can_tag_objects + can_generate_object_free_events */
	atomic_int dead;          /* VMDeath seen: callbacks do nothing */
	atomic_int replaying;     /* a GenerateEvents is running on replay_thread */
	pthread_t replay_thread;
};

extern struct jvm_agent jvm_g;

/* JNI env of the calling thread, or NULL (not a JavaThread). */
JNIEnv *jvm_jni(void);

/* Is the current thread the one replaying with GenerateEvents? */
int jvm_in_replay(void);

/* methods.c */
void JNICALL jvm_on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
					 const void *code_addr, jint map_length,
					 const jvmtiAddrLocationMap *map,
					 const void *compile_info);
void JNICALL jvm_on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
					   const void *code_addr);

/* stubs.c */
void JNICALL jvm_on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				 jint length);

/* modules.c */
int jvm_modules_live_init(jvmtiEnv *jvmti, JNIEnv *jni);
uint64_t jvm_module_of(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass);
void JNICALL jvm_on_object_free(jvmtiEnv *jvmti, jlong tag);

#endif
