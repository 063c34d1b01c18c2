/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "event.h"

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

int letw_ev_absurd(const struct letw_ev *ev, char *buf, size_t len)
{
	enum letw_ev_object obj = letw_ev_object(ev->kind);
	uint64_t end = ev->start + ev->size;

	if (ev->overflow) {
		snprintf(buf, len, "%s with `%s` wider than its schema field",
			 letw_ev_kind_name(ev->kind), ev->overflow);
		return 1;
	}
	if (obj != LETW_OBJ_METHOD && obj != LETW_OBJ_STUB)
		return 0;
	if (ev->size > LETW_ABSURD_CODE_SIZE) {
		snprintf(buf, len, "%s at 0x%llx of %llu bytes", letw_ev_kind_name(ev->kind),
			 (unsigned long long)ev->start, (unsigned long long)ev->size);
		return 1;
	}
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

int64_t letw_clock_ns(const bt_clock_snapshot *cs, int *ok)
{
	int64_t ns = 0;

	*ok = cs && bt_clock_snapshot_get_ns_from_origin(cs, &ns) ==
			    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK;
	return *ok ? ns : 0;
}

int letw_trace_env_vpid(const bt_stream *stream, int64_t *vpid)
{
	const bt_trace *trace = bt_stream_borrow_trace_const(stream);
	const bt_value *v =
		bt_trace_borrow_environment_entry_value_by_name_const(trace, "vpid");

	if (!v)
		return 0;
	if (bt_value_is_signed_integer(v))
		*vpid = bt_value_integer_signed_get(v);
	else if (bt_value_is_unsigned_integer(v))
		*vpid = (int64_t)bt_value_integer_unsigned_get(v);
	else
		return 0;
	return 1;
}

/* Integer member of a structure field, either signedness (enumerations
 * included). Returns 0 when absent or not an integer. */
static int get_int(const bt_field *st, const char *name, uint64_t *out)
{
	const bt_field *f;
	bt_field_class_type t;

	if (!st)
		return 0;
	f = bt_field_structure_borrow_member_field_by_name_const(st, name);
	if (!f)
		return 0;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		*out = bt_field_integer_unsigned_get_value(f);
	else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		*out = (uint64_t)bt_field_integer_signed_get_value(f);
	else
		return 0;
	return 1;
}

static int get_str(const bt_field *st, const char *name, const char **out)
{
	const bt_field *f;

	f = bt_field_structure_borrow_member_field_by_name_const(st, name);
	if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING)
		return 0;
	*out = bt_field_string_get_value(f);
	return 1;
}

static enum letw_ev_kind cached_kind(struct letw_ev_class_cache *c,
				     const bt_event_class *cls)
{
	enum letw_ev_kind k;
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (c->cls[i] == cls)
			return c->kind[i];
	k = letw_ev_kind_from_name(bt_event_class_get_name(cls));
	/* Event classes live as long as the trace, and a trace has few of
	 * them; when the cache is full, names are simply compared again. */
	if (c->n < sizeof(c->cls) / sizeof(c->cls[0])) {
		c->cls[c->n] = cls;
		c->kind[c->n++] = k;
	}
	return k;
}

#define NEED_INT(field, dst)                                                 \
	do {                                                                 \
		uint64_t _v;                                                 \
		if (!get_int(p, field, &_v)) {                               \
			*err = field;                                        \
			return -1;                                           \
		}                                                            \
		dst = _v;                                                    \
		/* Metadata may declare a field wider than the schema. */    \
		if ((uint64_t)dst != _v)                                     \
			ev->overflow = field;                                \
	} while (0)
#define NEED_STR(field, dst)                                                 \
	do {                                                                 \
		if (!get_str(p, field, &dst)) {                              \
			*err = field;                                        \
			return -1;                                           \
		}                                                            \
	} while (0)

int letw_ev_decode(struct letw_ev_class_cache *cache, const bt_message *msg,
		   struct letw_ev *ev, const char **err)
{
	const bt_event *e = bt_message_event_borrow_event_const(msg);
	const bt_field *p, *ctx;
	uint64_t v;
	int ok = 0;

	memset(ev, 0, sizeof(*ev));
	ev->kind = cached_kind(cache, bt_event_borrow_class_const(e));
	if (ev->kind == LETW_EV_OTHER)
		return 0;
	if (bt_message_event_borrow_stream_class_default_clock_class_const(msg))
		ev->ts_ns = letw_clock_ns(
			bt_message_event_borrow_default_clock_snapshot_const(msg),
			&ok);
	ev->has_ts = ok;

	ctx = bt_event_borrow_common_context_field_const(e);
	if (get_int(ctx, "vpid", &v)) {
		ev->vpid = (int64_t)(int32_t)v;
		ev->has_vpid = 1;
	} else {
		ev->has_vpid = letw_trace_env_vpid(bt_event_borrow_stream_const(e),
						   &ev->vpid);
	}

	p = bt_event_borrow_payload_field_const(e);
	if (!p) {
		*err = "payload";
		return -1;
	}
	NEED_INT("instance_id", ev->instance_id);
	switch (letw_ev_object(ev->kind)) {
	case LETW_OBJ_METHOD:
		NEED_INT("method_id", ev->method_id);
		NEED_INT("module_id", ev->module_id);
		NEED_INT("code_start", ev->start);
		NEED_INT("code_size", ev->size);
		NEED_INT("method_token", ev->method_token);
		NEED_INT("method_flags", ev->method_flags);
		NEED_INT("version_id", ev->version_id);
		NEED_STR("namespace", ev->ns);
		NEED_STR("name", ev->name);
		NEED_STR("signature", ev->signature);
		break;
	case LETW_OBJ_STUB:
		NEED_INT("kind", ev->stub_kind);
		NEED_INT("owner", ev->owner);
		NEED_INT("start", ev->start);
		NEED_INT("size", ev->size);
		NEED_STR("name", ev->name);
		break;
	case LETW_OBJ_MODULE:
		NEED_INT("module_id", ev->module_id);
		NEED_STR("name", ev->name);
		break;
	case LETW_OBJ_INIT:
		NEED_INT("pass_id", ev->pass_id);
		NEED_INT("control_code", ev->control_code);
		NEED_INT("match_any_keyword", ev->match_any_keyword);
		break;
	case LETW_OBJ_COMPLETE:
		NEED_INT("pass_id", ev->pass_id);
		NEED_INT("emitted", ev->emitted);
		NEED_INT("skipped_raced", ev->skipped_raced);
		NEED_INT("duration_ns", ev->duration_ns);
		break;
	default:
		break;
	}
	return 1;
}
