/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "event.h"
#include "trace_facts.h"

static const struct {
	const char *name;
	enum letw_ev_kind kind;
} letw_ev_names[] = {
	{ "letw_runtime:method_load", LETW_EV_METHOD_LOAD },
	{ "letw_runtime:method_unload", LETW_EV_METHOD_UNLOAD },
	{ "letw_runtime:stub_load", LETW_EV_STUB_LOAD },
	{ "letw_runtime:stub_unload", LETW_EV_STUB_UNLOAD },
	{ "letw_runtime:module_load", LETW_EV_MODULE_LOAD },
	{ "letw_runtime:module_unload", LETW_EV_MODULE_UNLOAD },
	{ "letw_rundown:dcstart_init", LETW_EV_DCSTART_INIT },
	{ "letw_rundown:dcstart_complete", LETW_EV_DCSTART_COMPLETE },
	{ "letw_rundown:dcend_init", LETW_EV_DCEND_INIT },
	{ "letw_rundown:dcend_complete", LETW_EV_DCEND_COMPLETE },
	{ "letw_rundown:method_dcstart", LETW_EV_METHOD_DCSTART },
	{ "letw_rundown:method_dcend", LETW_EV_METHOD_DCEND },
	{ "letw_rundown:stub_dcstart", LETW_EV_STUB_DCSTART },
	{ "letw_rundown:stub_dcend", LETW_EV_STUB_DCEND },
	{ "letw_rundown:module_dcstart", LETW_EV_MODULE_DCSTART },
	{ "letw_rundown:module_dcend", LETW_EV_MODULE_DCEND },
};

enum letw_ev_kind letw_ev_kind_from_name(const char *name)
{
	size_t i;

	if (!name || strncmp(name, "letw_", 5) != 0)
		return LETW_EV_OTHER;
	for (i = 0; i < sizeof(letw_ev_names) / sizeof(letw_ev_names[0]); i++)
		if (strcmp(name, letw_ev_names[i].name) == 0)
			return letw_ev_names[i].kind;
	return LETW_EV_OTHER;
}

const char *letw_ev_kind_name(enum letw_ev_kind k)
{
	size_t i;

	for (i = 0; i < sizeof(letw_ev_names) / sizeof(letw_ev_names[0]); i++)
		if (letw_ev_names[i].kind == k)
			return letw_ev_names[i].name;
	return "?";
}

const char *letw_ev_bad_counter(const struct letw_ev *ev)
{
	/* A walk's records, the code it skipped, its nanoseconds: none
	 * passes 2^48 (letw_count_plausible; 2^48 ns is over three days),
	 * while a flipped or overwritten field does (seen: 2^64-1 printed as the emitted
	 * count, and a pass judged lossy against it). */
	if (!letw_count_plausible(ev->emitted))
		return "emitted";
	if (!letw_count_plausible(ev->skipped_raced))
		return "skipped_raced";
	if (!letw_count_plausible(ev->duration_ns))
		return "duration_ns";
	return NULL;
}

int letw_ev_absurd(const struct letw_ev *ev, char *buf, size_t len)
{
	enum letw_ev_object obj = letw_ev_object(ev->kind);
	uint64_t end = ev->start + ev->size;

	if (ev->overflow) {
		snprintf(buf, len, "%s with `%s` wider than its schema field",
			 letw_ev_kind_name(ev->kind), ev->overflow);
		return 1;
	}
	if (obj == LETW_OBJ_COMPLETE) {
		const char *bad = letw_ev_bad_counter(ev);

		/* Not the number: the point is that it is none (and the
		 * report must never print it as one). */
		if (bad) {
			snprintf(buf, len, "%s of pass %llu: %s past 2^48, not a count",
				 letw_ev_kind_name(ev->kind), (unsigned long long)ev->pass_id, bad);
			return 1;
		}
		return 0;
	}
	if (obj != LETW_OBJ_METHOD && obj != LETW_OBJ_STUB)
		return 0;
	if (end < ev->start || end > LETW_USER_ADDR_END) {
		snprintf(buf, len, "%s at 0x%llx, not a user-space address",
			 letw_ev_kind_name(ev->kind), (unsigned long long)ev->start);
		return 1;
	}
	return 0;
}

