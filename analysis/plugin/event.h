/* SPDX-License-Identifier: MIT */
/*
 * Decoding of lttng-etw events (tracepoints/letw_*_tp.h) from babeltrace2
 * event messages into one flat struct, shared by every sink. Fields are
 * looked up by name, so a trace from another version of the schema with
 * extra fields still decodes; a missing required field is an error.
 */
#ifndef LETW_BT_EVENT_H
#define LETW_BT_EVENT_H

#include <stdint.h>
#include <babeltrace2/babeltrace.h>

enum letw_ev_kind {
	LETW_EV_OTHER = 0, /* not an lttng-etw event */
	LETW_EV_METHOD_LOAD,
	LETW_EV_METHOD_UNLOAD,
	LETW_EV_STUB_LOAD,
	LETW_EV_STUB_UNLOAD,
	LETW_EV_MODULE_LOAD,
	LETW_EV_MODULE_UNLOAD,
	LETW_EV_DCSTART_INIT,
	LETW_EV_DCSTART_COMPLETE,
	LETW_EV_DCEND_INIT,
	LETW_EV_DCEND_COMPLETE,
	LETW_EV_METHOD_DCSTART,
	LETW_EV_METHOD_DCEND,
	LETW_EV_STUB_DCSTART,
	LETW_EV_STUB_DCEND,
	LETW_EV_MODULE_DCSTART,
	LETW_EV_MODULE_DCEND,
	LETW_EV_KIND_COUNT,
};

/* Rundown flavours, also used as array indexes. */
enum letw_flavour { LETW_FL_DCSTART = 0, LETW_FL_DCEND = 1, LETW_FL_NONE = 2 };

enum letw_ev_object { LETW_OBJ_NONE, LETW_OBJ_METHOD, LETW_OBJ_STUB,
		      LETW_OBJ_MODULE, LETW_OBJ_INIT, LETW_OBJ_COMPLETE };

/* Borrowed strings point into the event: valid while the message is. */
struct letw_ev {
	enum letw_ev_kind kind;
	const bt_message *msg; /* the event message (borrowed) */
	int64_t ts_ns;      /* ns from origin; 0 when the stream has no clock */
	int has_ts;         /* ts_ns, or raw_ns for a raw_ns cache, is set */
	uint64_t raw_ns;    /* the clock's own value in ns (cache raw_ns) */
	int64_t vpid;
	int has_vpid;       /* from the vpid context or the trace environment */
	uint64_t pid_ns;    /* LTTng's pid_ns context (the namespace's inode) */
	int has_pid_ns;
	/* Which process, for the sinks' tables: vpid, told apart by pid_ns
	 * (sink_common.h, letw_proc_key); set by the shared intake. */
	int64_t proc;
	uint16_t instance_id;
	/* method */
	uint64_t method_id, module_id, version_id;
	uint64_t start;     /* method code_start / stub start */
	uint32_t size;      /* method code_size / stub size */
	uint32_t method_token, method_flags;
	const char *ns, *name, *signature;
	size_t ns_len, name_len, signature_len; /* as babeltrace2 stores them */
	/* stub */
	uint32_t stub_kind;
	uint64_t owner;
	/* init / complete */
	uint64_t pass_id, match_any_keyword, emitted, skipped_raced, duration_ns;
	uint32_t control_code;
	const char *overflow; /* a field whose value exceeds the schema's width */
	/* A lazy_method_ids cache leaves method_id and version_id in the
	 * payload, here: read them with letw_ev_method_ids(). */
	const bt_field *payload;
	int16_t ids_idx[2];
	uint8_t ids_signed[2];
	uint8_t ids_lazy;
};

enum letw_ev_kind letw_ev_kind_from_name(const char *event_class_name);
enum letw_ev_object letw_ev_object(enum letw_ev_kind kind);
enum letw_flavour letw_ev_flavour(enum letw_ev_kind kind);
const char *letw_flavour_name(enum letw_flavour fl);
/* "letw_runtime:method_load", ... */
const char *letw_ev_kind_name(enum letw_ev_kind kind);

/* Code regions no runtime publishes (a damaged trace): ending past
 * LETW_USER_ADDR_END, above every 64-bit Linux user address space (x86-64
 * with 5-level paging ends at 2^56, arm64 at 2^52). Any size the schema's
 * 32 bits hold is one the library publishes (a 1.5 GiB stub heap is real:
 * it was dropped as absurd over 1 GiB); a wider one is an overflow. */
#define LETW_USER_ADDR_END (1ull << 57)

/* 1 when a decoded record holds values no runtime can have published (a
 * field wider than the schema's, an impossible code region, a Complete's
 * counter that is no count), with a description in buf; else 0. */
