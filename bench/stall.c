/* SPDX-License-Identifier: MIT */
/*
 * Measure 1 — publish stall during rundown — and measure 4b — peak memory
 * held by deferred frees while rundowns run under churn.
 *
 * Threads:
 *  - T JIT threads churn their own ring of methods: unpublish the oldest,
 *    publish a new one, timing each call. They record into the "idle"
 *    histograms first (no rundown: the noise floor of this machine), then
 *    into the "rundown" ones while the driver runs passes;
 *  - the driver (main thread) runs rundowns back to back with
 *    letw_capture_state(RUNDOWN_START | JIT_RUNDOWN, wait=1);
 *  - a sampler reads letw_get_stats().deferred_frees_pending every 1 ms.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "session.h"

#define RING 1024u

enum phase { PHASE_WARMUP = 0, PHASE_IDLE = 1, PHASE_RUNDOWN = 2, PHASE_DONE = 3 };

static int phase;

struct jit {
	pthread_t th;
	unsigned id;
	unsigned pause_ns;
	int failed;
	struct bench_hist pub[3], unpub[3]; /* by phase; [0] unused */
	/* Scheduler accounting over the rundown phase, read by the thread
	 * itself: time on CPU, time runnable but waiting for a CPU. The rest
	 * of the wall time the thread was asleep (blocked on a futex, ...). */
	uint64_t sched_start[3], sched_end[3]; /* wall, cpu, run_delay */
};

/* /proc/thread-self/schedstat: "cpu_ns run_delay_ns timeslices". */
static void read_sched(uint64_t out[3])
{
	unsigned long long cpu = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	out[0] = bench_now_ns();
	if (f) {
		if (fscanf(f, "%llu %llu", &cpu, &delay) != 2)
			cpu = delay = 0;
		fclose(f);
	}
	out[1] = cpu;
	out[2] = delay;
}

static int churn_publish(struct jit *j, unsigned long k)
{
	char ns[BENCH_NAME_MAX], name[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];
	struct letw_method m = {
		.method_id = 0x10000000ul * (j->id + 1) + k,
		.code_start = bench_code_start(BENCH_CHURN_BASE(j->id), k % (2 * RING)),
		.code_size = bench_code_size(k),
		.method_flags = LETW_METHOD_JITTED | LETW_METHOD_TIER(LETW_TIER_OPTIMIZED_TIER1),
		.version_id = 2,
		.method_namespace = ns,
		.name = name,
		.signature = sig,
	};
	int ph = uatomic_read(&phase);
	uint64_t t0, t1;
	int ret;

	bench_method_strings(k, ns, name, sig);
	t0 = bench_now_ns();
	ret = letw_method_publish(&m);
	t1 = bench_now_ns();
	if (ph == PHASE_IDLE || ph == PHASE_RUNDOWN)
		bench_hist_add(&j->pub[ph], t1 - t0);
	return ret;
}

static int churn_unpublish(struct jit *j, unsigned long k)
{
	int ph = uatomic_read(&phase);
	uint64_t t0, t1;
	int ret;

	t0 = bench_now_ns();
	ret = letw_method_unpublish(bench_code_start(BENCH_CHURN_BASE(j->id),
						     k % (2 * RING)));
	t1 = bench_now_ns();
	if (ph == PHASE_IDLE || ph == PHASE_RUNDOWN)
		bench_hist_add(&j->unpub[ph], t1 - t0);
	return ret;
}

/* Method k lives in slot k % 2R; it is unpublished at step k + R, before
 * method k + 2R reuses its slot, so ranges never overlap. */
static void *jit_main(void *arg)
{
	struct jit *j = arg;
	unsigned long k;

	for (k = 0; k < RING; k++)
		if (churn_publish(j, k))
			goto fail;
	for (k = 0;; k++) {
		int ph = uatomic_read(&phase);

		if (ph == PHASE_RUNDOWN && !j->sched_start[0])
			read_sched(j->sched_start);
		if (ph == PHASE_DONE) {
			read_sched(j->sched_end);
			break;
		}
		if (churn_unpublish(j, k) || churn_publish(j, k + RING))
			goto fail;
		if (j->pause_ns)
			bench_sleep_ns(j->pause_ns);
	}
	return NULL;
fail:
	j->failed = 1;
	return NULL;
}

