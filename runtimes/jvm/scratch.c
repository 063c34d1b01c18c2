/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"
#include "stats.h"

/* Written once by jvm_scratch_init before any callback is enabled; read
 * only afterwards. */
static struct jvm_scratch *blocks;

int jvm_scratch_init(void)
{
	if (blocks)
		return 0;
	/* ~1.3 MiB of address space; calloc's zero pages are only touched
	 * by the blocks callbacks actually use. */
	blocks = calloc(JVM_SCRATCH_BLOCKS, sizeof(*blocks));
	return blocks ? 0 : -ENOMEM;
}

struct jvm_scratch *jvm_scratch_get(void)
{
	unsigned int i;

	if (!blocks)
		return NULL;
	for (i = 0; i < JVM_SCRATCH_BLOCKS; i++) {
		int expected = 0;

		/* Acquire pairs with the release in jvm_scratch_put: the
		 * previous holder's writes are done before ours begin. */
		if (atomic_compare_exchange_strong_explicit(&blocks[i].busy, &expected, 1,
							    memory_order_acquire,
							    memory_order_relaxed))
			return &blocks[i];
	}
	jvm_stat_inc(JVM_ST_LINES_NO_SCRATCH);
	return NULL;
}

void jvm_scratch_put(struct jvm_scratch *s)
{
	if (s)
		atomic_store_explicit(&s->busy, 0, memory_order_release);
}

void jvm_scratch_rows(struct jvm_scratch *s, struct jvm_rows *r)
{
	memset(r, 0, sizeof(*r));
	r->rows = s->rows;
	r->cap = JVM_SCRATCH_ROWS < LETW_LINES_MAX ? JVM_SCRATCH_ROWS : LETW_LINES_MAX;
}
