/* SPDX-License-Identifier: MIT */
/* What perfmap, jitdump and report share around letw_graph_run(), in the
 * CLI's own process: the options, the chunk loop of a rotated session and
 * the verdict, so that the three commands cannot drift apart. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "graph.h"
#include "traces.h"

int letw_graph_opt(int c, const char *arg, struct letw_graph_opts *o)
{
	char *end;

	switch (c) {
	case LETW_OPT_PROGRESS: o->progress = 1; return 1;
	case LETW_OPT_NO_PROGRESS: o->progress = 0; return 1;
	case LETW_OPT_ALLOW_INCOMPLETE: o->allow_incomplete = 1; return 1;
	case 'v': o->verbose = 1; return 1;
	case LETW_OPT_STALL:
		o->stall_timeout = strtod(arg, &end);
		if (end == arg || *end || !(o->stall_timeout > 0)) {
			letw_err("--stall-timeout: expected a positive number of seconds, not `%s`", arg);
			return -1;
		}
		return 1;
	case LETW_OPT_MEMORY: {
		unsigned long long v;

		errno = 0;
		v = strtoull(arg, &end, 10);
		if (end == arg || *end || v == 0 || errno || *arg == '-') {
			letw_err("--memory-limit: expected a positive number of MiB, not `%s`", arg);
			return -1;
		}
		o->memory_limit_mib = v;
		return 1;
	}
	default:
		return 0;
	}
}

int letw_graph_verdict(const char *cmd, const struct letw_graph_opts *o,
		       const char *chunk, const struct letw_sink_result *r)
{
	const char *pre = chunk ? "chunk " : "", *name = chunk ? chunk : "",
		   *sep = chunk ? ": " : "";
	int ret = LETW_EXIT_OK;

	if (r->incomplete_streams) {
		letw_err("%s: %s%s%sthe trace is incomplete (%d stream(s) with missing or damaged data, listed %s)%s",
			 cmd, pre, name, sep, r->incomplete_streams,
			 o->sink == LETW_SINK_REPORT ? "in the report" : "above",
			 o->allow_incomplete ? "; --allow-incomplete: exit status 0" :
			 o->sink == LETW_SINK_REPORT ? "" :
						       "; exit status 3 (--allow-incomplete to accept)");
		if (!o->allow_incomplete)
			ret = LETW_EXIT_INCOMPLETE;
	}
	if (r->mixed_processes) {
		/* perfmap, jitdump: a vpid that was several processes (their
		 * warnings above say which); report judges its passes instead. */
		letw_err("%s: %s%s%s%d process id(s) stood for more than one process (see above): their output mixes them%s",
			 cmd, pre, name, sep, r->mixed_processes,
			 o->allow_incomplete ? "; --allow-incomplete: exit status 0" :
					       "; exit status 3 (--allow-incomplete to accept)");
		if (!o->allow_incomplete)
			ret = LETW_EXIT_INCOMPLETE;
	}
	if (r->passless_processes) {
		/* The report lists them and, as for its passes, exits 3. */
		letw_err("%s: %s%s%s%d process(es) with events but no rundown pass (%s): the code each loaded before its first event in the trace is in no pass%s%s",
			 cmd, pre, name, sep, r->passless_processes,
			 o->sink == LETW_SINK_REPORT ? "listed in the report" : "listed above",
			 o->sink == LETW_SINK_PERFMAP ? ", nor in the map" :
			 o->sink == LETW_SINK_REPORT ? "" : ", nor in the dump",
			 o->sink == LETW_SINK_REPORT ? "" :
			 o->allow_incomplete ? "; --allow-incomplete: exit status 0" :
					       "; exit status 3 (--allow-incomplete to accept)");
		if (!o->allow_incomplete || o->sink == LETW_SINK_REPORT)
			ret = LETW_EXIT_INCOMPLETE;
	}
	if (r->incomplete_passes && o->sink == LETW_SINK_REPORT) {
		letw_err("%s: %s%s%s%d rundown pass(es) not complete", cmd, pre, name, sep,
			 r->incomplete_passes);
		ret = LETW_EXIT_INCOMPLETE;
	} else if (r->incomplete_passes) {
		/* perfmap, jitdump: passes truncated or lossy (listed above by
		 * the sink), whose missing records are code the output lacks. */
		letw_err("%s: %s%s%s%d rundown pass(es) not complete (see above): the %s may lack code%s",
			 cmd, pre, name, sep, r->incomplete_passes,
			 o->sink == LETW_SINK_PERFMAP ? "map" : "dump",
			 o->allow_incomplete ? "; --allow-incomplete: exit status 0" :
					       "; exit status 3 (--allow-incomplete to accept)");
		if (!o->allow_incomplete)
			ret = LETW_EXIT_INCOMPLETE;
	}
	return ret;
}

