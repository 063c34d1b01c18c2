/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST provider "letw_rundown": the ETW rundown provider. Every pass is
 * bracketed by *_init / *_complete carrying the same pass_id, so a consumer
 * can pair them and tell a finished pass from a truncated one.
 *
 * Keywords (DESIGN §3): LOADER_RUNDOWN 0x8 → module_dc*, JIT_RUNDOWN 0x10 →
 * method_dc*, RUNDOWN_START 0x40 → dcstart_*, RUNDOWN_END 0x100 → dcend_*,
 * STUB_RUNDOWN 1<<48 → stub_dc*, LINES_RUNDOWN 0x20000 → method_lines_start/end,
 * CODE_BYTES_RUNDOWN 1<<49 → method_code_bytes_start/end. The last two are
 * optional, and named so that `*dcstart*` / `*dcend*` do not enable them.
 *
 * Every event takes the session it is written into as its first argument
 * (never recorded): the probes are built with LTTNG_UST_TP_SESSION_CHECK
 * (probes_rundown.c), so a pass asked for by one session's statedump lands
 * in that session only. A pass meant for every session (the polling
 * fallback, capture-state) calls each session's probe with its own session
 * (letw_fanout.h). The session is compared by address only, never
 * dereferenced by the probe.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER letw_rundown

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "letw_rundown_tp.h"

#if !defined(LETW_RUNDOWN_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LETW_RUNDOWN_TP_H

#include <lttng/tracepoint.h>
#include "letw_payload.h"
#include "letw_session.h"

#include "letw_fields.h"

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_rundown, init_class,
	LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_pass_init *, p),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint16_t, instance_id, p->instance_id)
		lttng_ust_field_integer(uint64_t, pass_id, p->pass_id)
		lttng_ust_field_integer(uint32_t, control_code, p->control_code)
		lttng_ust_field_integer_hex(uint64_t, match_any_keyword,
					    p->match_any_keyword)
		lttng_ust_field_integer(uint64_t, accounted_from_ns, p->accounted_from_ns)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, init_class, letw_rundown,
	dcstart_init, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_pass_init *, p))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, init_class, letw_rundown,
	dcend_init, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_pass_init *, p))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_rundown, complete_class,
	LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_pass_complete *, p),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint16_t, instance_id, p->instance_id)
		lttng_ust_field_integer(uint64_t, pass_id, p->pass_id)
		lttng_ust_field_integer(uint64_t, emitted, p->emitted)
		lttng_ust_field_integer(uint64_t, skipped_raced, p->skipped_raced)
		lttng_ust_field_integer(uint64_t, duration_ns, p->duration_ns)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, complete_class, letw_rundown,
	dcstart_complete, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_pass_complete *, p))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, complete_class, letw_rundown,
	dcend_complete, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_pass_complete *, p))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_rundown, method_class,
	LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_method *, m),
	LTTNG_UST_TP_FIELDS(LETW_TP_METHOD_FIELDS(m)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, method_class, letw_rundown,
	method_dcstart, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_method *, m))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, method_class, letw_rundown,
	method_dcend, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_method *, m))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_rundown, lines_class,
	LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_lines *, l),
	LTTNG_UST_TP_FIELDS(LETW_TP_LINES_FIELDS(l)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, lines_class, letw_rundown,
	method_lines_start, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_lines *, l))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, lines_class, letw_rundown,
	method_lines_end, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_lines *, l))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_rundown, code_class,
	LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_code *, c),
	LTTNG_UST_TP_FIELDS(LETW_TP_CODE_FIELDS(c)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, code_class, letw_rundown,
	method_code_bytes_start, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_code *, c))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, code_class, letw_rundown,
	method_code_bytes_end, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_code *, c))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_rundown, stub_class,
	LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_stub *, s),
	LTTNG_UST_TP_FIELDS(LETW_TP_STUB_FIELDS(s)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, stub_class, letw_rundown,
	stub_dcstart, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_stub *, s))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, stub_class, letw_rundown,
	stub_dcend, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_stub *, s))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(letw_rundown, module_class,
	LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_module *, md),
	LTTNG_UST_TP_FIELDS(LETW_TP_MODULE_FIELDS(md)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, module_class, letw_rundown,
	module_dcstart, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_module *, md))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(letw_rundown, module_class, letw_rundown,
	module_dcend, LTTNG_UST_TP_ARGS(struct lttng_ust_session *, session, const struct letw_tp_module *, md))

#endif /* LETW_RUNDOWN_TP_H */

#include <lttng/tracepoint-event.h>
