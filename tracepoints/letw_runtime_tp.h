/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST provider "letw_runtime": code as it is published and freed
 * (the CLR runtime provider's MethodLoad/Unload in spirit). Read repeatedly
 * by the tracepoint macros; see lttng-ust(3).
 *
 * Keywords (DESIGN §3): LOADER 0x8 → module_*, JIT 0x10 → method_load/unload,
 * STUB 1<<48 → stub_*, LINES 0x20000 → method_lines, CODE_BYTES 1<<49 →
 * method_code_bytes. The last two are optional: names chosen so that
 * `letw_runtime:*load` enables the rest without them.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER letw_runtime

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "letw_runtime_tp.h"

#if !defined(LETW_RUNTIME_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LETW_RUNTIME_TP_H

#include <lttng/tracepoint.h>
#include "letw_payload.h"

#include "letw_fields.h"

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_runtime, method_class,
	LTTNG_UST_TP_ARGS(const struct letw_tp_method *, m),
	LTTNG_UST_TP_FIELDS(LETW_TP_METHOD_FIELDS(m)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_runtime, method_class, letw_runtime,
	method_load, LTTNG_UST_TP_ARGS(const struct letw_tp_method *, m))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_runtime, method_class, letw_runtime,
	method_unload, LTTNG_UST_TP_ARGS(const struct letw_tp_method *, m))

LTTNG_UST_TRACEPOINT_EVENT(letw_runtime, method_lines,
	LTTNG_UST_TP_ARGS(const struct letw_tp_lines *, l),
	LTTNG_UST_TP_FIELDS(LETW_TP_LINES_FIELDS(l)))

LTTNG_UST_TRACEPOINT_EVENT(letw_runtime, method_code_bytes,
	LTTNG_UST_TP_ARGS(const struct letw_tp_code *, c),
	LTTNG_UST_TP_FIELDS(LETW_TP_CODE_FIELDS(c)))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_runtime, stub_class,
	LTTNG_UST_TP_ARGS(const struct letw_tp_stub *, s),
	LTTNG_UST_TP_FIELDS(LETW_TP_STUB_FIELDS(s)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_runtime, stub_class, letw_runtime,
	stub_load, LTTNG_UST_TP_ARGS(const struct letw_tp_stub *, s))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_runtime, stub_class, letw_runtime,
	stub_unload, LTTNG_UST_TP_ARGS(const struct letw_tp_stub *, s))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_runtime, module_class,
	LTTNG_UST_TP_ARGS(const struct letw_tp_module *, md),
	LTTNG_UST_TP_FIELDS(LETW_TP_MODULE_FIELDS(md)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_runtime, module_class, letw_runtime,
	module_load, LTTNG_UST_TP_ARGS(const struct letw_tp_module *, md))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_runtime, module_class, letw_runtime,
	module_unload, LTTNG_UST_TP_ARGS(const struct letw_tp_module *, md))

#endif /* LETW_RUNTIME_TP_H */

#include <lttng/tracepoint-event.h>
