/* SPDX-License-Identifier: MIT */
/*
 * Measure 5 — enable → DCStartInit latency: from CLOCK_MONOTONIC read right
 * before `lttng start` is spawned to the dcstart_init event's timestamp.
 *
 * LTTng-UST stamps events with CLOCK_MONOTONIC at 1 GHz; the trace clock
 * class adds an offset (realtime at session creation) to give wall time.
 * babeltrace2 --clock-cycles prints the raw cycle count, i.e. the stamp
 * with that offset removed, which is directly comparable with our reading.
 * The latency is the lttng CLI start-up, sessiond pushing the enablement to
 * the app, the control thread's poll period (5 ms default) plus its
 * stable-mask re-read (>= 1 ms), and the Init emission.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "session.h"

static const char *const rundown_events[] = { BENCH_RUNDOWN_EVENTS, NULL };

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* dcstart_init cycle stamps of the trace, in trace order. */
static int read_init_stamps(const char *path, uint64_t *out, unsigned max,
			    unsigned *n)
{
	char *argv[] = { "babeltrace2", "--clock-cycles", (char *)path, NULL };
	char *text = NULL, *line, *save = NULL;
	int ret = bench_run(argv, &text);

	*n = 0;
	if (ret != 0 || !text) {
		free(text);
		fprintf(stderr, "bench: babeltrace2 %s failed\n", path);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long cyc;

		if (!strstr(line, "letw_rundown:dcstart_init:"))
			continue;
		if (sscanf(line, "[%llu cycles]", &cyc) == 1 && *n < max)
			out[(*n)++] = cyc;
	}
	free(text);
	return 0;
}

/*
 * A session of someone else that enables letw events without a vpid filter
 * flips our tracepoints too (LTTng's enabled state is per tracepoint): then
 * a start of ours may flip nothing, or only part of the rundown keywords.
 * Such a cycle has no dcstart_init of its own and is reported as perturbed,
 * never measured against another cycle's event.
 */
static unsigned match_cycles(const uint64_t *before, unsigned n,
			     const uint64_t *stamps, unsigned got, uint64_t *lat)
{
	unsigned valid = 0, j = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? before[i + 1] : UINT64_MAX;

		while (j < got && stamps[j] < before[i])
			j++;
		if (j < got && stamps[j] < end)
			lat[valid++] = stamps[j] - before[i];
	}
	return valid;
}

int bench_latency(const struct bench_opts *o)
{
	struct bench_session s = { 0 };
	unsigned n = o->iterations, max_stamps = 4 * o->iterations + 16;
	unsigned got = 0, valid;
	int perturbed;
	uint64_t *before, *cli, *stamps, *lat;
	int ret = -1;

	before = calloc(n, sizeof(*before));
	cli = calloc(n, sizeof(*cli));
	stamps = calloc(max_stamps, sizeof(*stamps));
	lat = calloc(n, sizeof(*lat));
	if (!before || !cli || !stamps || !lat || bench_letw_init())
		goto out_free;
	if (bench_fill(o, "latency") ||
	    bench_session_create(&s, o, "latency", rundown_events))
		goto out;
	for (unsigned i = 0; i < n; i++) {
		struct letw_stats st;
		uint64_t after;

		letw_get_stats(&st);
		if (bench_session_start(&s, &before[i], &after))
			goto out;
		cli[i] = after - before[i];
		if (bench_wait_passes(st.passes + 1, 5000))
			bench_note("latency %s: start %u ran no pass within 5 s",
				   o->variant, i);
		if (bench_session_stop(&s))
			goto out;
		/* Let the control thread see the events go disabled, so the
		 * next start is a fresh enable. */
		bench_sleep_ns(100000000);
	}
	if (read_init_stamps(s.path, stamps, max_stamps, &got))
		goto out;
	valid = match_cycles(before, n, stamps, got, lat);
	if (valid < n) {
		/* Show what the library saw, so the perturbation is explained. */
		bench_control_log_notes("latency", before[0]);
		for (unsigned i = 0; i < n; i++)
			bench_note("latency start %u at +%.3f ms", i,
				   (double)(before[i] - before[0]) / 1e6);
	}
	bench_note("latency %s N=%lu: %u start/stop cycles, %u with their own dcstart_init",
		   o->variant, o->methods, n, valid);
	bench_row("latency", o->variant, o->methods, "cycles_measured", valid, "cycles");
	bench_row("latency", o->variant, o->methods, "cycles_perturbed", n - valid,
		  "cycles");
	perturbed = bench_report_control(o, "latency", n, 0);
	if (!valid) {
		fprintf(stderr, "bench: no start produced its own dcstart_init\n");
		goto out;
	}
	qsort(lat, valid, sizeof(*lat), cmp_u64);
	qsort(cli, n, sizeof(*cli), cmp_u64);
	bench_row("latency", o->variant, o->methods, "start_to_init_median_ns",
		  (double)lat[valid / 2], "ns");
	bench_row("latency", o->variant, o->methods, "start_to_init_min_ns",
		  (double)lat[0], "ns");
	bench_row("latency", o->variant, o->methods, "start_to_init_max_ns",
		  (double)lat[valid - 1], "ns");
	bench_row("latency", o->variant, o->methods, "lttng_start_cli_median_ns",
		  (double)cli[n / 2], "ns");
	ret = perturbed ? BENCH_PERTURBED : 0;
out:
	bench_session_destroy(&s, o->keep_trace);
	letw_shutdown();
out_free:
	free(before);
	free(cli);
	free(stamps);
	free(lat);
	return ret;
}
