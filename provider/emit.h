/* SPDX-License-Identifier: MIT */
/*
 * The LTTng-UST emitter: the only code that fires tracepoints, and the
 * walker sink used by real passes. Also reads the tracepoints' enabled
 * state, which is how the control thread learns of session changes.
 */
#ifndef LETW_EMIT_H
#define LETW_EMIT_H

#include <stdint.h>

#include "letw_payload.h"
#include "letw_session.h"
#include "lines.h"
#include "sessions.h"
#include "walker.h"

/* Does a session record anything a publish (unload 0) or unpublish of a
 * record of this kind (LETW_SLOT_*) would fire? lines: it has a line
 * table; code_readable: its code bytes may be copied. */
int letw_emit_wanted(int unload, uint32_t kind, int lines, int code_readable);
void letw_emit_method(int unload, const struct letw_tp_method *m);
void letw_emit_stub(int unload, const struct letw_tp_stub *s);
void letw_emit_module(int unload, const struct letw_tp_module *md);

/* A pass's Init and Complete events, into its target (sessions.h). */
void letw_emit_pass_init(const struct letw_sess *t, enum letw_flavour f,
			 const struct letw_tp_pass_init *p);
void letw_emit_pass_complete(const struct letw_sess *t, enum letw_flavour f,
			     const struct letw_tp_pass_complete *p);

/* After a method_load: its line table (NULL: none) and, if the runtime
 * vouched that its code is readable, its code bytes; each only if a
 * session enables the event. Same read-side section as the load event
 * (the record must stay alive). */
void letw_emit_method_extras_load(const struct letw_tp_method *m,
				  const struct letw_lines *lines, int code_readable);

/* Allocate this thread's lttng-ust TLS now (emit.c says why). */
void letw_emit_thread_init(void (*ust_init_thread)(void));

/* letw_lttng_sink's ctx: the pass's target, and the bytes of payload of
 * the records it wrote there (fields and strings as serialized, the
 * strings estimated from one record in 16; without the event header and
 * contexts, which the session decides): what a chunk must hold of the
 * pass, for `watch` (STATUS). */
enum { LETW_SINK_MODULE, LETW_SINK_METHOD, LETW_SINK_STUB, LETW_SINK_KINDS };

struct letw_sink_ctx {
	struct letw_sess target;
	uint64_t bytes;
	/* The string bytes of a record of each kind, as last measured, and
	 * how many were emitted (emit.c's str_bytes: one in 16 measured). */
	uint64_t str[LETW_SINK_KINDS];
	uint64_t seen[LETW_SINK_KINDS];
};

extern const struct letw_walk_sink letw_lttng_sink;

/* The provider's live keyword mask: the keywords any of whose events are
 * enabled in some started session right now (rundown: event recorders
 * only, triggers do not count). */
uint64_t letw_live_mask(int provider);

#endif
