/* SPDX-License-Identifier: MIT */
/*
 * Measure 1 — what rundowns do to the runtime's JIT threads — and the
 * memory the store holds while they run under churn.
 *
 * Threads:
 *  - T JIT threads churn their own ring of methods: unpublish the oldest,
 *    publish a new one, timing each call into the histogram of the current
 *    phase. They make no system call of their own: everything the kernel
 *    accounts for them is read by the main thread;
 *  - the driver (main thread) alternates windows: a rundown window runs
 *    letw_capture_state(RUNDOWN_START | JIT_RUNDOWN, wait=1) back to back
 *    for about --seconds / 3 (at least one pass), then an idle window of
 *    the same length lets the same churn run with no pass — the machine's
 *    own noise floor, measured interleaved with the rundowns so both see
 *    the same load from other users of the machine. At each window
 *    boundary it reads every JIT thread's /proc/self/task/TID/{status,stat,
 *    schedstat}: voluntary context switches (the thread slept: a lock, a
 *    blocking call), involuntary ones (preempted), page faults, CPU time
 *    and run-queue wait;
 *  - a sampler reads letw_get_store_stats() and the process's RSS every
 *    1 ms and keeps the peaks of each kind of window.
 *
 * Session layouts (--config), so that what the library does and what the
 * session's channel configuration does are told apart:
 *  - rundown-only: letw_rundown:*dcstart* in one blocking channel, runtime events
 *    not recorded: the JIT threads emit nothing, the library alone;
 *  - split: letw_rundown:*dcstart* in a blocking channel, letw_runtime:*load in a
 *    discard channel of its own: the JIT threads' load/unload events never
 *    wait for the walker's flood (they may be discarded: counted);
 *  - shared: both in one blocking channel: the JIT threads' own events
 *    wait in lttng-ust when the walker fills the channel — a property of
 *    that session configuration, not of the library.
 *
 * --perf-out FILE runs `perf record -e sched:sched_switch -e page-faults` with call
 * graphs on the JIT threads and the library's control thread (the walker)
 * for the whole churn and writes FILE.windows (each window's
 * CLOCK_MONOTONIC span, each JIT thread's slowest publish and the read-side
 * sections over 1 ms; perf runs with -k mono), so bench/ctxsw.py can
 * attribute every switch to a window and a call chain, and tell whether
 * the slowest publishes and the long sections had their thread preempted.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "perfrec.h"
#include "session.h"
#include "taskstat.h"

#define RING 1024u
#define MAX_WINDOWS 256u

enum phase { PHASE_WARMUP = 0, PHASE_IDLE = 1, PHASE_RUNDOWN = 2, PHASE_DONE = 3 };

static int phase;

struct jit {
	pthread_t th;
	unsigned id;
	unsigned pause_ns;
	pid_t tid;            /* set by the thread before its first publish */
	int failed;
	struct bench_hist pub[3], unpub[3]; /* by phase; [0] unused */
	uint64_t pub_max_at[3]; /* start of the slowest publish, by phase */
	/* Kernel accounting, per kind of window (read by the main thread). */
	struct bench_task mark, sum[3];
};

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
	if (ph == PHASE_IDLE || ph == PHASE_RUNDOWN) {
		if (t1 - t0 > j->pub[ph].max)
			j->pub_max_at[ph] = t0;
		bench_hist_add(&j->pub[ph], t1 - t0);
	}
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

	uatomic_set(&j->tid, bench_gettid());
	for (k = 0; k < RING; k++)
		if (churn_publish(j, k))
			goto fail;
	for (k = 0; uatomic_read(&phase) != PHASE_DONE; k++) {
		if (churn_unpublish(j, k) || churn_publish(j, k + RING))
			goto fail;
		if (j->pause_ns)
			bench_sleep_ns(j->pause_ns);
	}
	return NULL;
fail:
	uatomic_set(&j->failed, 1);
	return NULL;
}

/* Peaks per kind of window, from the sampler. */
struct peaks {
	uint64_t in_use, rss, pending;
};
static struct peaks peak[3];

