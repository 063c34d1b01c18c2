/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "event.h"
#include "jitdump_extra.h"

static const struct {
	const char *name;
	enum letw_jdx_kind kind;
} extra_names[] = {
	{ "letw_runtime:method_lines", LETW_JDX_LINES },
	{ "letw_rundown:method_lines_start", LETW_JDX_LINES },
	{ "letw_rundown:method_lines_end", LETW_JDX_LINES },
	{ "letw_runtime:method_code_bytes", LETW_JDX_CODE },
	{ "letw_rundown:method_code_bytes_start", LETW_JDX_CODE },
	{ "letw_rundown:method_code_bytes_end", LETW_JDX_CODE },
};

int letw_jdx_cache_init(struct letw_jdx_cache *c)
{
	c->kinds = g_hash_table_new(g_direct_hash, g_direct_equal);
	return c->kinds ? 0 : -1;
}

void letw_jdx_cache_fini(struct letw_jdx_cache *c)
{
	if (c->kinds)
		g_hash_table_destroy(c->kinds);
	c->kinds = NULL;
}

static enum letw_jdx_kind class_kind(struct letw_jdx_cache *c,
				     const bt_event_class *cls)
{
	gpointer v = g_hash_table_lookup(c->kinds, cls);
	enum letw_jdx_kind k = LETW_JDX_NONE;
	const char *name;

	if (v)
		return (enum letw_jdx_kind)(GPOINTER_TO_INT(v) - 1);
	/* Event classes live as long as their trace; a trace has few. */
	name = bt_event_class_get_name(cls);
	for (size_t i = 0; name && i < G_N_ELEMENTS(extra_names); i++)
		if (strcmp(name, extra_names[i].name) == 0)
			k = extra_names[i].kind;
	g_hash_table_insert(c->kinds, (gpointer)cls, GINT_TO_POINTER((int)k + 1));
	return k;
}

static const bt_field *member(const bt_field *st, const char *name)
{
	return st ? bt_field_structure_borrow_member_field_by_name_const(st, name) : NULL;
}

static int get_u(const bt_field *st, const char *name, uint64_t *out)
{
	const bt_field *f = member(st, name);
	bt_field_class_type t;

	if (!f)
		return -1;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		*out = bt_field_integer_unsigned_get_value(f);
	else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		*out = (uint64_t)bt_field_integer_signed_get_value(f);
	else
		return -1;
	return 0;
}

/* An array of integers of at least n elements. */
static const bt_field *get_array(const bt_field *st, const char *name, uint64_t n)
{
	const bt_field *f = member(st, name);

	if (!f || !bt_field_class_type_is(bt_field_get_class_type(f),
					  BT_FIELD_CLASS_TYPE_ARRAY) ||
	    bt_field_array_get_length(f) < n)
		return NULL;
	if (n && !bt_field_class_type_is(
		     bt_field_get_class_type(
			     bt_field_array_borrow_element_field_by_index_const(f, 0)),
		     BT_FIELD_CLASS_TYPE_INTEGER))
		return NULL;
	return f;
}

