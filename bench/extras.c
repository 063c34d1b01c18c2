/* SPDX-License-Identifier: MIT */
/*
 * letw-bench-extras: what the optional per-code-version events cost —
 * line tables (letw_method_publish_opts + letw_runtime:method_lines) and
 * code bytes (letw_runtime:method_code_bytes, read in place at publish:
 * the methods are vouched readable; copied with process_vm_readv on the
 * control thread in rundowns) — on publish, each case against the plain publish of
 * the same run with the same session, and on the rundown rate (DCStart
 * passes with and without the rundown twins method_lines_start /
 * method_code_bytes_start).
 *
 * Methods are CODE_SIZE bytes of real, readable memory (the code-bytes
 * event copies them) with a ROWS-row line table in two files. Each timed
 * publish goes into a table of --methods live methods (an untimed
 * unpublish of an older one keeps the size), as in pubcost.c. Prints a
 * table; nothing here gates on time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <lttng-etw/lttng-etw.h>

#include "common.h"
#include "opts.h"
#include "session.h"

#define CODE_SIZE 256u
#define ROWS 32u
#define RING 1024u

static uint8_t *code;          /* slots of CODE_SIZE bytes */
static unsigned long nslots;
static struct letw_line rows[ROWS];
static const char *const files[] = { "/src/app/module.lua", "/src/app/inlined.lua" };

static uint64_t slot_addr(unsigned long i)
{
	return (uint64_t)(uintptr_t)(code + (i % nslots) * CODE_SIZE);
}

