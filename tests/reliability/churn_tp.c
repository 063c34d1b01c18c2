/* SPDX-License-Identifier: MIT */
/* Probes and tracepoint definitions of the test-only letw_churn provider,
 * statically linked into the churn program (it links liblttng-ust). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "churn_tp.h"
