/* SPDX-License-Identifier: MIT */
/*
 * Runtime events that may be lost after a process's latest rundown pass
 * (see below): said by every sink through the end of the graph, as a note,
 * not a loss, since the trace cannot tell lost events from lost empty
 * packets.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "json_out.h"
#include "sink_common.h"

/* Streams of one session begin together (at `lttng start`, at a
 * rotation: a few ms apart were seen), as in report_gaps.c. */
#define OPEN_SKEW_NS 50000000

/*
 * Runtime events lost after a process's latest rundown pass would leave
 * the outputs without the code loaded (or with code freed) between that
 * pass and the stream's first retained packet, while every pass reads
 * complete: an audit's plain snapshot 2 s after the session's only pass,
 * the runtime channel wrapped, lacked 511 live methods. A stream shows it
 * when its first packet is numbered above 0 (the ones before it were
 * overwritten or removed), it begins after the session's other streams
 * did, in a channel that records letw_runtime events, and after the pass.
 *
 * Whether those packets held events, nothing in the trace says: each
 * `lttng snapshot record` closes the open packet of every stream, empty or
 * not, so an idle runtime channel fills its ring with empty packets and
 * shows the same (a second audit: exit 3 for a warmed-up JIT's periodic
 * snapshots, nothing lost). So it is a note on the stream, in the report
 * and on the other sinks' stderr, and the verdict stays what the passes
 * and the streams' losses make it. (report_gaps.c uses the same facts to
 * explain a pass that is not whole.)
 *
 * A jitdump (ops->dates_code) names each sample by the code there at its
 * time, so what it misses is what ran between the process's first pass
 * and the stream's first retained packet, whatever passes came later: an
 * audit's snapshot taken by `lttng-etw snapshot` after a 6 s profile, the
 * runtime channel wrapped, left 5-15 % of the JIT samples unnamed while
 * the latest pass (just before the record) made the rule above say
 * nothing. Its note measures from the first pass. Returns 0, or -ENOMEM.
 */
/* The pass a stream's late start is measured from: the process's first
 * (first), or its latest. */
static int64_t pass_ts(const struct letw_vpid_ids *v, int first)
{
	return first ? v->first_init_ts : v->last_init_ts;
}

int letw_sink_runtime_gaps(struct letw_sink *s)
{
	struct letw_trace_facts *tf = &s->facts;
	int64_t earliest = INT64_MAX;
	int first = s->ops->dates_code;

	for (size_t i = 0; i < tf->n; i++)
		if (tf->s[i].has_first && tf->s[i].first_ns < earliest)
			earliest = tf->s[i].first_ns;
	for (size_t i = 0; i < tf->n; i++) {
		const struct letw_stream_facts *f = &tf->s[i];
		const struct letw_vpid_ids *worst = NULL;
		int64_t vpid;
		int has_vpid;

		if (!f->stream || !f->has_first || !f->first_known || !f->first_seq ||
		    f->first_ns - earliest <= OPEN_SKEW_NS || !letw_stream_declares(f->stream, "letw_runtime:", ""))
			continue;
		has_vpid = letw_trace_env_vpid(f->stream, &vpid);
		for (size_t k = 0; k < s->nvids; k++) {
			const struct letw_vpid_ids *v = &s->vids[k];

			if (!v->has_init || pass_ts(v, first) >= f->first_ns ||
			    (has_vpid && letw_proc_vpid(v->vpid) != vpid))
				continue;
			if (!worst || pass_ts(v, first) < pass_ts(worst, first))
				worst = v;
		}
		if (worst) {
			char label[LETW_PROC_LABEL_MAX];

			letw_sink_proc_label(s, worst->vpid, label);
			if (letw_facts_note(tf, i,
				"runtime events may be lost: its first %" PRIu64 " packet(s) are not in the trace and it begins %.3f s after the %s rundown pass of process %s; code loaded %s freed between them is missing from the %s if those packets held any (empty packets, which each `lttng snapshot record` closes, look the same%s)",
				f->first_seq, (double)(f->first_ns - pass_ts(worst, first)) / 1e9,
				first ? "first" : "latest", label, first ? "and" : "or",
				first ? "dump, and samples perf took there of such code go unnamed," : "outputs",
				first ? "; size the runtime channel for the whole profile" :
					": `lttng-etw snapshot` takes a pass just before it records"))
				return -ENOMEM;
			if (!s->ops->quiet_incomplete) {
				char *path = letw_text_dup(f->path);

				/* One write: stderr is unbuffered (letw_text_dup). */
				fprintf(stderr, "%s: note: stream %s: %s\n", s->ops->name,
					path ? path : "(out of memory)", f->note);
				free(path);
			}
		}
	}
	return 0;
}
