/* SPDX-License-Identifier: MIT */
#include "churn.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHURN_MAX_BATCH 256u

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint32_t pick(struct churn *c, uint64_t *rng, uint32_t *out)
{
	struct jitrt *rt = c->rt;
	uint32_t n = 0;

	for (uint32_t tries = 0; n < c->batch && tries < 4 * c->batch; tries++) {
		uint32_t i = (uint32_t)(xorshift(rng) % rt->nfns), k;

		if (rt->fns[i].pinned)
			continue;
		for (k = 0; k < n && out[k] != i; k++)
			;
		if (k == n)
			out[n++] = i;
	}
	return n;
}

static int step(struct churn *c, uint64_t *rng)
{
	struct jitrt *rt = c->rt;
	uint32_t picked[CHURN_MAX_BATCH], build[CHURN_MAX_BATCH], drop[CHURN_MAX_BATCH];
	enum codegen_tier tiers[CHURN_MAX_BATCH];
	struct jit_code *fresh[CHURN_MAX_BATCH];
	uint32_t n = pick(c, rng, picked), nb = 0, nd = 0;
	int ret = 0;

	for (uint32_t i = 0; i < n; i++) {
		/* This thread is the only writer: plain loads see its own
		 * stores. */
		const struct jit_code *cur = atomic_load(&rt->fns[picked[i]].code);

		if (cur && xorshift(rng) % 4 == 0) {
			drop[nd++] = picked[i];
		} else {
			build[nb] = picked[i];
			tiers[nb++] = cur && cur->tier == CODEGEN_QUICK ? CODEGEN_OPTIMIZED
									 : CODEGEN_QUICK;
		}
	}
	if (nb) {
		ret = jitrt_build(rt, build, nb, tiers, fresh);
		if (!ret)
			ret = jitrt_swap(rt, build, nb, fresh);
	}
	for (uint32_t i = 0; i < nd && !ret; i++)
		ret = jitrt_remove(rt, drop[i]);
	jitrt_reclaim(rt);
	c->ops += n;
	c->steps++;
	return ret;
}

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)time(NULL);
	struct timespec pause = {
		.tv_sec = c->pause_us / 1000000u,
		.tv_nsec = (long)(c->pause_us % 1000000u) * 1000,
	};

	while (!atomic_load(&c->stop)) {
		c->error = step(c, &rng);
		if (c->error)
			break;
		if (c->pause_us)
			nanosleep(&pause, NULL);
	}
	return NULL;
}

int churn_start(struct churn *c, struct jitrt *rt, uint32_t batch, uint32_t pause_us)
{
	sigset_t all, old;
	int ret;

	memset(c, 0, sizeof(*c));
	if (batch == 0 || batch > CHURN_MAX_BATCH)
		return -EINVAL;
	c->rt = rt;
	c->batch = batch;
	c->pause_us = pause_us;
	atomic_init(&c->stop, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&c->thread, NULL, churn_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int churn_stop(struct churn *c)
{
	atomic_store(&c->stop, 1);
	pthread_join(c->thread, NULL);
	return c->error;
}
