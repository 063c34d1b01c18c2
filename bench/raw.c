/* SPDX-License-Identifier: MIT */
/*
 * letw-bench-raw — the limit for measure 2: a loop firing
 * letw_rundown:method_dcstart with the same payloads the library's walker
 * emits, from a flat array, with no table, no pinning and no pass
 * bookkeeping, into the same channel configuration.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "letw_rundown_tp.h"
#include "letw_fanout.h"

#include "common.h"
#include "opts.h"
#include "session.h"

#ifndef BENCH_PROBE_PATH
#error "BENCH_PROBE_PATH must name liblttng-etw-tp.so"
#endif

static const char usage[] =
	"Usage: letw-bench-raw [OPTIONS]\n"
	"Fires letw_rundown:method_dcstart --passes times over --methods payloads\n"
	"from a flat array, inside a real LTTng session it creates; prints the\n"
	"records/s (the limit the library's rundown rate is compared with).\n";

static const char *const rundown_events[] = { BENCH_RUNDOWN_EVENTS, NULL };

struct flat {
	struct letw_tp_method *m;
	char *strings;
};

static int flat_build(struct flat *f, unsigned long n)
{
	char ns[BENCH_NAME_MAX], name[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];
	size_t cap = n * 3 * BENCH_NAME_MAX, used = 0;

	f->m = calloc(n, sizeof(*f->m));
	f->strings = malloc(cap);
	if (!f->m || !f->strings)
		return -1;
	for (unsigned long i = 0; i < n; i++) {
		const char *src[3] = { ns, name, sig };
		const char *dst[3];

		bench_method_strings(i, ns, name, sig);
		for (int k = 0; k < 3; k++) {
			size_t len = strlen(src[k]) + 1;

			memcpy(f->strings + used, src[k], len);
			dst[k] = f->strings + used;
			used += len;
		}
		/* The fields the library fills from the same inputs
		 * (harness.c bench_populate). */
		f->m[i] = (struct letw_tp_method){
			.method_id = i + 1,
			.code_start = bench_code_start(0x100000000000ull, i),
			.code_size = bench_code_size(i),
			.method_token = 0x06000000u | (uint32_t)(i & 0xffffff),
			.method_flags = 0x8u | (3u << 7),
			.version_id = 1,
			.instance_id = 1,
			.method_namespace = dst[0],
			.name = dst[1],
			.signature = dst[2],
		};
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct bench_session s = { 0 };
	struct bench_opts o;
	struct flat f = { 0 };
	uint64_t deadline, discarded = 0, lost = 0;
	double *rates;
	char chan[160];
	int ret;

	ret = bench_parse_opts(argc, argv, &o, usage);
	if (ret)
		return ret > 0 ? 0 : 2;
	o.variant = "raw";
	/* Same as liblttng-etw's probe.c: the probe object registers the
	 * providers our tracepoint definitions (raw_tp.c) connect to. */
	if (!dlopen(BENCH_PROBE_PATH, RTLD_NOW | RTLD_LOCAL)) {
		fprintf(stderr, "letw-bench-raw: %s\n", dlerror());
		return 1;
	}
	rates = calloc(o.passes, sizeof(*rates));
	if (!rates || flat_build(&f, o.methods)) {
		fprintf(stderr, "letw-bench-raw: out of memory\n");
		return 1;
	}
	ret = 1;
	if (bench_session_create(&s, &o, "raw", rundown_events) ||
	    bench_session_start(&s, NULL, NULL))
		goto out;
	deadline = bench_now_ns() + 30000000000ull;
	while (!lttng_ust_tracepoint_enabled(letw_rundown, method_dcstart)) {
		if (bench_now_ns() > deadline) {
			fprintf(stderr, "letw-bench-raw: tracepoint never enabled\n");
			goto out;
		}
		bench_sleep_ns(1000000);
	}
	for (unsigned p = 0; p < o.passes; p++) {
		uint64_t t0 = bench_now_ns();

		for (unsigned long i = 0; i < o.methods; i++)
			/* Into every session, as the library's capture-state
			 * passes write (its sessionless route, letw_fanout.h). */
			LETW_TP_FANOUT(letw_rundown, method_dcstart,
				       const struct letw_tp_method *, &f.m[i]);
		rates[p] = (double)o.methods * 1e9 / (double)(bench_now_ns() - t0);
	}
	if (bench_session_stop(&s) || bench_session_discarded(&s, &discarded, &lost))
		goto out;
	bench_channel_desc(&o, chan, sizeof(chan));
	bench_note("rate raw N=%lu: %u passes; channel: %s", o.methods, o.passes, chan);
	qsort(rates, o.passes, sizeof(*rates), cmp_double);
	if (discarded == 0 && lost == 0) {
		bench_row("rate", "raw", o.methods, "records_per_s_best",
			  rates[o.passes - 1], "records/s");
		bench_row("rate", "raw", o.methods, "records_per_s_median",
			  rates[o.passes / 2], "records/s");
	} else {
		bench_note("rate raw N=%lu: %llu events discarded, rate not reported",
			   o.methods, (unsigned long long)discarded);
	}
	bench_row("rate", "raw", o.methods, "discarded_events", (double)discarded,
		  "events");
	bench_row("rate", "raw", o.methods, "lost_packets", (double)lost, "packets");
	ret = 0;
out:
	bench_session_destroy(&s, o.keep_trace);
	free(rates);
	free(f.m);
	free(f.strings);
	return ret;
}
