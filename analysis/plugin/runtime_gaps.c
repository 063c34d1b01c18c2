/* SPDX-License-Identifier: MIT */
/*
 * Runtime events lost after a process's latest rundown pass (see below):
 * a loss the per-stream facts alone cannot call one, since a snapshot's
 * streams begin past packet 0 by design; it is one when a process's pass
 * came before it. Shared by every sink through the end of the graph.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "sink_common.h"

static int carries_runtime_events(const bt_stream *stream)
{
	const bt_stream_class *sc = bt_stream_borrow_class_const(stream);
	uint64_t n = bt_stream_class_get_event_class_count(sc);

	for (uint64_t i = 0; i < n; i++) {
		const char *name = bt_event_class_get_name(
			bt_stream_class_borrow_event_class_by_index_const(sc, i));

		if (name && !strncmp(name, "letw_runtime:", 13))
			return 1;
	}
	return 0;
}

/* Streams of one session begin together (at `lttng start`, at a
 * rotation: a few ms apart were seen), as in report_gaps.c. */
#define OPEN_SKEW_NS 50000000

/*
 * Runtime events lost after a process's latest rundown pass: every pass
 * reads complete, but the code loaded (or freed) between that pass and
 * the stream's first retained packet is not in the trace, so the outputs
 * lack it (a snapshot whose runtime channel wrapped while the pass sat in
 * a larger buffer of its own). A stream tells when its first packet is
 * numbered above 0 (the ones before it were overwritten, or removed), it
 * begins after the session's other streams did, in a channel that records
 * letw_runtime events, and after the pass. Then the trace is incomplete:
 * said against the stream, as the other losses are. (report_gaps.c uses
 * the same facts to explain a pass that is not whole.) Returns the
 * number of streams with a problem, or -ENOMEM.
 */
int letw_sink_runtime_gaps(struct letw_sink *s, int bad)
{
	struct letw_trace_facts *tf = &s->facts;
	int64_t earliest = INT64_MAX;

	for (size_t i = 0; i < tf->n; i++)
		if (tf->s[i].has_first && tf->s[i].first_ns < earliest)
			earliest = tf->s[i].first_ns;
	for (size_t i = 0; i < tf->n; i++) {
		const struct letw_stream_facts *f = &tf->s[i];
		const struct letw_vpid_ids *worst = NULL;
		int64_t vpid;
		int has_vpid;

		if (!f->stream || !f->has_first || !f->first_known || !f->first_seq ||
		    f->first_ns - earliest <= OPEN_SKEW_NS || !carries_runtime_events(f->stream))
			continue;
		has_vpid = letw_trace_env_vpid(f->stream, &vpid);
		for (size_t k = 0; k < s->nvids; k++) {
			const struct letw_vpid_ids *v = &s->vids[k];

			if (!v->has_init || v->last_init_ts >= f->first_ns ||
			    (has_vpid && letw_proc_vpid(v->vpid) != vpid))
				continue;
			if (!worst || v->last_init_ts < worst->last_init_ts)
				worst = v;
		}
		if (worst) {
			char label[LETW_PROC_LABEL_MAX];

			letw_sink_proc_label(s, worst->vpid, label);
			bad = letw_facts_flag(tf, i,
				"its first %" PRIu64 " packet(s) are not in the trace (overwritten), and it begins %.3f s after the latest rundown pass of process %s: runtime events (loads, unloads) between them are lost (take a pass just before a snapshot, `lttng-etw snapshot`, or give letw_runtime events a larger buffer)",
				f->first_seq, (double)(f->first_ns - worst->last_init_ts) / 1e9, label);
			if (bad < 0)
				return bad;
		}
	}
	return bad;
}
