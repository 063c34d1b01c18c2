/* SPDX-License-Identifier: MIT */
/* `perfmap` and `report`: run a trace through one of the etw sinks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "graph.h"

static void perfmap_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s perfmap TRACE -o DIR [--mode latest|all] [--allow-incomplete]\n"
		"          [--stall-timeout S] [--progress|--no-progress] [-v]\n"
		"\n"
		"Write one perf-PID.map per traced process (PID is the vpid context) into DIR,\n"
		"reconstructed from the trace alone: method/stub loads and unloads and the\n"
		"DCStart/DCEnd rundown records. Point perf at it with\n"
		"  cp DIR/perf-PID.map /tmp/ && perf report ...\n"
		"\n"
		"  -o, --output DIR   directory to write the maps into (created if missing);\n"
		"                     a rotated session's chunks get DIR/<chunk>/ each\n"
		"  -m, --mode MODE    address ranges that held different code over time:\n"
		"                     latest (default) writes the most recent code there,\n"
		"                     all writes every region (a summary goes to stderr)\n"
		"      --allow-incomplete  exit 0 even when the trace was not read whole\n"
		"                     (streams missing, cut short, events discarded: listed\n"
		"                     on stderr either way)\n"
		"      --stall-timeout S  stop the CTF reader after S s of CPU time without\n"
		"                     progress (default $LETW_STALL_TIMEOUT, else 10)\n"
		"      --progress     show progress on stderr (default: when it is a tty)\n"
		"      --no-progress\n"
		"  -v, --verbose      log what the components do\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 maps written, 3 maps written from an incomplete trace, 1 error.\n",
		letw_prog);
}

static void report_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s report TRACE [--json] [-o FILE] [--stall-timeout S]\n"
		"          [--progress|--no-progress] [-v]\n"
		"\n"
		"Per process and per rundown pass: Init/Complete paired (or truncated),\n"
		"records seen vs emitted, skipped_raced, discarded events inside the pass,\n"
		"duplicates, records of code unloaded before the pass, and code live before\n"
		"the pass but absent from it. For the trace: each stream read whole against\n"
		"LTTng's index files, packet sequence gaps, discarded events.\n"
		"\n"
		"  -j, --json         JSON instead of text\n"
		"  -o, --output FILE  write the report to FILE (default: stdout)\n"
		"      --stall-timeout S  stop the CTF reader after S s of CPU time without\n"
		"                     progress (default $LETW_STALL_TIMEOUT, else 10)\n"
		"      --progress, --no-progress, -v, --verbose, -h, --help\n"
		"\n"
		"A session directory whose chunks were rotated (TRACE/archives/*) is reported\n"
		"chunk by chunk: a `chunk NAME` line before each text report, one JSON document\n"
		"per line, or FILE.<chunk> per chunk with -o.\n"
		"\n"
		"Exit status: 0 all passes complete and the trace read whole, 3 some pass is\n"
		"not complete or the trace is incomplete, 1 error.\n",
		letw_prog);
}

enum { OPT_PROGRESS = 256, OPT_NO_PROGRESS, OPT_STALL, OPT_ALLOW_INCOMPLETE };

static int parse_stall(const char *s, double *out)
{
	char *end;

	*out = strtod(s, &end);
	if (end == s || *end || !(*out > 0)) {
		letw_err("--stall-timeout: expected a positive number of seconds, not `%s`", s);
		return -1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The trace chunks of a session directory that was rotated: each
 * TRACE/archives/<chunk> is a trace of its own (own metadata, own rundown
 * passes), so it is analysed on its own, in chunk order. Returns the
 * number of chunks (names malloc()ed into *out), 0 when TRACE is a plain
 * trace or a live URL.
 */
