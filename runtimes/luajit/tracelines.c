/* SPDX-License-Identifier: MIT */
#include "tracelines.h"

#define MAX_DEPTH 64u

struct stack {
	uint32_t line[MAX_DEPTH], file[MAX_DEPTH];
	uint32_t depth; /* frames in use: depth of the last record + 1 */
};

/* The inlining stack at one record: outer frames are the lines they were
 * at when the recorder went deeper (their call sites). */
static void stack_push(struct stack *s, const struct lh_rec *r)
{
	uint32_t d = r->depth < MAX_DEPTH ? r->depth : MAX_DEPTH - 1;

	s->line[d] = r->line;
	s->file[d] = r->file;
	s->depth = d + 1;
}

/* Spread recs over [base, base + span), appending rows. */
static uint32_t spread(const struct lh_rec *recs, uint32_t nrecs, uint32_t base,
		       uint32_t span, struct letw_line *rows, uint32_t n)
{
	struct stack st = { .depth = 0 };
	uint32_t last_off = UINT32_MAX;

	for (uint32_t i = 0; i < nrecs; i++) {
		uint32_t off = base + (uint32_t)((uint64_t)i * span / nrecs);

		stack_push(&st, &recs[i]);
		/* Several bytecodes on one byte: the first one keeps it (one
		 * stack per offset). A record with an unknown line adds
		 * nothing. */
		if (off == last_off || !recs[i].line)
			continue;
		if (n + st.depth > LH_LINES_MAX)
			break;
		/* The same position as the previous stack: no new row. */
		if (n && rows[n - 1].inline_depth == st.depth - 1 &&
		    rows[n - 1].line == st.line[st.depth - 1] &&
		    rows[n - 1].file == st.file[st.depth - 1])
			continue;
		for (uint32_t d = 0; d < st.depth; d++)
			rows[n++] = (struct letw_line){
				.native_offset = off,
				.line = st.line[d],
				.file = st.file[d],
				.inline_depth = d,
			};
		last_off = off;
	}
	return n;
}

uint32_t lh_trace_lines(const struct lh_rec *recs, uint32_t nrecs,
			uint32_t code_size, uint32_t loop_offset,
			struct letw_line *rows)
{
	uint32_t n;

	if (!nrecs || !code_size)
		return 0;
	if (loop_offset == 0 || loop_offset >= code_size)
		return spread(recs, nrecs, 0, code_size, rows, 0);
	n = spread(recs, nrecs, 0, loop_offset, rows, 0);
	return spread(recs, nrecs, loop_offset, code_size - loop_offset, rows, n);
}
