/* SPDX-License-Identifier: MIT */
/* `perfmap` and `report`: run a trace through one of the etw sinks. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		"  -o, --output DIR   directory to write the maps into (created if missing)\n"
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
	int c, ret, allow_incomplete = 0;

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
	o.trace = argv[optind];
	params = bt_value_map_create();
	/* The command, not the sink, decides what an incomplete trace
	 * means (letw_graph_verdict). */
	if (!params || bt_value_map_insert_string_entry(params, "output-dir", dir) ||
	    bt_value_map_insert_string_entry(params, "mode", mode) ||
	    bt_value_map_insert_bool_entry(params, "fail-on-incomplete", BT_FALSE)) {
		letw_err("out of memory");
		bt_value_put_ref(params);
		return LETW_EXIT_ERROR;
	}
	o.params = params;
	ret = letw_graph_run(&o, &res);
	bt_value_put_ref(params);
	if (ret)
		return LETW_EXIT_ERROR;
	letw_note("wrote %d map(s), %llu symbol(s), into %s", res.processes,
		  (unsigned long long)res.map_lines, dir);
	return letw_graph_verdict("perfmap", &res, allow_incomplete);
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
	int c, json = 0, ret;

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
	o.trace = argv[optind];
	params = bt_value_map_create();
	/* The CLI reads the verdict from the result rather than from a
	 * component failure, so an incomplete pass is not an error. */
	if (!params || bt_value_map_insert_string_entry(params, "format", json ? "json" : "text") ||
	    bt_value_map_insert_bool_entry(params, "fail-on-incomplete", BT_FALSE) ||
	    (out && bt_value_map_insert_string_entry(params, "output", out))) {
		letw_err("out of memory");
		bt_value_put_ref(params);
		return LETW_EXIT_ERROR;
	}
	o.params = params;
	ret = letw_graph_run(&o, &res);
	bt_value_put_ref(params);
	if (ret)
		return LETW_EXIT_ERROR;
	if (res.incomplete_streams)
		letw_err("the trace is incomplete: %d stream(s) with missing or damaged data (see the report)",
			 res.incomplete_streams);
	if (res.incomplete_passes)
		letw_err("%d rundown pass(es) not complete", res.incomplete_passes);
	return res.incomplete_streams || res.incomplete_passes ? LETW_EXIT_INCOMPLETE :
								  LETW_EXIT_OK;
}
