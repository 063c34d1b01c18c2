/* SPDX-License-Identifier: MIT */
/*
 * Measure 2, library side — rundown records/s with no churn, timed around
 * letw_capture_state(..., wait=1), i.e. from the request to the pass's
 * Complete event (pin phase, emission, Init/Complete included). The raw
 * loop (raw.c) gives the limit on the same channel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "session.h"

static const char *const rundown_events[] = { "letw_rundown:*", NULL };

/*
 * The walker's phase 1 (pinning every record inside one read-side section)
 * is reported only in the library's debug log line "pass N (...): ...,
 * X pinned, Y ns read side". We read it through the public log callback;
 * if the wording changes the figure is simply absent. Called on the
 * control thread; the main thread reads it after the pass it waited for.
 */
static uint64_t read_side_ns, read_side_max_ns;

static void on_log(enum letw_log_level level, const char *msg, void *ctx)
{
	const char *p = strstr(msg, " ns read side");
	unsigned long long ns;

	(void)ctx;
	if (level != LETW_LOG_DEBUG || !p)
		return;
	while (p > msg && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (sscanf(p, "%llu", &ns) == 1)
		uatomic_set(&read_side_ns, (uint64_t)ns);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_rate(const struct bench_opts *o)
{
	struct bench_session s = { 0 };
	uint64_t discarded = 0, lost = 0;
	double *rates;
	unsigned done = 0;
	char chan[160];
	int ret = -1;

	rates = calloc(o->passes, sizeof(*rates));
	/* Debug level carries the per-pass walker figures (see on_log). */
	setenv("LETW_LOG", "debug", 1);
	if (!rates || bench_letw_init()) {
		free(rates);
		return -1;
	}
	letw_set_log_fn(on_log, NULL);
	if (bench_fill(o, "rate"))
		goto out;
	if (bench_session_create(&s, o, "rate", rundown_events) ||
	    bench_session_start(&s, NULL, NULL))
		goto out;
	if (bench_wait_passes(1, 120000)) {
		fprintf(stderr, "bench: no rundown after lttng start\n");
		goto out;
	}
	for (; done < o->passes; done++) {
		struct letw_stats a, b;
		uint64_t t0, t1;
		int r;

		letw_get_stats(&a);
		t0 = bench_now_ns();
		r = letw_capture_state(LETW_KW_RUNDOWN_START | LETW_KW_JIT_RUNDOWN, 1);
		t1 = bench_now_ns();
		letw_get_stats(&b);
		if (r <= 0) {
			fprintf(stderr, "bench: capture_state ran no pass (%d)\n", r);
			goto out;
		}
		rates[done] = (double)(b.rundown_emitted - a.rundown_emitted) * 1e9 /
			      (double)(t1 - t0);
		if (uatomic_read(&read_side_ns) > read_side_max_ns)
			read_side_max_ns = uatomic_read(&read_side_ns);
	}
	if (bench_session_stop(&s) || bench_session_discarded(&s, &discarded, &lost))
		goto out;

	bench_channel_desc(o, chan, sizeof(chan));
	bench_note("rate %s N=%lu: %u passes; channel: %s", o->variant, o->methods,
		   o->passes, chan);
	qsort(rates, done, sizeof(*rates), cmp_double);
	/* A run that lost events measured how fast we can drop them, not how
	 * fast a session records them: no rate is reported from it. */
	if (discarded == 0 && lost == 0) {
		bench_row("rate", o->variant, o->methods, "records_per_s_best",
			  rates[done - 1], "records/s");
		bench_row("rate", o->variant, o->methods, "records_per_s_median",
			  rates[done / 2], "records/s");
	} else {
		bench_note("rate %s N=%lu: %llu events discarded, rate not reported",
			   o->variant, o->methods, (unsigned long long)discarded);
	}
	if (read_side_max_ns)
		bench_row("rate", o->variant, o->methods, "read_side_max_ns",
			  (double)read_side_max_ns, "ns");
	bench_row("rate", o->variant, o->methods, "discarded_events",
		  (double)discarded, "events");
	bench_row("rate", o->variant, o->methods, "lost_packets", (double)lost,
		  "packets");
	ret = bench_report_control(o, "rate", 1, 0) ? BENCH_PERTURBED : 0;
out:
	bench_session_destroy(&s, o->keep_trace);
	letw_shutdown();
	free(rates);
	return ret;
}
