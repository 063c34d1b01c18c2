/* SPDX-License-Identifier: MIT */
/*
 * Records: validating what the runtime hands us and laying it out in a
 * store slot (slot.h) — the method's own name inline or in a chunk, what
 * repeats interned (intern.h), a line table in an ext chunk — and building
 * the tracepoint payloads back from a slot (a name stored without its NUL
 * is copied out and terminated there). Everything here runs on the
 * publish paths or the walker: no malloc, no lock, no system call (the
 * store's slow path aside, store.h).
 */
#ifndef LETW_RECORD_H
#define LETW_RECORD_H

#include <stdint.h>

#include <lttng-etw/lttng-etw.h>
#include "letw_payload.h"
#include "lines.h"
#include "table.h"

/* Validation shared by every publish call: the string's length (0 for
 * an optional NULL) or a negative errno, from one bounded scan. */
long letw_validate_string(const char *s, int required);
/* The same, and the string's intern hash (hash.h) from the same pass;
 * *hash is 0 for a NULL or empty string. */
long letw_scan_string(const char *s, int required, uint64_t *hash);

/*
 * Build a PENDING record in a fresh slot from the runtime's struct
 * (validated, strings copied or interned), for letw_table_insert. On
 * error nothing is left behind. Caller inside a read-side section.
 */
int letw_rec_method(struct letw_table *t, const struct letw_method *m,
		    const struct letw_method_opts *opts, struct letw_slot **out,
		    struct letw_ext **ext);
int letw_rec_stub(struct letw_table *t, const struct letw_stub *s,
		  struct letw_slot **out);
int letw_rec_module(struct letw_table *t, const struct letw_module *m,
		    struct letw_slot **out);

/* Strings and payloads of a slot whose state is `st` (read side). The
 * payload points into the store, valid while the slot cannot be freed,
 * or, for a name stored without its NUL (names.h), into `buf`, where the
 * name is copied and terminated. */
#define LETW_REC_NAME_BUF (LETW_NAMES_MAX + 1)
const char *letw_rec_name(const struct letw_table *t, const struct letw_slot *s,
			  uint32_t st, char buf[LETW_REC_NAME_BUF]);
void letw_rec_ctx_strings(const struct letw_table *t, uint32_t ctx,
			  const char **s1, const char **s2);
void letw_rec_tp_method(const struct letw_table *t, const struct letw_slot *s,
			uint32_t st, uint16_t instance_id, char namebuf[LETW_REC_NAME_BUF],
			struct letw_tp_method *out);
void letw_rec_tp_stub(const struct letw_table *t, const struct letw_slot *s,
		      uint16_t instance_id, struct letw_tp_stub *out);
void letw_rec_tp_module(const struct letw_table *t, const struct letw_slot *s,
			uint16_t instance_id, struct letw_tp_module *out);

/*
 * One method_lines / method_code_bytes event's payload: rows from `first`
 * (at most LETW_TP_LINES_CHUNK) of m's line table, bytes from `off` (at
 * most LETW_TP_CODE_CHUNK) of the `total` copied or readable at `bytes`.
 * Shared by the load path (emit.c) and the rundown (walker.c) so that both
 * cut a table or a code version into the same events.
 */
static inline void letw_rec_tp_lines(const struct letw_tp_method *m,
				     const struct letw_lines *l, uint32_t first,
				     struct letw_tp_lines *out)
{
	uint32_t n = l->nr - first;

	*out = (struct letw_tp_lines){
		.method_id = m->method_id,
		.code_start = m->code_start,
		.version_id = m->version_id,
		.rows_total = l->nr,
		.row_first = first,
		.nr = n < LETW_TP_LINES_CHUNK ? n : LETW_TP_LINES_CHUNK,
		.files_len = l->files_len,
		.instance_id = m->instance_id,
		.native_offsets = l->native_offsets + first,
		.lines = l->lines + first,
		.files_idx = l->files_idx + first,
		.inline_depths = l->inline_depths + first,
		.files = l->files,
	};
}

static inline void letw_rec_tp_code(const struct letw_tp_method *m, const uint8_t *bytes,
				    uint32_t total, uint32_t off, struct letw_tp_code *out)
{
	*out = (struct letw_tp_code){
		.method_id = m->method_id,
		.code_start = m->code_start,
		.version_id = m->version_id,
		.code_size = m->code_size,
		.offset = off,
		.len = total - off < LETW_TP_CODE_CHUNK ? total - off : LETW_TP_CODE_CHUNK,
		.instance_id = m->instance_id,
		.bytes = bytes + off,
	};
}

#endif
