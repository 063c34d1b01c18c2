/* SPDX-License-Identifier: MIT */
/*
 * The raw loop's own tracepoint definitions for letw_rundown, with the same
 * dynamic linkage as the library (provider/tp.c): raw.c dlopen()s the probe
 * object liblttng-etw-tp.so, which registers the providers, so the raw loop
 * fires exactly the probe the library fires.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "letw_rundown_tp.h"
