/* SPDX-License-Identifier: MIT */
/*
 * Measure 4a — table bytes per method, from mallinfo2() deltas (every
 * arena, heap and mmap'd blocks): once with a 1-byte name and no namespace
 * or signature ("names excluded": 4 bytes of strings with their NULs) and
 * once with the realistic strings. Each case runs in a fresh letw_init so
 * the hash-table buckets of the first case do not count in the second.
 * Runs without a session: the table costs the same traced or not.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include <urcu/urcu-bp.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"

static uint64_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

/* Table resizes and deferred frees run on liburcu's call_rcu thread: wait
 * until the heap stops moving before reading it. */
static uint64_t settled_heap_bytes(void)
{
	uint64_t prev = 0, cur = heap_bytes();

	for (int i = 0; i < 50 && cur != prev; i++) {
		urcu_bp_barrier();
		bench_sleep_ns(20000000);
		prev = cur;
		cur = heap_bytes();
	}
	return cur;
}

static double string_bytes(unsigned long n)
{
	char ns[BENCH_NAME_MAX], name[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];
	double sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		bench_method_strings(i, ns, name, sig);
		sum += (double)(strlen(ns) + strlen(name) + strlen(sig) + 3);
	}
	return sum / (double)n;
}

static int one_case(const struct bench_opts *o, int minimal, double *per_method)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		/* No control thread: nothing but the table allocates. */
		.flags = LETW_CONFIG_NO_CONTROL_THREAD,
	};
	uint64_t before, after;
	int ret = letw_init(&cfg);

	if (ret)
		return ret;
	before = settled_heap_bytes();
	ret = bench_populate(BENCH_TABLE_BASE, 0, o->methods, minimal, o->fill_timeout);
	after = settled_heap_bytes();
	letw_shutdown();
	*per_method = ((double)after - (double)before) / (double)o->methods;
	return ret;
}

int bench_memory(const struct bench_opts *o)
{
	double bare, full, strings = string_bytes(o->methods);
	int ret = one_case(o, 1, &bare);

	if (!ret)
		ret = one_case(o, 0, &full);
	if (ret == -ETIMEDOUT)
		bench_row("memory", o->variant, o->methods, "populate_timeout",
			  o->fill_timeout, "s");
	if (ret)
		return -1;
	bench_note("memory %s N=%lu: strings average %.1f bytes/method (with NULs)",
		   o->variant, o->methods, strings);
	/* Minimal strings are "m", "" and "": 4 bytes, not counted. */
	bench_row("memory", o->variant, o->methods, "bytes_per_method_no_names",
		  bare - 4.0, "bytes");
	bench_row("memory", o->variant, o->methods, "bytes_per_method_with_names",
		  full, "bytes");
	bench_row("memory", o->variant, o->methods, "string_bytes_per_method",
		  strings, "bytes");
	return 0;
}
