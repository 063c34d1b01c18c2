/* SPDX-License-Identifier: MIT */
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "letw_runtime_tp.h"
#include "letw_rundown_tp.h"
#include "letw_fanout.h"
#include "emit.h"
#include "record.h"
#include "sessions.h"
#include "slot.h"

#define ENABLED(prov, ev) (lttng_ust_tracepoint_enabled(prov, ev) != 0)

/*
 * lttng-ust's TLS is global-dynamic and, in liblttng-ust-tracepoint and
 * liblttng-ust (dlopen()ed with our probe object), allocated by glibc on
 * a thread's first access — with malloc, from inside the tracepoint call.
 * Left alone, that first access happens on the first event a session
 * enables, i.e. in the middle of a runtime's steady state (the no-malloc
 * test caught it). Touch it at the thread's first call into us instead:
 * lttng-ust's own lttng_ust_init_thread for its TLS, and one tracepoint
 * RCU read-side section for the tracepoint library's.
 */
void letw_emit_thread_init(void (*ust_init_thread)(void))
{
	if (ust_init_thread)
		ust_init_thread();
	if (lttng_ust_tracepoint_dlopen_ptr &&
	    lttng_ust_tracepoint_dlopen_ptr->rcu_read_lock_sym &&
	    lttng_ust_tracepoint_dlopen_ptr->rcu_read_unlock_sym) {
		lttng_ust_tracepoint_dlopen_ptr->rcu_read_lock_sym();
		lttng_ust_tracepoint_dlopen_ptr->rcu_read_unlock_sym();
	}
}

void letw_emit_method_extras_load(const struct letw_tp_method *m,
				  const struct letw_lines *lines, int code_readable)
{
	if (lines && ENABLED(letw_runtime, method_lines)) {
		struct letw_tp_lines c;
		uint32_t first = 0;

		do {
			letw_rec_tp_lines(m, lines, first, &c);
			lttng_ust_tracepoint(letw_runtime, method_lines, &c);
			first += c.nr;
		} while (first < lines->nr);
	}
	/* In place, on the runtime's word (LETW_METHOD_OPT_CODE_READABLE):
	 * a fault-safe copy would be a system call (process_vm_readv, which
	 * can sleep on mmap_lock) on the publish path. Rundowns copy on the
	 * control thread instead (rundown/codecopy.c). */
	if (code_readable && ENABLED(letw_runtime, method_code_bytes)) {
		uint32_t total = m->code_size < LETW_CODE_BYTES_MAX ?
			m->code_size : LETW_CODE_BYTES_MAX;

		for (uint32_t off = 0; off < total; off += LETW_TP_CODE_CHUNK) {
			struct letw_tp_code c;

			letw_rec_tp_code(m, (const uint8_t *)(uintptr_t)m->code_start, total, off,
					 &c);
			lttng_ust_tracepoint(letw_runtime, method_code_bytes, &c);
		}
	}
}

/*
 * Checked before the payload is built: with no session recording the
 * event, publish and unpublish skip reading the record back (context
 * strings, strlen) for a tracepoint that would not fire. Each tracepoint
 * still checks its own state when it fires: a session starting between
 * the two only misses this one record's event, as it would had it started
 * a moment later.
 */
int letw_emit_wanted(int unload, uint32_t kind, int lines, int code_readable)
{
	switch (kind) {
	case LETW_SLOT_METHOD:
		if (unload)
			return ENABLED(letw_runtime, method_unload);
		return ENABLED(letw_runtime, method_load) ||
		       (lines && ENABLED(letw_runtime, method_lines)) ||
		       (code_readable && ENABLED(letw_runtime, method_code_bytes));
	case LETW_SLOT_STUB:
		return unload ? ENABLED(letw_runtime, stub_unload) :
				ENABLED(letw_runtime, stub_load);
	default:
		return unload ? ENABLED(letw_runtime, module_unload) :
				ENABLED(letw_runtime, module_load);
	}
}

void letw_emit_method(int unload, const struct letw_tp_method *m)
{
	if (unload)
		lttng_ust_tracepoint(letw_runtime, method_unload, m);
	else
		lttng_ust_tracepoint(letw_runtime, method_load, m);
}

void letw_emit_stub(int unload, const struct letw_tp_stub *s)
{
	if (unload)
		lttng_ust_tracepoint(letw_runtime, stub_unload, s);
	else
		lttng_ust_tracepoint(letw_runtime, stub_load, s);
}

