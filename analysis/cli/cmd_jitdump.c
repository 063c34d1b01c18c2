/* SPDX-License-Identifier: MIT */
/* `jitdump`: run a trace through sink.etw.jitdump. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "graph.h"
#include "jitdump_write.h"

static void jitdump_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s jitdump TRACE -o DIR [--elf-text-offset N] [--allow-incomplete]\n"
		"          [--stall-timeout S] [--memory-limit MIB] [--progress|--no-progress] [-v]\n"
		"\n"
		"Write one perf jitdump, DIR/jit-PID.dump, per traced process (PID is the vpid\n"
		"context), built from the trace alone: one LOAD per method/stub load and per\n"
		"rundown record of code the trace had not seen loaded, on perf's clock\n"
		"(CLOCK_MONOTONIC), so that `perf inject --jit` names each sample after the\n"
		"code that ran at that address at that time; the code's bytes where the trace\n"
		"has letw_runtime:method_code_bytes (or its rundown twins), for perf annotate;\n"
		"source lines where it has method_lines, for perf's srcline. Several pid\n"
		"namespaces in a trace with the pid_ns context: DIR/pidns-INO/jit-PID.dump.\n"
		"\n"
		"perf inject reads jit-PID.dump at the path the process mapped: run the process\n"
		"with LETW_JITDUMP_DIR=DIR (it maps a placeholder DIR/jit-PID.dump), record with\n"
		"`perf record -k mono`, then write the dump into that same DIR:\n"
		"  %s jitdump TRACE -o DIR\n"
		"  perf inject --jit -i perf.data -o perf.jit.data\n"
		"  perf report -i perf.jit.data\n"
		"\n"
		"  -o, --output DIR        directory to write into (created if missing); a\n"
		"                          rotated session's chunks (or a snapshot session's\n"
		"                          snapshots) get DIR/<chunk>/ each\n"
		"      --elf-text-offset N added to line-table addresses (default 0, right for\n"
		"                          perf 5.8 and later; 64 for older perfs, which did not\n"
		"                          add the ELF header size of their jitted-*.so themselves)\n"
		"      --allow-incomplete  exit 0 even when the trace was not read whole\n"
		"                          (streams missing, cut short, events discarded) or a\n"
		"                          rundown pass is not complete (truncated, records lost\n"
		"                          or filtered out) or missing (a process with events but\n"
		"                          no pass, in a trace that lost packets): listed on\n"
		"                          stderr either way\n"
		"      --stall-timeout S   stop the CTF reader after S s of CPU time without\n"
		"                          progress (default $LETW_STALL_TIMEOUT, else 10)\n"
		"      --memory-limit MIB  heap the CTF reader may take (default\n"
		"                          $LETW_MEMORY_LIMIT, else half of physical memory)\n"
		"      --progress          show progress on stderr (default: when it is a tty)\n"
		"      --no-progress\n"
		"  -v, --verbose           log what the components do\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 dumps written, 3 dumps written from an incomplete trace or\n"
		"rundown passes not complete, 1 error, 130 interrupted (SIGINT, SIGTERM,\n"
		"SIGHUP: the dump being written is not put in place).\n",
		letw_prog, letw_prog);
}

enum { OPT_ELF_OFFSET = LETW_OPT_OWN };

struct jitdump_args {
	const char *dir;
	uint64_t offset;
	char *out; /* this run's output directory, for done() */
	int chunks;  /* chunks written (0: the trace is one) */
	char *chunk; /* the last one with a dump, for the copy to suggest */
	int pidns;   /* ... whose dumps are in pidns-INO/ directories */
};

static bt_value *jitdump_params(const struct letw_chunk *c, void *data)
{
	struct jitdump_args *a = data;
	bt_value *p = bt_value_map_create();

	free(a->out);
	/* A rotated session: each chunk is a trace of its own, with its own
	 * rundowns and clock, so DIR/<chunk>/jit-PID.dump each rather than
	 * one dump merging chunks (the sink creates the directories). */
	a->out = c->name ? NULL : strdup(a->dir);
	if (c->name && asprintf(&a->out, "%s/%s", a->dir, c->name) < 0)
		a->out = NULL;
	if (!p || !a->out || bt_value_map_insert_string_entry(p, "output-dir", a->out) ||
	    bt_value_map_insert_unsigned_integer_entry(p, "elf-text-offset", a->offset) ||
	    bt_value_map_insert_bool_entry(p, "fail-on-incomplete", BT_FALSE)) {
		letw_err("out of memory");
		bt_value_put_ref(p);
		return NULL;
	}
	return p;
}

