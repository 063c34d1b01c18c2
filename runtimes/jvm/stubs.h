/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_STUBS_H
#define LETW_JVM_STUBS_H

#include <stdint.h>

/* The letw_stub_kind for a HotSpot DynamicCodeGenerated name. */
uint32_t jvm_stub_kind(const char *name);

#endif
