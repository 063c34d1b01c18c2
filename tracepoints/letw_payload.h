/* SPDX-License-Identifier: MIT */
/*
 * Payload structs handed to the tracepoints. LTTng-UST tracepoints take at
 * most 10 arguments, and the method payload has 11 fields, so every event
 * takes one pointer and the probe names each CTF field from it (DESIGN §3).
 *
 * The provider embeds these structs in its table records, so a rundown
 * emits straight from the record with no copy. Private to lttng-etw: shared
 * only by provider/, rundown/ and the probe object in this folder.
 */
#ifndef LETW_PAYLOAD_H
#define LETW_PAYLOAD_H

#include <stdint.h>

struct letw_tp_method {
	uint64_t method_id;
	uint64_t module_id;
	uint64_t code_start;
	uint64_t version_id;
	uint32_t code_size;
	uint32_t method_token;
	uint32_t method_flags;
	uint16_t instance_id;
	const char *method_namespace; /* never NULL: "" when absent */
	const char *name;
	const char *signature;        /* never NULL */
};

struct letw_tp_stub {
	uint64_t start;
	uint64_t owner;
	uint32_t size;
	uint32_t kind;
	uint16_t instance_id;
	const char *name; /* never NULL */
};

struct letw_tp_module {
	uint64_t module_id;
	uint32_t module_flags;
	uint16_t instance_id;
	const char *name;
};

/*
 * method_lines*: one chunk of a code version's line table. Columns are
 * kept apart (one array per field) so each is a single CTF sequence; a
 * table longer than LETW_TP_LINES_CHUNK rows spans several events
 * (row_first, rows_total). Each chunk repeats the file names so it can be
 * read on its own.
 */
#define LETW_TP_LINES_CHUNK 512u

struct letw_tp_lines {
	uint64_t method_id;
	uint64_t code_start;
	uint64_t version_id;
	uint32_t rows_total;
	uint32_t row_first;
	uint32_t nr;               /* rows in this chunk */
	uint32_t files_len;        /* bytes of `files`, no terminating NUL */
	uint16_t instance_id;
	const uint32_t *native_offsets; /* nr entries each, from row_first */
	const uint32_t *lines;
	const uint32_t *files_idx;
	const uint32_t *inline_depths;
	const char *files;         /* the file names joined by '\n' */
};

/* method_code_bytes*: one chunk of a code version's bytes. */
#define LETW_TP_CODE_CHUNK 4096u

struct letw_tp_code {
	uint64_t method_id;
	uint64_t code_start;
	uint64_t version_id;
	uint32_t code_size;        /* of the whole code version */
	uint32_t offset;           /* of this chunk, from code_start */
	uint32_t len;              /* bytes in this chunk */
	uint16_t instance_id;
	const uint8_t *bytes;
};

/* dcstart_init / dcend_init */
struct letw_tp_pass_init {
	uint64_t pass_id;
	uint64_t match_any_keyword;
	/* CLOCK_MONOTONIC (LTTng-UST's trace clock) just before the pass
	 * began accounting unpublishes: every record counted in the
	 * Complete's skipped_raced was unloaded after this instant, which
	 * lies a little before the Init's own timestamp (rundown/walker.c). */
	uint64_t accounted_from_ns;
	uint32_t control_code;
	uint16_t instance_id;
};

/* dcstart_complete / dcend_complete */
struct letw_tp_pass_complete {
	uint64_t pass_id;
	uint64_t emitted;
	uint64_t skipped_raced;
	uint64_t duration_ns;
	uint16_t instance_id;
};

#endif /* LETW_PAYLOAD_H */
