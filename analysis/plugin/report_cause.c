/* SPDX-License-Identifier: MIT */
/*
 * Why a rundown pass is not complete, from the evidence the trace holds,
 * and the words for it (one sentence, printed alike in the text and the
 * JSON report).
 *
 * The status says what is wrong with the pass (no Init or Complete, fewer
 * records than emitted, wrong contents); the cause what made it so, the
 * surest evidence first: packets missing in its window (report_gaps.c:
 * an overwrite-mode ring buffer when the channel discarded no event, lost
 * after the buffer when it did), events discarded in its window (a full
 * discard-mode channel), a stream that may have lost packets, then where
 * the pass stands in the trace: whether the trace, or only its process,
 * ends during it, or begins after it began.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "report.h"

/* Later events than this after a pass's last one show that its process
 * (or the trace) went on: events written while the pass was cut (the JIT
 * thread's, the other flavour's records of the same walk) come within
 * microseconds of it; VM stalls of 25 ms were seen. */
#define WENT_ON_NS 50000000 /* 50 ms */

const char *letw_pass_cause_name(enum letw_pass_cause c)
{
	static const char *const names[] = {
		[LETW_CAUSE_NONE] = "none",
		[LETW_CAUSE_OVERWRITTEN] = "overwritten",
		[LETW_CAUSE_PACKETS_LOST] = "packets_lost",
		[LETW_CAUSE_EVENTS_DISCARDED] = "events_discarded",
		[LETW_CAUSE_MAYBE_OVERWRITTEN] = "maybe_overwritten",
		[LETW_CAUSE_TRACE_ENDS] = "trace_ends",
		[LETW_CAUSE_PROCESS_ENDS] = "process_ends",
		[LETW_CAUSE_COMPLETE_MISSING] = "complete_missing",
		[LETW_CAUSE_COMPLETE_DAMAGED] = "complete_damaged",
		[LETW_CAUSE_TRACE_BEGINS] = "trace_begins",
		[LETW_CAUSE_INIT_MISSING] = "init_missing",
		[LETW_CAUSE_RECORDS_MISSING] = "records_missing",
		[LETW_CAUSE_PASS_ID_REPEATS] = "pass_id_repeats",
		[LETW_CAUSE_MORE_RECORDS] = "more_records",
		[LETW_CAUSE_DUPLICATES] = "duplicates",
		[LETW_CAUSE_UNLOADED_BEFORE] = "unloaded_before_pass",
		[LETW_CAUSE_MISSING] = "missing",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "none";
}

static uint64_t seen_of(const struct letw_pass *ps)
{
	return ps->seen_methods + ps->seen_stubs + ps->seen_modules;
}

/* What makes a paired pass with nothing lost inconsistent, the reason
 * that explains the others first. */
static enum letw_pass_cause inconsistency(const struct letw_report *r,
					  const struct letw_pass *ps)
{
	const struct letw_pass_ids *ids = letw_sink_pass_ids(&r->base, ps->vpid);

	if (ids && ids->repeats)
		return LETW_CAUSE_PASS_ID_REPEATS;
	if (seen_of(ps) > ps->emitted)
		return LETW_CAUSE_MORE_RECORDS;
	if (ps->duplicates)
		return LETW_CAUSE_DUPLICATES;
	if (ps->stale)
		return LETW_CAUSE_UNLOADED_BEFORE;
	return LETW_CAUSE_MISSING;
}

/* The same walk's other flavour (one walk runs both when the session
 * records both: one pass id) reached its Complete. Looked for in the whole
 * list: other processes' passes, muxed in by time from other streams, can
 * land between the two, and this runs only for a pass that was cut. */
static int twin_completed(const struct letw_report *r, const struct letw_pass *ps)
{
	for (size_t j = 0; j < r->npasses; j++) {
		const struct letw_pass *o = &r->passes[j];

		if (o->vpid == ps->vpid && o->pass_id == ps->pass_id && o->fl != ps->fl &&
		    o->instance_id == ps->instance_id)
			return o->has_complete;
	}
	return 0;
}

/* Whether the process lived on after the pass's last event: a later pass
 * began or ended (its latest Init or Complete is after it, and of another
 * pass than this walk's), the walk itself completed, or it wrote events
 * well after. */
static int process_went_on(const struct letw_report *r, const struct letw_pass *ps,
			   const struct letw_rproc *p)
{
	return (p && p->last_pass_ns > ps->last_ns && p->last_pass_id != ps->pass_id) ||
	       (p && letw_ns_after(p->last_ns, ps->last_ns, WENT_ON_NS)) ||
	       twin_completed(r, ps);
}

/* A pass cut at one end, and nothing lost that explains it. */
static enum letw_pass_cause where_cut(const struct letw_report *r, const struct letw_pass *ps,
				      const struct letw_rproc *p)
{
	if (!ps->has_init)
		return letw_ns_minus(ps->complete_ns, ps->duration_ns) < r->span_first ?
		       LETW_CAUSE_TRACE_BEGINS : LETW_CAUSE_INIT_MISSING;
	if (process_went_on(r, ps, p))
		return LETW_CAUSE_COMPLETE_MISSING;
	return letw_ns_after(r->span_last, ps->last_ns, WENT_ON_NS) ? LETW_CAUSE_PROCESS_ENDS :
								      LETW_CAUSE_TRACE_ENDS;
}

void letw_report_cause(const struct letw_report *r, struct letw_pass *ps,
		       const struct letw_rproc *p)
{
	uint64_t seen = seen_of(ps), n = seen, bytes = ps->bytes_seen;
	/* For a pass without its Init: from where the Init would be. */
	int64_t b = ps->has_init ? ps->init_ns :
		    ps->has_complete ? letw_ns_minus(ps->complete_ns, ps->duration_ns) :
		    ps->first_ns;
	int64_t e = ps->has_complete ? ps->complete_ns : ps->last_ns;
	const struct letw_gap *g;
	int cut = !ps->has_init || !ps->has_complete;

	ps->cause = LETW_CAUSE_NONE;
	ps->gap = NULL;
	if (ps->status == LETW_PASS_COMPLETE)
		return;
	/* What the trace shows itself, before any guess from its window. */
	if (ps->complete_damaged) {
		ps->cause = LETW_CAUSE_COMPLETE_DAMAGED;
		return;
	}
	g = letw_report_gap_in(r, ps->vpid, b, e);
	if (g && letw_gap_certain(g)) {
		ps->gap = g;
		ps->cause = g->discard_mode ? LETW_CAUSE_PACKETS_LOST : LETW_CAUSE_OVERWRITTEN;
	} else if ((cut || ps->status == LETW_PASS_LOSSY) &&
		   (ps->discarded_events || ps->discarded_unknown_count)) {
		ps->cause = LETW_CAUSE_EVENTS_DISCARDED;
	} else if (g) {
		ps->gap = g;
		ps->cause = LETW_CAUSE_MAYBE_OVERWRITTEN;
	} else if (cut) {
		ps->cause = where_cut(r, ps, p);
	} else if (ps->status == LETW_PASS_LOSSY) {
		ps->cause = LETW_CAUSE_RECORDS_MISSING;
	} else {
		ps->cause = inconsistency(r, ps);
	}
	if (ps->cause != LETW_CAUSE_OVERWRITTEN)
		return;
	/* Only here is the ring buffer to blame: say how big the pass is,
	 * rather than calling it truncated, lossy or inconsistent. */
	ps->status = LETW_PASS_OVERWRITTEN;
	/* Records of a pass whose Init was overwritten belong to no pass:
	 * size them from those when the pass itself kept none. */
	if (!n && p && p->orphan_records) {
		n = p->orphan_records;
		bytes = p->orphan_bytes;
	}
	/* Init + Complete + every record, at the size of those seen. */
	ps->bytes_needed = bytes + 2 * 48;
	if (ps->has_complete && n && ps->emitted > seen)
		ps->bytes_needed = bytes / n * ps->emitted + 2 * 48;
}

/* snprintf appending at *at, never past len. */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

static void say_inconsistency(const struct letw_pass *ps, enum letw_pass_cause c,
			      char *buf, size_t len, size_t *at)
{
	switch (c) {
	case LETW_CAUSE_PASS_ID_REPEATS:
		add(buf, len, at, "pass ids of this vpid repeat: " LETW_PASS_IDS_WHY);
		break;
	case LETW_CAUSE_MORE_RECORDS:
		add(buf, len, at, "%" PRIu64 " records, more than the %" PRIu64 " emitted",
		    seen_of(ps), ps->emitted);
		break;
	case LETW_CAUSE_DUPLICATES:
		add(buf, len, at, "%" PRIu64 " record(s) listed twice", ps->duplicates);
		break;
	case LETW_CAUSE_UNLOADED_BEFORE:
		add(buf, len, at, "%" PRIu64 " record(s) of code unloaded before the pass",
		    ps->stale);
		break;
	default:
		add(buf, len, at, "%" PRIu64 " region(s) of live code not listed", ps->missing);
		break;
	}
}

/* Where the gap's packets went missing, in a few words. */
static void say_gap(const struct letw_gap *g, char *buf, size_t len, size_t *at)
{
	const char *path = g->sf && g->sf->path[0] ? g->sf->path : "?";

	switch (g->kind) {
	case LETW_GAP_FIRST_SEQ:
		add(buf, len, at, "stream %s begins at packet_seq_num %" PRIu64
		    ", after the trace's first packet", path, g->count);
		break;
	case LETW_GAP_SEQ_SKIP:
		if (g->count)
			add(buf, len, at, "stream %s: its packet sequence numbers skip %" PRIu64,
			    path, g->count);
		else
			add(buf, len, at, "stream %s: its packet sequence numbers skip some", path);
		break;
	default:
		add(buf, len, at, "stream %s begins %" PRIu64 " ms after the trace's first packet",
		    path, g->count);
		break;
	}
}

void letw_pass_cause_text(const struct letw_report *r, const struct letw_pass *ps,
			  char *buf, size_t len)
{
	const char *fl = letw_flavour_name(ps->fl);
	size_t at = 0;

	buf[0] = '\0';
	if (ps->cause == LETW_CAUSE_NONE || !len)
		return;
	/* What is wrong with the pass, then why. */
	if (!ps->has_init)
		add(buf, len, &at, "no %s_init in the trace", fl);
	else if (ps->complete_damaged)
		add(buf, len, &at, "its %s_complete is damaged", fl);
	else if (!ps->has_complete)
		add(buf, len, &at, "no %s_complete in the trace", fl);
	else if (seen_of(ps) < ps->emitted)
		add(buf, len, &at, "%" PRIu64 " of %" PRIu64 " records in the trace",
		    seen_of(ps), ps->emitted);
	else
		say_inconsistency(ps, inconsistency(r, ps), buf, len, &at);
	switch (ps->cause) {
	case LETW_CAUSE_OVERWRITTEN:
		add(buf, len, &at, ": packets of its window are missing (");
		say_gap(ps->gap, buf, len, &at);
		add(buf, len, &at, ") from a channel that discarded no event: an overwrite-mode"
		    " ring buffer (snapshot, flight recorder) overwrote them");
		break;
	case LETW_CAUSE_PACKETS_LOST:
		add(buf, len, &at, ": packets of its window are missing (");
		say_gap(ps->gap, buf, len, &at);
		add(buf, len, &at, ") from a channel that discards events, whose ring buffer"
		    " overwrites none: lost after it (trace files removed by --tracefile-count,"
		    " or a damaged trace)");
		break;
	case LETW_CAUSE_EVENTS_DISCARDED:
		if (ps->discarded_events)
			add(buf, len, &at, ": %" PRIu64 "%s event(s) discarded in its window",
			    ps->discarded_events, ps->discarded_unknown_count ? "+" : "");
		else
			add(buf, len, &at, ": events discarded in its window (count unknown)");
		add(buf, len, &at, ": the channel's sub-buffers were full (discard mode; a"
		    " blocking channel or larger sub-buffers keep them)");
		break;
	case LETW_CAUSE_MAYBE_OVERWRITTEN:
		add(buf, len, &at, ": ");
		say_gap(ps->gap, buf, len, &at);
		add(buf, len, &at, " and the trace does not number its packets: if its channel"
		    " is in overwrite mode, the ring buffer overwrote the ones before");
		break;
	case LETW_CAUSE_TRACE_ENDS:
		add(buf, len, &at, ": the trace ends during the pass (session stopped or rotated"
		    " before it completed, or the process killed)");
		break;
	case LETW_CAUSE_PROCESS_ENDS:
		add(buf, len, &at, ": the process's events end during the pass while the trace"
		    " goes on (process killed or exited, or the event lost)");
		break;
	case LETW_CAUSE_COMPLETE_MISSING:
		add(buf, len, &at, ", though the process went on: the session stopped (and"
		    " started again) during the pass, or the event lost");
		break;
	case LETW_CAUSE_COMPLETE_DAMAGED:
		add(buf, len, &at, ": its field %s is not a count (past 2^48), so what the pass"
		    " emitted is unknown", ps->complete_damaged);
		break;
	case LETW_CAUSE_TRACE_BEGINS:
		add(buf, len, &at, ": the pass began before the trace (the session started or"
		    " a chunk rotated while it ran, or the trace's first packets overwritten)");
		break;
	case LETW_CAUSE_INIT_MISSING:
		/* Nothing lost is seen in its window (that cause comes
		 * first): more often than a loss, the session's events were
		 * switched on in the process after its buffers began (a
		 * polling process's pass, which goes to every session, while
		 * this one was starting). */
		add(buf, len, &at, ": the session did not record it (its events switched on while the"
		    " pass ran, e.g. started during another session's pass, or the event lost)");
		break;
	case LETW_CAUSE_RECORDS_MISSING:
		add(buf, len, &at, ", no loss seen in its window: records filtered out (an event"
		    " rule or filter on letw_rundown events) or lost unseen");
		break;
	default:
		/* Inconsistent: the reason is the cause. */
		break;
	}
	if (at >= len && len > 4)
		snprintf(buf + len - 4, 4, "...");
}
