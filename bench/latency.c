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

static const char *const rundown_events[] = { "letw_rundown:*", NULL };

/* Every control request the library synthesised, for the notes: the
 * latency is only meaningful if each start produced a recorded DCStart. */
struct ctl_event {
	uint64_t ns;
	int code, provider;
	uint64_t mask;
};
static struct ctl_event ctl_log[256];
static unsigned ctl_n;

static void on_control(int code, int level, uint64_t mask, int provider,
		       void *ctx)
{
	(void)level;
	(void)ctx;
	if (ctl_n < 256)
		ctl_log[ctl_n++] = (struct ctl_event){ bench_now_ns(), code,
						       provider, mask };
}

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

int bench_latency(const struct bench_opts *o)
{
	struct bench_session s = { 0 };
	unsigned n = o->iterations, got = 0;
	uint64_t *before, *cli, *stamps, *lat;
	int ret = -1;

	before = calloc(n, sizeof(*before));
	cli = calloc(n, sizeof(*cli));
	stamps = calloc(n + 4, sizeof(*stamps));
	lat = calloc(n, sizeof(*lat));
	if (!before || !cli || !stamps || !lat || bench_letw_init())
		goto out_free;
	letw_set_control_fn(on_control, NULL);
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
		if (bench_wait_passes(st.passes + 1, 30000)) {
			fprintf(stderr, "bench: no rundown after start %u\n", i);
			goto out;
		}
		if (bench_session_stop(&s))
			goto out;
		/* Let the control thread see the events go disabled, so the
		 * next start is a fresh enable. */
		bench_sleep_ns(100000000);
	}
	for (unsigned i = 0; i < ctl_n; i++)
		bench_note("latency control: +%.3f ms code %d provider %d mask 0x%llx",
			   (double)(ctl_log[i].ns - before[0]) / 1e6, ctl_log[i].code,
			   ctl_log[i].provider, (unsigned long long)ctl_log[i].mask);
	for (unsigned i = 0; i < n; i++)
		bench_note("latency start %u at +%.3f ms", i,
			   (double)(before[i] - before[0]) / 1e6);
	if (read_init_stamps(s.path, stamps, n + 4, &got))
		goto out;
	if (got != n) {
		fprintf(stderr, "bench: %u starts but %u dcstart_init events\n", n, got);
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		if (stamps[i] < before[i]) {
			fprintf(stderr, "bench: dcstart_init %u precedes its start\n", i);
			goto out;
		}
		lat[i] = stamps[i] - before[i];
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	qsort(cli, n, sizeof(*cli), cmp_u64);
	bench_note("latency %s N=%lu: %u start/stop cycles", o->variant, o->methods, n);
	bench_row("latency", o->variant, o->methods, "start_to_init_median_ns",
		  (double)lat[n / 2], "ns");
	bench_row("latency", o->variant, o->methods, "start_to_init_min_ns",
		  (double)lat[0], "ns");
	bench_row("latency", o->variant, o->methods, "start_to_init_max_ns",
		  (double)lat[n - 1], "ns");
	bench_row("latency", o->variant, o->methods, "lttng_start_cli_median_ns",
		  (double)cli[n / 2], "ns");
	ret = 0;
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