static void *sampler_main(void *arg)
{
	(void)arg;
	for (int ph; (ph = uatomic_read(&phase)) != PHASE_DONE; bench_sleep_ns(1000000)) {
		struct letw_store_stats st = { .size = sizeof(st) };
		uint64_t rss;

		if (ph != PHASE_IDLE && ph != PHASE_RUNDOWN)
			continue;
		if (letw_get_store_stats(&st))
			continue;
		rss = bench_rss_bytes();
		if (st.bytes_in_use > peak[ph].in_use)
			peak[ph].in_use = st.bytes_in_use;
		if (st.pending_free > peak[ph].pending)
			peak[ph].pending = st.pending_free;
		if (rss > peak[ph].rss)
			peak[ph].rss = rss;
	}
	return NULL;
}

/* Close the current window of every JIT thread: its kernel accounting
 * since the last mark goes to the window's kind. */
static void mark_jits(struct jit *jits, unsigned n, int closing)
{
	for (unsigned i = 0; i < n; i++) {
		struct bench_task now, d;

		bench_task_read(jits[i].tid, &now);
		if (closing) {
			bench_task_delta(&jits[i].mark, &now, &d);
			bench_task_add(&jits[i].sum[closing], &d);
		}
		jits[i].mark = now;
	}
}

static void report_hist(const struct bench_opts *o, const char *what,
			const char *suffix, const struct bench_hist *h)
{
	static const struct {
		const char *name;
		double q;
	} qs[] = { { "p999", 0.999 }, { "p99", 0.99 }, { "p50", 0.5 } };
	char metric[64];

	snprintf(metric, sizeof(metric), "%s_max_ns%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->max, "ns");
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		snprintf(metric, sizeof(metric), "%s_%s_ns%s", what, qs[i].name, suffix);
		bench_row("stall", o->variant, o->methods, metric,
			  (double)bench_hist_quantile(h, qs[i].q), "ns");
	}
	snprintf(metric, sizeof(metric), "%s_count%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->count, "ops");
	snprintf(metric, sizeof(metric), "%s_over_1ms%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->stalls, "ops");
	snprintf(metric, sizeof(metric), "%s_over_1ms_ns%s", what, suffix);
	bench_row("stall", o->variant, o->methods, metric, (double)h->stall_ns, "ns");
}

static void report_task(const struct bench_opts *o, const char *suffix,
			const struct bench_task *t)
{
	char metric[64];
	const struct {
		const char *name, *unit;
		uint64_t v;
	} f[] = {
		{ "jit_vol_cs", "switches", t->vol_cs },
		{ "jit_invol_cs", "switches", t->invol_cs },
		{ "jit_minflt", "faults", t->minflt },
		{ "jit_majflt", "faults", t->majflt },
		{ "jit_wall_ns", "ns", t->wall_ns },
		{ "jit_cpu_ns", "ns", t->cpu_ns },
		{ "jit_runqueue_wait_ns", "ns", t->run_delay_ns },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(metric, sizeof(metric), "%s%s", f[i].name, suffix);
		bench_row("stall", o->variant, o->methods, metric, (double)f[i].v, f[i].unit);
	}
}

static void report_peaks(const struct bench_opts *o, const char *suffix,
			 const struct peaks *p)
{
	char m[64];

	snprintf(m, sizeof(m), "bytes_in_use_peak%s", suffix);
	bench_row("stall", o->variant, o->methods, m, (double)p->in_use, "bytes");
	snprintf(m, sizeof(m), "rss_peak%s", suffix);
	bench_row("stall", o->variant, o->methods, m, (double)p->rss, "bytes");
	snprintf(m, sizeof(m), "pending_free_peak%s", suffix);
	bench_row("stall", o->variant, o->methods, m, (double)p->pending, "items");
}

static const char *const rundown_events[] = { BENCH_RUNDOWN_EVENTS, NULL };
static const char *const runtime_events[] = { BENCH_RUNTIME_EVENTS, NULL };
static const char *const all_events[] = { BENCH_RUNDOWN_EVENTS, BENCH_RUNTIME_EVENTS, NULL };

/* The session layout of --config; returns the number of channels, 0 for
 * an unknown name. *runtime: whether runtime events are recorded. */
static unsigned layout(const struct bench_opts *o, struct bench_channel ch[2], int *runtime)
{
	struct bench_channel base = {
		.subbuf = o->subbuf, .num_subbuf = o->num_subbuf, .blocking = o->blocking,
	};

	ch[0] = ch[1] = base;
	*runtime = 1;
	if (!strcmp(o->config, "rundown-only")) {
		*runtime = 0;
		ch[0].name = "bench";
		ch[0].events = rundown_events;
		return 1;
	}
	if (!strcmp(o->config, "shared")) {
		ch[0].name = "bench";
		ch[0].events = all_events;
		return 1;
	}
	if (!strcmp(o->config, "split")) {
		ch[0].name = "rundown";
		ch[0].events = rundown_events;
		ch[1].name = "runtime";
		ch[1].blocking = 0;
		ch[1].events = runtime_events;
		return 2;
	}
	return 0;
}

/* The threads perf records: the JIT threads and the walker. */
static pid_t perf_start(const char *out, const struct jit *jits, unsigned n, pid_t walker)
{
	pid_t tids[BENCH_PERF_MAX_TIDS];
	unsigned k = 0;

	for (unsigned i = 0; i < n && k < BENCH_PERF_MAX_TIDS - 1; i++)
		tids[k++] = jits[i].tid;
	if (walker > 0)
		tids[k++] = walker;
	return bench_perf_start(out, tids, k);
}

struct window {
	uint64_t t0, t1;
	int kind;
};

/* Read-side sections over 1 ms (the target), to be matched with the
 * walker's scheduler events: one per pass at most (its longest). */
#define MAX_LONG_SECTIONS 4096u
struct span {
	uint64_t t0, t1;
};

/*
 * FILE.windows, read by ctxsw.py: the JIT threads ("tid"), the walker,
 * each window's span, each JIT thread's slowest publish per kind of
 * window ("pubmax KIND T0 T1 TID") and the sections over 1 ms.
 */
static void write_windows(const char *out, const struct window *w, unsigned n,
			  const struct jit *jits, unsigned nj, pid_t walker,
			  const struct span *longs, unsigned nlong)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s.windows", out);
	if (!(f = fopen(path, "w")))
		return;
	for (unsigned i = 0; i < nj; i++)
		fprintf(f, "tid %d\n", (int)jits[i].tid);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s %llu %llu\n", w[i].kind == PHASE_RUNDOWN ? "rundown" : "idle",
			(unsigned long long)w[i].t0, (unsigned long long)w[i].t1);
	if (walker > 0)
		fprintf(f, "walker %d\n", (int)walker);
	for (unsigned i = 0; i < nj; i++)
		for (int ph = PHASE_IDLE; ph <= PHASE_RUNDOWN; ph++)
			if (jits[i].pub[ph].count)
				fprintf(f, "pubmax %s %llu %llu %d\n",
					ph == PHASE_RUNDOWN ? "rundown" : "idle",
					(unsigned long long)jits[i].pub_max_at[ph],
					(unsigned long long)(jits[i].pub_max_at[ph] + jits[i].pub[ph].max),
					(int)jits[i].tid);
	for (unsigned i = 0; i < nlong; i++)
		fprintf(f, "section %llu %llu\n", (unsigned long long)longs[i].t0,
			(unsigned long long)longs[i].t1);
	fclose(f);
}

