/* SPDX-License-Identifier: MIT */
/*
 * letw_rundown's probes, in an object of their own because they are built
 * with LTTNG_UST_TP_SESSION_CHECK: a recorder probe writes an event only
 * when the event's first argument is the session of the event's channel
 * (lttng/ust-tracepoint-event.h compares the two pointers), which is what
 * makes a rundown pass land in the session that asked for it. Event
 * notifiers (triggers) are not subject to the check.
 */
#define LTTNG_UST_TP_SESSION_CHECK
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "letw_rundown_tp.h"
