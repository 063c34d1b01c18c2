/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "scratch.h"

static pthread_key_t scratch_key;

static void scratch_free(void *p)
{
	struct jvm_scratch *s = p;

	if (s) {
		free(s->rows);
		free(s);
	}
}

int jvm_scratch_init(void)
{
	return -pthread_key_create(&scratch_key, scratch_free);
}

struct jvm_scratch *jvm_scratch_get(void)
{
	struct jvm_scratch *s = pthread_getspecific(scratch_key);

	if (!s) {
		/* Once per thread (see scratch.h). */
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		if (pthread_setspecific(scratch_key, s)) {
			free(s);
			return NULL;
		}
	}
	if (s->busy)
		return NULL;
	s->busy = 1;
	return s;
}

void jvm_scratch_put(struct jvm_scratch *s)
{
	if (s)
		s->busy = 0;
}

int jvm_scratch_rows(struct jvm_scratch *s, uint64_t need)
{
	uint64_t cap = s->rows_cap ? s->rows_cap : 1024;
	struct letw_line *r;

	if (need > LETW_LINES_MAX + 1ull)
		need = LETW_LINES_MAX + 1ull;
	if (need <= s->rows_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > LETW_LINES_MAX + 1ull)
		cap = LETW_LINES_MAX + 1ull;
	/* The rare growth: the only allocation on the callback path after a
	 * thread's first event. */
	r = realloc(s->rows, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->rows = r;
	s->rows_cap = (uint32_t)cap;
	return 0;
}
