/* SPDX-License-Identifier: MIT */
/*
 * --churn: a second thread that keeps changing the live set while the hot
 * loop runs — tier-ups, de-optimisations back to the quick tier, frees and
 * regenerations of freed functions — each one published/unpublished the
 * way the setup phase does it. It becomes the table's only writer.
 */
#ifndef MINIJIT_CHURN_H
#define MINIJIT_CHURN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "jitrt.h"

struct churn {
	struct jitrt *rt;
	pthread_t thread;
	atomic_int stop;
	uint32_t batch;    /* functions changed per step */
	uint32_t pause_us; /* sleep between steps */
	uint64_t steps, ops;
	int error; /* first negative errno; the thread stops on it */
};

/* Starts the thread; signals stay blocked in it so the main thread gets
 * SIGINT/SIGTERM. Returns 0 or a negative errno. */
int churn_start(struct churn *c, struct jitrt *rt, uint32_t batch, uint32_t pause_us);
/* Stops and joins it; returns its error (0 if none). */
int churn_stop(struct churn *c);

#endif
