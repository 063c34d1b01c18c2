/* SPDX-License-Identifier: MIT */
/*
 * Test-only LTTng-UST provider "letw_churn", linked into the churn stress
 * program. It marks the moment a runtime thread *starts* an unpublish, so
 * the trace checker can bound when the record left the table from both
 * sides: after unpublish_begin, before letw_runtime:*_unload. Without it a
 * record whose unload event lands just after a pass's Complete could still
 * have been removed during the walk, and "live for the whole pass" could
 * not be decided from the trace.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER letw_churn

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "churn_tp.h"

#if !defined(LETW_CHURN_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LETW_CHURN_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* kind: 1 method, 2 stub (letw_rec_kind); uid: version_id or stub owner. */
LTTNG_UST_TRACEPOINT_EVENT(letw_churn, unpublish_begin,
	LTTNG_UST_TP_ARGS(uint32_t, kind, uint64_t, start, uint64_t, uid),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint32_t, kind, kind)
		lttng_ust_field_integer_hex(uint64_t, start, start)
		lttng_ust_field_integer(uint64_t, uid, uid)))

#endif /* LETW_CHURN_TP_H */

#include <lttng/tracepoint-event.h>
