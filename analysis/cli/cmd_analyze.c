/* SPDX-License-Identifier: MIT */
/* `perfmap` and `report`: run a trace through one of the etw sinks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "graph.h"
#include "replace_file.h"

static void perfmap_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s perfmap TRACE -o DIR [--mode latest|all] [--allow-incomplete]\n"
		"          [--stall-timeout S] [--memory-limit MIB] [--progress|--no-progress] [-v]\n"
		"\n"
		"Write one perf-PID.map per traced process (PID is the vpid context) into DIR,\n"
		"reconstructed from the trace alone: method/stub loads and unloads and the\n"
		"DCStart/DCEnd rundown records. Point perf at it with\n"
		"  cp DIR/perf-PID.map /tmp/ && perf report ...\n"
		"A trace recorded with the pid_ns context (lttng add-context -u -t pid_ns)\n"
		"that holds several pid namespaces (containers) gets DIR/pidns-INO/ for\n"
		"each: perf reads a containerised process's map from the container's /tmp.\n"
		"\n"
		"  -o, --output DIR   directory to write the maps into (created if missing);\n"
		"                     a rotated session's chunks (or a snapshot session's\n"
		"                     snapshots) get DIR/<chunk>/ each\n"
		"  -m, --mode MODE    address ranges that held different code over time:\n"
		"                     latest (default) writes the most recent code there,\n"
		"                     all writes every region (a summary goes to stderr)\n"
		"      --allow-incomplete  exit 0 even when the trace was not read whole\n"
		"                     (streams missing, cut short, events discarded) or a\n"
		"                     rundown pass is not complete (truncated, records lost\n"
		"                     or filtered out) or missing (a process with events but\n"
		"                     no pass, in a trace that lost packets): listed on\n"
		"                     stderr either way\n"
		"      --stall-timeout S  stop the CTF reader after S s of CPU time without\n"
		"                     progress (default $LETW_STALL_TIMEOUT, else 10)\n"
		"      --memory-limit MIB  heap the CTF reader may take (default\n"
		"                     $LETW_MEMORY_LIMIT, else half of physical memory)\n"
		"      --progress     show progress on stderr (default: when it is a tty)\n"
		"      --no-progress\n"
		"  -v, --verbose      log what the components do\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 maps written, 3 maps written from an incomplete trace or\n"
		"rundown passes not complete, 1 error, 130 interrupted (SIGINT, SIGTERM,\n"
		"SIGHUP: the map being written is not put in place).\n",
		letw_prog);
}

static void report_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s report TRACE [--json] [-o FILE] [--stall-timeout S]\n"
		"          [--memory-limit MIB] [--progress|--no-progress] [-v]\n"
		"\n"
		"Per process and per rundown pass: Init/Complete paired (or truncated),\n"
		"records seen vs emitted, skipped_raced, discarded events inside the pass,\n"
		"duplicates, records of code unloaded before the pass, and code live before\n"
		"the pass but absent from it. For the trace: each stream read whole against\n"
		"LTTng's index files, packet sequence gaps, discarded events.\n"
		"\n"
		"  -j, --json         JSON instead of text\n"
		"  -o, --output FILE  write the report to FILE (`-`, the default: stdout)\n"
		"      --stall-timeout S  stop the CTF reader after S s of CPU time without\n"
		"                     progress (default $LETW_STALL_TIMEOUT, else 10)\n"
		"      --memory-limit MIB  heap the CTF reader may take (default\n"
		"                     $LETW_MEMORY_LIMIT, else half of physical memory)\n"
		"      --progress, --no-progress, -v, --verbose, -h, --help\n"
		"\n"
		"A session directory whose chunks were rotated (TRACE/archives/*, and the\n"
		"current chunk beside it while the session is stopped but not destroyed), or\n"
		"holding two or more snapshots of a snapshot session (TRACE/NAME-DATE-TIME-N),\n"
		"is reported chunk by chunk: a `chunk NAME` line before each text report, one\n"
		"JSON document per line (its \"chunk\" member naming it), or FILE.<chunk> per\n"
		"chunk with -o. A chunk that cannot be read is said and the others are still\n"
		"read; one holding no lttng-etw event (the processes idle while it recorded)\n"
		"is said and skipped, an error only when every chunk is such.\n"
		"\n"
		"Exit status: 0 all passes complete and the trace read whole, 3 some pass is\n"
		"not complete or the trace is incomplete, 1 error (in any chunk), 130\n"
		"interrupted (SIGINT, SIGTERM, SIGHUP: -o FILE left as it was).\n",
		letw_prog);
}

struct perfmap_args {
	const char *dir, *mode;
	char *out; /* this run's output directory, for done() */
};