enum letw_ev_object letw_ev_object(enum letw_ev_kind k)
{
	switch (k) {
	case LETW_EV_METHOD_LOAD: case LETW_EV_METHOD_UNLOAD:
	case LETW_EV_METHOD_DCSTART: case LETW_EV_METHOD_DCEND:
		return LETW_OBJ_METHOD;
	case LETW_EV_STUB_LOAD: case LETW_EV_STUB_UNLOAD:
	case LETW_EV_STUB_DCSTART: case LETW_EV_STUB_DCEND:
		return LETW_OBJ_STUB;
	case LETW_EV_MODULE_LOAD: case LETW_EV_MODULE_UNLOAD:
	case LETW_EV_MODULE_DCSTART: case LETW_EV_MODULE_DCEND:
		return LETW_OBJ_MODULE;
	case LETW_EV_DCSTART_INIT: case LETW_EV_DCEND_INIT:
		return LETW_OBJ_INIT;
	case LETW_EV_DCSTART_COMPLETE: case LETW_EV_DCEND_COMPLETE:
		return LETW_OBJ_COMPLETE;
	default:
		return LETW_OBJ_NONE;
	}
}

enum letw_flavour letw_ev_flavour(enum letw_ev_kind k)
{
	switch (k) {
	case LETW_EV_DCSTART_INIT: case LETW_EV_DCSTART_COMPLETE:
	case LETW_EV_METHOD_DCSTART: case LETW_EV_STUB_DCSTART:
	case LETW_EV_MODULE_DCSTART:
		return LETW_FL_DCSTART;
	case LETW_EV_DCEND_INIT: case LETW_EV_DCEND_COMPLETE:
	case LETW_EV_METHOD_DCEND: case LETW_EV_STUB_DCEND:
	case LETW_EV_MODULE_DCEND:
		return LETW_FL_DCEND;
	default:
		return LETW_FL_NONE;
	}
}

const char *letw_flavour_name(enum letw_flavour fl)
{
	return fl == LETW_FL_DCSTART ? "dcstart" :
	       fl == LETW_FL_DCEND ? "dcend" : "none";
}

/*
 * libbabeltrace2 before 2.0.5 (Debian 12 ships 2.0.4) empties a string
 * field by setting its length to 0 without writing a NUL at the start of
 * its buffer (lib/trace-ir/field.c, clear_string_field; upstream commit
 * 0022a8781). src.ctf decodes every string into a field it first clears,
 * and an empty string appends nothing after the clear, while event objects
 * and their fields are recycled from a pool: bt_field_string_get_value()
 * then returns whatever the field held for an earlier event (a JVM's
 * signature-less method handle intrinsics came out with other methods'
 * signatures, an empty namespace with another's). The length is right in
 * every version, so it decides.
 */
const char *letw_bt_string(const bt_field *f)
{
	return bt_field_string_get_length(f) ? bt_field_string_get_value(f) : "";
}

uint64_t letw_cycles_ns(uint64_t cycles, uint64_t freq)
{
	if (freq == 1000000000ull) /* LTTng's clock: cycles are ns */
		return cycles;
	/* Split so that cycles * 1e9 cannot overflow. */
	return cycles / freq * 1000000000ull + (cycles % freq) * 1000000000ull / freq;
}

int64_t letw_clock_ns(const bt_clock_snapshot *cs, int *ok)
{
	int64_t ns = 0;

	*ok = cs && bt_clock_snapshot_get_ns_from_origin(cs, &ns) ==
			    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK;
	return *ok ? ns : 0;
}

int letw_trace_env_int(const bt_trace *trace, const char *name, int64_t *out)
{
	const bt_value *v = bt_trace_borrow_environment_entry_value_by_name_const(trace, name);

	if (!v)
		return 0;
	if (bt_value_is_signed_integer(v))
		*out = bt_value_integer_signed_get(v);
	else if (bt_value_is_unsigned_integer(v))
		*out = (int64_t)bt_value_integer_unsigned_get(v);
	else
		return 0;
	return 1;
}

int letw_trace_env_vpid(const bt_stream *stream, int64_t *vpid)
{
	return letw_trace_env_int(bt_stream_borrow_trace_const(stream), "vpid", vpid);
}

/* The schema's fields of each object, in decode order: where each goes
 * in struct letw_ev and how wide it is there (0: a string). */
struct field_desc {
	const char *name;
	size_t off;
	unsigned width;
	size_t len_off; /* strings: where their length goes, or SIZE_MAX */
};

