/* SPDX-License-Identifier: MIT */
#ifndef LETW_LUAJIT_CHUNKNAME_H
#define LETW_LUAJIT_CHUNKNAME_H

#include <stddef.h>

/* Room for a chunk's name in a record (lttng-etw takes up to 4096 bytes;
 * a symbol of 4 KiB of Lua source helps nobody). */
#define LH_CHUNK_NAME_MAX 200

/*
 * A Lua chunk's name as lttng-etw, perf and babeltrace2 take it: valid
 * UTF-8 with no control character (each byte of a bad sequence, and each
 * control character, becomes '?'), at most cap - 1 bytes, in LuaJIT's own
 * style (lj_debug_shortname): "@path" gives the path (the tail of a long
 * one after "..."), or its base name when base_only; "=name" gives name;
 * a chunk loaded from a string gives [string "its first line..."].
 * out must hold cap >= 16 bytes; returns out.
 *
 * LuaJIT hands chunk names over as they came (a loadstring's whole code
 * text, a Latin-1 file name): lttng-etw refused such a record (-EINVAL for
 * bad UTF-8, -ENAMETOOLONG past 4096 bytes) and the trace went unnamed.
 */
char *lh_chunk_name(const char *source, int base_only, char *out, size_t cap);

#endif