static uint64_t peak_pending;

static void *sampler_main(void *arg)
{
	(void)arg;
	while (uatomic_read(&phase) != PHASE_DONE) {
		struct letw_stats st;

		if (uatomic_read(&phase) == PHASE_RUNDOWN && !letw_get_stats(&st) &&
		    st.deferred_frees_pending > peak_pending)
			peak_pending = st.deferred_frees_pending;
		bench_sleep_ns(1000000);
	}
	return NULL;
}

static void report_hist(const struct bench_opts *o, const char *what,
			const char *suffix, const struct bench_hist *h)
{
	char metric[64];

	snprintf(metric, sizeof(metric), "%s_max_ns%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->max, "ns");
	snprintf(metric, sizeof(metric), "%s_p999_ns%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric,
		  (double)bench_hist_quantile(h, 0.999), "ns");
	snprintf(metric, sizeof(metric), "%s_p99_ns%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric,
		  (double)bench_hist_quantile(h, 0.99), "ns");
	snprintf(metric, sizeof(metric), "%s_p50_ns%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric,
		  (double)bench_hist_quantile(h, 0.5), "ns");
	snprintf(metric, sizeof(metric), "%s_count%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->count, "ops");
	snprintf(metric, sizeof(metric), "%s_over_1ms%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->stalls, "ops");
	snprintf(metric, sizeof(metric), "%s_over_1ms_ns%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->stall_ns, "ns");
}

static const char *const rundown_events[] = { "letw_rundown:*", NULL };

int bench_stall(const struct bench_opts *o)
{
	struct bench_session s = { 0 };
	struct jit *jits;
	pthread_t sampler;
	struct letw_stats st0, st1;
	struct bench_hist pub[3], unpub[3];
	uint64_t t_end, pass_max = 0, pass_sum = 0, discarded = 0, lost = 0;
	uint64_t rd_start, rd_ns, sched_wall = 0, sched_cpu = 0, sched_wait = 0;
	unsigned passes = 0;
	char chan[160];
	int ret = -1;

	if (bench_letw_init())
		return -1;
	if (bench_fill(o, "stall"))
		goto out_letw;
	if (bench_session_create(&s, o, "stall", rundown_events))
		goto out_session;
	if (bench_session_start(&s, NULL, NULL))
		goto out_session;
	/* The start itself runs one DCStart pass: let it finish first. */
	if (bench_wait_passes(1, 120000)) {
		fprintf(stderr, "bench: no rundown after lttng start\n");
		goto out_session;
	}

	jits = calloc(o->threads, sizeof(*jits));
	if (!jits)
		goto out_session;
	uatomic_set(&phase, PHASE_WARMUP);
	for (unsigned i = 0; i < o->threads; i++) {
		jits[i].id = i;
		jits[i].pause_ns = o->pause_ns;
		pthread_create(&jits[i].th, NULL, jit_main, &jits[i]);
	}
	pthread_create(&sampler, NULL, sampler_main, NULL);

	/* Idle phase: churn, no rundown — this machine's own noise floor. */
	bench_sleep_ns(200000000);
	uatomic_set(&phase, PHASE_IDLE);
	bench_sleep_ns((uint64_t)(o->seconds * 0.3e9));

	uatomic_set(&phase, PHASE_RUNDOWN);
	letw_get_stats(&st0);
	rd_start = bench_now_ns();
	t_end = rd_start + (uint64_t)(o->seconds * 1e9);
	/* At least two passes, so every size sees a pass start while JIT
	 * threads are mid-churn. */
	while (bench_now_ns() < t_end || passes < 2) {
		uint64_t t0 = bench_now_ns(), d;
		int r = letw_capture_state(LETW_KW_RUNDOWN_START | LETW_KW_JIT_RUNDOWN, 1);

		d = bench_now_ns() - t0;
		if (r <= 0) {
			fprintf(stderr, "bench: capture_state ran no pass (%d)\n", r);
			break;
		}
		passes++;
		pass_sum += d;
		if (d > pass_max)
			pass_max = d;
	}
	rd_ns = bench_now_ns() - rd_start;
	letw_get_stats(&st1);
	uatomic_set(&phase, PHASE_DONE);
	for (unsigned i = 0; i < o->threads; i++)
		pthread_join(jits[i].th, NULL);
	pthread_join(sampler, NULL);

	if (bench_session_stop(&s) == 0)
		bench_session_discarded(&s, &discarded, &lost);

	memset(pub, 0, sizeof(pub));
	memset(unpub, 0, sizeof(unpub));
	ret = 0;
	for (unsigned i = 0; i < o->threads; i++) {
		uint64_t wall = jits[i].sched_end[0] - jits[i].sched_start[0];
		uint64_t cpu = jits[i].sched_end[1] - jits[i].sched_start[1];
		uint64_t wait = jits[i].sched_end[2] - jits[i].sched_start[2];

		if (jits[i].sched_start[0] && wall) {
			sched_wall += wall;
			sched_cpu += cpu;
			sched_wait += wait;
		}
		for (int ph = PHASE_IDLE; ph <= PHASE_RUNDOWN; ph++) {
			bench_hist_merge(&pub[ph], &jits[i].pub[ph]);
			bench_hist_merge(&unpub[ph], &jits[i].unpub[ph]);
		}
		if (jits[i].failed) {
			fprintf(stderr, "bench: JIT thread %u failed\n", i);
			ret = -1;
		}
	}
	free(jits);

	bench_channel_desc(o, chan, sizeof(chan));
	bench_note("stall %s N=%lu: %u JIT threads, pause %u ns, %u passes in %.2f s; channel: %s",
		   o->variant, o->methods, o->threads, o->pause_ns, passes,
		   (double)rd_ns / 1e9, chan);
	report_hist(o, "publish", "", &pub[PHASE_RUNDOWN]);
	report_hist(o, "unpublish", "", &unpub[PHASE_RUNDOWN]);
	report_hist(o, "publish", "_idle", &pub[PHASE_IDLE]);
	bench_row("stall", o->variant, o->methods, "passes", passes, "passes");
	bench_row("stall", o->variant, o->methods, "rundown_phase_ns", (double)rd_ns, "ns");
	/* JIT threads' wall time in the rundown phase, split by the kernel's
	 * accounting: running, runnable but waiting for a CPU (preempted:
	 * CPU contention), and the rest, asleep (blocked on a lock). */
	bench_row("stall", o->variant, o->methods, "jit_wall_ns", (double)sched_wall, "ns");
	bench_row("stall", o->variant, o->methods, "jit_cpu_ns", (double)sched_cpu, "ns");
	bench_row("stall", o->variant, o->methods, "jit_runqueue_wait_ns", (double)sched_wait, "ns");
	bench_row("stall", o->variant, o->methods, "pass_max_ns", (double)pass_max, "ns");
	bench_row("stall", o->variant, o->methods, "pass_mean_ns",
		  passes ? (double)pass_sum / passes : 0, "ns");
	bench_row("stall", o->variant, o->methods, "emitted",
		  (double)(st1.rundown_emitted - st0.rundown_emitted), "records");
	bench_row("stall", o->variant, o->methods, "skipped_raced",
		  (double)(st1.rundown_skipped_raced - st0.rundown_skipped_raced),
		  "records");
	bench_row("stall", o->variant, o->methods, "deferred_frees_peak",
		  (double)peak_pending, "records");
	bench_row("stall", o->variant, o->methods, "discarded_events",
		  (double)discarded, "events");
	bench_row("stall", o->variant, o->methods, "lost_packets", (double)lost,
		  "packets");
	if (bench_report_control(o, "stall", 1, 0) && !ret)
		ret = BENCH_PERTURBED;
out_session:
	bench_session_destroy(&s, o->keep_trace);
out_letw:
	letw_shutdown();
	return ret;
}
