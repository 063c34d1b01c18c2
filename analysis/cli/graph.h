/* SPDX-License-Identifier: MIT */
/*
 * Builds and runs a babeltrace2 graph: sources for a trace (every CTF trace
 * directory under a path, one src.ctf.fs each, or one src.ctf.lttng-live
 * for a net:// URL) → utils.muxer → one of our sink classes, linked into
 * the CLI so the CLI and its plugin can never disagree.
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
};

/* Returns 0 when the graph ran to its end, -1 after printing why not.
 * *result is filled by the sink. */
int letw_graph_run(const struct letw_graph_opts *o, struct letw_sink_result *result);

#endif /* LETW_CLI_GRAPH_H */