void letw_emit_module(int unload, const struct letw_tp_module *md)
{
	if (unload)
		lttng_ust_tracepoint(letw_runtime, module_unload, md);
	else
		lttng_ust_tracepoint(letw_runtime, module_load, md);
}

/*
 * The one way into a rundown event: into the target session, or, for a
 * pass meant for every session (no session asked: polling fallback,
 * capture-state), into each session through its own probe.
 */
#define RUNDOWN(tgt, ev, T, arg)                                               \
	do {                                                                   \
		if ((tgt)->session)                                            \
			lttng_ust_tracepoint(letw_rundown, ev, (tgt)->session, arg); \
		else                                                           \
			LETW_TP_FANOUT(letw_rundown, ev, T, arg);              \
	} while (0)

void letw_emit_pass_init(const struct letw_sess *t, enum letw_flavour f,
			 const struct letw_tp_pass_init *p)
{
	if (f == LETW_FLAVOUR_DCSTART)
		RUNDOWN(t, dcstart_init, const struct letw_tp_pass_init *, p);
	else
		RUNDOWN(t, dcend_init, const struct letw_tp_pass_init *, p);
}

void letw_emit_pass_complete(const struct letw_sess *t, enum letw_flavour f,
			     const struct letw_tp_pass_complete *p)
{
	if (f == LETW_FLAVOUR_DCSTART)
		RUNDOWN(t, dcstart_complete, const struct letw_tp_pass_complete *, p);
	else
		RUNDOWN(t, dcend_complete, const struct letw_tp_pass_complete *, p);
}

/*
 * Walker sink; ctx is the pass's struct letw_sink_ctx. A record counts
 * as emitted when the target records the event (its event set, read when
 * the pass began) and the event is still enabled: a session stopping in
 * between makes us count one record that did not reach it, which the
 * report then shows as emitted > seen at the very end of a cut pass — the
 * truthful reading of a pass cut by `lttng stop`.
 */
#define SINK(c, bit, ev, T, arg, len)                                          \
	do {                                                                   \
		if (!((c)->target.events & LETW_RD_BIT(bit)) ||                \
		    !ENABLED(letw_rundown, ev))                                \
			return 0;                                              \
		RUNDOWN(&(c)->target, ev, T, arg);                             \
		(c)->bytes += (len);                                           \
		return 1;                                                      \
	} while (0)

/*
 * Payload bytes of a record's strings, NULs included (emit.h): measured
 * on one record of a kind in LETW_STR_SAMPLE, whose figure stands for the
 * others until the next measure. Measuring every record would add a
 * strlen() per string to each record the walker emits (the tracepoint
 * already scans each once), for a figure `watch` only compares with half
 * a rotation size. Evaluated after the record is emitted, so only for
 * records that were.
 */
#define LETW_STR_SAMPLE 16u

static uint64_t str_bytes(struct letw_sink_ctx *c, int kind, const char *a, const char *b,
			  const char *d)
{
	if ((c->seen[kind]++ & (LETW_STR_SAMPLE - 1)) == 0)
		c->str[kind] = strlen(a) + 1 + (b ? strlen(b) + 1 : 0) + (d ? strlen(d) + 1 : 0);
	return c->str[kind];
}

static int sink_module(void *ctx, enum letw_flavour f, const struct letw_tp_module *md)
{
	struct letw_sink_ctx *c = ctx;
#define LEN (8 + 4 + 2 + str_bytes(c, LETW_SINK_MODULE, md->name, NULL, NULL))

	if (f == LETW_FLAVOUR_DCSTART)
		SINK(c, LETW_RD_MODULE_DCSTART, module_dcstart, const struct letw_tp_module *, md,
		     LEN);
	SINK(c, LETW_RD_MODULE_DCEND, module_dcend, const struct letw_tp_module *, md, LEN);
#undef LEN
}

static int sink_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	struct letw_sink_ctx *c = ctx;
#define LEN (4 * 8 + 3 * 4 + 2 +                                                 \
	     str_bytes(c, LETW_SINK_METHOD, m->method_namespace, m->name, m->signature))

	if (f == LETW_FLAVOUR_DCSTART)
		SINK(c, LETW_RD_METHOD_DCSTART, method_dcstart, const struct letw_tp_method *, m,
		     LEN);
	SINK(c, LETW_RD_METHOD_DCEND, method_dcend, const struct letw_tp_method *, m, LEN);
