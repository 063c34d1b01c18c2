/* SPDX-License-Identifier: MIT */
/*
 * Tracepoint definitions for liblttng-etw, with LTTng-UST dynamic linkage:
 * this object holds the tracepoint structures and, from a constructor,
 * dlopen()s liblttng-ust-tracepoint.so.1 if it exists. The probes live in
 * liblttng-etw-tp.so (tracepoints/probes_runtime.c and probes_rundown.c), loaded by probe.c. Without
 * them every tracepoint stays disabled and costs one load and a branch.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "letw_runtime_tp.h"
#include "letw_rundown_tp.h"

#include "internal.h"

/*
 * At exit, after the atexit handlers, the destructors of this object
 * dlclose liblttng-ust-tracepoint and clear the symbols every tracepoint
 * call site goes through (rcu_read_lock_sym...). A thread still tracing
 * then calls through a NULL pointer: the control thread in a pass the
 * exit handler could not stop within its bound (a blocking channel whose
 * consumer is slow), or a runtime thread publishing while the process
 * exits (a JVM's ServiceThread delivering CompiledMethodLoad). lttng-ust
 * provides this switch for such programs: the tracepoints are still
 * unregistered at exit (their calls become no-ops once lttng-ust's
 * synchronisation lets them), but liblttng-ust-tracepoint stays mapped.
 * Process-wide: the one cost is that a module with tracepoints dlclosed
 * later no longer drops the last reference to liblttng-ust-tracepoint.
 */
void letw_tp_keep_at_exit(void)
{
	tracepoint_disable_destructors();
}
