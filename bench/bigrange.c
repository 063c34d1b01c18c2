/* SPDX-License-Identifier: MIT */
/*
 * Measure 6 — publishing one very large range (a "big" record: over
 * LETW_SMALL_PAGES pages it is checked against every record by a scan of
 * the store instead of one table node per page): the time of
 * letw_method_publish of a 4 GiB - 1 byte method with N records already
 * in the table, its unpublish, and what small publishes cost while a big
 * record is live (their overlap check then looks through the big-record
 * registry). Tracing off (no session): the table's cost alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"

#define BIG_BASE 0x300000000000ull
#define BIG_SIZE 0xffffffffu /* 4 GiB - 1 */
#define BIG_REPEAT 7u
#define SMALL_OPS 2000u

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int publish_big(unsigned k, uint64_t *ns)
{
	struct letw_method m = {
		.method_id = 0x7000000000ull + k,
		/* 8 GiB apart: the ranges of successive repeats never meet. */
		.code_start = BIG_BASE + (uint64_t)k * (8ull << 30),
		.code_size = BIG_SIZE,
		.method_flags = LETW_METHOD_JITTED,
		.version_id = 1,
		.name = "BigRegion::Code",
	};
	uint64_t t0 = bench_now_ns();
	int ret = letw_method_publish(&m);

	*ns = bench_now_ns() - t0;
	if (ret)
		fprintf(stderr, "bench: big publish: %s\n", strerror(-ret));
	return ret;
}

/* SMALL_OPS timed publishes of small methods, each unpublished at once
 * (untimed), in a range of their own after the table's. */
static int small_publishes(const struct bench_opts *o, unsigned long first, uint64_t *ns)
{
	for (unsigned i = 0; i < SMALL_OPS; i++) {
		struct letw_method m = {
			.method_id = first + i + 1,
			.code_start = bench_code_start(BENCH_TABLE_BASE, first + i),
			.code_size = bench_code_size(i),
			.method_flags = LETW_METHOD_JITTED,
			.version_id = 1,
			.name = "Small::Method",
		};
		uint64_t t0 = bench_now_ns();
		int ret = letw_method_publish(&m);

		ns[i] = bench_now_ns() - t0;
		if (ret || letw_method_unpublish(m.code_start))
			return -1;
	}
	return 0;
}

static void report(const struct bench_opts *o, const char *what, uint64_t *v, unsigned n,
		   uint64_t overhead)
{
	char m[64];

	for (unsigned i = 0; i < n; i++)
		v[i] = v[i] > overhead ? v[i] - overhead : 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	snprintf(m, sizeof(m), "%s_median_ns", what);
	bench_row("bigrange", o->variant, o->methods, m, (double)v[n / 2], "ns");
	snprintf(m, sizeof(m), "%s_max_ns", what);
	bench_row("bigrange", o->variant, o->methods, m, (double)v[n - 1], "ns");
}

int bench_bigrange(const struct bench_opts *o)
{
	struct letw_store_stats ss = { .size = sizeof(ss) };
	uint64_t pub[BIG_REPEAT], unpub[BIG_REPEAT], overhead;
	static uint64_t small[SMALL_OPS], with_big[SMALL_OPS];
	uint64_t slow_fill = 0;
	int ret = -1;

	if (bench_letw_init())
		return -1;
	overhead = bench_clock_overhead_ns();
	if (bench_fill(o, "bigrange"))
		goto out;
	if (!letw_get_store_stats(&ss))
		slow_fill = ss.slow_grows;
	/* The same small publishes with no big record: their baseline. */
	if (small_publishes(o, o->methods, small))
		goto out;
	for (unsigned k = 0; k < BIG_REPEAT; k++) {
		uint64_t t0;

		if (publish_big(k, &pub[k]))
			goto out;
		/* A second one over the same range must be refused. */
		if (k == 0) {
			struct letw_method dup = {
				.method_id = 1, .code_start = BIG_BASE + 4096, .code_size = 64,
				.name = "x",
			};

			if (letw_method_publish(&dup) != -EEXIST) {
				fprintf(stderr, "bench: a method inside the big range was accepted\n");
				goto out;
			}
		}
		/* Small publishes while a big record is live: their overlap
		 * check then looks through the big-record registry. */
		if (k == BIG_REPEAT - 1 && small_publishes(o, o->methods + SMALL_OPS, with_big))
			goto out;
		t0 = bench_now_ns();
		if (letw_method_unpublish(BIG_BASE + (uint64_t)k * (8ull << 30))) {
			fprintf(stderr, "bench: big unpublish failed\n");
			goto out;
		}
		unpub[k] = bench_now_ns() - t0;
	}
	report(o, "publish_big", pub, BIG_REPEAT, overhead);
	report(o, "unpublish_big", unpub, BIG_REPEAT, overhead);
	report(o, "publish_small", small, SMALL_OPS, overhead);
	report(o, "publish_small_with_big", with_big, SMALL_OPS, overhead);
	if (!letw_get_store_stats(&ss)) {
		bench_row("bigrange", o->variant, o->methods, "slow_grows_fill",
			  (double)slow_fill, "grows");
		bench_row("bigrange", o->variant, o->methods, "slow_grows_timed",
			  (double)(ss.slow_grows - slow_fill), "grows");
		bench_row("bigrange", o->variant, o->methods, "slots_committed",
			  (double)ss.slots_committed, "slots");
	}
	bench_note("bigrange %s N=%lu: %u publishes of one %u-byte method, tracing off; "
		   "%u small publishes without and with it live",
		   o->variant, o->methods, BIG_REPEAT, BIG_SIZE, SMALL_OPS);
	ret = bench_report_control(o, "bigrange", 0, 0) ? BENCH_PERTURBED : 0;
out:
	letw_shutdown();
	return ret;
}
