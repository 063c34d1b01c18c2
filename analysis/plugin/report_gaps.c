/* SPDX-License-Identifier: MIT */
/*
 * Where the trace may have lost packets, per stream: the facts the report's
 * overwrite verdict stands on.
 *
 * Two sources: discarded-packets messages (src.ctf.fs sees a gap in a
 * stream's packet sequence numbers), and streams whose retained packets
 * begin after the trace's earliest packet — what a snapshot of an overwrite
 * channel looks like: each per-CPU ring buffer keeps its latest packets, so
 * each stream's history starts at a different time, and events before that
 * are gone (src.ctf.fs reports no gap for packets before the first one it
 * sees). A stream of a per-process buffer carries its vpid in the trace
 * environment; any other stream may carry any process's events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define OPEN_SKEW_NS 50000000 /* 50 ms */

int letw_report_gaps(struct letw_report *r)
{
	int64_t earliest = INT64_MAX;
	size_t i, n = 0;

	const struct letw_trace_facts *tf = &r->base.facts;

	free(r->gaps);
	r->gaps = calloc(tf->n + r->ndiscards + 1, sizeof(*r->gaps));
	if (!r->gaps)
		return -ENOMEM;
	/* The per-stream first packets come from the trace facts (sink_common
	 * feeds them every packet beginning). */
	for (i = 0; i < tf->n; i++)
		if (tf->s[i].has_first && tf->s[i].first_ns < earliest)
			earliest = tf->s[i].first_ns;
	for (i = 0; i < tf->n; i++) {
		const struct letw_stream_facts *f = &tf->s[i];
		int64_t vpid = 0;
		int has_vpid;

		if (!f->has_first || !f->stream)
			continue;
		has_vpid = letw_trace_env_vpid(f->stream, &vpid);

		/* Streams of a session open together at `lttng start` or at
		 * a rotation (a few ms apart were seen); one beginning much
		 * later lost its older packets. A heuristic until packet
		 * sequence numbers are read per stream (a first packet
		 * numbered > 0 says it exactly). */
		if (f->first_ns - earliest > OPEN_SKEW_NS)
			r->gaps[n++] = (struct letw_gap){ INT64_MIN, f->first_ns,
							  has_vpid, vpid };
	}
	for (i = 0; i < r->ndiscards; i++) {
		const struct letw_discard *d = &r->discards[i];

		if (d->packets)
			r->gaps[n++] = (struct letw_gap){
				d->has_times ? d->begin_ns : INT64_MIN,
				d->has_times ? d->end_ns : INT64_MAX, d->has_vpid, d->vpid };
	}
	r->ngaps = n;
	return 0;
}

int letw_report_gap_in(const struct letw_report *r, int64_t proc, int64_t a, int64_t b)
{
	/* A stream's environment gives a vpid, not a pid namespace (as in
	 * report_check.c): a gap counts for every process of that vpid. */
	int64_t vpid = letw_proc_vpid(proc);

	for (size_t i = 0; i < r->ngaps; i++) {
		const struct letw_gap *g = &r->gaps[i];

		if (g->has_vpid && g->vpid != vpid)
			continue;
		if (g->end_ns >= a && g->begin_ns <= b)
			return 1;
	}
	return 0;
}
