/* SPDX-License-Identifier: MIT */
/* A clock's time in nanoseconds, for the lifecycle and control paths
 * (control.c: pass durations on CLOCK_MONOTONIC; jitdump_mark.c: the
 * process's start). */
#ifndef LETW_CLOCK_H
#define LETW_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t letw_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* LETW_CLOCK_H */
