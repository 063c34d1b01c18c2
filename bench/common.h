/* SPDX-License-Identifier: MIT */
/*
 * Shared by every benchmark program: options, clocks, the method-name
 * generator (so the harness and the raw loop emit byte-identical payloads),
 * a log-linear latency histogram and the CSV row printer.
 */
#ifndef LETW_BENCH_COMMON_H
#define LETW_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Channel and session settings every program takes from run.sh, so all
 * measures of one run share one channel configuration. */
struct bench_opts {
	const char *variant;    /* "lockfree", "globallock" or "raw" */
	const char *prefix;     /* session-name prefix, unique per run */
	const char *outdir;     /* traces go under here; removed by run.sh */
	const char *subbuf;     /* lttng --subbuf-size */
	unsigned num_subbuf;    /* lttng --num-subbuf */
	int blocking;           /* 1: --blocking-timeout=inf, 0: discard */
	unsigned long methods;  /* table size */
	unsigned passes;        /* rundown passes (rate) */
	double seconds;         /* churn phase length (stall) */
	unsigned threads;       /* JIT threads (stall) */
	unsigned pause_ns;      /* pause between a JIT thread's operations */
	unsigned ops;           /* timed operations (pubcost) */
	unsigned iterations;    /* start/stop cycles (latency) */
	int keep_trace;
	double fill_timeout;    /* give up filling a table after this (s); 0: never */
	const char *config;     /* stall: session layout (stall.c), default "rundown-only" */
	const char *perf_out;   /* stall: perf sched_switch profile of the JIT thread */
};

/*
 * The event rules every session uses, as the README recommends: the DCStart
 * family and the load/unload events. Not `letw_rundown:*` / `letw_runtime:*`:
 * those also name the optional line-table and code-bytes events, and the
 * code-bytes ones make every vouched publish read the method's code and
 * every rundown record copy it — another measure (letw-bench-extras).
 */
#define BENCH_RUNDOWN_EVENTS "letw_rundown:*dcstart*"
#define BENCH_RUNTIME_EVENTS "letw_runtime:*load"

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bench_sleep_ns(uint64_t ns);

/* Method i's strings: a .NET-like namespace, Class`N::Method name and a
 * short signature; namespace + "." + name averages ~60 bytes. The buffers
 * are the caller's and must hold BENCH_NAME_MAX bytes. */
#define BENCH_NAME_MAX 128
void bench_method_strings(unsigned long i, char *ns, char *name, char *sig);

/* A code address for method i of a range: 64-byte aligned, sizes vary
 * between 64 and 1024 bytes, never overlapping inside one range. */
uint64_t bench_code_start(uint64_t base, unsigned long i);
uint32_t bench_code_size(unsigned long i);

/* Log-linear histogram of nanosecond latencies: exact below 128 ns, then
 * 64 sub-buckets per power of two (relative error < 1.6%). */
#define BENCH_HIST_BUCKETS 4096
struct bench_hist {
	uint64_t count;
	uint64_t max;
	uint64_t sum;
	/* Calls over BENCH_STALL_NS and the time spent in them: a global
	 * lock stalls one call per pass, which percentiles over millions of
	 * calls cannot show. */
	uint64_t stalls, stall_ns;
	uint64_t b[BENCH_HIST_BUCKETS];
};
#define BENCH_STALL_NS 1000000ull

void bench_hist_add(struct bench_hist *h, uint64_t ns);
void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src);
/* Upper bound of the bucket holding quantile q (0 < q <= 1). */
uint64_t bench_hist_quantile(const struct bench_hist *h, double q);

/* One CSV row on stdout: measure,variant,methods,metric,value,unit.
 * run.sh concatenates every program's rows into results.csv. */
void bench_row(const char *measure, const char *variant, unsigned long methods,
	       const char *metric, double value, const char *unit);
/* A note line (not CSV): "# ..." on stdout, kept by run.sh in the log. */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
