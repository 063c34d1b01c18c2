/* SPDX-License-Identifier: MIT */
/*
 * The one lttng-ust type the rundown call sites name: the session a pass is
 * written into, as lttng-ust hands it to lttng_ust_statedump:start. Opaque
 * here (lttng/ust-events.h defines it); included outside the tracepoint
 * headers' multi-read section.
 */
#ifndef LETW_SESSION_H
#define LETW_SESSION_H

struct lttng_ust_session;

#endif