#define F(n, m) { n, offsetof(struct letw_ev, m), sizeof(((struct letw_ev *)0)->m), SIZE_MAX }
#define S(n, m) { n, offsetof(struct letw_ev, m), 0, SIZE_MAX }
#define SL(n, m) { n, offsetof(struct letw_ev, m), 0, offsetof(struct letw_ev, m##_len) }
static const struct field_desc method_fields[] = {
	F("instance_id", instance_id), F("method_id", method_id), F("module_id", module_id),
	F("code_start", start), F("code_size", size), F("method_token", method_token),
	F("method_flags", method_flags), F("version_id", version_id),
	SL("namespace", ns), SL("name", name), SL("signature", signature), { NULL, 0, 0, 0 } };
static const struct field_desc stub_fields[] = {
	F("instance_id", instance_id), F("kind", stub_kind), F("owner", owner),
	F("start", start), F("size", size), SL("name", name), { NULL, 0, 0, 0 } };
static const struct field_desc module_fields[] = {
	F("instance_id", instance_id), F("module_id", module_id), S("name", name),
	{ NULL, 0, 0, 0 } };
static const struct field_desc init_fields[] = {
	F("instance_id", instance_id), F("pass_id", pass_id), F("control_code", control_code),
	F("match_any_keyword", match_any_keyword), { NULL, 0, 0, 0 } };
static const struct field_desc complete_fields[] = {
	F("instance_id", instance_id), F("pass_id", pass_id), F("emitted", emitted),
	F("skipped_raced", skipped_raced), F("duration_ns", duration_ns), { NULL, 0, 0, 0 } };
#undef F
#undef S
#undef SL

static const struct field_desc *fields_of(enum letw_ev_object obj)
{
	switch (obj) {
	case LETW_OBJ_METHOD: return method_fields;
	case LETW_OBJ_STUB: return stub_fields;
	case LETW_OBJ_MODULE: return module_fields;
	case LETW_OBJ_INIT: return init_fields;
	case LETW_OBJ_COMPLETE: return complete_fields;
	default: return NULL;
	}
}

/* Index of member `name` of a structure field class and whether it is a
 * signed integer; -1 when absent or not of the wanted type. */
