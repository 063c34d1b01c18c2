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
