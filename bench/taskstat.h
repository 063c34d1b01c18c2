/* SPDX-License-Identifier: MIT */
/*
 * What the kernel accounts for one thread of this process, read from
 * /proc/self/task/TID/{status,stat,schedstat} by *another* thread, so the
 * thread being measured (a JIT thread) makes no system call for it, and
 * the process's resident set size.
 */
#ifndef LETW_BENCH_TASKSTAT_H
#define LETW_BENCH_TASKSTAT_H

#include <stdint.h>
#include <sys/types.h>

struct bench_task {
	uint64_t wall_ns;      /* CLOCK_MONOTONIC at the reading */
	uint64_t vol_cs;       /* voluntary_ctxt_switches: the thread slept */
	uint64_t invol_cs;     /* nonvoluntary_ctxt_switches: preempted */
	uint64_t minflt, majflt;
	uint64_t cpu_ns;       /* schedstat: time on a CPU */
	uint64_t run_delay_ns; /* schedstat: runnable, waiting for a CPU */
};

/* The calling thread's id (gettid). */
pid_t bench_gettid(void);
/* The id of this process's thread named `comm` (e.g. the library's
 * "letw-control"), or 0. */
pid_t bench_find_thread(const char *comm);
/* 0, or -1 if a file could not be read (the fields read stay set). */
int bench_task_read(pid_t tid, struct bench_task *out);
/* b - a, field by field. */
void bench_task_delta(const struct bench_task *a, const struct bench_task *b,
		      struct bench_task *d);
void bench_task_add(struct bench_task *sum, const struct bench_task *d);

/* VmRSS of this process in bytes (from /proc/self/statm), 0 on error.
 * Opens the file once and preads it: no allocation after the first call. */
uint64_t bench_rss_bytes(void);

#endif
