/* SPDX-License-Identifier: MIT */
/*
 * letw-bench / letw-bench-globallock: the same harness linked against the
 * lock-free library and the global-lock baseline (BENCH_VARIANT says which).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "opts.h"

#ifndef BENCH_VARIANT
#error "BENCH_VARIANT must name the library variant this harness links"
#endif

static const char usage[] =
	"Usage: letw-bench[-globallock] COMMAND [OPTIONS]\n"
	"Benchmarks of liblttng-etw (variant " BENCH_VARIANT ") inside real LTTng\n"
	"sessions it creates and destroys itself.\n"
	"Commands:\n"
	"  stall     JIT threads' publish/unpublish latency, context switches and\n"
	"            page faults in windows of back-to-back rundowns and idle\n"
	"            windows as long; store memory and read-side sections\n"
	"  rate      rundown records/s with no churn\n"
	"  pubcost   letw_method_publish cost, tracing off and on\n"
	"  lfht      the same key inserted into a plain cds_lfht (urcu-bp)\n"
	"  memory    bytes per method from letw_get_store_stats (and heap, RSS)\n"
	"  latency   `lttng start` to dcstart_init event timestamp\n"
	"  bigrange  publishing one 4 GiB - 1 range into a table of N methods\n";

struct ctl_event {
	uint64_t ns;
	int code, provider;
	uint64_t mask;
};

#define CTL_LOG_MAX 256
static struct ctl_event ctl_log[CTL_LOG_MAX];
static unsigned ctl_n;
static unsigned ctl_enables[2];

/* On the library's control thread. */
static void on_control(int code, int level, uint64_t mask, int provider,
		       void *ctx)
{
	(void)level;
	(void)ctx;
	if (code == LETW_CONTROL_ENABLE_PROVIDER && provider >= 0 && provider <= 1)
		uatomic_inc(&ctl_enables[provider]);
	/* Our own capture requests are not worth a line. */
	if (code != LETW_CONTROL_CAPTURE_STATE && ctl_n < CTL_LOG_MAX) {
		ctl_log[ctl_n] = (struct ctl_event){ bench_now_ns(), code, provider, mask };
		uatomic_inc(&ctl_n);
	}
}

int bench_report_control(const struct bench_opts *o, const char *measure,
			 unsigned rundown_enables, unsigned runtime_enables)
{
	unsigned rd = uatomic_read(&ctl_enables[LETW_PROVIDER_RUNDOWN]);
	unsigned rt = uatomic_read(&ctl_enables[LETW_PROVIDER_RUNTIME]);

	bench_row(measure, o->variant, o->methods, "enables_seen", rd + rt, "requests");
	bench_row(measure, o->variant, o->methods, "enables_expected",
		  rundown_enables + runtime_enables, "requests");
	if (rd != rundown_enables || rt != runtime_enables) {
		bench_note("%s %s N=%lu: perturbed by another session: %u/%u rundown and "
			   "%u/%u runtime ENABLE requests seen/expected",
			   measure, o->variant, o->methods, rd, rundown_enables, rt,
			   runtime_enables);
		bench_control_log_notes(measure, ctl_log[0].ns);
		return 1;
	}
	return 0;
}

void bench_control_log_notes(const char *measure, uint64_t t0_ns)
{
	unsigned n = uatomic_read(&ctl_n);

	if (n > 24)
		n = 24; /* enough to see who enabled what */

	for (unsigned i = 0; i < n; i++)
		bench_note("%s control request: %+.3f ms (CLOCK_MONOTONIC %.3f s) code %d provider %d mask 0x%llx",
			   measure, ((double)ctl_log[i].ns - (double)t0_ns) / 1e6,
			   (double)ctl_log[i].ns / 1e9, ctl_log[i].code,
			   ctl_log[i].provider, (unsigned long long)ctl_log[i].mask);
}

