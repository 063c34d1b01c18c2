/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>

#include "letw_runtime_tp.h"
#include "letw_rundown_tp.h"
#include "letw_fanout.h"
#include "emit.h"
#include "sessions.h"

#define ENABLED(prov, ev) (lttng_ust_tracepoint_enabled(prov, ev) != 0)

static pid_t self_pid;

void letw_emit_set_pid(void)
{
	self_pid = getpid();
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

/*
 * Copy [addr, addr + len) of our own address space without trusting it
 * to be mapped: process_vm_readv on our own pid fails with EFAULT instead
 * of faulting (a runtime may free code under a rundown, or pass a range it
 * has not mapped). It makes no blocking wait; it only runs when a session
 * enables the code-bytes events. Returns 0 when every byte was copied.
 */
static int copy_code(void *dst, uint64_t addr, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv(self_pid, &local, 1, &remote, 1, 0) == (ssize_t)len ?
		0 : -EFAULT;
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

			if (copy_code(buf, m->code_start + off, len))
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

void letw_emit_target_all(struct letw_emit_target *t)
{
	uint32_t any = 0;
	struct letw_sess s[1];

	(void)letw_sess_list(s, 0, &any);
	*t = (struct letw_emit_target){ .session = NULL, .events = any };
}

void letw_emit_pass_init(const struct letw_emit_target *t, enum letw_flavour f,
			 const struct letw_tp_pass_init *p)
{
	if (f == LETW_FLAVOUR_DCSTART)
		RUNDOWN(t, dcstart_init, const struct letw_tp_pass_init *, p);
	else
		RUNDOWN(t, dcend_init, const struct letw_tp_pass_init *, p);
}

void letw_emit_pass_complete(const struct letw_emit_target *t, enum letw_flavour f,
			     const struct letw_tp_pass_complete *p)
{
	if (f == LETW_FLAVOUR_DCSTART)
		RUNDOWN(t, dcstart_complete, const struct letw_tp_pass_complete *, p);
	else
		RUNDOWN(t, dcend_complete, const struct letw_tp_pass_complete *, p);
}

/*
 * Walker sink; ctx is the pass's struct letw_emit_target. A record counts
 * as emitted when the target records the event (its event set, read when
 * the pass began) and the event is still enabled: a session stopping in
 * between makes us count one record that did not reach it, which the
 * report then shows as emitted > seen at the very end of a cut pass — the
 * truthful reading of a pass cut by `lttng stop`.
 */
#define SINK(tgt, bit, ev, T, arg)                                             \
	do {                                                                   \
		if (!((tgt)->events & LETW_RD_BIT(bit)) ||                     \
		    !ENABLED(letw_rundown, ev))                                \
			return 0;                                              \
		RUNDOWN(tgt, ev, T, arg);                                      \
		return 1;                                                      \
	} while (0)

static int sink_module(void *ctx, enum letw_flavour f, const struct letw_tp_module *md)
{
	const struct letw_emit_target *t = ctx;

	if (f == LETW_FLAVOUR_DCSTART)
		SINK(t, LETW_RD_MODULE_DCSTART, module_dcstart, const struct letw_tp_module *, md);
	SINK(t, LETW_RD_MODULE_DCEND, module_dcend, const struct letw_tp_module *, md);
}

static int sink_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	const struct letw_emit_target *t = ctx;

	if (f == LETW_FLAVOUR_DCSTART)
		SINK(t, LETW_RD_METHOD_DCSTART, method_dcstart, const struct letw_tp_method *, m);
	SINK(t, LETW_RD_METHOD_DCEND, method_dcend, const struct letw_tp_method *, m);
}

static int sink_stub(void *ctx, enum letw_flavour f, const struct letw_tp_stub *s)
{
	const struct letw_emit_target *t = ctx;

	if (f == LETW_FLAVOUR_DCSTART)
		SINK(t, LETW_RD_STUB_DCSTART, stub_dcstart, const struct letw_tp_stub *, s);
	SINK(t, LETW_RD_STUB_DCEND, stub_dcend, const struct letw_tp_stub *, s);
}

/* The line-table and code-bytes rundown events come with the record store
 * (the walker has no callback for them yet); they go through RUNDOWN too:
 *   RUNDOWN(t, method_lines_start, const struct letw_tp_lines *, &chunk); */

const struct letw_walk_sink letw_lttng_sink = {
	.module = sink_module,
	.method = sink_method,
	.stub = sink_stub,
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
	{
		uint32_t any = 0;
		struct letw_sess none[1];

		(void)letw_sess_list(none, 0, &any);
		mask = letw_rd_events_mask(any);
	}
	return mask;
}
