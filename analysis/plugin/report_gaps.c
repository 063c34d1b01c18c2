/* SPDX-License-Identifier: MIT */
/*
 * Where the trace lost packets, per stream: the facts the report's
 * overwrite verdict stands on.
 *
 * Three sources: discarded-packets messages (src.ctf.fs sees a gap in a
 * stream's packet sequence numbers); streams whose first packet is
 * numbered above 0 (packets before it are gone: src.ctf.fs reports no gap
 * for those) and begins after the trace's earliest packet — what a
 * snapshot of an overwrite channel looks like, each per-CPU ring buffer
 * keeping its latest packets; and streams beginning late whose numbers
 * are unknown (not LTTng's layout), which may have lost packets. A late
 * stream whose first packet is numbered 0 lost nothing (LTTng begins a
 * stream's first packet when it creates the buffer, which may be late:
 * a process registering late with per-process buffers).
 *
 * No LTTng trace says whether a channel was in overwrite or discard mode
 * (not its metadata, not its packets). What tells is that a discard-mode
 * channel, when full, drops events and counts them (events_discarded):
 * a stream whose channel discarded events belongs to a discard-mode
 * channel, whose ring buffer never overwrites, so packets it lacks were
 * lost after the buffer (trace files removed by --tracefile-count, a
 * damaged trace), and a late beginning there loses nothing.
 *
 * A stream of a per-process buffer carries its vpid in the trace
 * environment; any other stream may carry any process's events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define OPEN_SKEW_NS 50000000 /* 50 ms */

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;

	return x < y ? -1 : x > y;
}

/* The channels (stream classes) that discarded events, in any of their
 * streams: sorted, for discard_mode(). NULL and *n 0 when none. */
static int discard_classes(const struct letw_trace_facts *tf, const void ***out, size_t *n)
{
	const void **c = malloc((tf->n ? tf->n : 1) * sizeof(*c));

	*n = 0;
	*out = c;
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < tf->n; i++) {
		const struct letw_stream_facts *f = &tf->s[i];

		if (f->stream && (f->discarded_events || f->discarded_uncounted ||
				  (f->first_known && f->first_discarded)))
			c[(*n)++] = bt_stream_borrow_class_const(f->stream);
	}
	qsort(c, *n, sizeof(*c), cmp_ptr);
	return 0;
}

static int discard_mode(const void *const *classes, size_t n, const struct letw_stream_facts *f)
{
	const void *sc;

	if (!f || !f->stream)
		return 0;
	sc = bt_stream_borrow_class_const(f->stream);
	return bsearch(&sc, classes, n, sizeof(*classes), cmp_ptr) != NULL;
}

/* The trace's first packet or event, and its last event. */
static void trace_span(struct letw_report *r, int64_t earliest)
{
	r->span_first = earliest;
	r->span_last = INT64_MIN;
	for (size_t i = 0; i < r->nprocs; i++) {
		if (r->procs[i].first_ns < r->span_first)
			r->span_first = r->procs[i].first_ns;
		if (r->procs[i].last_ns > r->span_last)
			r->span_last = r->procs[i].last_ns;
	}
}

int letw_report_gaps(struct letw_report *r)
{
	int64_t earliest = INT64_MAX;
	size_t i, n = 0, ndc;
	const void **dc = NULL;

	const struct letw_trace_facts *tf = &r->base.facts;

	free(r->gaps);
	r->gaps = calloc(tf->n + r->ndiscards + 1, sizeof(*r->gaps));
	if (!r->gaps || discard_classes(tf, &dc, &ndc)) {
		free(dc);
		return -ENOMEM;
	}
	/* The per-stream first packets come from the trace facts (sink_common
	 * feeds them every packet beginning). */
	for (i = 0; i < tf->n; i++)
		if (tf->s[i].has_first && tf->s[i].first_ns < earliest)
			earliest = tf->s[i].first_ns;
	trace_span(r, earliest);
	for (i = 0; i < tf->n; i++) {
		const struct letw_stream_facts *f = &tf->s[i];
		struct letw_gap g = { INT64_MIN, 0, 0, 0, LETW_GAP_LATE, 0, 0, f };

		if (!f->has_first || !f->stream)
			continue;
		/* Streams of a session open together at `lttng start` or at
		 * a rotation (a few ms apart were seen); only one beginning
		 * later may have lost older packets. Not the earliest ones:
		 * in a rotated chunk every stream's first packet is numbered
		 * on from the chunk before. */
		if (!letw_ns_after(f->first_ns, earliest, OPEN_SKEW_NS))
			continue;
		if (f->first_known && !f->first_seq)
			continue;
		g.end_ns = f->first_ns;
		g.has_vpid = letw_trace_env_vpid(f->stream, &g.vpid);
		g.discard_mode = discard_mode(dc, ndc, f);
		if (f->first_known) {
			g.kind = LETW_GAP_FIRST_SEQ;
			g.count = f->first_seq;
		} else if (g.discard_mode) {
			/* Maybe lost, in a channel that loses no packets. */
			continue;
		} else {
			g.count = ((uint64_t)f->first_ns - (uint64_t)earliest) / 1000000;
		}
		r->gaps[n++] = g;
	}
	for (i = 0; i < r->ndiscards; i++) {
		const struct letw_discard *d = &r->discards[i];
		const struct letw_stream_facts *f = d->facts_idx < tf->n ? &tf->s[d->facts_idx] : NULL;

		if (!d->packets)
			continue;
		r->gaps[n++] = (struct letw_gap){
			d->has_times ? d->begin_ns : INT64_MIN,
			d->has_times ? d->end_ns : INT64_MAX, d->has_vpid, d->vpid,
			LETW_GAP_SEQ_SKIP, d->has_count ? d->count : 0,
			discard_mode(dc, ndc, f), f };
	}
	free(dc);
	r->ngaps = n;
	return 0;
}

/* The surer a gap, the higher. */
static int rank(const struct letw_gap *g)
{
	return !letw_gap_certain(g) ? 1 : g->discard_mode ? 2 : 3;
}

const struct letw_gap *letw_report_gap_in(const struct letw_report *r, int64_t proc,
					  int64_t a, int64_t b)
{
	/* A stream's environment gives a vpid, not a pid namespace (as in
	 * report_check.c): a gap counts for every process of that vpid. */
	int64_t vpid = letw_proc_vpid(proc);
	const struct letw_gap *best = NULL;

	for (size_t i = 0; i < r->ngaps; i++) {
		const struct letw_gap *g = &r->gaps[i];

		if (g->has_vpid && g->vpid != vpid)
			continue;
		if (g->end_ns < a || g->begin_ns > b)
			continue;
		if (!best || rank(g) > rank(best))
			best = g;
		if (rank(best) == 3)
			break;
	}
	return best;
}
