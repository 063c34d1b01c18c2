/* SPDX-License-Identifier: MIT */
/*
 * Decoding of the optional per-code-version events the jitdump sink needs
 * and the shared decoder (event.h) leaves alone: line tables
 * (letw_runtime:method_lines, letw_rundown:method_lines_start/_end) and
 * code bytes (letw_runtime:method_code_bytes,
 * letw_rundown:method_code_bytes_start/_end). Their payloads are
 * tracepoints/letw_fields.h's LETW_TP_LINES_FIELDS / LETW_TP_CODE_FIELDS:
 * chunks of a table or of the code, each naming the code version
 * (method_id, code_start, version_id) it belongs to.
 *
 * Also the raw clock value of a message: LTTng-UST stamps events with
 * CLOCK_MONOTONIC, which is perf's clock under `perf record -k mono`, but
 * babeltrace2's ns-from-origin adds the clock class offset (the trace's
 * epoch): jitdump timestamps must be the raw value.
 */
#ifndef LETW_BT_JITDUMP_EXTRA_H
#define LETW_BT_JITDUMP_EXTRA_H

#include <stdint.h>

#include <babeltrace2/babeltrace.h>
#include <glib.h>

enum letw_jdx_kind { LETW_JDX_NONE = 0, LETW_JDX_LINES, LETW_JDX_CODE };

/* Borrowed fields point into the event: valid while the message is. */
struct letw_jdx {
	enum letw_jdx_kind kind;
	int64_t vpid;
	int has_vpid;
	uint64_t pid_ns;   /* LTTng's pid_ns context, when recorded */
	int has_pid_ns;
	uint64_t method_id, code_start, version_id;
	/* lines chunk */
	uint32_t rows_total, row_first, nr;
	const bt_field *native_offsets, *lines, *files_idx, *inline_depths;
	const bt_field *files; /* string (or text array) */
	/* code chunk */
	uint32_t code_size, offset, len;
	const bt_field *bytes;
};

/* Event class → kind, so names are compared once per class. */
struct letw_jdx_cache {
	GHashTable *kinds; /* const bt_event_class * → kind + 1 */
};

int letw_jdx_cache_init(struct letw_jdx_cache *c);
void letw_jdx_cache_fini(struct letw_jdx_cache *c);

/*
 * Decode an event message. Returns 1 (*out filled), 0 when it is not one
 * of these events, -1 when it is one with a missing or mistyped field
 * (*err names it) or inconsistent sizes.
 */
int letw_jdx_decode(struct letw_jdx_cache *c, const bt_message *msg,
		    struct letw_jdx *out, const char **err);

/* Element i of an unsigned integer array field (caller checks bounds). */
uint64_t letw_jdx_u(const bt_field *array, uint64_t i);

/* The files field's text: *out is g_malloc()ed, NUL terminated. */
int letw_jdx_files(const bt_field *files, char **out);

/*
 * Raw value of an event message's default clock snapshot in ns of its
 * clock (cycles scaled by the frequency, no offset). Returns 0, or -1 when
 * the stream has no clock.
 */
int letw_jdx_raw_ns(const bt_message *event_msg, uint64_t *ns);

#endif /* LETW_BT_JITDUMP_EXTRA_H */