static int publish(unsigned long i, int with_lines)
{
	char name[BENCH_NAME_MAX], ns[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];
	struct letw_method m = {
		.method_id = i + 1, .code_start = slot_addr(i), .code_size = CODE_SIZE,
		.method_flags = LETW_METHOD_JITTED, .version_id = 1,
		.method_namespace = ns, .name = name, .signature = sig,
	};
	/* Real memory: the code-bytes event at publish may read it in place. */
	struct letw_method_opts o = {
		.size = sizeof(o), .flags = LETW_METHOD_OPT_CODE_READABLE,
	};

	if (with_lines)
		o.lines = rows, o.nr_lines = ROWS, o.nr_files = 2, o.files = files;
	bench_method_strings(i, ns, name, sig);
	return letw_method_publish_opts(&m, &o);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

struct figure {
	const char *what;
	double median, p99;
};

/* ops timed publishes of methods next, next+1, ... (table kept at N). */
static int timed(const struct bench_opts *o, unsigned long *next, int with_lines,
		 uint64_t *ns, struct figure *f)
{
	unsigned long first = *next;

	for (unsigned k = 0; k < o->ops; k++) {
		unsigned long i = first + k;
		uint64_t t0;
		int ret;

		/* The oldest live method goes: the table stays at N. */
		if ((ret = letw_method_unpublish(slot_addr(i - o->methods)))) {
			fprintf(stderr, "bench: unpublish: %s\n", strerror(-ret));
			return -1;
		}
		t0 = bench_now_ns();
		ret = publish(i, with_lines);
		ns[k] = bench_now_ns() - t0;
		if (ret) {
			fprintf(stderr, "bench: publish: %s\n", strerror(-ret));
			return -1;
		}
	}
	*next = first + o->ops;
	qsort(ns, o->ops, sizeof(*ns), cmp_u64);
	f->median = (double)ns[o->ops / 2];
	f->p99 = (double)ns[(size_t)(o->ops * 0.99)];
	return 0;
}

static int with_session(const struct bench_opts *o, const char *tag,
			const char *const *events, struct bench_session *s)
{
	memset(s, 0, sizeof(*s));
	if (bench_session_create(s, o, tag, events) || bench_session_start(s, NULL, NULL))
		return -1;
	bench_sleep_ns(150000000); /* the tracepoints flip at start (DESIGN §4) */
	return 0;
}

static int end_session(struct bench_session *s, const struct bench_opts *o, int *lossy)
{
	uint64_t discarded = 0, lost = 0;
	int ret = bench_session_stop(s) || bench_session_discarded(s, &discarded, &lost);

	*lossy |= discarded || lost;
	if (discarded || lost)
		fprintf(stderr, "bench: session %s: %llu discarded, %llu packets lost\n", s->name,
			(unsigned long long)discarded, (unsigned long long)lost);
	return ret;
}

/* Events of one name in a stopped session's trace. */
static long count_events(const struct bench_session *s, const char *name)
{
	char *argv[] = { "babeltrace2", (char *)s->path, NULL };
	char *out = NULL, *p;
	long n = 0;

	if (bench_run(argv, &out) != 0 || !out) {
		free(out);
		return -1;
	}
	for (p = out; (p = strstr(p, name)); p += strlen(name))
		n++;
	free(out);
	return n;
}

static int rundown_rate(const struct bench_opts *o, const char *const *events,
			const char *tag, double *rate, long *twins, int *lossy)
{
	struct bench_session s;
	double best = 0;
	int ret = -1;

	if (with_session(o, tag, events, &s))
		goto out;
	for (unsigned p = 0; p < o->passes; p++) {
		struct letw_stats a, b;
		uint64_t t0, t1;

		letw_get_stats(&a);
		t0 = bench_now_ns();
		if (letw_capture_state(LETW_KW_RUNDOWN_START | LETW_KW_JIT_RUNDOWN |
				       LETW_KW_LINES_RUNDOWN | LETW_KW_CODE_BYTES_RUNDOWN, 1) <= 0)
			goto out;
		t1 = bench_now_ns();
		letw_get_stats(&b);
		double r = (double)(b.rundown_emitted - a.rundown_emitted) * 1e9 / (double)(t1 - t0);

		if (r > best)
			best = r;
	}
	if (end_session(&s, o, lossy))
		goto out;
	*rate = best;
	*twins = count_events(&s, "letw_rundown:method_lines_start") +
		 count_events(&s, "letw_rundown:method_code_bytes_start");
	ret = 0;
out:
	bench_session_destroy(&s, o->keep_trace);
	return ret;
}

int main(int argc, char **argv)
{
	static const char *const load[] = { "letw_runtime:method_load", NULL };
	static const char *const load_lines[] = { "letw_runtime:method_load",
						  "letw_runtime:method_lines", NULL };
	static const char *const load_code[] = { "letw_runtime:method_load",
						 "letw_runtime:method_code_bytes", NULL };
	static const char *const load_all[] = { "letw_runtime:method_load",
						"letw_runtime:method_lines",
						"letw_runtime:method_code_bytes", NULL };
	static const char *const dcstart[] = { "letw_rundown:*dcstart*", NULL };
	static const char *const dcstart_all[] = { "letw_rundown:*dcstart*",
						   "letw_rundown:method_lines_start",
						   "letw_rundown:method_code_bytes_start", NULL };
	struct bench_opts o;
	struct bench_session s = { 0 };
	struct figure f[8];
	struct letw_config cfg = { .size = sizeof(cfg), .instance_id = 1 };
	unsigned long next;
	double r_plain = 0, r_twins = 0;
	long tw_plain = 0, tw_twins = 0;
	int lossy = 0, ret, nf = 0;
	uint64_t *ns;

	ret = bench_parse_opts(argc, argv, &o,
			       "Usage: letw-bench-extras [OPTION]...\n"
			       "Cost of line-table and code-bytes events on publish and rundown.\n");
	if (ret)
		return ret > 0 ? 0 : 2;
	if (o.ops > 200000)
		o.ops = 200000;
	nslots = o.methods + RING;
	code = mmap(NULL, nslots * CODE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ns = calloc(o.ops, sizeof(*ns));
	if (code == MAP_FAILED || !ns)
		return 1;
	for (unsigned long i = 0; i < nslots * CODE_SIZE; i++)
		code[i] = (uint8_t)(i * 31 + 7);
	for (uint32_t i = 0; i < ROWS; i++)
		rows[i] = (struct letw_line){ .native_offset = i * (CODE_SIZE / ROWS),
					      .line = 10 + i, .file = i % 5 == 4,
					      .inline_depth = 0 };
	if ((ret = letw_init(&cfg))) {
		fprintf(stderr, "bench: letw_init: %s\n", strerror(-ret));
		return 1;
	}
	for (next = 0; next < o.methods; next++)
		if ((ret = publish(next, 1))) {
			fprintf(stderr, "bench: publish: %s\n", strerror(-ret));
			return 1;
		}

	ret = 1;
	f[nf].what = "no session, plain publish";
	if (timed(&o, &next, 0, ns, &f[nf++]))
		goto out;
	f[nf].what = "no session, publish with line table";
	if (timed(&o, &next, 1, ns, &f[nf++]))
		goto out;
	if (with_session(&o, "xload", load, &s))
		goto out;
	f[nf].what = "method_load on, plain publish (baseline)";
	if (timed(&o, &next, 0, ns, &f[nf++]))
		goto out;
	f[nf].what = "method_load on, publish with line table";
	if (timed(&o, &next, 1, ns, &f[nf++]) || end_session(&s, &o, &lossy))
		goto out;
	bench_session_destroy(&s, o.keep_trace);
	if (with_session(&o, "xlines", load_lines, &s))
		goto out;
	f[nf].what = "+ method_lines on, publish with line table";
	if (timed(&o, &next, 1, ns, &f[nf++]) || end_session(&s, &o, &lossy))
		goto out;
	bench_session_destroy(&s, o.keep_trace);
	if (with_session(&o, "xcode", load_code, &s))
		goto out;
	f[nf].what = "+ method_code_bytes on, plain publish";
	if (timed(&o, &next, 0, ns, &f[nf++]) || end_session(&s, &o, &lossy))
		goto out;
	bench_session_destroy(&s, o.keep_trace);
	if (with_session(&o, "xall", load_all, &s))
		goto out;
	f[nf].what = "+ both on, publish with line table";
	if (timed(&o, &next, 1, ns, &f[nf++]) || end_session(&s, &o, &lossy))
		goto out;
	bench_session_destroy(&s, o.keep_trace);

	if (rundown_rate(&o, dcstart, "xrd", &r_plain, &tw_plain, &lossy) ||
	    rundown_rate(&o, dcstart_all, "xrdall", &r_twins, &tw_twins, &lossy))
		goto out;

	printf("\n%lu live methods of %u bytes, %u-row line tables; %u timed publishes per case\n\n",
	       o.methods, CODE_SIZE, ROWS, o.ops);
	printf("| publish | median ns | p99 ns | median / baseline |\n|---|---:|---:|---:|\n");
	for (int i = 0; i < nf; i++)
		printf("| %s | %.0f | %.0f | %.2f |\n", f[i].what, f[i].median, f[i].p99,
		       f[i].median / f[2].median);
	printf("\n| DCStart rundown | records/s (best of %u) | ratio | twin events |\n"
	       "|---|---:|---:|---:|\n", o.passes);
	printf("| *dcstart* only | %.0f | 1.00 | %ld |\n", r_plain, tw_plain);
	if (tw_twins > 0)
		printf("| + method_lines_start, method_code_bytes_start | %.0f | %.2f | %ld |\n",
		       r_twins, r_twins / r_plain, tw_twins);
	else
		printf("| + method_lines_start, method_code_bytes_start | n/a: this build's walker "
		       "emits no rundown twins (%.0f records/s) | - | 0 |\n", r_twins);
	if (lossy)
		printf("\nsome session discarded events: figures of a lossy run\n");
	ret = lossy ? 3 : 0;
out:
	bench_session_destroy(&s, o.keep_trace);
	letw_shutdown();
	free(ns);
	return ret;
}
