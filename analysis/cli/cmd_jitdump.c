/* SPDX-License-Identifier: MIT */
/* `jitdump`: run a trace through sink.etw.jitdump. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "graph.h"
#include "grow.h"
#include "jitdump_merge.h"
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
		"                          snapshots) get DIR/<chunk>/jit-PID.dump each, and\n"
		"                          DIR/jit-PID.dump merges them in time order (code\n"
		"                          live across chunks, or in overlapping snapshots,\n"
		"                          once; code_index renumbered), so that a perf\n"
		"                          record spanning rotations is named throughout\n"
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
	/* A chunked trace: what each chunk's run wrote, for the merge. */
	struct letw_jd_chunk_out *chunk;
	size_t nchunks, cap;
};

static bt_value *jitdump_params(const struct letw_chunk *c, void *data)
{
	struct jitdump_args *a = data;
	bt_value *p = bt_value_map_create();
	int grown = 1;

	free(a->out);
	/* A rotated session: each chunk is a trace of its own, with its own
	 * rundowns, read into DIR/<chunk>/ (the sink creates the
	 * directories); the chunks' dumps are merged into DIR afterwards
	 * (jitdump_merge.h). */
	a->out = c->name ? NULL : strdup(a->dir);
	if (c->name && asprintf(&a->out, "%s/%s", a->dir, c->name) < 0)
		a->out = NULL;
	if (c->name)
		grown = letw_grow_small((void **)&a->chunk, &a->cap, a->nchunks + 1,
					sizeof(*a->chunk)) == 0;
	if (grown && c->name) {
		struct letw_jd_chunk_out *o = &a->chunk[a->nchunks];

		memset(o, 0, sizeof(*o));
		o->name = strdup(c->name);
		o->dir = a->out ? strdup(a->out) : NULL;
		/* The kernel dates files with this clock: a dump this
		 * run writes is not older than this. */
		clock_gettime(CLOCK_REALTIME_COARSE, &o->began);
		a->nchunks++;
		if (!o->name || !o->dir)
			grown = 0;
	}
	if (!p || !a->out || !grown ||
	    bt_value_map_insert_string_entry(p, "output-dir", a->out) ||
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

	if (c->name && a->nchunks) {
		struct letw_jd_chunk_out *o = &a->chunk[a->nchunks - 1];

		o->written = 1;
		o->many_pidns = r->pid_namespaces > 1;
		o->pidns_only = r->pidns_only;
		o->clock = r->clock;
		o->clock_known = r->clock_known;
		o->clocks_mixed = r->clocks_mixed;
	}
	letw_note("wrote %d jitdump(s) into %s%s: %llu LOAD record(s), %llu with code bytes, %llu with line tables",
		  r->processes, a->out,
		  r->pid_namespaces > 1 ? "/pidns-INO/ (one directory per pid namespace)" : "",
		  (unsigned long long)r->jit_loads,
		  (unsigned long long)r->jit_code, (unsigned long long)r->jit_lines);
}

/*
 * perf inject reads the dump where the process mapped its placeholder
 * (DIR/jit-PID.dump): the chunks' own directories were not read by it (an
 * audit following the recipe on a rotated session got exit 0 and not one
 * JIT sample named, then, told to copy one chunk's dump, samples named in
 * that chunk only). The chunks' dumps are merged there, in time order.
 * Returns the exit status.
 */
static int merge_chunks(const struct jitdump_args *a, int ret)
{
	int merged = 0, r;
	size_t unread = 0;

	for (size_t i = 0; i < a->nchunks; i++)
		unread += !a->chunk[i].written;
	/* A chunk that was not read (said above) has no dump of this run:
	 * its code is missing from the merge, said with its name. */
	for (size_t i = 0; ret == LETW_EXIT_ERROR && i < a->nchunks; i++)
		if (!a->chunk[i].written)
			letw_note("jitdump: chunk %s has no dump of this run: its code, if any, is not in the merged dumps",
				  a->chunk[i].name);
	r = letw_jd_merge_chunks(a->dir, a->chunk, a->nchunks, &merged);
	if (r == -EINTR || letw_interrupted) {
		letw_err("jitdump: interrupted: the merged dump being written was not put in place");
		return LETW_EXIT_INTERRUPTED;
	}
	if (!merged && unread < a->nchunks)
		letw_note("jitdump: the trace is in chunks (rotations or snapshots), each written to %s/<chunk>/, and no merged dump was written (see above): `%s/jit-PID.dump`, which perf inject --jit reads, was left as it was",
			  a->dir, a->dir);
	return r ? LETW_EXIT_ERROR : ret;
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
	if (optind + 1 != argc || !a.dir || !*a.dir) {
		letw_err("jitdump: %s", !a.dir ? "missing -o DIR" :
			 !*a.dir ? "-o needs a directory name" : "expected exactly one TRACE");
		jitdump_usage(stderr);
		return LETW_EXIT_USAGE;
	}
	ret = letw_graph_run_chunks(&o, argv[optind], "jitdump", jitdump_params,
				    jitdump_done, &a);
	if (a.nchunks && !letw_graph_stopped)
		ret = merge_chunks(&a, ret);
	for (size_t i = 0; i < a.nchunks; i++) {
		free(a.chunk[i].name);
		free(a.chunk[i].dir);
	}
	free(a.chunk);
	free(a.out);
	return ret;
}