/* A chunk read whole without one lttng-etw event: the traced processes
 * were idle (or untraced) while it recorded, as a timer rotation gives. */
#define CHUNK_EMPTY (-1)

/* One run; returns the exit status of that run, or CHUNK_EMPTY. */
static int run_one(struct letw_graph_opts *o, const char *cmd, const struct letw_chunk *c,
		   letw_chunk_params_fn params, letw_chunk_done_fn done, void *data)
{
	struct letw_sink_result res;
	bt_value *p = params(c, data);
	int ret;

	if (!p)
		return LETW_EXIT_ERROR;
	o->trace = c->trace;
	o->params = p;
	ret = letw_graph_run(o, &res);
	o->params = NULL;
	bt_value_put_ref(p);
	if (ret && c->name && res.no_letw_events)
		return CHUNK_EMPTY;
	if (ret)
		return LETW_EXIT_ERROR;
	if (done)
		done(c, &res, data);
	return letw_graph_verdict(cmd, o, c->name, &res);
}

/* The worse of two exit statuses: an error, then an incomplete trace. */
static int worst_exit(int a, int b)
{
	if (a == LETW_EXIT_ERROR || b == LETW_EXIT_ERROR)
		return LETW_EXIT_ERROR;
	return a != LETW_EXIT_OK ? a : b;
}

int letw_graph_run_chunks(struct letw_graph_opts *o, const char *trace,
			  const char *cmd, letw_chunk_params_fn params,
			  letw_chunk_done_fn done, void *data)
{
	struct letw_traces chunks;
	int ret = LETW_EXIT_OK;
	size_t i, empty = 0;
	char *recording = letw_lttng_recording_into(trace);

	/* A session still recording there: what its consumers have not
	 * written yet is not in the files, and the last packets and chunk
	 * may be cut. Read, said, and never called complete (analysis
	 * audit: `report` said "trace complete", exit 0, and perfmap wrote
	 * 582 of the 940 regions the stopped trace holds). */
	if (recording) {
		char *q = letw_shell_quote(recording); /* a command to paste */

		letw_err("%s: session `%s` is still recording into `%s`: what it has not written yet is not read (stop it first: `lttng stop %s`; or read it live)",
			 cmd, recording, trace, q ? q : recording);
		free(q);
	}
	if (letw_trace_chunks(trace, &chunks)) {
		free(recording);
		return LETW_EXIT_ERROR;
	}
	if (!chunks.n) {
		struct letw_chunk c = { trace, NULL };

		ret = run_one(o, cmd, &c, params, done, data);
	}
	for (i = 0; i < chunks.n; i++) {
		struct letw_chunk c = { NULL, letw_trace_chunk_name(chunks.dir[i]) };
		char *path;
		int r;

		if (asprintf(&path, "%s/%s", trace, chunks.dir[i]) < 0) {
			letw_err("out of memory");
			ret = LETW_EXIT_ERROR;
			break;
		}
		c.trace = path;
		r = run_one(o, cmd, &c, params, done, data);
		free(path);
		if (letw_graph_stopped) {
			ret = LETW_EXIT_ERROR; /* interrupted or output closed: said above */
			break;
		}
		/* One the processes were idle through (a timer rotation)
		 * holds no lttng-etw event at all: that is no error of the
		 * session's, unless no chunk holds any (then the session did
		 * not record lttng-etw's events, checked below). */
		if (r == CHUNK_EMPTY) {
			letw_note("%s: chunk %s holds no lttng-etw event (the traced processes idle, or untraced, while it recorded): skipped",
				  cmd, c.name);
			empty++;
			continue;
		}
		/* A chunk that cannot be read says so and the others are
		 * still read: each chunk is a trace of its own. perfmap and
		 * jitdump write each chunk into a directory of its own, so
		 * the other chunks' output stands; the exit status is still
		 * the worst. */
		if (r == LETW_EXIT_ERROR)
			letw_err("%s: chunk %s: not read (see above)%s", cmd, c.name,
				 i + 1 < chunks.n ? "; going on with the next chunk" : "");
		ret = worst_exit(ret, r);
	}
	if (empty && empty == chunks.n) {
		letw_err("%s: none of the %zu chunk(s) of `%s` holds an lttng-etw event", cmd, empty,
			 trace);
		ret = LETW_EXIT_ERROR;
	}
	if (recording && ret == LETW_EXIT_OK)
		ret = LETW_EXIT_INCOMPLETE;
	/* Interrupted ("interrupted" said above): 130 whatever the runs
	 * before gave, as a shell reports a command a signal stopped. */
	if (letw_interrupted)
		ret = LETW_EXIT_INTERRUPTED;
	free(recording);
	letw_traces_fini(&chunks);
	return ret;
}