int letw_ev_absurd(const struct letw_ev *ev, char *buf, size_t len);

/* For a Complete event: the name of its first counter (emitted,
 * skipped_raced, duration_ns) that holds no count (letw_count_plausible),
 * or NULL. Such a Complete is absurd: it says nothing of its pass, which
 * is then not complete (the report says it damaged, not missing). */
const char *letw_ev_bad_counter(const struct letw_ev *ev);

/* One payload field to decode: where it is in the payload, how to read
 * it, where it goes in struct letw_ev. */
struct letw_ev_op {
	int16_t idx;       /* member index in the payload structure */
	uint8_t type;      /* event.c: LETW_OP_* */
	uint8_t is_signed;
	uint16_t off;      /* of the value in struct letw_ev */
	uint16_t len_off;  /* strings: of their length, or UINT16_MAX */
	const char *name;  /* the schema's name (ev->overflow) */
};

/* What decoding needs of one event class, found once by name: its kind,
 * the index and signedness of vpid in its common context, and the list
 * of payload fields to decode (the schema's, minus those the sink skips),
 * so an event is decoded by index with no per-field decision. */
#define LETW_EV_MAX_FIELDS 12
struct letw_ev_class_info {
	const bt_event_class *cls;   /* referenced while cached */
	enum letw_ev_kind kind;
	const char *missing;         /* a schema field absent or mistyped */
	int vpid_idx;                /* -1: no vpid context */
	int pid_ns_idx;              /* -1: no pid_ns context */
	uint8_t has_clock;           /* its stream class has a default clock */
	uint64_t clock_freq;         /* of that clock (Hz) */
	uint8_t vpid_signed;
	uint8_t pid_ns_signed;
	uint8_t nops;
	uint8_t ids_lazy;            /* lazy_method_ids: ids_* say where */
	int16_t ids_idx[2];          /* method_id, version_id */
	uint8_t ids_signed[2];
	struct letw_ev_op ops[LETW_EV_MAX_FIELDS];
};

/* A trace has few event classes; past the cache's size, classes are
 * resolved again for each event (slower, same result). */
struct letw_ev_class_cache {
	struct letw_ev_class_info c[64];
	unsigned int n, last;
	/* Set before the first event by a sink that uses no identifier of
	 * method records (method_id, module_id, method_token, version_id,
	 * instance_id): decoding skips them (5 of 11 fields; the schema is
	 * still checked), so a value wider than its schema field there does
	 * not make the record absurd (letw_ev_absurd) either. */
	int skip_method_ids;
	/* The same for instance_id, module_id and method_token only: a sink
	 * that matches records by method_id and version_id (the jitdump). */
	int skip_method_refs;
	/* Set before the first event by a sink that dates events by the
	 * clock's own value (the jitdump: perf's clock), not babeltrace2's
	 * ns from origin: decoding fills raw_ns instead of ts_ns, with the
	 * clock's frequency looked up once per class, not per event. */
	int raw_ns;
	/* Set before the first event by a sink that needs method_id and
	 * version_id of few records (the jitdump: of those that add a
	 * region, not of the rundown records naming code it holds): they
	 * are read when asked (letw_ev_method_ids), not decoded. */
	int lazy_method_ids;
};

void letw_ev_class_cache_fini(struct letw_ev_class_cache *cache);

/*
 * Decode an event message. Returns 1 if it is an lttng-etw event (*out
 * filled), 0 if it is some other event, -1 if it is an lttng-etw event with
 * a missing or mistyped field (*err names it).
 */
int letw_ev_decode(struct letw_ev_class_cache *cache, const bt_message *msg,
		   struct letw_ev *out, const char **err);

/* A method record's method_id and version_id (0 for other records),
 * decoded or read now (lazy_method_ids). */
void letw_ev_method_ids(const struct letw_ev *ev, uint64_t *method_id,
			uint64_t *version_id);

/* A string field's value, "" when it is empty, whatever its buffer holds
 * (event.c says why: read every string field through this). */
const char *letw_bt_string(const bt_field *f);

/* A clock value in ns, for a clock of freq Hz (not 0). */
uint64_t letw_cycles_ns(uint64_t cycles, uint64_t freq);

/* Timestamp of a message's clock snapshot, or 0 with *ok = 0. */
int64_t letw_clock_ns(const bt_clock_snapshot *cs, int *ok);

/* An integer entry of the trace environment: 1 and *out, or 0 when there
 * is none (or it is not an integer). */
int letw_trace_env_int(const bt_trace *trace, const char *name, int64_t *out);
/* The trace environment's "vpid" entry (per-process buffers), if any. */
int letw_trace_env_vpid(const bt_stream *stream, int64_t *vpid);

#endif /* LETW_BT_EVENT_H */
