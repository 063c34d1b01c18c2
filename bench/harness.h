/* SPDX-License-Identifier: MIT */
/*
 * The benchmark harness: one source set compiled twice, against
 * liblttng-etw (variant "lockfree") and liblttng-etw-globallock (variant
 * "globallock"), so both variants run the same code in the same run.
 * Each measure is a subcommand printing CSV rows (common.h).
 */
#ifndef LETW_BENCH_HARNESS_H
#define LETW_BENCH_HARNESS_H

#include <stdint.h>

#include "common.h"

/* Address ranges: the prepopulated table, then one per JIT thread. */
#define BENCH_TABLE_BASE 0x100000000000ull
#define BENCH_CHURN_BASE(t) (0x200000000000ull + ((uint64_t)(t) << 36))

/* letw_init with the control thread (needed for rundowns). 0 or -errno. */
int bench_letw_init(void);
/* Publish methods [first, first + n) at base. minimal: 1-byte name and
 * no namespace/signature (memory measure). timeout_s > 0 bounds the time
 * taken (-ETIMEDOUT): filling can degrade badly, see README. 0 or -errno. */
int bench_populate(uint64_t base, unsigned long first, unsigned long n,
		   int minimal, double timeout_s);
/* bench_populate of the whole table for a measure, reporting the mean
 * publish time as populate_ns_per_method (publish cost vs table size). */
int bench_fill(const struct bench_opts *o, const char *measure);
/* Wait until letw's pass counter reaches at least want (timeout_ms). */
int bench_wait_passes(uint64_t want, unsigned timeout_ms);

int bench_stall(const struct bench_opts *o);
int bench_rate(const struct bench_opts *o);
int bench_pubcost(const struct bench_opts *o);
int bench_lfht(const struct bench_opts *o);
int bench_memory(const struct bench_opts *o);
int bench_latency(const struct bench_opts *o);
int bench_bigrange(const struct bench_opts *o);

/*
 * Control requests the library synthesised since bench_letw_init (the
 * harness registers the control callback). LTTng's enabled state is per
 * tracepoint and machine-wide: a session of someone else enabling letw
 * events — even filtered on another vpid — flips them in our process too,
 * runs passes we did not ask for and hides our own start. Each measure
 * reports how many ENABLE_PROVIDER requests it saw against how many its
 * own starts explain, so report.py can flag perturbed figures.
 */
int bench_report_control(const struct bench_opts *o, const char *measure,
			 unsigned rundown_enables, unsigned runtime_enables);
/* What a measure returns when it completed but bench_report_control found
 * it perturbed (returned non-zero); the program then exits with 3 so
 * run.sh can retry it. */
#define BENCH_PERTURBED 3
/* Every logged request as a note, times relative to t0_ns. */
void bench_control_log_notes(const char *measure, uint64_t t0_ns);

/* Cost of one clock read pair, subtracted from per-operation timings. */
uint64_t bench_clock_overhead_ns(void);

#endif