uint64_t letw_jdx_u(const bt_field *array, uint64_t i)
{
	const bt_field *e = bt_field_array_borrow_element_field_by_index_const(array, i);

	if (bt_field_class_type_is(bt_field_get_class_type(e),
				   BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		return (uint64_t)bt_field_integer_signed_get_value(e);
	return bt_field_integer_unsigned_get_value(e);
}

int letw_jdx_files(const bt_field *files, char **out)
{
	uint64_t n;

	if (bt_field_get_class_type(files) == BT_FIELD_CLASS_TYPE_STRING) {
		*out = g_strdup(letw_bt_string(files));
		return 0;
	}
	/* A CTF text sequence some sources keep as an array of bytes. */
	if (!bt_field_class_type_is(bt_field_get_class_type(files),
				    BT_FIELD_CLASS_TYPE_ARRAY))
		return -1;
	n = bt_field_array_get_length(files);
	*out = g_malloc(n + 1);
	for (uint64_t i = 0; i < n; i++) {
		const bt_field *e =
			bt_field_array_borrow_element_field_by_index_const(files, i);

		if (!bt_field_class_type_is(bt_field_get_class_type(e),
					    BT_FIELD_CLASS_TYPE_INTEGER)) {
			g_free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[i] = (char)letw_jdx_u(files, i);
	}
	(*out)[n] = '\0';
	return 0;
}

#define NEED(field, dst)                                                     \
	do {                                                                 \
		uint64_t _v;                                                 \
		if (get_u(p, field, &_v)) {                                  \
			*err = field;                                        \
			return -1;                                           \
		}                                                            \
		dst = _v;                                                    \
	} while (0)

#define NEED_ARRAY(field, dst, n)                                            \
	do {                                                                 \
		if (!(dst = get_array(p, field, n))) {                       \
			*err = field;                                        \
			return -1;                                           \
		}                                                            \
	} while (0)

int letw_jdx_decode(struct letw_jdx_cache *c, const bt_message *msg,
		    struct letw_jdx *x, const char **err)
{
	const bt_event *e = bt_message_event_borrow_event_const(msg);
	const bt_field *p, *ctx;
	uint64_t v;

	memset(x, 0, sizeof(*x));
	x->kind = class_kind(c, bt_event_borrow_class_const(e));
	if (x->kind == LETW_JDX_NONE)
		return 0;
	ctx = bt_event_borrow_common_context_field_const(e);
	if (!get_u(ctx, "vpid", &v)) {
		x->vpid = (int64_t)(int32_t)v;
		x->has_vpid = 1;
	} else {
		x->has_vpid = letw_trace_env_vpid(bt_event_borrow_stream_const(e),
						  &x->vpid);
	}
	x->has_pid_ns = !get_u(ctx, "pid_ns", &x->pid_ns);
	p = bt_event_borrow_payload_field_const(e);
	if (!p) {
		*err = "payload";
		return -1;
	}
	NEED("method_id", x->method_id);
	NEED("code_start", x->code_start);
	NEED("version_id", x->version_id);
	if (x->kind == LETW_JDX_LINES) {
		NEED("rows_total", x->rows_total);
		NEED("row_first", x->row_first);
		NEED_ARRAY("native_offsets", x->native_offsets, 0);
		x->nr = (uint32_t)bt_field_array_get_length(x->native_offsets);
		NEED_ARRAY("lines", x->lines, x->nr);
		NEED_ARRAY("files_idx", x->files_idx, x->nr);
		NEED_ARRAY("inline_depths", x->inline_depths, x->nr);
		x->files = member(p, "files");
		if (!x->files) {
			*err = "files";
			return -1;
		}
		if ((uint64_t)x->row_first + x->nr > x->rows_total) {
			*err = "row_first/rows_total";
			return -1;
		}
	} else {
		NEED("code_size", x->code_size);
		NEED("offset", x->offset);
		NEED_ARRAY("bytes", x->bytes, 0);
		x->len = (uint32_t)bt_field_array_get_length(x->bytes);
		if ((uint64_t)x->offset + x->len > x->code_size) {
			*err = "offset/code_size";
			return -1;
		}
	}
	return 1;
}

int letw_jdx_raw_ns(const bt_message *msg, uint64_t *ns)
{
	const bt_clock_snapshot *cs;
	uint64_t cycles, freq;

	if (!bt_message_event_borrow_stream_class_default_clock_class_const(msg))
		return -1;
	cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
	cycles = bt_clock_snapshot_get_value(cs);
	freq = bt_clock_class_get_frequency(bt_clock_snapshot_borrow_clock_class_const(cs));
	if (!freq)
		return -1;
	*ns = letw_cycles_ns(cycles, freq);
	return 0;
}
