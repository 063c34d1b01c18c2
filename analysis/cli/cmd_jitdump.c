/* SPDX-License-Identifier: MIT */
/* `jitdump`: run a trace through sink.etw.jitdump. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "graph.h"
#include "jitdump_write.h"

static void jitdump_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s jitdump TRACE -o DIR [--elf-text-offset N] [--allow-incomplete]\n"
		"          [--progress|--no-progress] [-v]\n"
		"\n"
		"Write one perf jitdump, DIR/jit-PID.dump, per traced process (PID is the vpid\n"
		"context), built from the trace alone: one LOAD per method/stub load and per\n"
		"rundown record of code the trace had not seen loaded, on perf's clock\n"
		"(CLOCK_MONOTONIC), so that `perf inject --jit` names each sample after the\n"
		"code that ran at that address at that time; the code's bytes where the trace\n"
		"has letw_runtime:method_code_bytes (or its rundown twins), for perf annotate;\n"
		"source lines where it has method_lines, for perf's srcline.\n"
		"\n"
		"perf inject reads jit-PID.dump at the path the process mapped: run the process\n"
		"with LETW_JITDUMP_DIR=DIR (it maps a placeholder DIR/jit-PID.dump), record with\n"
		"`perf record -k mono`, then write the dump into that same DIR:\n"
		"  %s jitdump TRACE -o DIR\n"
		"  perf inject --jit -i perf.data -o perf.jit.data\n"
		"  perf report -i perf.jit.data\n"
		"\n"
		"  -o, --output DIR        directory to write into (created if missing)\n"
		"      --elf-text-offset N added to line-table addresses (default 0, right for\n"
		"                          perf 5.8 and later; 64 for older perfs, which did not\n"
		"                          add the ELF header size of their jitted-*.so themselves)\n"
		"      --allow-incomplete  exit 0 even when the trace was not read whole\n"
		"                          (streams missing, cut short, events discarded: listed\n"
		"                          on stderr either way)\n"
		"      --progress          show progress on stderr (default: when it is a tty)\n"
		"      --no-progress\n"
		"  -v, --verbose           log what the components do\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 dumps written, 3 dumps written from an incomplete trace, 1 error.\n",
		letw_prog, letw_prog);
}

enum { OPT_PROGRESS = 256, OPT_NO_PROGRESS, OPT_ELF_OFFSET, OPT_ALLOW_INCOMPLETE };

int letw_cmd_jitdump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "elf-text-offset", required_argument, NULL, OPT_ELF_OFFSET },
		{ "allow-incomplete", no_argument, NULL, OPT_ALLOW_INCOMPLETE },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct letw_graph_opts o = { .sink = LETW_SINK_JITDUMP, .progress = -1 };
	struct letw_sink_result res = { 0 };
	const char *dir = NULL;
	uint64_t offset = LETW_JD_ELF_TEXT_OFFSET_DEFAULT;
	bt_value *params;
	int c, ret, allow_incomplete = 0;

	while ((c = getopt_long(argc, argv, "o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case OPT_ELF_OFFSET:
			if (letw_parse_u64(optarg, &offset) || offset > 65536) {
				letw_err("jitdump: --elf-text-offset wants 0..65536, not `%s`", optarg);
				return LETW_EXIT_USAGE;
			}
			break;
		case OPT_ALLOW_INCOMPLETE: allow_incomplete = 1; break;
		case 'v': o.verbose = 1; break;
		case OPT_PROGRESS: o.progress = 1; break;
		case OPT_NO_PROGRESS: o.progress = 0; break;
		case 'h': jitdump_usage(stdout); return LETW_EXIT_OK;
		default: jitdump_usage(stderr); return LETW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !dir) {
		letw_err("jitdump: %s", !dir ? "missing -o DIR" : "expected exactly one TRACE");
		jitdump_usage(stderr);
		return LETW_EXIT_USAGE;
	}
	o.trace = argv[optind];
	params = bt_value_map_create();
	if (!params || bt_value_map_insert_string_entry(params, "output-dir", dir) ||
	    bt_value_map_insert_unsigned_integer_entry(params, "elf-text-offset", offset) ||
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
	letw_note("wrote %d jitdump(s) into %s: %llu LOAD record(s), %llu with code bytes, %llu with line tables",
		  res.processes, dir, (unsigned long long)res.jit_loads,
		  (unsigned long long)res.jit_code, (unsigned long long)res.jit_lines);
	return letw_graph_verdict("jitdump", &res, allow_incomplete);
}