static bt_value *perfmap_params(const struct letw_chunk *c, void *data)
{
	struct perfmap_args *a = data;
	bt_value *p = bt_value_map_create();

	free(a->out);
	/* A rotated session: DIR/<chunk>/perf-PID.map for each chunk (the
	 * sink creates the directories). */
	a->out = c->name ? NULL : strdup(a->dir);
	if (c->name && asprintf(&a->out, "%s/%s", a->dir, c->name) < 0)
		a->out = NULL;
	/* The command, not the sink, decides what an incomplete trace
	 * means (letw_graph_verdict). */
	if (!p || !a->out ||
	    bt_value_map_insert_string_entry(p, "output-dir", a->out) ||
	    bt_value_map_insert_string_entry(p, "mode", a->mode) ||
	    bt_value_map_insert_bool_entry(p, "fail-on-incomplete", BT_FALSE)) {
		letw_err("out of memory");
		bt_value_put_ref(p);
		return NULL;
	}
	return p;
}

static void perfmap_done(const struct letw_chunk *c, const struct letw_sink_result *r,
			 void *data)
{
	struct perfmap_args *a = data;

	(void)c;
	letw_note("wrote %d map(s), %llu symbol(s), into %s%s", r->processes,
		  (unsigned long long)r->map_lines, a->out,
		  r->pid_namespaces > 1 ? "/pidns-INO/ (one directory per pid namespace)" : "");
}

