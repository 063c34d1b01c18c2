/* SPDX-License-Identifier: MIT */
/*
 * The probe object, liblttng-etw-tp.so: the only part of lttng-etw linked
 * against liblttng-ust. liblttng-etw dlopen()s it at letw_init (dynamic
 * linkage, like CoreCLR's libcoreclrtraceptprovider.so), so a runtime runs
 * unchanged where lttng-ust is absent, and LETW_DISABLE=1 keeps it unloaded.
 * Its constructors register both providers with lttng-ust.
 *
 * This file: letw_runtime, whose events go to every session that enables
 * them (no session argument).
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "letw_runtime_tp.h"
