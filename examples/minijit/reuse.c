/* SPDX-License-Identifier: MIT */
#include "reuse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Compile fns[index] anew, alone in its batch (so in a chunk of its own,
 * at the chunk's first byte), and install it. */
static int rebuild_alone(struct jitrt *rt, uint32_t index, enum codegen_tier tier)
{
	struct jit_code *fresh;
	int ret = jitrt_build(rt, &index, 1, &tier, &fresh);

	return ret ? ret : jitrt_swap(rt, &index, 1, &fresh);
}

int reuse_prepare(struct reuse *r, struct jitrt *rt, const char *path)
{
	const struct jit_code *c;
	int ret;

	memset(r, 0, sizeof(*r));
	r->rt = rt;
	r->path = path;
	if (rt->nhot <= REUSE_NEW) {
		fprintf(stderr, "letw-minijit: --reuse needs --hot %u or more\n", REUSE_NEW + 1);
		return -EINVAL;
	}
	c = atomic_load(&rt->fns[REUSE_OLD].code);
	ret = rebuild_alone(rt, REUSE_OLD, c ? c->tier : CODEGEN_QUICK);
	if (!ret)
		ret = jitrt_remove(rt, REUSE_NEW);
	jitrt_reclaim(rt);
	if (ret)
		return ret;
	/* Now the next chunk released is the next one handed out. */
	codeheap_trim(&rt->heap);
	r->addr = (uint64_t)(uintptr_t)atomic_load(&rt->fns[REUSE_OLD].code)->mem.addr;
	return 0;
}

static int write_record(const struct reuse *r, uint64_t old_size, uint64_t t_old,
			const struct jit_code *c, uint64_t t_new)
{
	size_t len = strlen(r->path) + 8;
	char *tmp = malloc(len);
	FILE *f;
	int ret = 0;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len, "%s.tmp", r->path);
	f = fopen(tmp, "w");
	if (!f) {
		ret = -errno;
	} else {
		fprintf(f, "old fn_%u 0x%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", REUSE_OLD,
			r->addr, old_size, t_old);
		fprintf(f, "new fn_%u 0x%" PRIx64 " %zu %" PRIu64 " ", REUSE_NEW,
			(uint64_t)(uintptr_t)c->mem.addr, c->mem.size, t_new);
		jitrt_write_hex(f, c);
		fputc('\n', f);
		if (fclose(f))
			ret = -errno;
	}
	if (!ret && rename(tmp, r->path))
		ret = -errno;
	if (ret)
		fprintf(stderr, "letw-minijit: cannot write %s: %s\n", r->path, strerror(-ret));
	free(tmp);
	return ret;
}

int reuse_swap(void *arg)
{
	struct reuse *r = arg;
	struct jitrt *rt = r->rt;
	const struct jit_code *c;
	uint64_t old_size, t_old, t_new;
	int ret;

	if (r->done)
		return 0;
	r->done = 1;
	old_size = atomic_load(&rt->fns[REUSE_OLD].code)->mem.size;
	t_old = now_ns();
	ret = jitrt_remove(rt, REUSE_OLD);
	/* The hot loop (this thread) is between rounds: the grace period
	 * ends at once, and the chunk goes to the empty free list. */
	jitrt_reclaim(rt);
	if (!ret)
		ret = rebuild_alone(rt, REUSE_NEW, CODEGEN_QUICK);
	if (ret)
		return ret;
	t_new = now_ns();
	c = atomic_load(&rt->fns[REUSE_NEW].code);
	if ((uint64_t)(uintptr_t)c->mem.addr != r->addr) {
		fprintf(stderr, "letw-minijit: --reuse: fn_%u landed at %p, not at fn_%u's 0x%" PRIx64
			"\n", REUSE_NEW, (void *)c->mem.addr, REUSE_OLD, r->addr);
		return -EADDRNOTAVAIL;
	}
	return write_record(r, old_size, t_old, c, t_new);
}