int letw_cmd_perfmap(int argc, char **argv)
{
	static const struct option opts[] = {
		LETW_GRAPH_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, 'm' },
		LETW_GRAPH_ALLOW_INCOMPLETE_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct letw_graph_opts o = { .sink = LETW_SINK_PERFMAP, .progress = -1 };
	struct perfmap_args a = { .mode = "latest" };
	int c, r, ret;

	while ((c = getopt_long(argc, argv, "o:m:vh", opts, NULL)) != -1) {
		if ((r = letw_graph_opt(c, optarg, &o)) != 0) {
			if (r < 0)
				return LETW_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'o': a.dir = optarg; break;
		case 'm': a.mode = optarg; break;
		case 'h': perfmap_usage(stdout); return LETW_EXIT_OK;
		default: perfmap_usage(stderr); return LETW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !a.dir || !*a.dir) {
		letw_err("perfmap: %s", !a.dir ? "missing -o DIR" :
			 !*a.dir ? "-o needs a directory name" : "expected exactly one TRACE");
		perfmap_usage(stderr);
		return LETW_EXIT_USAGE;
	}
	if (strcmp(a.mode, "latest") != 0 && strcmp(a.mode, "all") != 0) {
		letw_err("perfmap: --mode must be latest or all, not `%s`", a.mode);
		return LETW_EXIT_USAGE;
	}
	ret = letw_graph_run_chunks(&o, argv[optind], "perfmap", perfmap_params,
				    perfmap_done, &a);
	free(a.out);
	return ret;
}

struct report_args {
	const char *out;
	int json;
	/* -o naming a device, a FIFO or a link to one (written in place,
	 * replace_file.h), for a session read chunk by chunk: held open here
	 * for every chunk's report (each reopens it as /proc/self/fd/N: a
	 * FIFO's reader sees no end of file between chunks), in place of the
	 * FILE.<chunk> files a regular -o gets (they were made beside the
	 * device: /dev/stdout.<chunk>). -1: none. */
	int held_fd;
	char held_path[64];
};

static bt_value *report_params(const struct letw_chunk *c, void *data)
{
	struct report_args *a = data;
	bt_value *p = bt_value_map_create();
	char *file = NULL;
	int failed;

	/* A rotated session: one report per chunk, in chunk order (text: a
	 * `chunk NAME` line before each; JSON: one document per line, its
	 * "chunk" member naming it; -o FILE: FILE.<chunk> each; -o DEVICE:
	 * all in it, as on stdout). */
	if (c->name && a->out && a->held_fd < 0 &&
	    asprintf(&file, "%s.%s", a->out, c->name) < 0)
		file = NULL;
	if (c->name && a->held_fd >= 0 &&
	    !(file = strdup(a->held_path)))
		file = NULL;
	if (c->name && !a->json && !a->out) {
		printf("chunk %s\n", c->name);
		fflush(stdout);
	}
	if (c->name && !a->json && a->held_fd >= 0)
		dprintf(a->held_fd, "chunk %s\n", c->name);
	/* The CLI reads the verdict from the result rather than from a
	 * component failure, so an incomplete pass is not an error. */
	failed = !p || (c->name && a->out && !file) ||
		 bt_value_map_insert_string_entry(p, "format", a->json ? "json" : "text") ||
		 bt_value_map_insert_bool_entry(p, "fail-on-incomplete", BT_FALSE) ||
		 (a->out && bt_value_map_insert_string_entry(p, "output", file ? file : a->out)) ||
		 (c->name && bt_value_map_insert_string_entry(p, "chunk", c->name));
	free(file);
	if (failed) {
		letw_err("out of memory");
		bt_value_put_ref(p);
		return NULL;
	}
	return p;
}

int letw_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		LETW_GRAPH_LONG_OPTIONS,
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct letw_graph_opts o = { .sink = LETW_SINK_REPORT, .progress = -1 };
	struct report_args a = { .held_fd = -1 };
	int c, r, ret;

	while ((c = getopt_long(argc, argv, "jo:vh", opts, NULL)) != -1) {
		if ((r = letw_graph_opt(c, optarg, &o)) != 0) {
			if (r < 0)
				return LETW_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'j': a.json = 1; break;
		/* `-` is stdout, as for every tool that takes an output
		 * file; a file named `-` is still `./-`. */
		case 'o': a.out = strcmp(optarg, "-") ? optarg : NULL; break;
		case 'h': report_usage(stdout); return LETW_EXIT_OK;
		default: report_usage(stderr); return LETW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		letw_err("report: expected exactly one TRACE");
		report_usage(stderr);
		return LETW_EXIT_USAGE;
	}
	if (a.out && !*a.out) {
		letw_err("report: -o needs a file name");
		return LETW_EXIT_USAGE;
	}
	if (a.out && letw_output_in_place(a.out) == 1) {
		/* Opened before any chunk is read, blocking as a shell's
		 * redirection is (a FIFO waits for its reader); never
		 * replaced or truncated. Inherited by the reading child. */
		a.held_fd = open(a.out, O_WRONLY | O_NOCTTY | O_APPEND); /* report.c says why */
		if (a.held_fd < 0) {
			letw_err("report: cannot open `%s`: %s", a.out, strerror(errno));
			return LETW_EXIT_ERROR;
		}
		snprintf(a.held_path, sizeof(a.held_path), "/proc/self/fd/%d", a.held_fd);
	}
	ret = letw_graph_run_chunks(&o, argv[optind], "report", report_params, NULL, &a);
	if (a.held_fd >= 0 && close(a.held_fd) != 0 && ret == LETW_EXIT_OK) {
		letw_err("report: cannot write `%s`: %s", a.out, strerror(errno));
		ret = LETW_EXIT_ERROR;
	}
	return ret;
}
