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

#include <stddef.h>
#include <stdint.h>

/* Returns a malloc()ed string, or NULL on allocation failure. */
char *letw_name_method(const char *ns, const char *name, const char *sig,
		       uint32_t method_flags);
char *letw_name_stub(uint32_t kind, uint64_t owner, const char *name);

/* The same names built in a buffer reused from event to event (grown as
 * needed), for callers that only keep some: returns b->s, valid until the
 * next call, or NULL on allocation failure. */
struct letw_namebuf {
	char *s;
	size_t cap;
};
const char *letw_name_method_in(struct letw_namebuf *b, const char *ns,
				const char *name, const char *sig,
				uint32_t method_flags);
const char *letw_name_stub_in(struct letw_namebuf *b, uint32_t kind,
			      uint64_t owner, const char *name);
/* letw_name_method_in() with the lengths of the strings known (no
 * strlen); SIZE_MAX: not known. */
const char *letw_name_method_len(struct letw_namebuf *b, const char *ns, size_t ns_len,
				 const char *name, size_t name_len, const char *sig,
				 size_t sig_len, uint32_t method_flags);
void letw_namebuf_fini(struct letw_namebuf *b);

/*
 * Whether stored is the name letw_name_method_len() would build from these
 * parts, compared part by part (no copy): 1 yes, 0 no, -1 cannot tell
 * without building it (a part holds a byte the name replaces by '?').
 * Lengths as for letw_name_method_len().
 */
int letw_name_method_is(const char *stored, const char *ns, size_t ns_len,
			const char *name, size_t name_len, const char *sig,
			size_t sig_len, uint32_t method_flags);

/*
 * A record's name as the caller has it, so that a record naming code
 * already known (most rundown records: every pass after the first) is
 * compared without its name being built (codemap.h, jitdump_proc.h).
 * is(stored, arg): 1 when stored is the record's name, 0 when not,
 * negative errno; get(arg): the name (borrowed, valid until the next
 * call), NULL when out of memory, asked only when a region is added.
 */
struct letw_name_src {
	int (*is)(const char *stored, void *arg);
	const char *(*get)(void *arg);
	void *arg;
};

const char *letw_tier_name(unsigned int tier); /* NULL for unknown/0 */
const char *letw_stub_kind_name(uint32_t kind); /* NULL when runtime-defined */

#endif /* LETW_BT_NAMES_H */
