/* SPDX-License-Identifier: MIT */
#include <lttng-etw/lttng-etw.h>

#include "letw_runtime_tp.h"
#include "letw_rundown_tp.h"
#include "emit.h"

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

static void lines_chunk(const struct letw_tp_method *m, const struct letw_lines *l,
			uint32_t first, struct letw_tp_lines *out)
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

void letw_emit_method_extras_load(const struct letw_tp_method *m,
				  const struct letw_lines *lines)
{
	if (lines && ENABLED(letw_runtime, method_lines)) {
		struct letw_tp_lines c;
		uint32_t first = 0;

		do {
			lines_chunk(m, lines, first, &c);
			lttng_ust_tracepoint(letw_runtime, method_lines, &c);
			first += c.nr;
		} while (first < lines->nr);
	}
	if (ENABLED(letw_runtime, method_code_bytes)) {
		uint32_t total = m->code_size < LETW_CODE_BYTES_MAX ?
			m->code_size : LETW_CODE_BYTES_MAX;
		uint8_t buf[LETW_TP_CODE_CHUNK];

		for (uint32_t off = 0; off < total; off += LETW_TP_CODE_CHUNK) {
			uint32_t len = total - off < LETW_TP_CODE_CHUNK ?
				total - off : LETW_TP_CODE_CHUNK;
			struct letw_tp_code c = {
				.method_id = m->method_id,
				.code_start = m->code_start,
				.version_id = m->version_id,
				.code_size = m->code_size,
				.offset = off,
				.len = len,
				.instance_id = m->instance_id,
				.bytes = buf,
			};

			if (letw_copy_code(buf, m->code_start + off, len))
				break;
			lttng_ust_tracepoint(letw_runtime, method_code_bytes, &c);
		}
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

void letw_emit_pass_init(enum letw_flavour f, const struct letw_tp_pass_init *p)
{
	if (f == LETW_FLAVOUR_DCSTART)
		lttng_ust_tracepoint(letw_rundown, dcstart_init, p);
	else
		lttng_ust_tracepoint(letw_rundown, dcend_init, p);
}

void letw_emit_pass_complete(enum letw_flavour f,
			     const struct letw_tp_pass_complete *p)
{
	if (f == LETW_FLAVOUR_DCSTART)
		lttng_ust_tracepoint(letw_rundown, dcstart_complete, p);
	else
		lttng_ust_tracepoint(letw_rundown, dcend_complete, p);
}

/*
 * Walker sink. The enabled test and the tracepoint read the same state; a
 * session stopping between the two makes us count one record that did not
 * reach it, which the report then shows as emitted > seen at the very end
 * of a cut pass — the truthful reading of a pass cut by `lttng stop`.
 */
static int sink_module(void *ctx, enum letw_flavour f, const struct letw_tp_module *md)
{
	if (f == LETW_FLAVOUR_DCSTART) {
		if (!ENABLED(letw_rundown, module_dcstart))
			return 0;
		lttng_ust_tracepoint(letw_rundown, module_dcstart, md);
	} else {
		if (!ENABLED(letw_rundown, module_dcend))
			return 0;
		lttng_ust_tracepoint(letw_rundown, module_dcend, md);
	}
	return 1;
}

static int sink_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	if (f == LETW_FLAVOUR_DCSTART) {
		if (!ENABLED(letw_rundown, method_dcstart))
			return 0;
		lttng_ust_tracepoint(letw_rundown, method_dcstart, m);
	} else {
		if (!ENABLED(letw_rundown, method_dcend))
			return 0;
		lttng_ust_tracepoint(letw_rundown, method_dcend, m);
	}
	return 1;
}

static int sink_stub(void *ctx, enum letw_flavour f, const struct letw_tp_stub *s)
{
	if (f == LETW_FLAVOUR_DCSTART) {
		if (!ENABLED(letw_rundown, stub_dcstart))
			return 0;
		lttng_ust_tracepoint(letw_rundown, stub_dcstart, s);
	} else {
		if (!ENABLED(letw_rundown, stub_dcend))
			return 0;
		lttng_ust_tracepoint(letw_rundown, stub_dcend, s);
	}
	return 1;
}

static void sink_lines(void *ctx, enum letw_flavour f, const struct letw_tp_lines *l)
{
	if (f == LETW_FLAVOUR_DCSTART)
		lttng_ust_tracepoint(letw_rundown, method_lines_start, l);
	else
		lttng_ust_tracepoint(letw_rundown, method_lines_end, l);
}

static void sink_code(void *ctx, enum letw_flavour f, const struct letw_tp_code *c)
{
	if (f == LETW_FLAVOUR_DCSTART)
		lttng_ust_tracepoint(letw_rundown, method_code_bytes_start, c);
	else
		lttng_ust_tracepoint(letw_rundown, method_code_bytes_end, c);
}

static int sink_wants(void *ctx, enum letw_flavour f, int what)
{
	int start = f == LETW_FLAVOUR_DCSTART;

	if (what == LETW_WANT_LINES)
		return (start ? ENABLED(letw_rundown, method_lines_start) :
				ENABLED(letw_rundown, method_lines_end)) ? LETW_WANT_LINES : 0;
	return (start ? ENABLED(letw_rundown, method_code_bytes_start) :
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
	if (ENABLED(letw_rundown, dcstart_init) ||
	    ENABLED(letw_rundown, dcstart_complete) ||
	    ENABLED(letw_rundown, method_dcstart) ||
	    ENABLED(letw_rundown, stub_dcstart) ||
	    ENABLED(letw_rundown, module_dcstart))
		mask |= LETW_KW_RUNDOWN_START;
	if (ENABLED(letw_rundown, dcend_init) ||
	    ENABLED(letw_rundown, dcend_complete) ||
	    ENABLED(letw_rundown, method_dcend) ||
	    ENABLED(letw_rundown, stub_dcend) ||
	    ENABLED(letw_rundown, module_dcend))
		mask |= LETW_KW_RUNDOWN_END;
	if (ENABLED(letw_rundown, method_dcstart) ||
	    ENABLED(letw_rundown, method_dcend))
		mask |= LETW_KW_JIT_RUNDOWN;
	if (ENABLED(letw_rundown, module_dcstart) ||
	    ENABLED(letw_rundown, module_dcend))
		mask |= LETW_KW_LOADER_RUNDOWN;
	if (ENABLED(letw_rundown, stub_dcstart) ||
	    ENABLED(letw_rundown, stub_dcend))
		mask |= LETW_KW_STUB_RUNDOWN;
	if (ENABLED(letw_rundown, method_lines_start) ||
	    ENABLED(letw_rundown, method_lines_end))
		mask |= LETW_KW_LINES_RUNDOWN;
	if (ENABLED(letw_rundown, method_code_bytes_start) ||
	    ENABLED(letw_rundown, method_code_bytes_end))
		mask |= LETW_KW_CODE_BYTES_RUNDOWN;
	return mask;
}
