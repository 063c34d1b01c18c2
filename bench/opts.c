/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

static const struct option longopts[] = {
	{ "methods", required_argument, NULL, 'n' },
	{ "seconds", required_argument, NULL, 's' },
	{ "threads", required_argument, NULL, 't' },
	{ "pause-ns", required_argument, NULL, 'z' },
	{ "passes", required_argument, NULL, 'p' },
	{ "ops", required_argument, NULL, 'o' },
	{ "iterations", required_argument, NULL, 'i' },
	{ "prefix", required_argument, NULL, 'P' },
	{ "outdir", required_argument, NULL, 'O' },
	{ "subbuf-size", required_argument, NULL, 'S' },
	{ "num-subbuf", required_argument, NULL, 'N' },
	{ "blocking", no_argument, NULL, 'b' },
	{ "discard", no_argument, NULL, 'd' },
	{ "keep-trace", no_argument, NULL, 'k' },
	{ "fill-timeout", required_argument, NULL, 'F' },
	{ "config", required_argument, NULL, 'C' },
	{ "perf-out", required_argument, NULL, 'R' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char common_help[] =
	"Options:\n"
	"  -n, --methods=N       table size (default 10000)\n"
	"  -s, --seconds=S       churn phase length for stall (default 3)\n"
	"  -t, --threads=T       JIT threads for stall (default 2)\n"
	"      --pause-ns=NS     pause between a JIT thread's operations (default 0)\n"
	"  -p, --passes=P        timed rundown passes for rate/raw (default 3)\n"
	"  -o, --ops=N           timed operations for pubcost/lfht (default 50000)\n"
	"  -i, --iterations=N    start/stop cycles for latency (default 5)\n"
	"  -P, --prefix=NAME     session name prefix (default letwbench)\n"
	"  -O, --outdir=DIR      where traces are written (default /tmp)\n"
	"  -S, --subbuf-size=SZ  lttng --subbuf-size (default 4M)\n"
	"  -N, --num-subbuf=N    lttng --num-subbuf (default 8)\n"
	"  -b, --blocking        blocking channel, --blocking-timeout=inf (default);\n"
	"                        run with LTTNG_UST_ALLOW_BLOCKING=1\n"
	"  -d, --discard         discard-mode channel\n"
	"  -k, --keep-trace      keep the trace directory\n"
	"      --fill-timeout=S  give up when filling the table takes longer (default: never)\n"
	"      --config=NAME     stall session layout: rundown-only (default), split, shared\n"
	"      --perf-out=FILE   stall: record the JIT thread's context switches with perf\n"
	"                        into FILE (FILE.windows: the phases' CLOCK_MONOTONIC spans)\n"
	"  -h, --help            this help\n"
	"Output: CSV rows measure,variant,methods,metric,value,unit on stdout;\n"
	"lines starting with '#' are notes.\n";

static int parse_ul(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return -1;
	v = strtoul(s, &end, 10);
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int bench_parse_opts(int argc, char **argv, struct bench_opts *o,
		     const char *usage)
{
	unsigned long v;
	int c;

	*o = (struct bench_opts){
		.prefix = "letwbench",
		.outdir = "/tmp",
		.subbuf = "4M",
		.num_subbuf = 8,
		.blocking = 1,
		.methods = 10000,
		.passes = 3,
		.seconds = 3.0,
		.threads = 2,
		.ops = 50000,
		.iterations = 5,
		.config = "rundown-only",
	};
	while ((c = getopt_long(argc, argv, "n:s:t:p:o:i:P:O:S:N:bdkh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'n': case 't': case 'z': case 'p': case 'o': case 'i': case 'N':
			if (parse_ul(optarg, &v) || (v == 0 && c != 'z')) {
				fprintf(stderr, "%s: bad value for -%c: '%s'\n",
					argv[0], c, optarg);
				return -1;
			}
			if (c == 'n')
				o->methods = v;
			else if (c == 't')
				o->threads = (unsigned)v;
			else if (c == 'z')
				o->pause_ns = (unsigned)v;
			else if (c == 'p')
				o->passes = (unsigned)v;
			else if (c == 'o')
				o->ops = (unsigned)v;
			else if (c == 'i')
				o->iterations = (unsigned)v;
			else
				o->num_subbuf = (unsigned)v;
			break;
		case 's':
			o->seconds = strtod(optarg, NULL);
			if (o->seconds <= 0) {
				fprintf(stderr, "%s: bad value for --seconds: '%s'\n",
					argv[0], optarg);
				return -1;
			}
			break;
		case 'P': o->prefix = optarg; break;
		case 'O': o->outdir = optarg; break;
		case 'S': o->subbuf = optarg; break;
		case 'b': o->blocking = 1; break;
		case 'd': o->blocking = 0; break;
		case 'k': o->keep_trace = 1; break;
		case 'C': o->config = optarg; break;
		case 'R': o->perf_out = optarg; break;
		case 'F':
			o->fill_timeout = strtod(optarg, NULL);
			if (o->fill_timeout < 0) {
				fprintf(stderr, "%s: bad value for --fill-timeout: '%s'\n",
					argv[0], optarg);
				return -1;
			}
			break;
		case 'h':
			printf("%s%s", usage, common_help);
			return 1;
		default:
			fprintf(stderr, "Try '%s --help'.\n", argv[0]);
			return -1;
		}
	}
	if (o->threads > 64) {
		fprintf(stderr, "%s: at most 64 threads\n", argv[0]);
		return -1;
	}
	return 0;
}

int bench_command(int argc, char **argv, const char **cmd)
{
	/* getopt_long permuted the operands to the end. */
	if (optind != argc - 1)
		return -1;
	*cmd = argv[optind];
	return 0;
}