static int trace_chunks(const char *trace, char ***out)
{
	char *dir = NULL, **v = NULL;
	struct dirent *de;
	DIR *d;
	int n = 0, cap = 0;

	*out = NULL;
	if (!strncmp(trace, "net://", 6) || asprintf(&dir, "%s/archives", trace) < 0)
		return 0;
	d = opendir(dir);
	free(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char **nv;

		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			if (!(nv = realloc(v, (size_t)cap * sizeof(*v))))
				break;
			v = nv;
		}
		if (asprintf(&v[n], "%s", de->d_name) >= 0)
			n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

static void free_chunks(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Run one chunk (or the whole trace) with params, whose entries were
 * inserted if `inserted`; takes the params reference. */
static int run_params(struct letw_graph_opts *o, bt_value *params, int inserted,
		      struct letw_sink_result *res)
{
	int ret = -1;

	memset(res, 0, sizeof(*res));
	if (!params || !inserted) {
		letw_err("out of memory");
	} else {
		o->params = params;
		ret = letw_graph_run(o, res);
	}
	bt_value_put_ref(params);
	return ret;
}

int letw_cmd_perfmap(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, 'm' },
		{ "allow-incomplete", no_argument, NULL, OPT_ALLOW_INCOMPLETE },
		{ "stall-timeout", required_argument, NULL, OPT_STALL },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct letw_graph_opts o = { .sink = LETW_SINK_PERFMAP, .progress = -1 };
	struct letw_sink_result res = { 0 };
	const char *dir = NULL, *mode = "latest";
	bt_value *params;
	char **chunks = NULL;
	int c, ret = 0, nchunks, allow_incomplete = 0, verdict = LETW_EXIT_OK;

	while ((c = getopt_long(argc, argv, "o:m:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'm': mode = optarg; break;
		case OPT_ALLOW_INCOMPLETE: allow_incomplete = 1; break;
		case OPT_STALL:
			if (parse_stall(optarg, &o.stall_timeout))
				return LETW_EXIT_USAGE;
			break;
		case 'v': o.verbose = 1; break;
		case OPT_PROGRESS: o.progress = 1; break;
		case OPT_NO_PROGRESS: o.progress = 0; break;
		case 'h': perfmap_usage(stdout); return LETW_EXIT_OK;
		default: perfmap_usage(stderr); return LETW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !dir) {
		letw_err("perfmap: %s", !dir ? "missing -o DIR" : "expected exactly one TRACE");
		perfmap_usage(stderr);
		return LETW_EXIT_USAGE;
	}
	if (strcmp(mode, "latest") != 0 && strcmp(mode, "all") != 0) {
		letw_err("perfmap: --mode must be latest or all, not `%s`", mode);
		return LETW_EXIT_USAGE;
	}
	nchunks = trace_chunks(argv[optind], &chunks);
	if (nchunks && mkdir(dir, 0755) && errno != EEXIST) {
		letw_err("perfmap: cannot create `%s`: %s", dir, strerror(errno));
		free_chunks(chunks, nchunks);
		return LETW_EXIT_ERROR;
	}
	/* A rotated session: DIR/<chunk>/perf-PID.map for each chunk. */
	for (int i = 0; i < (nchunks ? nchunks : 1); i++) {
		char *trace = NULL, *out = NULL;
		int v;

		if (nchunks && (asprintf(&trace, "%s/archives/%s", argv[optind], chunks[i]) < 0 ||
				asprintf(&out, "%s/%s", dir, chunks[i]) < 0)) {
			free(trace);
			ret = -1;
			break;
		}
		o.trace = nchunks ? trace : argv[optind];
		params = bt_value_map_create();
		/* The command, not the sink, decides what an incomplete trace
		 * means (letw_graph_verdict). */
		ret = run_params(&o, params, params &&
				 !bt_value_map_insert_string_entry(params, "output-dir",
								   nchunks ? out : dir) &&
				 !bt_value_map_insert_string_entry(params, "mode", mode) &&
				 !bt_value_map_insert_bool_entry(params, "fail-on-incomplete",
								 BT_FALSE), &res);
		if (!ret) {
			letw_note("wrote %d map(s), %llu symbol(s), into %s", res.processes,
				  (unsigned long long)res.map_lines, nchunks ? out : dir);
			v = letw_graph_verdict("perfmap", &res, allow_incomplete);
			if (v != LETW_EXIT_OK)
				verdict = v;
		}
		free(trace);
		free(out);
		if (ret)
			break;
	}
	free_chunks(chunks, nchunks);
	return ret ? LETW_EXIT_ERROR : verdict;
}

int letw_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "stall-timeout", required_argument, NULL, OPT_STALL },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct letw_graph_opts o = { .sink = LETW_SINK_REPORT, .progress = -1 };
	struct letw_sink_result res = { 0 };
	const char *out = NULL;
	bt_value *params;
	char **chunks = NULL;
	int c, json = 0, ret = 0, nchunks, incomplete = 0;

	while ((c = getopt_long(argc, argv, "jo:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'o': out = optarg; break;
		case OPT_STALL:
			if (parse_stall(optarg, &o.stall_timeout))
				return LETW_EXIT_USAGE;
			break;
		case 'v': o.verbose = 1; break;
		case OPT_PROGRESS: o.progress = 1; break;
		case OPT_NO_PROGRESS: o.progress = 0; break;
		case 'h': report_usage(stdout); return LETW_EXIT_OK;
		default: report_usage(stderr); return LETW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		letw_err("report: expected exactly one TRACE");
		report_usage(stderr);
		return LETW_EXIT_USAGE;
	}
	nchunks = trace_chunks(argv[optind], &chunks);
	/* A rotated session: one report per chunk, in chunk order (text: a
	 * `chunk NAME` line before each; JSON: one document per line; -o
	 * FILE: FILE.<chunk> each). */
	for (int i = 0; i < (nchunks ? nchunks : 1); i++) {
		char *trace = NULL, *file = NULL;

		if (nchunks && (asprintf(&trace, "%s/archives/%s", argv[optind], chunks[i]) < 0 ||
				(out && asprintf(&file, "%s.%s", out, chunks[i]) < 0))) {
			free(trace);
			ret = -1;
			break;
		}
		o.trace = nchunks ? trace : argv[optind];
		if (nchunks && !json && !out) {
			printf("chunk %s\n", chunks[i]);
			fflush(stdout);
		}
		params = bt_value_map_create();
		/* The CLI reads the verdict from the result rather than from a
		 * component failure, so an incomplete pass is not an error. */
		ret = run_params(&o, params, params &&
				 !bt_value_map_insert_string_entry(params, "format",
								   json ? "json" : "text") &&
				 !bt_value_map_insert_bool_entry(params, "fail-on-incomplete",
								 BT_FALSE) &&
				 (!(file || out) ||
				  !bt_value_map_insert_string_entry(params, "output",
								    file ? file : out)), &res);
		free(trace);
		free(file);
		if (ret)
			break;
		if (res.incomplete_streams) {
			letw_err("%s%s%sthe trace is incomplete: %d stream(s) with missing or damaged data (see the report)",
				 nchunks ? "chunk " : "", nchunks ? chunks[i] : "",
				 nchunks ? ": " : "",
				 res.incomplete_streams);
			incomplete = 1;
		}
		if (res.incomplete_passes) {
			letw_err("%s%s%s%d rundown pass(es) not complete", nchunks ? "chunk " : "",
				 nchunks ? chunks[i] : "", nchunks ? ": " : "",
				 res.incomplete_passes);
			incomplete = 1;
		}
	}
	free_chunks(chunks, nchunks);
	if (ret)
		return LETW_EXIT_ERROR;
	return incomplete ? LETW_EXIT_INCOMPLETE : LETW_EXIT_OK;
}
