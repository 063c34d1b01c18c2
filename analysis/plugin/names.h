/* SPDX-License-Identifier: MIT */
/*
 * The one naming scheme for code regions in perf maps and reports
 * (documented in analysis/README.md):
 *
 *   method: [NAMESPACE::]NAME[SIGNATURE][ [TIER]]
 *           e.g. "mj::fn_17(i64)->i64 [optimized]"; the tier part appears
 *           only when method_flags carries a known tier (bits 7-9).
 *   stub:   stub<KIND>@OWNER[ NAME]
 *           e.g. "stub<precode>@0x7f0012 VSD_ResolveStub"; KIND is the
 *           letw_stub_kind name, or its number when the runtime defined it.
 *
 * Control characters (newlines would break the map format) become '?'.
 */
#ifndef LETW_BT_NAMES_H
#define LETW_BT_NAMES_H

#include <stdint.h>

/* Returns a malloc()ed string, or NULL on allocation failure. */
char *letw_name_method(const char *ns, const char *name, const char *sig,
		       uint32_t method_flags);
char *letw_name_stub(uint32_t kind, uint64_t owner, const char *name);

const char *letw_tier_name(unsigned int tier); /* NULL for unknown/0 */
const char *letw_stub_kind_name(uint32_t kind); /* NULL when runtime-defined */

#endif /* LETW_BT_NAMES_H */
