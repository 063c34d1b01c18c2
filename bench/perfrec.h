/* SPDX-License-Identifier: MIT */
/* `perf record` of scheduler switches and page faults on some threads,
 * for bench/ctxsw.py (stall.c's --perf-out). */
#ifndef BENCH_PERFREC_H
#define BENCH_PERFREC_H

#include <sys/types.h>

#define BENCH_PERF_MAX_TIDS 64u

/* Starts perf on tids[0..n) writing `out` (its stderr in out.log, its pid
 * in out.pid for run.sh's cleanup); returns once perf records, or -1. */
pid_t bench_perf_start(const char *out, const pid_t *tids, unsigned n);
/* SIGINT, wait, remove out.pid: 0 when perf wrote its data. */
int bench_perf_stop(pid_t pid, const char *out);

#endif
