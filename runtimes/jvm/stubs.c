/* SPDX-License-Identifier: MIT */
/*
 * DynamicCodeGenerated -> stub records. HotSpot reports the interpreter,
 * StubRoutines, I2C/C2I and method-handle adapters, runtime stubs and
 * blobs (deopt, uncommon trap, exception, safepoint), vtable/itable stubs.
 * They are never freed in HotSpot 17 (no event says so either), so stubs
 * are never unpublished. Except the compilers' scratch buffers, which are
 * not code anyone runs: GenerateEvents (the attach and VMInit replays)
 * lists every BufferBlob, among them each compiler thread's "C1 temporary
 * CodeBuffer" (and C2's "Compile::scratch_buffer", JVMCI's "JVMCI Compiler
 * CodeBuffer"), and HotSpot frees those without an event (a compiler
 * thread of UseDynamicNumberOfCompilerThreads exiting, C2 growing its
 * buffer) and then places nmethods there. Published, such a buffer would
 * refuse (-EEXIST) every method compiled into its range for the life of
 * the process; they are not published (scratch_buffer()), nor is C2's
 * "Compile::Fill_buffer", the blob each compile emits into before the code
 * is copied into its nmethod. Whatever else HotSpot frees silently is
 * caught when a method is reported over it: the stub is unpublished then
 * (stubset.h, counted as stub_stale). Some blobs are made without any event (the JNI
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
#include "stubset.h"

/* A compiler's scratch buffer (see the top of the file), by the names
 * HotSpot 17 gives them (c1_Compiler.cpp, compile.cpp, output.cpp,
 * jvmciCompiler). */
static int scratch_buffer(const char *name)
{
	return name && (!strcmp(name, "C1 temporary CodeBuffer") ||
			!strcmp(name, "Compile::scratch_buffer") ||
			!strcmp(name, "Compile::Fill_buffer") ||
			!strcmp(name, "JVMCI Compiler CodeBuffer"));
}

void JNICALL jvm_on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				 jint length)
{
	struct letw_stub st;
	int ret;

	if (atomic_load_explicit(&jvm_g.dead, memory_order_relaxed)) {
		jvm_stat_inc(JVM_ST_LATE);
		return;
	}
	if (!jvm_g.opts.stubs || !address || length <= 0 || scratch_buffer(name))
		return;
	st = (struct letw_stub){
		.start = (uint64_t)(uintptr_t)address,
		.size = (uint32_t)length,
		.kind = jvm_stub_kind(name),
		.name = name,
	};
	ret = jvm_stubset_publish(&st);
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
