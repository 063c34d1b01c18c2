/* SPDX-License-Identifier: MIT */
/*
 * Builds and runs a babeltrace2 graph: sources for a trace (every CTF trace
 * directory under a path, one src.ctf.fs each, or one src.ctf.lttng-live
 * for a net:// URL) → utils.muxer → one of our sink classes, linked into
 * the CLI so the CLI and its plugin can never disagree.
 *
 * Every command that reads a trace goes through letw_graph_run_chunks()
 * (graph_cmd.c: shared options, rotated chunks, the verdict), which calls
 * letw_graph_run() per trace: it
 * pre-checks local traces (precheck.h), then runs the graph in a child
 * process it supervises (supervise.c), so that whatever babeltrace2's
 * reader does on a damaged trace (abort, SIGFPE, an endless loop) ends as
 * an error message and exit status 1, never as a crash or a hang of
 * lttng-etw.
 */
#ifndef LETW_CLI_GRAPH_H
#define LETW_CLI_GRAPH_H

#include <signal.h>
#include <stdint.h>

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
	/* MiB of heap the reading child may take (memlimit.c); 0:
	 * $LETW_MEMORY_LIMIT, else half of physical memory. */
	uint64_t memory_limit_mib;
	int allow_incomplete;   /* --allow-incomplete: exit 0 anyway */
};

/* ---- what every command that reads a trace shares (graph_cmd.c) ---- */

/* getopt_long codes of the shared options; a command's own start at
 * LETW_OPT_OWN. */
enum {
	LETW_OPT_PROGRESS = 256,
	LETW_OPT_NO_PROGRESS,
	LETW_OPT_STALL,
	LETW_OPT_ALLOW_INCOMPLETE,
	LETW_OPT_MEMORY,
	LETW_OPT_OWN,
};

/* The long options every trace-reading command takes, for its struct
 * option table (then its own, then LETW_GRAPH_ALLOW_INCOMPLETE_OPTION if
 * it writes output from the trace, then the NULL entry). */
#define LETW_GRAPH_LONG_OPTIONS                                            \
	{ "stall-timeout", required_argument, NULL, LETW_OPT_STALL },      \
	{ "memory-limit", required_argument, NULL, LETW_OPT_MEMORY },      \
	{ "progress", no_argument, NULL, LETW_OPT_PROGRESS },              \
	{ "no-progress", no_argument, NULL, LETW_OPT_NO_PROGRESS },        \
	{ "verbose", no_argument, NULL, 'v' }
#define LETW_GRAPH_ALLOW_INCOMPLETE_OPTION                                 \
	{ "allow-incomplete", no_argument, NULL, LETW_OPT_ALLOW_INCOMPLETE }

/* Apply getopt_long's code c (with optarg) to o when it is a shared
 * option: 1 when it was, 0 when it is the command's own, -1 after
 * printing why its value is bad (exit LETW_EXIT_USAGE). */
int letw_graph_opt(int c, const char *arg, struct letw_graph_opts *o);

/* One run of a command: the whole trace, or one chunk of a rotated
 * session (name is the chunk's name, NULL when the trace is not rotated). */
struct letw_chunk {
	const char *trace;
	const char *name;
};

/* Sink parameters for one run (new reference), NULL after printing why;
 * called before the run, which may also print what comes before it. */
typedef bt_value *(*letw_chunk_params_fn)(const struct letw_chunk *c, void *data);
/* After a run that succeeded: say what was written. Optional. */
typedef void (*letw_chunk_done_fn)(const struct letw_chunk *c,
				   const struct letw_sink_result *r, void *data);

/* Run o->sink over TRACE, or over each chunk of a rotated session in
 * chunk order (letw_trace_chunks), and judge each run (letw_graph_verdict,
 * prefixed `chunk NAME: `). A chunk that fails is said and the next one
 * read all the same; an interrupted run (letw_graph_stopped) ends it all.
 * Returns LETW_EXIT_INTERRUPTED when interrupted (SIGINT, SIGTERM,
 * SIGHUP), else the worst exit status: LETW_EXIT_ERROR when some run failed,
 * else LETW_EXIT_INCOMPLETE when some run was (unless
 * o->allow_incomplete), else LETW_EXIT_OK. */
int letw_graph_run_chunks(struct letw_graph_opts *o, const char *trace,
			  const char *cmd, letw_chunk_params_fn params,
			  letw_chunk_done_fn done, void *data);

/* Returns 0 when the graph ran to its end, -1 after printing why not.
 * *result is filled by the sink (struct letw_sink_result: plain values,
 * copied back from the child process). */
int letw_graph_run(const struct letw_graph_opts *o, struct letw_sink_result *result);

/* Set (never cleared) once a run of letw_graph_run was interrupted
 * (SIGINT, SIGTERM, SIGHUP) or its output closed (SIGPIPE): no further run
 * is wanted. An interrupt also sets letw_interrupted (cli.h), for the
 * command's exit status 130. */
extern volatile sig_atomic_t letw_graph_stopped;

/* After a successful run: say whether the trace was read whole (and, for
 * the report, whether every rundown pass is complete) and return the exit
 * status — LETW_EXIT_INCOMPLETE when not, unless o->allow_incomplete (which
 * accepts lost streams only). chunk: NULL, or the chunk's name to prefix
 * the lines with. */
int letw_graph_verdict(const char *cmd, const struct letw_graph_opts *o,
		       const char *chunk, const struct letw_sink_result *r);

/* ---- between graph.c (in the child) and supervise.c (the parent) ---- */

enum letw_graph_phase {
	LETW_PHASE_START = 0,
	LETW_PHASE_SINK,     /* creating our sink: it opens report -o's file */
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
	int interrupted;         /* the signal that stopped the child's graph
				  * (SIGINT, SIGTERM, SIGHUP), 0: none; a
				  * Ctrl-C may reach the child before the
				  * parent's handler runs */
	volatile int alloc_failed; /* an allocation of the child failed
				    * (allocwatch.c): its memory limit */
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
