/* SPDX-License-Identifier: MIT */
/*
 * Sessions served through the statedump hook, and the retry of the passes
 * that could not begin (serve.c). Control thread only: each function runs
 * on it (letw_serve_reset and _free before it starts and once it is
 * joined), and takes pass_lock itself around each pass.
 */
#ifndef LETW_SERVE_H
#define LETW_SERVE_H

#include <stdint.h>

/* How long a pass that could not begin waits before it is tried again:
 * the mapping it needs is tried about once a second, never in a loop
 * (serve.c's retry and polling's, control.c). */
#define LETW_RETRY_NS 1000000000ull

/* Every queued statedump request, oldest first. */
void letw_serve_statedumps(void);

/* Once, when the thread starts with the hook connected: the sessions
 * started before it get their ENABLE pass. */
void letw_serve_adopt(void);

/* Each wake-up, once the statedumps are served: the passes owed, when
 * the streak's next try is due. */
void letw_serve_retry(void);

/* Each wake-up: lists the live sessions, forgets those gone, and returns
 * the union of their rundown events (polling's rundown mask). */
uint32_t letw_serve_watch(void);

/* A pass ran (control.c, run_pass): the walker's buffer is mapped, so
 * the passes owed are due at once. */
void letw_serve_pass_ran(void);

/* Nothing served, nothing owed: before the control thread starts. */
void letw_serve_reset(void);

/* Frees the memory (the thread is joined). */
void letw_serve_free(void);

#endif