static int member(const bt_field_class *st, const char *name, int want_str,
		  uint8_t *is_signed)
{
	uint64_t i, n;

	if (!st || bt_field_class_get_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return -1;
	n = bt_field_class_structure_get_member_count(st);
	for (i = 0; i < n && i < INT16_MAX; i++) {
		const bt_field_class_structure_member *m =
			bt_field_class_structure_borrow_member_by_index_const(st, i);
		bt_field_class_type t;

		if (strcmp(bt_field_class_structure_member_get_name(m), name) != 0)
			continue;
		t = bt_field_class_get_type(
			bt_field_class_structure_member_borrow_field_class_const(m));
		if (want_str)
			return t == BT_FIELD_CLASS_TYPE_STRING ? (int)i : -1;
		if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
			*is_signed = 0;
		else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
			*is_signed = 1;
		else
			return -1;
		return (int)i;
	}
	return -1;
}

/* Identifiers of a method record no output is made of. */
static int is_method_ref(const char *field)
{
	return !strcmp(field, "instance_id") || !strcmp(field, "module_id") ||
	       !strcmp(field, "method_token");
}

static int is_method_id(const char *field)
{
	return is_method_ref(field) || !strcmp(field, "method_id") ||
	       !strcmp(field, "version_id");
}

enum { LETW_OP_U16, LETW_OP_U32, LETW_OP_U64, LETW_OP_STR };

static void resolve(const bt_event_class *cls, struct letw_ev_class_info *ci,
		    int skip_ids, int skip_refs, int lazy_ids)
{
	const bt_stream_class *sc = bt_event_class_borrow_stream_class_const(cls);
	const bt_field_class *payload = bt_event_class_borrow_payload_field_class_const(cls);
	const struct field_desc *fd;
	unsigned i;

	memset(ci, 0, sizeof(*ci));
	ci->cls = cls;
	ci->kind = letw_ev_kind_from_name(bt_event_class_get_name(cls));
	/* An event class belongs to one stream class: whether its events
	 * have a clock snapshot is known here, not asked per event. */
	ci->has_clock = bt_stream_class_borrow_default_clock_class_const(sc) != NULL;
	ci->clock_freq = ci->has_clock ? bt_clock_class_get_frequency(
		bt_stream_class_borrow_default_clock_class_const(sc)) : 0;
	ci->vpid_idx = member(bt_stream_class_borrow_event_common_context_field_class_const(sc),
			      "vpid", 0, &ci->vpid_signed);
	ci->pid_ns_idx = member(bt_stream_class_borrow_event_common_context_field_class_const(sc),
				"pid_ns", 0, &ci->pid_ns_signed);
	fd = fields_of(letw_ev_object(ci->kind));
	for (i = 0; fd && fd[i].name; i++) {
		struct letw_ev_op *op = &ci->ops[ci->nops];
		int idx;

		op->is_signed = 0;
		idx = member(payload, fd[i].name, fd[i].width == 0, &op->is_signed);

		if (idx < 0 && !ci->missing)
			ci->missing = fd[i].name;
		if (fd == method_fields && ((skip_ids && is_method_id(fd[i].name)) ||
					    (skip_refs && is_method_ref(fd[i].name))))
			continue;
		if (fd == method_fields && lazy_ids && is_method_id(fd[i].name)) {
			int k = strcmp(fd[i].name, "version_id") == 0;

			ci->ids_lazy = 1;
			ci->ids_idx[k] = (int16_t)idx;
			ci->ids_signed[k] = op->is_signed;
			continue;
		}
		op->idx = (int16_t)idx;
		op->type = fd[i].width == 0 ? LETW_OP_STR : fd[i].width == 2 ? LETW_OP_U16 :
			   fd[i].width == 4 ? LETW_OP_U32 : LETW_OP_U64;
		op->off = (uint16_t)fd[i].off;
		op->len_off = fd[i].len_off == SIZE_MAX ? UINT16_MAX : (uint16_t)fd[i].len_off;
		op->name = fd[i].name;
		ci->nops++;
	}
}

static const struct letw_ev_class_info *class_info(struct letw_ev_class_cache *c,
						   const bt_event_class *cls,
						   struct letw_ev_class_info *tmp)
{
	unsigned int i;

	if (c->last < c->n && c->c[c->last].cls == cls)
		return &c->c[c->last];
	for (i = 0; i < c->n; i++)
		if (c->c[i].cls == cls)
			return &c->c[c->last = i];
	if (c->n == sizeof(c->c) / sizeof(c->c[0])) {
		resolve(cls, tmp, c->skip_method_ids, c->skip_method_refs,
			c->lazy_method_ids);
		return tmp;
	}
	resolve(cls, &c->c[c->n], c->skip_method_ids, c->skip_method_refs,
		c->lazy_method_ids);
	/* The reference keeps the address from naming another class later
	 * (live sessions bring traces and their classes as they go). */
	bt_event_class_get_ref(cls);
	return &c->c[c->last = c->n++];
}

void letw_ev_class_cache_fini(struct letw_ev_class_cache *c)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		bt_event_class_put_ref(c->c[i].cls);
	c->n = c->last = 0;
}

static uint64_t int_at(const bt_field *st, int idx, int is_signed)
{
	const bt_field *f = bt_field_structure_borrow_member_field_by_index_const(
		st, (uint64_t)idx);

	return is_signed ? (uint64_t)bt_field_integer_signed_get_value(f) :
			   bt_field_integer_unsigned_get_value(f);
}

/* Once per event, so its speed shows: one memset() of the whole record
 * compiles (gcc -O2, x86-64) to `rep stosq`, whose start-up took 12.7 ns
 * for these 240 bytes on the bench machine's EPYC, against 4.3 ns for
 * 16-byte stores; gcc inlines memset()s of at most 64 bytes as the
 * latter. */
static void zero_ev(struct letw_ev *ev)
{
	char *p = (char *)ev;
	size_t i;

	/* The empty asm keeps the pieces apart: without it nothing stops a
	 * later compiler from fusing the loop back into one memset() (gcc's
	 * loop distribution recognises such loops at -O2). */
	for (i = 0; i + 64 <= sizeof(*ev); i += 64) {
		memset(p + i, 0, 64);
		__asm__ __volatile__("" : : "r"(p + i) : "memory");
	}
	memset(p + i, 0, sizeof(*ev) % 64);
}

