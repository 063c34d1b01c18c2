/* SPDX-License-Identifier: MIT */
/*
 * DynamicCodeGenerated -> stub records. HotSpot reports the interpreter,
 * StubRoutines, I2C/C2I and method-handle adapters, runtime stubs and
 * blobs (deopt, uncommon trap, exception, safepoint), vtable/itable stubs.
 * They are never freed in HotSpot 17 (no event says so either), so stubs
 * are never unpublished. Some blobs are made without any event (the JNI
 * fast field accessors, "jni_fast_Get*Field", at startup): with
 * -agentpath the agent replays the dynamic code once at VMInit to get
 * them, and what was reported live already is refused as a duplicate.
 *
 * Overlaps, on purpose: at attach, GenerateEvents lists every StubCodeDesc
 * (one stub routine each) before the code blobs, and a blob holding stub
 * routines ("StubRoutines (1)") is listed too unless it starts exactly at
 * one of them; likewise a blob may be reported whole after parts of it
 * were. lttng-etw refuses a range overlapping a live record (-EEXIST), so
 * the first report wins: the finer-grained stub names are kept and the
 * enclosing blob is dropped and counted (stub_overlap) — perf then names
 * each stub routine rather than the whole blob.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "agent.h"
#include "diag.h"
#include "stats.h"
#include "stubs.h"

void JNICALL jvm_on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				 jint length)
{
	struct letw_stub st;
	int ret;

	if (atomic_load_explicit(&jvm_g.dead, memory_order_relaxed)) {
		jvm_stat_inc(JVM_ST_LATE);
		return;
	}
	if (!jvm_g.opts.stubs || !address || length <= 0)
		return;
	st = (struct letw_stub){
		.start = (uint64_t)(uintptr_t)address,
		.size = (uint32_t)length,
		.kind = jvm_stub_kind(name),
		.name = name,
	};
	ret = letw_stub_publish(&st);
	if (ret == 0) {
		jvm_stat_inc(JVM_ST_STUBS);
	} else if (ret == -EEXIST) {
		jvm_stat_inc(jvm_in_replay() ? JVM_ST_STUB_REPLAY_DUP : JVM_ST_STUB_OVERLAP);
		jvm_diag(JVM_LOG_DEBUG, "stub %s at 0x%llx+0x%x overlaps a live record: dropped",
			 name ? name : "?", (unsigned long long)st.start, (unsigned)length);
	} else {
		jvm_stat_inc(JVM_ST_STUB_FAILED);
		jvm_diag(JVM_LOG_DEBUG, "stub %s at 0x%llx not published: %s", name ? name : "?",
			 (unsigned long long)st.start, strerror(-ret));
	}
}
