/* SPDX-License-Identifier: MIT */
/*
 * CompiledMethodLoad / CompiledMethodUnload -> method records.
 *
 * Threads: HotSpot posts loads from the ServiceThread (its deferred-event
 * queue, in order with the unloads) and from whichever thread calls
 * GenerateEvents (the attach replay), concurrently. Nothing here locks:
 * lttng-etw's publish is lock-free and refuses a range that is already
 * live, so the same nmethod reported twice (queue + replay) just gets
 * -EEXIST the second time, which is counted, not logged as an error.
 *
 * Names are resolved here, inside the callback: a jmethodID is only
 * guaranteed while its class is loaded, and the inline record's are
 * only valid during the event. Nothing keeps one afterwards; the
 * method_id is the jmethodID's value, stable while the class is loaded
 * (HotSpot never frees or reuses jmethodIDs). Method handle intrinsics are
 * the exception: their jmethodID is shared and names another method
 * (naming.h), so they get a name that does not lie and method_id 0.
 *
 * What HotSpot does not say through JVMTI: which compiler or tier made the
 * code (C1 level 1-3 or C2), whether it is an OSR compilation, its compile
 * id. method_flags is JITTED with tier 0 (unknown); version_id is a
 * sequence number of this agent's publishes, so two code versions of a
 * method are told apart.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "agent.h"
#include "diag.h"
#include "linerows.h"
#include "lines.h"
#include "mutf8.h"
#include "naming.h"
#include "replayset.h"
#include "scratch.h"
#include "stats.h"
#include "stubset.h"

static atomic_uint_fast64_t version_seq;

/* The record's strings, and the compiled method's class signature in UTF-8
 * (csig, the line table's first file). On the callback's stack (~20 KiB;
 * HotSpot's callback threads have 1 MiB) so that a method is published with
 * its name even when no scratch block is free for its lines. */
struct jvm_names {
	char ns[JVM_NAME_BUF], name[JVM_NAME_BUF], sig[JVM_NAME_BUF], csig[JVM_NAME_BUF];
	char tmp[JVM_NAME_BUF];
};

static void dealloc(jvmtiEnv *jvmti, void *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)p);
}

/* Returns 0, or the JVMTI error that stopped it. */
static jvmtiError resolve_names(jvmtiEnv *jvmti, jmethodID method, struct jvm_names *s,
				jclass *klass)
{
	char *name = NULL, *sig = NULL, *csig = NULL;
	jvmtiError err;

	err = (*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL);
	if (err == JVMTI_ERROR_NONE)
		err = (*jvmti)->GetMethodDeclaringClass(jvmti, method, klass);
	if (err == JVMTI_ERROR_NONE)
		err = (*jvmti)->GetClassSignature(jvmti, *klass, &csig, NULL);
	if (err == JVMTI_ERROR_NONE) {
		const struct jvm_opts *o = &jvm_g.opts;

		jvm_mutf8_to_utf8(name, s->name, sizeof(s->name), NULL);
		jvm_class_sig_to_utf8(csig, s->csig, sizeof(s->csig));
		jvm_name_class(s->csig, o->ns, s->ns, sizeof(s->ns));
		jvm_mutf8_to_utf8(sig, s->tmp, sizeof(s->tmp), NULL);
		jvm_name_signature(s->tmp, o->sig, s->sig, sizeof(s->sig));
		if (!s->name[0])
			err = JVMTI_ERROR_INVALID_METHODID;
	}
	dealloc(jvmti, name);
	dealloc(jvmti, sig);
	dealloc(jvmti, csig);
	return err;
}

/* See jvm_is_mh_intrinsic. The name and signature resolved from the
 * jmethodID are another method's: replaced. The namespace is MethodHandle
 * either way. */
static int mh_intrinsic(jvmtiEnv *jvmti, jmethodID method, const void *compile_info,
			struct jvm_names *s)
{
	const jvmtiCompiledMethodLoadInlineRecord *rec = jvm_inline_record(compile_info);
	jint mods = 0;
	int native;

	native = !rec && (*jvmti)->GetMethodModifiers(jvmti, method, &mods) == JVMTI_ERROR_NONE &&
		 (mods & 0x0100 /* ACC_NATIVE */);
	if (!jvm_is_mh_intrinsic(s->csig, rec ? (int)rec->numpcs : -1, native))
		return 0;
	strcpy(s->name, JVM_MH_INTRINSIC_NAME);
	jvm_name_signature(JVM_MH_INTRINSIC_DESC, jvm_g.opts.sig, s->sig, sizeof(s->sig));
	return 1;
}

/* A stub record under the method is stale (stubset.h): unpublished, and
 * the method published over it. */
static int publish(const struct letw_method *m, const struct letw_method_opts *o)
{
	unsigned stale = 0;
	int ret = jvm_stubset_publish_method(m, o, &stale);

	for (unsigned i = 0; i < stale; i++)
		jvm_stat_inc(JVM_ST_STUB_STALE);
	if (stale)
		jvm_diag(JVM_LOG_DEBUG, "%u stale stub(s) under %s::%s at 0x%llx unpublished", stale,
			 m->method_namespace, m->name, (unsigned long long)m->code_start);
	return ret;
}

