/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <string.h>

#include "linerows.h"
#include "linetab.h"
#include "lines.h"
#include "mutf8.h"
#include "naming.h"

struct resolver {
	jvmtiEnv *jvmti;
	JNIEnv *jni;
	struct jvm_scratch *s;
	int files_full; /* a file could not be added: the table is cut */
};

static uint32_t mix(jmethodID m)
{
	uint64_t k = (uint64_t)(uintptr_t)m;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Index of path in the table, adding it if new; UINT32_MAX when full. */
static uint32_t file_index(struct resolver *rv, const char *path, size_t len)
{
	struct jvm_scratch *s = rv->s;
	uint32_t i;

	for (i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i], path))
			return i;
	if (s->nfiles >= LETW_FILES_MAX || s->pool_used + len + 1 > sizeof(s->pool)) {
		rv->files_full = 1;
		return UINT32_MAX;
	}
	memcpy(s->pool + s->pool_used, path, len + 1);
	s->files[s->nfiles] = s->pool + s->pool_used;
	s->pool_used += (uint32_t)len + 1;
	return s->nfiles++;
}

/* The file of a class; class_sig_utf8 when the caller has it converted
 * already (the compiled method's own class). */
static uint32_t class_file(struct resolver *rv, jclass klass, const char *class_sig_utf8)
{
	struct jvm_scratch *s = rv->s;
	char *csig = NULL, *src = NULL, *p;
	size_t len;
	uint32_t idx;

	if (!class_sig_utf8) {
		if ((*rv->jvmti)->GetClassSignature(rv->jvmti, klass, &csig, NULL) != JVMTI_ERROR_NONE)
			return file_index(rv, "", 0);
		jvm_class_sig_to_utf8(csig, s->tmp2, sizeof(s->tmp2));
		class_sig_utf8 = s->tmp2;
	}
	/* No SourceFile attribute (ABSENT_INFORMATION) leaves src NULL: "". */
	if ((*rv->jvmti)->GetSourceFileName(rv->jvmti, klass, &src) != JVMTI_ERROR_NONE)
		src = NULL;
	jvm_mutf8_to_utf8(src, s->tmp, sizeof(s->tmp), NULL);
	len = jvm_source_path(class_sig_utf8, s->tmp, s->path, sizeof(s->path));
	/* lttng-etw joins file names with newlines: none may hold one. */
	for (p = s->path; (p = strchr(p, '\n')) != NULL; p++)
		*p = '?';
	idx = file_index(rv, s->path, len);
	if (src)
		(*rv->jvmti)->Deallocate(rv->jvmti, (unsigned char *)src);
	if (csig)
		(*rv->jvmti)->Deallocate(rv->jvmti, (unsigned char *)csig);
	return idx;
}

static struct jvm_mcache *lookup(struct resolver *rv, jmethodID m, const char *class_sig,
				 jclass klass)
{
	struct jvm_scratch *s = rv->s;
	uint32_t h = mix(m) & (JVM_MCACHE_SIZE - 1), probes;
	struct jvm_mcache *e;
	jvmtiLineNumberEntry *tab = NULL;
	jint n = 0;
	int own_klass = 0;

	for (probes = 0; probes < JVM_MCACHE_SIZE; probes++) {
		e = &s->mc[(h + probes) & (JVM_MCACHE_SIZE - 1)];
		if (e->method == m)
			return e;
		if (!e->method)
			break;
	}
	/* Keep a quarter free so probing stays short; beyond, frames of new
	 * methods resolve to line 0. */
	if (probes == JVM_MCACHE_SIZE || s->mc_used >= JVM_MCACHE_SIZE * 3 / 4)
		return NULL;
	s->mc_slots[s->mc_used++] = (uint32_t)(e - s->mc);
	e->method = m;
	e->tab = NULL;
	e->ntab = 0;
	e->first_line = 0;
	e->file = UINT32_MAX;
	if (!klass) {
		if ((*rv->jvmti)->GetMethodDeclaringClass(rv->jvmti, m, &klass) != JVMTI_ERROR_NONE)
			klass = NULL;
		own_klass = 1;
	}
	if (klass)
		e->file = class_file(rv, klass, class_sig);
	if (own_klass && klass && rv->jni)
		(*rv->jni)->DeleteLocalRef(rv->jni, klass);
	/* ABSENT_INFORMATION (-g:none) and NATIVE_METHOD leave no table.
	 * Sorted once here, searched once per frame of this method. */
	if ((*rv->jvmti)->GetLineNumberTable(rv->jvmti, m, &n, &tab) == JVMTI_ERROR_NONE && n > 0) {
		jvm_linetab_sort(tab, n);
		e->tab = tab;
		e->ntab = n;
		e->first_line = (uint32_t)tab[0].line_number;
	} else if (tab) {
		(*rv->jvmti)->Deallocate(rv->jvmti, (unsigned char *)tab);
	}
	return e;
}