#undef LEN
}

static int sink_stub(void *ctx, enum letw_flavour f, const struct letw_tp_stub *s)
{
	struct letw_sink_ctx *c = ctx;
#define LEN (2 * 8 + 2 * 4 + 2 + str_bytes(c, LETW_SINK_STUB, s->name, NULL, NULL))

	if (f == LETW_FLAVOUR_DCSTART)
		SINK(c, LETW_RD_STUB_DCSTART, stub_dcstart, const struct letw_tp_stub *, s, LEN);
	SINK(c, LETW_RD_STUB_DCEND, stub_dcend, const struct letw_tp_stub *, s, LEN);
#undef LEN
}

/* Called only when sink_wants said the target records them. */
static void sink_lines(void *ctx, enum letw_flavour f, const struct letw_tp_lines *l)
{
	struct letw_sink_ctx *c = ctx;

	if (f == LETW_FLAVOUR_DCSTART)
		RUNDOWN(&c->target, method_lines_start, const struct letw_tp_lines *, l);
	else
		RUNDOWN(&c->target, method_lines_end, const struct letw_tp_lines *, l);
	/* Four sequences of nr 32-bit values, with their lengths. */
	c->bytes += 3 * 8 + 4 * 4 + 2 + 4 * (4 + 4ull * l->nr) + l->files_len + 1;
}

static void sink_code(void *ctx, enum letw_flavour f, const struct letw_tp_code *cd)
{
	struct letw_sink_ctx *c = ctx;

	if (f == LETW_FLAVOUR_DCSTART)
		RUNDOWN(&c->target, method_code_bytes_start, const struct letw_tp_code *, cd);
	else
		RUNDOWN(&c->target, method_code_bytes_end, const struct letw_tp_code *, cd);
	c->bytes += 3 * 8 + 3 * 4 + 2 + 4 + cd->len;
}

/* Whether the target records a record's line table / code bytes in this
 * flavour: the walker only builds the chunks for a yes. */
static int sink_wants(void *ctx, enum letw_flavour f, int what)
{
	const struct letw_sess *t = &((const struct letw_sink_ctx *)ctx)->target;
	int start = f == LETW_FLAVOUR_DCSTART;

	if (what == LETW_WANT_LINES)
		return (t->events & LETW_RD_BIT(start ? LETW_RD_LINES_START : LETW_RD_LINES_END)) &&
		       (start ? ENABLED(letw_rundown, method_lines_start) :
				ENABLED(letw_rundown, method_lines_end)) ? LETW_WANT_LINES : 0;
	return (t->events & LETW_RD_BIT(start ? LETW_RD_CODE_START : LETW_RD_CODE_END)) &&
	       (start ? ENABLED(letw_rundown, method_code_bytes_start) :
			ENABLED(letw_rundown, method_code_bytes_end)) ? LETW_WANT_CODE : 0;
}

const struct letw_walk_sink letw_lttng_sink = {
	.module = sink_module,
	.method = sink_method,
	.stub = sink_stub,
	.lines = sink_lines,
	.code = sink_code,
	.wants = sink_wants,
};

uint64_t letw_live_mask(int provider)
{
	uint64_t mask = 0;

	if (provider == LETW_PROVIDER_RUNTIME) {
		if (ENABLED(letw_runtime, module_load) ||
		    ENABLED(letw_runtime, module_unload))
			mask |= LETW_KW_LOADER;
		if (ENABLED(letw_runtime, method_load) ||
		    ENABLED(letw_runtime, method_unload))
			mask |= LETW_KW_JIT;
		if (ENABLED(letw_runtime, stub_load) ||
		    ENABLED(letw_runtime, stub_unload))
			mask |= LETW_KW_STUB;
		if (ENABLED(letw_runtime, method_lines))
			mask |= LETW_KW_LINES;
		if (ENABLED(letw_runtime, method_code_bytes))
			mask |= LETW_KW_CODE_BYTES;
		return mask;
	}
	/* Event recorders of started sessions only: a trigger (event
	 * notifier) on our rundown events switches the tracepoints on too,
	 * but it is no session and asks for no rundown. */
	return letw_rd_events_mask(letw_sess_any());
}