static void store_stats(struct letw_store_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	letw_get_store_stats(st);
}

int bench_stall(const struct bench_opts *o)
{
	struct bench_session s = { 0 };
	struct bench_channel ch[2];
	struct jit *jits = NULL;
	pthread_t sampler;
	struct letw_stats st0, st1, sti0, sti1;
	struct letw_store_stats ss_fill, ss0, ss1, ssp;
	struct bench_hist pub[3], unpub[3];
	struct bench_task task[3];
	static struct window win[MAX_WINDOWS];
	static struct span longs[MAX_LONG_SECTIONS];
	unsigned nlong = 0;
	pid_t walker = -1;
	uint64_t pass_max = 0, pass_sum = 0, section_max = 0, rss_fill;
	uint64_t discarded = 0, lost = 0, rt_discarded = 0, rt_lost = 0;
	uint64_t rd_ns = 0, idle_ns = 0, window_ns = (uint64_t)(o->seconds / 3 * 1e9);
	unsigned passes = 0, sections_over = 0, nwin = 0, nch;
	uint64_t idle_passes = 0;
	int runtime, threads_started = 0, capture_failed = 0, ret = -1;
	pid_t perf = -1;
	char chan[2][160];

	if (!(nch = layout(o, ch, &runtime))) {
		fprintf(stderr, "bench: unknown --config '%s'\n", o->config);
		return -1;
	}
	if (bench_letw_init())
		return -1;
	(void)bench_rss_bytes(); /* opens its file before the threads run */
	if (bench_fill(o, "stall"))
		goto out_letw;
	store_stats(&ss_fill);
	rss_fill = bench_rss_bytes();
	if (bench_session_create_channels(&s, o, "stall", ch, nch))
		goto out_session;
	if (bench_session_start(&s, NULL, NULL))
		goto out_session;
	/* The start itself runs one DCStart pass: let it finish first. */
	if (bench_wait_passes(1, 120000)) {
		fprintf(stderr, "bench: no rundown after lttng start\n");
		goto out_session;
	}

	/* Populated here, not by page faults on the JIT threads' first
	 * histogram entries (malloc + memset would become a lazy calloc). */
	jits = mmap(NULL, o->threads * sizeof(*jits), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (jits == MAP_FAILED) {
		jits = NULL;
		goto out_session;
	}
	memset(peak, 0, sizeof(peak));
	uatomic_set(&phase, PHASE_WARMUP);
	for (unsigned i = 0; i < o->threads; i++) {
		jits[i].id = i;
		jits[i].pause_ns = o->pause_ns;
		pthread_create(&jits[i].th, NULL, jit_main, &jits[i]);
		threads_started++;
	}
	for (unsigned i = 0; i < o->threads; i++)
		while (!uatomic_read(&jits[i].tid))
			bench_sleep_ns(1000000);
	pthread_create(&sampler, NULL, sampler_main, NULL);
	/* The control thread runs the passes; liburcu's call_rcu worker is
	 * named letw-reclaim (control.c), so the name is the walker's alone
	 * (rate.c reads the walker the same way). */
	if (o->perf_out && (walker = bench_find_thread("letw-control")) <= 0)
		bench_note("stall %s N=%lu: no letw-control thread found: its switches are not recorded",
			   o->variant, o->methods);
	if (o->perf_out && (perf = perf_start(o->perf_out, jits, o->threads, walker)) < 0)
		goto out_threads;
	bench_sleep_ns(200000000); /* warm-up: rings filled, urcu-bp registered */

	letw_get_stats(&st0);
	store_stats(&ss0);
	mark_jits(jits, o->threads, 0);
	/* Rundown window, then an idle window as long; at least two passes,
	 * so every size sees a pass start while JIT threads are mid-churn. */
	while ((rd_ns < (uint64_t)(o->seconds * 1e9) || passes < 2) && nwin + 2 <= MAX_WINDOWS) {
		uint64_t t0, t1;

		uatomic_set(&phase, PHASE_RUNDOWN);
		t0 = bench_now_ns();
		do {
			uint64_t p0 = bench_now_ns(), d;
			int r = letw_capture_state(LETW_KW_RUNDOWN_START | LETW_KW_JIT_RUNDOWN, 1);

			d = bench_now_ns() - p0;
			if (r <= 0) {
				fprintf(stderr, "bench: capture_state ran no pass (%d)\n", r);
				capture_failed = 1;
				goto stop;
			}
			passes++;
			pass_sum += d;
			if (d > pass_max)
				pass_max = d;
			store_stats(&ssp);
			if (ssp.last_pass_max_section_ns > section_max)
				section_max = ssp.last_pass_max_section_ns;
			if (ssp.last_pass_max_section_ns > 1000000) {
				sections_over++;
				if (nlong < MAX_LONG_SECTIONS)
					longs[nlong++] = (struct span){
						ssp.last_pass_max_section_start_ns,
						ssp.last_pass_max_section_start_ns +
							ssp.last_pass_max_section_ns };
			}
		} while (bench_now_ns() - t0 < window_ns);
		uatomic_set(&phase, PHASE_IDLE);
		t1 = bench_now_ns();
		mark_jits(jits, o->threads, PHASE_RUNDOWN);
		win[nwin++] = (struct window){ t0, t1, PHASE_RUNDOWN };
		rd_ns += t1 - t0;

		letw_get_stats(&sti0);
		bench_sleep_ns(t1 - t0);
		mark_jits(jits, o->threads, PHASE_IDLE);
		/* Nothing of ours runs a pass now: any pass here (another
		 * session's start, say) contaminates the baseline. */
		letw_get_stats(&sti1);
		idle_passes += sti1.passes - sti0.passes;
		win[nwin] = (struct window){ t1, bench_now_ns(), PHASE_IDLE };
		idle_ns += win[nwin].t1 - win[nwin].t0;
		nwin++;
	}
stop:
	letw_get_stats(&st1);
	store_stats(&ss1);
	ret = capture_failed ? -1 : 0;
out_threads:
	uatomic_set(&phase, PHASE_DONE);
	for (int i = 0; i < threads_started; i++)
		pthread_join(jits[i].th, NULL);
	if (threads_started)
		pthread_join(sampler, NULL);
	if (perf > 0) {
		if (bench_perf_stop(perf, o->perf_out))
			bench_note("stall %s N=%lu: perf record failed, see %s.log", o->variant,
				   o->methods, o->perf_out);
		write_windows(o->perf_out, win, nwin, jits, o->threads, walker, longs, nlong);
	}
	if (ret)
		goto out_session;

	if (bench_session_stop(&s) == 0) {
		bench_session_channel_discarded(&s, ch[0].name, &discarded, &lost);
		if (nch > 1)
			bench_session_channel_discarded(&s, ch[1].name, &rt_discarded, &rt_lost);
	}

	memset(pub, 0, sizeof(pub));
	memset(unpub, 0, sizeof(unpub));
	memset(task, 0, sizeof(task));
	for (unsigned i = 0; i < o->threads; i++) {
		for (int ph = PHASE_IDLE; ph <= PHASE_RUNDOWN; ph++) {
			bench_hist_merge(&pub[ph], &jits[i].pub[ph]);
			bench_hist_merge(&unpub[ph], &jits[i].unpub[ph]);
			bench_task_add(&task[ph], &jits[i].sum[ph]);
		}
		if (jits[i].failed) {
			fprintf(stderr, "bench: JIT thread %u failed\n", i);
			ret = -1;
		}
	}

	bench_channel_desc_of(&ch[0], chan[0], sizeof(chan[0]));
	if (nch > 1)
		bench_channel_desc_of(&ch[1], chan[1], sizeof(chan[1]));
	bench_note("stall %s N=%lu config %s: %u JIT threads, pause %u ns, %u passes in %u rundown "
		   "windows (%.2f s), as long idle (%.2f s); %s: %s%s%s%s",
		   o->variant, o->methods, o->config, o->threads, o->pause_ns, passes, nwin / 2,
		   (double)rd_ns / 1e9, (double)idle_ns / 1e9,
		   runtime ? BENCH_RUNDOWN_EVENTS " + " BENCH_RUNTIME_EVENTS : BENCH_RUNDOWN_EVENTS " only",
		   nch > 1 ? "rundown channel " : "channel ", chan[0],
		   nch > 1 ? "; runtime channel " : "", nch > 1 ? chan[1] : "");
	report_hist(o, "publish", "", &pub[PHASE_RUNDOWN]);
	report_hist(o, "unpublish", "", &unpub[PHASE_RUNDOWN]);
	report_hist(o, "publish", "_idle", &pub[PHASE_IDLE]);
	report_hist(o, "unpublish", "_idle", &unpub[PHASE_IDLE]);
	/* The JIT threads' time by the kernel's accounting, per kind of
	 * window: voluntary switches are sleeps (a lock, a blocking call),
	 * involuntary ones preemption. */
	report_task(o, "", &task[PHASE_RUNDOWN]);
	report_task(o, "_idle", &task[PHASE_IDLE]);
	bench_row("stall", o->variant, o->methods, "passes", passes, "passes");
	bench_row("stall", o->variant, o->methods, "windows", nwin / 2, "windows");
	bench_row("stall", o->variant, o->methods, "passes_idle", (double)idle_passes, "passes");
	bench_row("stall", o->variant, o->methods, "rundown_phase_ns", (double)rd_ns, "ns");
	bench_row("stall", o->variant, o->methods, "idle_phase_ns", (double)idle_ns, "ns");
	bench_row("stall", o->variant, o->methods, "pass_max_ns", (double)pass_max, "ns");
	bench_row("stall", o->variant, o->methods, "pass_mean_ns",
		  passes ? (double)pass_sum / passes : 0, "ns");
	/* letw_get_store_stats: the longest read-side section of each pass
	 * (max over the passes of this window set), and of any pass of the
	 * process (the start's pass included). */
	bench_row("stall", o->variant, o->methods, "section_max_ns", (double)section_max, "ns");
	bench_row("stall", o->variant, o->methods, "section_max_any_pass_ns",
		  (double)ss1.max_section_ns, "ns");
	bench_row("stall", o->variant, o->methods, "passes_section_over_1ms",
		  sections_over, "passes");
	bench_row("stall", o->variant, o->methods, "emitted",
		  (double)(st1.rundown_emitted - st0.rundown_emitted), "records");
	bench_row("stall", o->variant, o->methods, "skipped_raced",
		  (double)(st1.rundown_skipped_raced - st0.rundown_skipped_raced),
		  "records");
	/* Memory: after the fill (no churn yet) and the peaks of each kind of
	 * window, from letw_store_stats.bytes_in_use and VmRSS. */
	bench_row("stall", o->variant, o->methods, "bytes_in_use_filled",
		  (double)ss_fill.bytes_in_use, "bytes");
	bench_row("stall", o->variant, o->methods, "bytes_committed_filled",
		  (double)ss_fill.bytes_committed, "bytes");
	bench_row("stall", o->variant, o->methods, "rss_filled", (double)rss_fill, "bytes");
	report_peaks(o, "", &peak[PHASE_RUNDOWN]);
	report_peaks(o, "_idle", &peak[PHASE_IDLE]);
	bench_row("stall", o->variant, o->methods, "bytes_committed_end",
		  (double)ss1.bytes_committed, "bytes");
	/* The store's slow path: publishers that had to commit memory. */
	bench_row("stall", o->variant, o->methods, "slow_grows_fill",
		  (double)ss_fill.slow_grows, "grows");
	bench_row("stall", o->variant, o->methods, "slow_grows_churn",
		  (double)(ss1.slow_grows - ss0.slow_grows), "grows");
	bench_row("stall", o->variant, o->methods, "discarded_events",
		  (double)discarded, "events");
	bench_row("stall", o->variant, o->methods, "lost_packets", (double)lost,
		  "packets");
	if (nch > 1)
		bench_row("stall", o->variant, o->methods, "runtime_discarded_events",
			  (double)rt_discarded, "events");
	if (bench_report_control(o, "stall", 1, (unsigned)runtime) && !ret)
		ret = BENCH_PERTURBED;
out_session:
	if (ret && threads_started == 0)
		uatomic_set(&phase, PHASE_DONE);
	bench_session_destroy(&s, o->keep_trace);
	if (jits)
		munmap(jits, o->threads * sizeof(*jits));
out_letw:
	letw_shutdown();
	return ret;
}
