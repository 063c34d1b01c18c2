/* SPDX-License-Identifier: MIT */
#include "hotloop.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <urcu/urcu-bp.h>

#define COLD_PER_ROUND 16u

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void call_one(const struct jit_fn *f, unsigned v, struct hotloop_stats *st)
{
	/* Acquire pairs with the writer's exchange: the code bytes were
	 * written (and sealed) before the pointer was installed. */
	const struct jit_code *c = atomic_load_explicit(&f->code, memory_order_acquire);

	if (!c)
		return; /* freed (possibly by the churn thread just now) */
	st->calls++;
	if (!jitrt_call_ok(f, c, v) && st->mismatches++ == 0)
		fprintf(stderr, "letw-minijit: fn_%" PRIu32 " v%" PRIu64 " at %p returned a wrong "
			"value\n", f->index, c->version, (void *)c->mem.addr);
}

static void call_stub(const struct jitrt *rt, const struct jit_stub *s, struct hotloop_stats *st)
{
	/* Stubs and their targets are pinned: no read lock needed for them,
	 * but the call happens inside one anyway (harmless). */
	const struct jit_fn *f = &rt->fns[s->target];
	jit_entry_fn entry = (jit_entry_fn)(uintptr_t)s->mem.addr;

	st->calls++;
	if (entry(f->arg[0]) != f->expect[0] && st->mismatches++ == 0)
		fprintf(stderr, "letw-minijit: %s returned a wrong value\n", s->name);
}

void hotloop_run(const struct jitrt *rt, double seconds, volatile sig_atomic_t *stop,
		 const struct hotloop_hook *hook, struct hotloop_stats *st)
{
	double start = now_s(), deadline = start + seconds;
	uint32_t ncold = rt->nfns - rt->nhot, cursor = 0;

	memset(st, 0, sizeof(*st));
	while (!*stop && seconds > 0) {
		/* One read-side section per round: a grace period of the churn
		 * thread waits for at most one round. */
		urcu_bp_read_lock();
		for (uint32_t i = 0; i < rt->nhot; i++)
			call_one(&rt->fns[i], (unsigned)(st->rounds % JITRT_NARGS), st);
		for (uint32_t i = 0; ncold && i < COLD_PER_ROUND; i++) {
			call_one(&rt->fns[rt->nhot + cursor], 0, st);
			cursor = (cursor + 1) % ncold;
		}
		if (rt->nstubs)
			call_stub(rt, &rt->stubs[st->rounds % rt->nstubs], st);
		urcu_bp_read_unlock();
		st->rounds++;
		if (hook && *hook->flag) {
			*hook->flag = 0;
			st->hook_error = hook->fn(hook->arg);
			if (st->hook_error)
				break;
		}
		if (now_s() >= deadline)
			break;
	}
	st->seconds = now_s() - start;
}
