/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "linerows.h"

struct frame {
	uint32_t file, line;
};

struct builder {
	struct jvm_rows *r;
	int64_t prev_off;    /* offset of the previous PcDesc, -1: none yet */
	uint32_t last_first; /* rows of the stack in force: [last_first, n) */
	uint32_t code_size;
};

static int same_as_last(const struct builder *b, const struct frame *f, uint32_t depth)
{
	const struct jvm_rows *r = b->r;
	uint32_t i;

	if (r->n == 0 || r->n - b->last_first != depth)
		return 0;
	for (i = 0; i < depth; i++) {
		const struct letw_line *row = &r->rows[b->last_first + i];

		if (row->file != f[i].file || row->line != f[i].line)
			return 0;
	}
	return 1;
}

/* One PcDesc at native offset off with depth frames (outermost first).
 * Returns 0, or -1 when the table is full (it is then closed). */
static int add_stack(struct builder *b, uint64_t off, const struct frame *f, uint32_t depth)
{
	struct jvm_rows *r = b->r;
	uint32_t start, i;

	start = b->prev_off < 0 ? 0 : (uint32_t)b->prev_off + 1;
	b->prev_off = (int64_t)off;
	if (same_as_last(b, f, depth))
		return 0;
	/* One row stays reserved for the closing unknown row. */
	if (r->n + depth > r->cap - 1) {
		r->truncated = 1;
		b->prev_off = (int64_t)start - 1; /* close where this stack began */
		return -1;
	}
	b->last_first = r->n;
	for (i = 0; i < depth; i++) {
		struct letw_line *row = &r->rows[r->n++];

		row->native_offset = start;
		row->line = f[i].line;
		row->file = f[i].file;
		row->inline_depth = i;
	}
	return 0;
}

/* Offset of pc in the code, or -1 when it is not a usable next PcDesc. */
static int64_t pc_offset(struct builder *b, const void *pc, uint64_t code_start)
{
	uint64_t a = (uint64_t)(uintptr_t)pc;

	if (a < code_start || a - code_start >= b->code_size ||
	    (b->prev_off >= 0 && (int64_t)(a - code_start) <= b->prev_off)) {
		b->r->skipped_pcs++;
		return -1;
	}
	return (int64_t)(a - code_start);
}

static void finish(struct builder *b)
{
	static const struct frame unknown = { 0, 0 };
	struct jvm_rows *r = b->r;
	uint32_t start;

	if (b->prev_off < 0 || (uint64_t)b->prev_off + 1 >= b->code_size)
		return;
	start = (uint32_t)b->prev_off + 1;
	if (r->n && same_as_last(b, &unknown, 1))
		return;
	r->rows[r->n].native_offset = start;
	r->rows[r->n].line = 0;
	r->rows[r->n].file = 0;
	r->rows[r->n].inline_depth = 0;
	r->n++;
}

static void begin(struct builder *b, struct jvm_rows *r, uint32_t code_size)
{
	r->n = 0;
	r->truncated = 0;
	r->skipped_pcs = 0;
	r->cut_frames = 0;
	b->r = r;
	b->prev_off = -1;
	b->last_first = 0;
	b->code_size = code_size;
}

void jvm_rows_from_inline(struct jvm_rows *r, const PCStackInfo *pcs, jint npcs,
			  uint64_t code_start, uint32_t code_size, int inlining,
			  jvm_frame_fn fn, void *ctx)
{
	struct frame f[JVM_ROWS_MAX_DEPTH];
	struct builder b;
	jint i;

	begin(&b, r, code_size);
	if (r->cap < 2)
		return;
	for (i = 0; i < npcs; i++) {
		const PCStackInfo *pc = &pcs[i];
		uint32_t depth, d;
		int64_t off;

		if (pc->numstackframes <= 0 || !pc->methods || !pc->bcis) {
			r->skipped_pcs++;
			continue;
		}
		off = pc_offset(&b, pc->pc, code_start);
		if (off < 0)
			continue;
		depth = inlining ? (uint32_t)pc->numstackframes : 1;
		if (depth > JVM_ROWS_MAX_DEPTH) {
			r->cut_frames += depth - JVM_ROWS_MAX_DEPTH;
			depth = JVM_ROWS_MAX_DEPTH;
		}
		/* Frame d (outermost first) is methods[numstackframes-1-d]. */
		for (d = 0; d < depth; d++) {
			jint k = pc->numstackframes - 1 - (jint)d;

			fn(ctx, pc->methods[k], pc->bcis[k], &f[d].file, &f[d].line);
		}
		if (add_stack(&b, (uint64_t)off, f, depth) < 0)
			break;
	}
	finish(&b);
}

void jvm_rows_from_map(struct jvm_rows *r, const jvmtiAddrLocationMap *map, jint n,
		       jmethodID method, uint64_t code_start, uint32_t code_size,
		       jvm_frame_fn fn, void *ctx)
{
	struct builder b;
	struct frame f;
	jint i;

	begin(&b, r, code_size);
	if (r->cap < 2)
		return;
	for (i = 0; i < n; i++) {
		int64_t off = pc_offset(&b, map[i].start_address, code_start);

		if (off < 0)
			continue;
		fn(ctx, method, (jint)map[i].location, &f.file, &f.line);
		if (add_stack(&b, (uint64_t)off, &f, 1) < 0)
			break;
	}
	finish(&b);
}

const jvmtiCompiledMethodLoadInlineRecord *jvm_inline_record(const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	unsigned int hops = 0;

	/* The list is HotSpot's; bound the walk in case it ever loops. */
	for (; h && hops < 16; h = h->next, hops++)
		if (h->kind == JVMTI_CMLR_INLINE_INFO &&
		    h->majorinfoversion == JVMTI_CMLR_MAJOR_VERSION_1)
			return (const jvmtiCompiledMethodLoadInlineRecord *)h;
	return NULL;
}

uint64_t jvm_rows_bound_inline(const PCStackInfo *pcs, jint npcs, int inlining)
{
	uint64_t total = 1;
	jint i;

	for (i = 0; i < npcs; i++) {
		uint64_t d = pcs[i].numstackframes > 0 ? (uint64_t)pcs[i].numstackframes : 0;

		if (!inlining && d)
			d = 1;
		total += d < JVM_ROWS_MAX_DEPTH ? d : JVM_ROWS_MAX_DEPTH;
	}
	return total;
}
