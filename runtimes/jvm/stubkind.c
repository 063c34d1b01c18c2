/* SPDX-License-Identifier: MIT */
/* HotSpot's DynamicCodeGenerated names (as JDK 17 reports them) to stub
 * kinds; pure, so the unit tests check it. */
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "stubs.h"

uint32_t jvm_stub_kind(const char *name)
{
	if (!name)
		return LETW_STUB_UNKNOWN;
	if (!strcmp(name, "Interpreter") || !strncmp(name, "StubRoutines (", 14))
		return LETW_STUB_BLOCK;
	if (strstr(name, "vtable") || strstr(name, "itable"))
		return LETW_STUB_DISPATCH;
	if (strstr(name, "resolve") || strstr(name, "ic_miss") || strstr(name, "wrong_method"))
		return LETW_STUB_RESOLVE;
	/* Adapters, runtime stubs, StubRoutines entries, deopt/exception
	 * blobs: glue between compiled code and the VM. */
	return LETW_STUB_THUNK;
}
