/* SPDX-License-Identifier: MIT */
/*
 * A code version's line table, validated and copied from the runtime's
 * letw_method_opts at publish, kept with the record (immutable, like the
 * record) so both the load event and rundowns can emit it. Columns are
 * stored apart, the shape the method_lines events take (letw_payload.h).
 */
#ifndef LETW_LINES_H
#define LETW_LINES_H

#include <stddef.h>
#include <stdint.h>

#include <lttng-etw/lttng-etw.h>

struct letw_lines {
	uint32_t nr;
	uint32_t files_len;       /* bytes of `files`, no terminating NUL */
	const uint32_t *native_offsets;
	const uint32_t *lines;
	const uint32_t *files_idx;
	const uint32_t *inline_depths;
	const char *files;        /* names joined by '\n' */
};

/* Bytes a copy of opts' line table needs, or a negative errno (the
 * validation of letw_method_publish_opts). 0: nothing to keep. */
long letw_lines_size(const struct letw_method *m, const struct letw_method_opts *o);

/* opts' flags (LETW_METHOD_OPT_*): 0 for NULL opts or a runtime built
 * against a header older than the field. */
static inline uint32_t letw_method_opts_flags(const struct letw_method_opts *o)
{
	return o && o->size >= offsetof(struct letw_method_opts, flags) + sizeof(o->flags) ?
		o->flags : 0;
}

/* Copy into `mem` (letw_lines_size bytes, 8-aligned); returns it. */
struct letw_lines *letw_lines_build(void *mem, const struct letw_method_opts *o);

#endif