static void count_publish_error(int ret, const struct jvm_names *s, uint64_t start,
				uint64_t method_id)
{
	if (ret == -EEXIST) {
		/* During a replay the queue may have posted the same nmethod
		 * already, or (the queue refused) the replay published it
		 * first; otherwise the range overlaps something live. */
		if (jvm_in_replay() || jvm_replayset_has(start, method_id)) {
			jvm_stat_inc(JVM_ST_METHOD_REPLAY_DUP);
			return;
		}
		jvm_stat_inc(JVM_ST_METHOD_OVERLAP);
		jvm_diag(JVM_LOG_DEBUG, "method %s::%s%s at 0x%llx overlaps live code", s->ns,
			 s->name, s->sig, (unsigned long long)start);
		return;
	}
	jvm_stat_inc(JVM_ST_METHOD_FAILED);
	jvm_diag(JVM_LOG_DEBUG, "method %s::%s%s at 0x%llx not published: %s", s->ns, s->name,
		 s->sig, (unsigned long long)start, strerror(-ret));
}

void JNICALL jvm_on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
					 const void *code_addr, jint map_length,
					 const jvmtiAddrLocationMap *map,
					 const void *compile_info)
{
	struct letw_method_opts lopts;
	struct letw_method m;
	struct jvm_names nm;
	struct jvm_scratch *s = NULL;
	jclass klass = NULL;
	JNIEnv *jni;
	jvmtiError err;
	int ret, inlined = 0, truncated = 0, intrinsic;
	uint32_t rows = 0;

	if (atomic_load_explicit(&jvm_g.dead, memory_order_relaxed)) {
		jvm_stat_inc(JVM_ST_LATE);
		return;
	}
	if (!code_addr || code_size <= 0) {
		jvm_stat_inc(JVM_ST_METHOD_FAILED);
		return;
	}
	jni = jvm_jni();
	err = resolve_names(jvmti, method, &nm, &klass);
	if (err != JVMTI_ERROR_NONE) {
		/* WRONG_PHASE: the VM is dying under us (VMDeath may not have
		 * reached us yet); anything else: the method went away. */
		jvm_stat_inc(err == JVMTI_ERROR_WRONG_PHASE ? JVM_ST_WRONG_PHASE : JVM_ST_NAME_FAILED);
		goto out;
	}
	intrinsic = mh_intrinsic(jvmti, method, compile_info, &nm);
	m = (struct letw_method){
		.method_id = intrinsic ? 0 : (uint64_t)(uintptr_t)method,
		.module_id = jvm_g.opts.modules && jvm_g.can_modules ?
			     jvm_module_of(jvmti, jni, klass) : 0,
		.code_start = (uint64_t)(uintptr_t)code_addr,
		.code_size = (uint32_t)code_size,
		.method_flags = LETW_METHOD_JITTED,
		.version_id = atomic_fetch_add_explicit(&version_seq, 1, memory_order_relaxed) + 1,
		.method_namespace = nm.ns,
		.name = nm.name,
		.signature = nm.sig,
	};
	/* The inline record's jmethodIDs are only valid now: without a free
	 * block (counted by jvm_scratch_get) the table is lost, not deferred. */
	if (!intrinsic && jvm_g.opts.lines && jvm_g.can_lines && (s = jvm_scratch_get()) != NULL)
		rows = jvm_lines_build(jvmti, jni, s, method, klass, nm.csig, code_size, code_addr,
				       map_length, map, compile_info, jvm_g.opts.inlining, &lopts,
				       &inlined, &truncated);
	/* The nmethod's code is in the code cache for the whole callback:
	 * method_code_bytes at publish may read it in place. */
	if (!rows)
		lopts = (struct letw_method_opts){ .size = sizeof(lopts) };
	lopts.flags = LETW_METHOD_OPT_CODE_READABLE;
	ret = publish(&m, &lopts);
	if (rows && (ret == -EINVAL || ret == -E2BIG)) {
		/* Our table broke one of lttng-etw's rules: a bug here, but
		 * the name still matters more than the lines. */
		jvm_stat_inc(JVM_ST_LINES_REFUSED);
		jvm_diag(JVM_LOG_DEBUG, "line table of %s::%s refused: %s", nm.ns, nm.name,
			 strerror(-ret));
		rows = 0;
		lopts = (struct letw_method_opts){ .size = sizeof(lopts),
						   .flags = LETW_METHOD_OPT_CODE_READABLE };
		ret = publish(&m, &lopts);
	}
	if (ret == 0) {
		jvm_stat_inc(JVM_ST_METHODS);
		if (jvm_in_replay())
			jvm_replayset_add(m.code_start, m.method_id);
		if (intrinsic)
			jvm_stat_inc(JVM_ST_MH_INTRINSICS);
		if (rows) {
			jvm_stat_inc(JVM_ST_LINES);
			if (inlined)
				jvm_stat_inc(JVM_ST_LINES_INLINED);
			if (truncated)
				jvm_stat_inc(JVM_ST_LINES_TRUNCATED);
		}
	} else {
		count_publish_error(ret, &nm, m.code_start, m.method_id);
	}
	if (s) {
		jvm_lines_release(jvmti, s);
		jvm_scratch_put(s);
	}
out:
	if (klass && jni)
		(*jni)->DeleteLocalRef(jni, klass);
}

void JNICALL jvm_on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
					   const void *code_addr)
{
	int ret;

	/* The method's class may be gone already (class unloading posts
	 * this after the fact): only the address is used. */
	if (atomic_load_explicit(&jvm_g.dead, memory_order_relaxed)) {
		jvm_stat_inc(JVM_ST_LATE);
		return;
	}
	ret = letw_method_unpublish((uint64_t)(uintptr_t)code_addr);
	if (ret == 0) {
		jvm_stat_inc(JVM_ST_UNLOADS);
	} else {
		/* -ENOENT: its load was refused, or came before the agent. */
		jvm_stat_inc(JVM_ST_UNLOAD_UNKNOWN);
		jvm_diag(JVM_LOG_DEBUG, "unload of 0x%llx: %s",
			 (unsigned long long)(uintptr_t)code_addr, strerror(-ret));
	}
}
