/* SPDX-License-Identifier: MIT */
/*
 * Measure 2, library side — rundown records/s with no churn, timed around
 * letw_capture_state(..., wait=1), i.e. from the request to the pass's
 * Complete event (Init, the slot-order walk, emission and Complete
 * included). The raw loop (raw.c) gives the limit on the same channel.
 * Also reports, from letw_get_store_stats, the longest read-side section
 * of the timed passes and the store's slow-path count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "session.h"
#include "taskstat.h"

static const char *const rundown_events[] = { BENCH_RUNDOWN_EVENTS, NULL };

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

	struct letw_store_stats ss = { .size = sizeof(ss) };
	uint64_t section_max = 0, sections = 0, slow0 = 0;
	struct bench_task wsum = { 0 };
	pid_t walker;

	rates = calloc(o->passes, sizeof(*rates));
	if (!rates || bench_letw_init()) {
		free(rates);
		return -1;
	}
	if (bench_fill(o, "rate"))
		goto out;
	if (bench_session_create(&s, o, "rate", rundown_events) ||
	    bench_session_start(&s, NULL, NULL))
		goto out;
	if (bench_wait_passes(1, 120000)) {
		fprintf(stderr, "bench: no rundown after lttng start\n");
		goto out;
	}
	if (!letw_get_store_stats(&ss))
		slow0 = ss.slow_grows;
	/* The walker's thread: how much of a pass it spent on a CPU, and
	 * whether it was preempted (a read-side section's wall time includes
	 * the time its thread waited for a CPU) or slept (a blocking channel
	 * full: between sections, where emission happens). */
	walker = bench_find_thread("letw-control");
	for (; done < o->passes; done++) {
		struct bench_task w0, w1, wd;
		struct letw_stats a, b;
		uint64_t t0, t1;
		int r;

		letw_get_stats(&a);
		if (walker)
			bench_task_read(walker, &w0);
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
		if (walker && !bench_task_read(walker, &w1)) {
			bench_task_delta(&w0, &w1, &wd);
			bench_task_add(&wsum, &wd);
		}
		if (!letw_get_store_stats(&ss)) {
			if (ss.last_pass_max_section_ns > section_max)
				section_max = ss.last_pass_max_section_ns;
			sections += ss.last_pass_sections;
		}
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
	/* Longest read-side section of the timed passes, and of any pass of
	 * this process (the start's pass included). */
	bench_row("rate", o->variant, o->methods, "section_max_ns", (double)section_max, "ns");
	bench_row("rate", o->variant, o->methods, "section_max_any_pass_ns",
		  (double)ss.max_section_ns, "ns");
	bench_row("rate", o->variant, o->methods, "sections_per_pass",
		  done ? (double)sections / done : 0, "sections");
	bench_row("rate", o->variant, o->methods, "slow_grows_fill", (double)slow0, "grows");
	if (walker) {
		bench_row("rate", o->variant, o->methods, "walker_invol_cs", (double)wsum.invol_cs,
			  "switches");
		bench_row("rate", o->variant, o->methods, "walker_vol_cs", (double)wsum.vol_cs,
			  "switches");
		bench_row("rate", o->variant, o->methods, "walker_cpu_ns", (double)wsum.cpu_ns, "ns");
		bench_row("rate", o->variant, o->methods, "walker_runqueue_wait_ns",
			  (double)wsum.run_delay_ns, "ns");
		bench_row("rate", o->variant, o->methods, "walker_wall_ns", (double)wsum.wall_ns, "ns");
	}
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