static void resolve(void *ctx, jmethodID m, jint bci, uint32_t *file, uint32_t *line)
{
	struct resolver *rv = ctx;
	struct jvm_mcache *e = lookup(rv, m, NULL, NULL);

	if (!e || e->file == UINT32_MAX) {
		*file = 0;
		*line = 0;
		return;
	}
	*file = e->file;
	*line = jvm_linetab_line(e->tab, e->ntab, bci, e->first_line);
}

uint32_t jvm_lines_build(jvmtiEnv *jvmti, JNIEnv *jni, struct jvm_scratch *s,
			 jmethodID method, jclass klass, const char *class_sig, jint code_size,
			 const void *code_addr, jint map_length,
			 const jvmtiAddrLocationMap *map, const void *compile_info,
			 int inlining, struct letw_method_opts *opts, int *inlined,
			 int *truncated)
{
	const jvmtiCompiledMethodLoadInlineRecord *rec = jvm_inline_record(compile_info);
	struct resolver rv = { jvmti, jni, s, 0 };
	struct jvm_rows r;
	uint64_t need;
	uint32_t i;

	memset(opts, 0, sizeof(*opts));
	*inlined = 0;
	*truncated = 0;
	s->nfiles = 0;
	s->pool_used = 0;
	s->mc_used = 0;
	/* Nothing to describe: publish without a table. */
	need = rec ? jvm_rows_bound_inline(rec->pcinfo, rec->numpcs, inlining)
		   : (uint64_t)(map_length > 0 ? map_length : 0) + 1;
	if (need < 2)
		return 0;
	/* The compiled method first: its file is index 0, the one unknown
	 * rows name. */
	(void)lookup(&rv, method, class_sig, klass);
	if (s->nfiles == 0 && file_index(&rv, "", 0) == UINT32_MAX)
		return 0;

	/* A fixed cap: past it the builder closes the table (truncated). */
	jvm_scratch_rows(s, &r);
	if (rec && rec->pcinfo)
		jvm_rows_from_inline(&r, rec->pcinfo, rec->numpcs, (uint64_t)(uintptr_t)code_addr,
				     (uint32_t)code_size, inlining, resolve, &rv);
	else if (map && map_length > 0)
		jvm_rows_from_map(&r, map, map_length, method, (uint64_t)(uintptr_t)code_addr,
				  (uint32_t)code_size, resolve, &rv);
	for (i = 0; i < r.n; i++)
		if (r.rows[i].inline_depth) {
			*inlined = 1;
			break;
		}
	*truncated = r.truncated || rv.files_full || r.cut_frames;
	opts->size = sizeof(*opts);
	opts->lines = r.rows;
	opts->nr_lines = r.n;
	opts->nr_files = s->nfiles;
	opts->files = s->files;
	return r.n;
}

void jvm_lines_release(jvmtiEnv *jvmti, struct jvm_scratch *s)
{
	uint32_t i;

	for (i = 0; i < s->mc_used; i++) {
		struct jvm_mcache *e = &s->mc[s->mc_slots[i]];

		if (e->tab)
			(*jvmti)->Deallocate(jvmti, (unsigned char *)e->tab);
		e->method = NULL;
		e->tab = NULL;
	}
	s->mc_used = 0;
}
