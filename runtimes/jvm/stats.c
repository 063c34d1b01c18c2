/* SPDX-License-Identifier: MIT */
#include <stdatomic.h>
#include <stdio.h>

#include "stats.h"

static atomic_uint_fast64_t counters[JVM_ST__COUNT];

static const char *const names[JVM_ST__COUNT] = {
	[JVM_ST_METHODS] = "methods",
	[JVM_ST_METHOD_REPLAY_DUP] = "method_replay_dup",
	[JVM_ST_METHOD_OVERLAP] = "method_overlap",
	[JVM_ST_METHOD_FAILED] = "method_failed",
	[JVM_ST_NAME_FAILED] = "name_failed",
	[JVM_ST_MH_INTRINSICS] = "mh_intrinsics",
	[JVM_ST_WRONG_PHASE] = "wrong_phase",
	[JVM_ST_LINES] = "lines",
	[JVM_ST_LINES_INLINED] = "lines_inlined",
	[JVM_ST_LINES_TRUNCATED] = "lines_truncated",
	[JVM_ST_LINES_REFUSED] = "lines_refused",
	[JVM_ST_LINES_NO_SCRATCH] = "lines_no_scratch",
	[JVM_ST_UNLOADS] = "unloads",
	[JVM_ST_UNLOAD_UNKNOWN] = "unload_unknown",
	[JVM_ST_STUBS] = "stubs",
	[JVM_ST_STUB_REPLAY_DUP] = "stub_replay_dup",
	[JVM_ST_STUB_OVERLAP] = "stub_overlap",
	[JVM_ST_STUB_FAILED] = "stub_failed",
	[JVM_ST_STUB_STALE] = "stub_stale",
	[JVM_ST_MODULES] = "modules",
	[JVM_ST_MODULES_FREED] = "modules_freed",
	[JVM_ST_MODULE_RACES] = "module_races",
	[JVM_ST_LATE] = "late",
};

void jvm_stat_inc(enum jvm_stat s)
{
	atomic_fetch_add_explicit(&counters[s], 1, memory_order_relaxed);
}

uint64_t jvm_stat_get(enum jvm_stat s)
{
	return atomic_load_explicit(&counters[s], memory_order_relaxed);
}

size_t jvm_stats_format(char *out, size_t cap)
{
	size_t len = 0;
	int i, n;

	if (!cap)
		return 0;
	out[0] = '\0';
	for (i = 0; i < JVM_ST__COUNT; i++) {
		n = snprintf(out + len, cap - len, "%s%s=%llu", i ? " " : "", names[i],
			     (unsigned long long)jvm_stat_get((enum jvm_stat)i));
		if (n < 0 || (size_t)n >= cap - len)
			break;
		len += (size_t)n;
	}
	return len;
}
