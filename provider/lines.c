/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "abi.h"
#include "lines.h"
#include "record.h"

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The ABI guard: a runtime built against an older header passes a
 * smaller struct; every field up to `files` must be there. */
#define OPTS_MIN_SIZE (offsetof(struct letw_method_opts, files) + sizeof(void *))

long letw_lines_size(const struct letw_method *m, const struct letw_method_opts *o)
{
	size_t files_bytes = 0;

	if (!o)
		return 0;
	if (o->size < OPTS_MIN_SIZE)
		return -EINVAL;
	if (letw_abi_tail(o, sizeof(*o), o->size))
		return -E2BIG;
	if ((o->nr_lines && !o->lines) || (o->nr_files && !o->files))
		return -EINVAL;
	if (letw_method_opts_flags(o) & ~(uint32_t)LETW_METHOD_OPT_CODE_READABLE)
		return -EINVAL;
	if (o->nr_lines > LETW_LINES_MAX || o->nr_files > LETW_FILES_MAX)
		return -E2BIG;
	for (uint32_t i = 0; i < o->nr_files; i++) {
		long len = letw_validate_string(o->files[i], 0);

		if (len < 0)
			return len;
		if (o->files[i] && memchr(o->files[i], '\n', (size_t)len))
			return -EINVAL;
		files_bytes += (size_t)len + 1;
		if (files_bytes > LETW_FILES_BYTES_MAX)
			return -E2BIG;
	}
	for (uint32_t i = 0; i < o->nr_lines; i++) {
		const struct letw_line *l = &o->lines[i];

		if (l->file >= o->nr_files || l->native_offset >= m->code_size)
			return -EINVAL;
		if (i && l->native_offset < o->lines[i - 1].native_offset)
			return -EINVAL;
	}
	if (!o->nr_lines && !o->nr_files)
		return 0;
	return (long)(align8(sizeof(struct letw_lines)) +
		      4 * align8((size_t)o->nr_lines * sizeof(uint32_t)) +
		      files_bytes);
}

struct letw_lines *letw_lines_build(void *mem, const struct letw_method_opts *o)
{
	struct letw_lines *l = mem;
	size_t col = align8((size_t)o->nr_lines * sizeof(uint32_t));
	char *p = (char *)mem + align8(sizeof(*l));
	uint32_t *off = (uint32_t *)p, *line = (uint32_t *)(p + col),
		 *file = (uint32_t *)(p + 2 * col), *depth = (uint32_t *)(p + 3 * col);
	char *names = p + 4 * col, *n = names;

	for (uint32_t i = 0; i < o->nr_lines; i++) {
		off[i] = o->lines[i].native_offset;
		line[i] = o->lines[i].line;
		file[i] = o->lines[i].file;
		depth[i] = o->lines[i].inline_depth;
	}
	for (uint32_t i = 0; i < o->nr_files; i++) {
		size_t len = o->files[i] ? strlen(o->files[i]) : 0;

		if (i)
			*n++ = '\n';
		memcpy(n, o->files[i] ? o->files[i] : "", len);
		n += len;
	}
	*n = '\0';
	*l = (struct letw_lines){
		.nr = o->nr_lines,
		.files_len = (uint32_t)(n - names),
		.native_offsets = off,
		.lines = line,
		.files_idx = file,
		.inline_depths = depth,
		.files = names,
	};
	return l;
}