int letw_ev_decode(struct letw_ev_class_cache *cache, const bt_message *msg,
		   struct letw_ev *ev, const char **err)
{
	const bt_event *e = bt_message_event_borrow_event_const(msg);
	const struct letw_ev_class_info *ci;
	struct letw_ev_class_info tmp;
	const bt_field *p;
	unsigned i;
	int ok = 0;

	ci = class_info(cache, bt_event_borrow_class_const(e), &tmp);
	if (ci->kind == LETW_EV_OTHER)
		return 0;
	zero_ev(ev);
	ev->msg = msg;
	ev->kind = ci->kind;
	if (ci->missing) {
		*err = ci->missing;
		return -1;
	}
	if (ci->has_clock && cache->raw_ns) {
		ok = ci->clock_freq != 0;
		if (ok)
			ev->raw_ns = letw_cycles_ns(bt_clock_snapshot_get_value(
				bt_message_event_borrow_default_clock_snapshot_const(msg)),
				ci->clock_freq);
	} else if (ci->has_clock) {
		ev->ts_ns = letw_clock_ns(
			bt_message_event_borrow_default_clock_snapshot_const(msg),
			&ok);
	}
	ev->has_ts = ok;
	if (ci->vpid_idx >= 0) {
		ev->vpid = (int64_t)(int32_t)int_at(bt_event_borrow_common_context_field_const(e),
						    ci->vpid_idx, ci->vpid_signed);
		ev->has_vpid = 1;
	} else {
		ev->has_vpid = letw_trace_env_vpid(bt_event_borrow_stream_const(e),
						   &ev->vpid);
	}
	ev->has_pid_ns = ci->pid_ns_idx >= 0;
	ev->pid_ns = ev->has_pid_ns ?
		int_at(bt_event_borrow_common_context_field_const(e), ci->pid_ns_idx,
		       ci->pid_ns_signed) : 0;
	p = bt_event_borrow_payload_field_const(e);
	ev->payload = p;
	if (ci->ids_lazy) {
		ev->ids_lazy = 1;
		memcpy(ev->ids_idx, ci->ids_idx, sizeof(ev->ids_idx));
		memcpy(ev->ids_signed, ci->ids_signed, sizeof(ev->ids_signed));
	}
	/* The class's list of fields, resolved once: walking the schema
	 * table per event (skip bits, widths, string or integer) was a fifth
	 * of the decoding's 500 instructions an event (callgrind). */
	for (i = 0; i < ci->nops; i++) {
		const struct letw_ev_op *op = &ci->ops[i];
		const bt_field *f = bt_field_structure_borrow_member_field_by_index_const(
			p, (uint64_t)op->idx);
		char *dst = (char *)ev + op->off;
		uint64_t v;

		if (op->type == LETW_OP_STR) {
			/* letw_bt_string() with the length asked once. */
			uint64_t len = bt_field_string_get_length(f);

			*(const char **)(void *)dst = len ? bt_field_string_get_value(f) : "";
			if (op->len_off != UINT16_MAX)
				*(size_t *)(void *)((char *)ev + op->len_off) = (size_t)len;
			continue;
		}
		v = op->is_signed ? (uint64_t)bt_field_integer_signed_get_value(f) :
				    bt_field_integer_unsigned_get_value(f);
		/* Metadata may declare a field wider than the schema's: the
		 * record is then absurd (letw_ev_absurd). */
		switch (op->type) {
		case LETW_OP_U16:
			*(uint16_t *)(void *)dst = (uint16_t)v;
			if (v > UINT16_MAX)
				ev->overflow = op->name;
			break;
		case LETW_OP_U32:
			*(uint32_t *)(void *)dst = (uint32_t)v;
			if (v > UINT32_MAX)
				ev->overflow = op->name;
			break;
		default:
			*(uint64_t *)(void *)dst = v;
			break;
		}
	}
	return 1;
}

void letw_ev_method_ids(const struct letw_ev *ev, uint64_t *method_id,
			uint64_t *version_id)
{
	if (!ev->ids_lazy) {
		*method_id = ev->method_id;
		*version_id = ev->version_id;
		return;
	}
	/* As decoding reads them (64-bit: no overflow to check). */
	*method_id = int_at(ev->payload, ev->ids_idx[0], ev->ids_signed[0]);
	*version_id = int_at(ev->payload, ev->ids_idx[1], ev->ids_signed[1]);
}
