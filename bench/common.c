/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "common.h"

void bench_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const char *const namespaces[] = {
	"System.Collections.Generic",
	"System.Text.RegularExpressions",
	"System.Runtime.CompilerServices",
	"Microsoft.Extensions.DependencyInjection",
	"System.Net.Http.Headers",
	"System.Linq.Expressions.Interpreter",
	"System.Threading.Tasks.Sources",
	"Newtonsoft.Json.Serialization",
};

static const char *const classes[] = {
	"Dictionary`2", "List`1", "RegexInterpreter", "ConditionalWeakTable`2",
	"HttpHeaders", "LightLambda", "ManualResetValueTaskSourceCore`1",
	"JsonSerializerInternalReader",
};

static const char *const method_names[] = {
	"TryInsert", "FindValue", "Resize", "AddWithResize", "GetEnumerator",
	"MoveNext", "Invoke", "SetResult", "PopulateObject", "ScanBlock",
};

static const char *const signatures[] = {
	"bool (!0,!1,uint8)", "void ()", "int32 (!0)", "class System.Object (int32)",
	"instance void (int32,bool)", "valuetype System.Span`1<uint8> ()",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

void bench_method_strings(unsigned long i, char *ns, char *name, char *sig)
{
	snprintf(ns, BENCH_NAME_MAX, "%s", namespaces[i % NELEM(namespaces)]);
	snprintf(name, BENCH_NAME_MAX, "%s::%s_%lu",
		 classes[(i / NELEM(namespaces)) % NELEM(classes)],
		 method_names[(i / 7) % NELEM(method_names)], i);
	snprintf(sig, BENCH_NAME_MAX, "%s", signatures[i % NELEM(signatures)]);
}

/* Slots are 1 KiB apart: the largest size fits, and a record spans at most
 * one page boundary, like small JIT'd methods do. */
uint64_t bench_code_start(uint64_t base, unsigned long i)
{
	return base + (uint64_t)i * 1024u;
}

uint32_t bench_code_size(unsigned long i)
{
	return 64u + (uint32_t)((i * 2654435761u) % 15u) * 64u;
}

static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < 128)
		return (unsigned)v;
	e = (unsigned)(63 - __builtin_clzll(v)) - 6; /* v >> e in [64,128) */
	return 128u + (e - 1u) * 64u + (unsigned)((v >> e) - 64u);
}

static uint64_t bucket_upper(unsigned idx)
{
	unsigned e, sub;

	if (idx < 128)
		return idx;
	e = (idx - 128u) / 64u + 1u;
	sub = (idx - 128u) % 64u + 64u;
	return (((uint64_t)sub + 1u) << e) - 1u;
}

void bench_hist_add(struct bench_hist *h, uint64_t ns)
{
	unsigned idx = bucket_of(ns);

	if (idx >= BENCH_HIST_BUCKETS)
		idx = BENCH_HIST_BUCKETS - 1;
	h->b[idx]++;
	h->count++;
	h->sum += ns;
	if (ns > BENCH_STALL_NS) {
		h->stalls++;
		h->stall_ns += ns;
	}
	if (ns > h->max)
		h->max = ns;
}

void bench_hist_merge(struct bench_hist *dst, const struct bench_hist *src)
{
	for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	dst->stalls += src->stalls;
	dst->stall_ns += src->stall_ns;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t bench_hist_quantile(const struct bench_hist *h, double q)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return 0;
	want = (uint64_t)(q * (double)h->count);
	if (want == 0)
		want = 1;
	for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t up = bucket_upper(i);

			return up < h->max ? up : h->max;
		}
	}
	return h->max;
}

void bench_row(const char *measure, const char *variant, unsigned long methods,
	       const char *metric, double value, const char *unit)
{
	printf("%s,%s,%lu,%s,%.10g,%s\n", measure, variant, methods, metric, value,
	       unit);
	fflush(stdout);
}

void bench_note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}