static void jitdump_done(const struct letw_chunk *c, const struct letw_sink_result *r,
			 void *data)
{
	struct jitdump_args *a = data;

	a->chunks += c->name != NULL;
	if (c->name && r->processes) {
		free(a->chunk);
		a->chunk = strdup(c->name);
		a->pidns = r->pid_namespaces > 1;
	}
	letw_note("wrote %d jitdump(s) into %s%s: %llu LOAD record(s), %llu with code bytes, %llu with line tables",
		  r->processes, a->out,
		  r->pid_namespaces > 1 ? "/pidns-INO/ (one directory per pid namespace)" : "",
		  (unsigned long long)r->jit_loads,
		  (unsigned long long)r->jit_code, (unsigned long long)r->jit_lines);
}

/* perf inject reads the dump where the process mapped its placeholder
 * (DIR/jit-PID.dump), which the chunks' directories leave as it was: an
 * audit following the recipe on a rotated session got exit 0 and not one
 * JIT sample named. Said with the copy that fixes it, quoted for a shell,
 * when one chunk's dumps can be named so. */
static void say_placeholder(const struct jitdump_args *a)
{
	char *qd = letw_shell_quote(a->dir);
	char *qc = a->chunk && !a->pidns ? letw_shell_quote(a->chunk) : NULL;
	char *cp = NULL;

	if (qd && qc && asprintf(&cp, " (e.g. cp %s/%s/jit-*.dump %s/)", qd, qc, qd) < 0)
		cp = NULL;
	letw_note("jitdump: the trace is in chunks (rotations or snapshots), written to DIR/<chunk>/, and `%s/jit-PID.dump`, which perf inject --jit reads, was left as it was: copy the dump of the chunk whose time covers the perf record run over it%s; chunks are not merged, so a profile spanning several is named only where that chunk covers it",
		  a->dir, cp ? cp : "");
	free(cp);
	free(qd);
	free(qc);
}

int letw_cmd_jitdump(int argc, char **argv)
{
	static const struct option opts[] = {
		LETW_GRAPH_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "elf-text-offset", required_argument, NULL, OPT_ELF_OFFSET },
		LETW_GRAPH_ALLOW_INCOMPLETE_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct letw_graph_opts o = { .sink = LETW_SINK_JITDUMP, .progress = -1 };
	struct jitdump_args a = { .offset = LETW_JD_ELF_TEXT_OFFSET_DEFAULT };
	int c, r, ret;

	while ((c = getopt_long(argc, argv, "o:vh", opts, NULL)) != -1) {
		if ((r = letw_graph_opt(c, optarg, &o)) != 0) {
			if (r < 0)
				return LETW_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'o': a.dir = optarg; break;
		case OPT_ELF_OFFSET:
			if (letw_parse_u64(optarg, &a.offset) || a.offset > 65536) {
				letw_err("jitdump: --elf-text-offset wants 0..65536, not `%s`", optarg);
				return LETW_EXIT_USAGE;
			}
			break;
		case 'h': jitdump_usage(stdout); return LETW_EXIT_OK;
		default: jitdump_usage(stderr); return LETW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !a.dir) {
		letw_err("jitdump: %s", !a.dir ? "missing -o DIR" : "expected exactly one TRACE");
		jitdump_usage(stderr);
		return LETW_EXIT_USAGE;
	}
	ret = letw_graph_run_chunks(&o, argv[optind], "jitdump", jitdump_params,
				    jitdump_done, &a);
	if (a.chunks && !letw_graph_stopped)
		say_placeholder(&a);
	free(a.chunk);
	free(a.out);
	return ret;
}