int bench_letw_init(void)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.instance_id = 1,
	};
	int ret;

	/* Before init, so the very first request is seen too. */
	letw_set_control_fn(on_control, NULL);
	ret = letw_init(&cfg);
	if (ret)
		fprintf(stderr, "bench: letw_init: %s\n", strerror(-ret));
	else if (!letw_tracing_available())
		fprintf(stderr, "bench: warning: probe not loaded, nothing is traced\n");
	return ret;
}

int bench_populate(uint64_t base, unsigned long first, unsigned long n,
		   int minimal, double timeout_s)
{
	char ns[BENCH_NAME_MAX], name[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];
	uint64_t deadline = timeout_s > 0 ?
		bench_now_ns() + (uint64_t)(timeout_s * 1e9) : UINT64_MAX;

	for (unsigned long i = first; i < first + n; i++) {
		struct letw_method m = {
			.method_id = i + 1,
			.code_start = bench_code_start(base, i),
			.code_size = bench_code_size(i),
			.method_token = 0x06000000u | (uint32_t)(i & 0xffffff),
			.method_flags = LETW_METHOD_JITTED |
					LETW_METHOD_TIER(LETW_TIER_QUICK),
			.version_id = 1,
		};
		int ret;

		if (minimal) {
			m.name = "m";
		} else {
			bench_method_strings(i, ns, name, sig);
			m.method_namespace = ns;
			m.name = name;
			m.signature = sig;
		}
		ret = letw_method_publish(&m);
		if (ret) {
			fprintf(stderr, "bench: publish %lu: %s\n", i, strerror(-ret));
			return ret;
		}
		if ((i & 1023) == 0 && bench_now_ns() > deadline) {
			fprintf(stderr, "bench: filling the table took over %.0f s "
				"(%lu of %lu methods): giving up\n", timeout_s, i - first, n);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int bench_fill(const struct bench_opts *o, const char *measure)
{
	uint64_t t0 = bench_now_ns();
	int ret = bench_populate(BENCH_TABLE_BASE, 0, o->methods, 0, o->fill_timeout);

	if (!ret)
		bench_row(measure, o->variant, o->methods, "populate_ns_per_method",
			  (double)(bench_now_ns() - t0) / (double)o->methods, "ns");
	else if (ret == -ETIMEDOUT)
		bench_row(measure, o->variant, o->methods, "populate_timeout",
			  o->fill_timeout, "s");
	return ret;
}

int bench_wait_passes(uint64_t want, unsigned timeout_ms)
{
	uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct letw_stats st;

	for (;;) {
		letw_get_stats(&st);
		if (st.passes >= want)
			return 0;
		if (bench_now_ns() > deadline)
			return -ETIMEDOUT;
		bench_sleep_ns(1000000);
	}
}

uint64_t bench_clock_overhead_ns(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 10000; i++) {
		uint64_t a = bench_now_ns(), b = bench_now_ns();

		if (b - a < best)
			best = b - a;
	}
	return best;
}

static const struct {
	const char *name;
	int (*fn)(const struct bench_opts *o);
} commands[] = {
	{ "stall", bench_stall },     { "rate", bench_rate },
	{ "pubcost", bench_pubcost }, { "lfht", bench_lfht },
	{ "memory", bench_memory },   { "latency", bench_latency },
	{ "bigrange", bench_bigrange },
};

int main(int argc, char **argv)
{
	struct bench_opts o;
	const char *cmd;
	int ret;

	ret = bench_parse_opts(argc, argv, &o, usage);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (bench_command(argc, argv, &cmd)) {
		fprintf(stderr, "%s: expected one COMMAND; try --help\n", argv[0]);
		return 2;
	}
	o.variant = BENCH_VARIANT;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(cmd, commands[i].name)) {
			ret = commands[i].fn(&o);
			return ret == BENCH_PERTURBED ? 3 : ret ? 1 : 0;
		}
	}
	fprintf(stderr, "%s: unknown command '%s'; try --help\n", argv[0], cmd);
	return 2;
}
