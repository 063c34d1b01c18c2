/* SPDX-License-Identifier: MIT */
/*
 * Builds and runs a babeltrace2 graph: sources for a trace (every CTF trace
 * directory under a path, one src.ctf.fs each, or one src.ctf.lttng-live
 * for a net:// URL) → utils.muxer → one of our sink classes, linked into
 * the CLI so the CLI and its plugin can never disagree.
 *
 * Every command that reads a trace goes through letw_graph_run(): it
 * pre-checks local traces (precheck.h), then runs the graph in a child
 * process it supervises (supervise.c), so that whatever babeltrace2's
 * reader does on a damaged trace (abort, SIGFPE, an endless loop) ends as
 * an error message and exit status 1, never as a crash or a hang of
 * lttng-etw.
 */
#ifndef LETW_CLI_GRAPH_H
#define LETW_CLI_GRAPH_H

#include <babeltrace2/babeltrace.h>

#include "sink_common.h"

enum letw_sink_kind { LETW_SINK_PERFMAP, LETW_SINK_REPORT, LETW_SINK_JITDUMP };

struct letw_graph_opts {
	const char *trace;      /* directory or net://HOST[:PORT]/host/H/S */
	enum letw_sink_kind sink;
	const bt_value *params; /* sink parameters (borrowed) */
	int progress;           /* 1: always, 0: never, -1: when stderr is a tty */
	int verbose;
	/* Seconds of CPU time the reader may spend without progress before
	 * it is stopped as hung; 0: $LETW_STALL_TIMEOUT, else 10. */
	double stall_timeout;
};

/* Returns 0 when the graph ran to its end, -1 after printing why not.
 * *result is filled by the sink (struct letw_sink_result: plain values,
 * copied back from the child process). */
int letw_graph_run(const struct letw_graph_opts *o, struct letw_sink_result *result);

/* For a command that wrote output from the trace (perfmap, jitdump):
 * after a successful run, say whether the trace was read whole and return
 * the exit status — LETW_EXIT_INCOMPLETE when it was not, unless
 * allow_incomplete. */
int letw_graph_verdict(const char *cmd, const struct letw_sink_result *r,
		       int allow_incomplete);

/* ---- between graph.c (in the child) and supervise.c (the parent) ---- */

enum letw_graph_phase {
	LETW_PHASE_START = 0,
	LETW_PHASE_OPENING,  /* adding the source of `current` */
	LETW_PHASE_RUNNING,  /* the graph runs: see result.stage */
	LETW_PHASE_DONE,
};

/* Lives in memory shared by the parent and the child. */
struct letw_graph_shared {
	struct letw_sink_result result;
	int phase;               /* enum letw_graph_phase */
	char current[1024];      /* the trace (directory) being opened */
	int has_error;           /* the child failed with the text below */
	char err_what[1024];     /* e.g. "cannot open the trace `X`" */
	char err_causes[8192];   /* babeltrace2's error causes, root (the
				  * first appended) first, one per line:
				  * "ACTOR\tMESSAGE" */
};

/* graph.c, run in the child: build the graph over the given trace
 * directories (or the live URL in o->trace when ndirs == 0) and run it.
 * Returns 0, or -1 with the error in sh. */
int letw_graph_run_here(const struct letw_graph_opts *o, char **dirs,
			size_t ndirs, struct letw_graph_shared *sh);

#endif /* LETW_CLI_GRAPH_H */
