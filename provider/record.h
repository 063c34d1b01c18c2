/* SPDX-License-Identifier: MIT */
/*
 * Records: validating what the runtime hands us and laying it out in a
 * store slot (slot.h) — the method's own name inline or in a chunk, what
 * repeats interned (intern.h), a line table in an ext chunk — and building
 * the tracepoint payloads back from a slot. Everything here runs on the
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
 * payload points into the store: valid while the slot cannot be freed. */
const char *letw_rec_name(const struct letw_table *t, const struct letw_slot *s,
			  uint32_t st);
void letw_rec_ctx_strings(const struct letw_table *t, uint32_t ctx,
			  const char **s1, const char **s2);
void letw_rec_tp_method(const struct letw_table *t, const struct letw_slot *s,
			uint32_t st, uint16_t instance_id, struct letw_tp_method *out);
void letw_rec_tp_stub(const struct letw_table *t, const struct letw_slot *s,
		      uint16_t instance_id, struct letw_tp_stub *out);
void letw_rec_tp_module(const struct letw_table *t, const struct letw_slot *s,
			uint16_t instance_id, struct letw_tp_module *out);

#endif
