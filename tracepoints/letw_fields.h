/* SPDX-License-Identifier: MIT */
/*
 * CTF field lists shared by both providers, so a method_load and a
 * method_dcstart have exactly the same named fields (DESIGN §3). Not
 * include-guarded on purpose: the tracepoint headers are read several times
 * with different definitions of the lttng_ust_field_* macros.
 */
#undef LETW_TP_METHOD_FIELDS
#define LETW_TP_METHOD_FIELDS(m)                                              \
	lttng_ust_field_integer(uint16_t, instance_id, (m)->instance_id)      \
	lttng_ust_field_integer(uint64_t, method_id, (m)->method_id)          \
	lttng_ust_field_integer(uint64_t, module_id, (m)->module_id)          \
	lttng_ust_field_integer_hex(uint64_t, code_start, (m)->code_start)    \
	lttng_ust_field_integer(uint32_t, code_size, (m)->code_size)          \
	lttng_ust_field_integer(uint32_t, method_token, (m)->method_token)    \
	lttng_ust_field_integer_hex(uint32_t, method_flags, (m)->method_flags) \
	lttng_ust_field_integer(uint64_t, version_id, (m)->version_id)        \
	lttng_ust_field_string(namespace, (m)->method_namespace)             \
	lttng_ust_field_string(name, (m)->name)                               \
	lttng_ust_field_string(signature, (m)->signature)

#undef LETW_TP_STUB_FIELDS
#define LETW_TP_STUB_FIELDS(s)                                                \
	lttng_ust_field_integer(uint16_t, instance_id, (s)->instance_id)      \
	lttng_ust_field_integer(uint32_t, kind, (s)->kind)                    \
	lttng_ust_field_integer_hex(uint64_t, owner, (s)->owner)              \
	lttng_ust_field_integer_hex(uint64_t, start, (s)->start)              \
	lttng_ust_field_integer(uint32_t, size, (s)->size)                    \
	lttng_ust_field_string(name, (s)->name)

#undef LETW_TP_MODULE_FIELDS
#define LETW_TP_MODULE_FIELDS(md)                                             \
	lttng_ust_field_integer(uint16_t, instance_id, (md)->instance_id)     \
	lttng_ust_field_integer(uint64_t, module_id, (md)->module_id)         \
	lttng_ust_field_integer_hex(uint32_t, module_flags, (md)->module_flags) \
	lttng_ust_field_string(name, (md)->name)

#undef LETW_TP_LINES_FIELDS
#define LETW_TP_LINES_FIELDS(l)                                               \
	lttng_ust_field_integer(uint16_t, instance_id, (l)->instance_id)      \
	lttng_ust_field_integer(uint64_t, method_id, (l)->method_id)          \
	lttng_ust_field_integer_hex(uint64_t, code_start, (l)->code_start)    \
	lttng_ust_field_integer(uint64_t, version_id, (l)->version_id)        \
	lttng_ust_field_integer(uint32_t, rows_total, (l)->rows_total)        \
	lttng_ust_field_integer(uint32_t, row_first, (l)->row_first)          \
	lttng_ust_field_sequence(uint32_t, native_offsets,                    \
				 (l)->native_offsets, uint32_t, (l)->nr)      \
	lttng_ust_field_sequence(uint32_t, lines, (l)->lines, uint32_t, (l)->nr) \
	lttng_ust_field_sequence(uint32_t, files_idx, (l)->files_idx,         \
				 uint32_t, (l)->nr)                           \
	lttng_ust_field_sequence(uint32_t, inline_depths, (l)->inline_depths, \
				 uint32_t, (l)->nr)                           \
	lttng_ust_field_sequence_text(char, files, (l)->files, uint32_t,      \
				      (l)->files_len)

#undef LETW_TP_CODE_FIELDS
#define LETW_TP_CODE_FIELDS(c)                                                \
	lttng_ust_field_integer(uint16_t, instance_id, (c)->instance_id)      \
	lttng_ust_field_integer(uint64_t, method_id, (c)->method_id)          \
	lttng_ust_field_integer_hex(uint64_t, code_start, (c)->code_start)    \
	lttng_ust_field_integer(uint64_t, version_id, (c)->version_id)        \
	lttng_ust_field_integer(uint32_t, code_size, (c)->code_size)          \
	lttng_ust_field_integer(uint32_t, offset, (c)->offset)                \
	lttng_ust_field_sequence_hex(uint8_t, bytes, (c)->bytes, uint32_t,    \
				     (c)->len)
