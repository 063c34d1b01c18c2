/* SPDX-License-Identifier: MIT */
/*
 * Modules: one per class loader (the JVM's unit of code lifetime: a
 * loader's classes, and their compiled code, go when it is collected).
 * JPMS modules would be finer, but their names are only reachable by
 * calling Java code (Module.getName()), which a callback must not do.
 *
 * A loader's module id is its JVMTI tag: the first compiled method of a
 * class of that loader tags it (SetTag) and publishes the module; the
 * ObjectFree event (posted by the ServiceThread once the loader was
 * collected) unpublishes it. The bootstrap loader (NULL) is module 1,
 * published once in the live phase. Names: the loader's name if it has
 * one (ClassLoader.name, e.g. "app", "platform") and its class with its
 * identity hash: "app (jdk.internal.loader.ClassLoaders$AppClassLoader@1b6d3586)",
 * or "com.example.PluginLoader@4e25154f" for an unnamed one.
 *
 * JVMTI has no compare-and-set on tags, and the agent takes no lock: two
 * threads meeting a new loader at once (the ServiceThread and an attach
 * replay) may both tag it. Each re-reads the tag after SetTag and after
 * publishing and withdraws its module if another thread's tag won
 * (counted in module_races). A loser's module can only survive if its
 * last re-read came before the winner's SetTag landed; then one extra
 * module record stays live until exit (undetectable without a lock, and
 * harmless: no method names it once the winner's tag is in place).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "agent.h"
#include "diag.h"
#include "mutf8.h"
#include "naming.h"
#include "stats.h"

#define BOOTSTRAP_MODULE 1

static atomic_uint_fast64_t next_module_id = BOOTSTRAP_MODULE + 1;
static jfieldID loader_name_field; /* ClassLoader.name; set once, live phase */
static atomic_int live;            /* jvm_modules_live_init done */

int jvm_modules_live_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jclass cl;
	int ret;

	if (!jni)
		return -EINVAL;
	cl = (*jni)->FindClass(jni, "java/lang/ClassLoader");
	if (cl) {
		loader_name_field = (*jni)->GetFieldID(jni, cl, "name", "Ljava/lang/String;");
		(*jni)->DeleteLocalRef(jni, cl);
	}
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni); /* no name field: names use the class only */
	ret = letw_module_publish(&(struct letw_module){
		.module_id = BOOTSTRAP_MODULE, .name = "bootstrap" });
	if (ret == 0)
		jvm_stat_inc(JVM_ST_MODULES);
	atomic_store(&live, 1);
	return ret;
}

/* "NAME (CLASS@HASH)" or "CLASS@HASH" into out (cap >= 800: both parts
 * fit whole, so nothing is cut inside a character). */
static void loader_name(jvmtiEnv *jvmti, JNIEnv *jni, jobject loader, char *out, size_t cap)
{
	char cls[512] = "?", nm[256] = "", csig_u[512];
	char *csig = NULL;
	jint hash = 0;
	jclass k;

	(void)(*jvmti)->GetObjectHashCode(jvmti, loader, &hash);
	k = (*jni)->GetObjectClass(jni, loader);
	if (k && (*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) == JVMTI_ERROR_NONE) {
		jvm_class_sig_to_utf8(csig, csig_u, sizeof(csig_u));
		jvm_name_class(csig_u, JVM_NS_DOTTED, cls, sizeof(cls));
		(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	}
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (loader_name_field) {
		jstring s = (*jni)->GetObjectField(jni, loader, loader_name_field);

		if (s) {
			const char *u = (*jni)->GetStringUTFChars(jni, s, NULL);

			if (u) {
				jvm_mutf8_to_utf8(u, nm, sizeof(nm), NULL);
				(*jni)->ReleaseStringUTFChars(jni, s, u);
			}
			(*jni)->DeleteLocalRef(jni, s);
		}
	}
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (nm[0])
		snprintf(out, cap, "%s (%s@%x)", nm, cls, (unsigned)hash);
	else
		snprintf(out, cap, "%s@%x", cls, (unsigned)hash);
}

static jlong tag_of(jvmtiEnv *jvmti, jobject o)
{
	jlong t = 0;

	return (*jvmti)->GetTag(jvmti, o, &t) == JVMTI_ERROR_NONE ? t : -1;
}

uint64_t jvm_module_of(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass)
{
	char name[1024];
	jobject loader = NULL;
	jlong tag, mine;
	uint64_t id = 0;

	if (!jni || !atomic_load_explicit(&live, memory_order_acquire))
		return 0; /* start phase, or not a JavaThread */
	if ((*jvmti)->GetClassLoader(jvmti, klass, &loader) != JVMTI_ERROR_NONE)
		return 0;
	if (!loader)
		return BOOTSTRAP_MODULE;
	tag = tag_of(jvmti, loader);
	if (tag > 0) {
		id = (uint64_t)tag;
		goto out;
	}
	if (tag < 0)
		goto out;
	mine = (jlong)atomic_fetch_add(&next_module_id, 1);
	if ((*jvmti)->SetTag(jvmti, loader, mine) != JVMTI_ERROR_NONE)
		goto out;
	tag = tag_of(jvmti, loader);
	if (tag != mine) {
		id = tag > 0 ? (uint64_t)tag : 0; /* another thread tagged it first */
		goto out;
	}
	loader_name(jvmti, jni, loader, name, sizeof(name));
	if (letw_module_publish(&(struct letw_module){ .module_id = (uint64_t)mine,
						       .name = name }) == 0)
		jvm_stat_inc(JVM_ST_MODULES);
	tag = tag_of(jvmti, loader);
	if (tag != mine) {
		/* Lost after publishing: withdraw ours, use the winner's. */
		if (letw_module_unpublish((uint64_t)mine) == 0)
			jvm_stat_inc(JVM_ST_MODULE_RACES);
		id = tag > 0 ? (uint64_t)tag : 0;
		goto out;
	}
	id = (uint64_t)mine;
	jvm_diag(JVM_LOG_DEBUG, "module %llu: %s", (unsigned long long)id, name);
out:
	(*jni)->DeleteLocalRef(jni, loader);
	return id;
}

void JNICALL jvm_on_object_free(jvmtiEnv *jvmti, jlong tag)
{
	/* Only loaders are tagged. ObjectFree may call no JNI and almost no
	 * JVMTI; unpublishing is lttng-etw's only. */
	if (tag > BOOTSTRAP_MODULE && letw_module_unpublish((uint64_t)tag) == 0)
		jvm_stat_inc(JVM_ST_MODULES_FREED);
}
