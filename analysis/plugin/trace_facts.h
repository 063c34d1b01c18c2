/* SPDX-License-Identifier: MIT */
/*
 * Trace completeness: what the trace should hold against what the graph
 * delivered, per stream — the packets LTTng's index lists against the
 * packet messages read, packet sequence gaps (babeltrace2's
 * discarded-packets messages), discarded events, records with absurd
 * values — and stream files an index names but no stream came from
 * (deleted, emptied, replaced by a link to a device).
 *
 * One place for these facts: the shared consume loop (sink_common.c) feeds
 * them, letw_facts_finish() judges each stream at the end of the graph,
 * and the sinks read the verdict (the report prints it, perfmap warns).
 * Single-threaded, like the sink that owns it.
 */
#ifndef LETW_BT_TRACE_FACTS_H
#define LETW_BT_TRACE_FACTS_H

#include <stdint.h>
#include <stdio.h>
#include <babeltrace2/babeltrace.h>

#include "ctf_index.h"
#include "grow.h"

/* Counts read from a trace add up saturating: a damaged packet_seq_num
 * going back by one makes the reader report 2^64 - 2 discarded packets,
 * and with the next gap's 2 the sum wrapped to 0: "trace complete". */
static inline uint64_t letw_count_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A count no trace holds: babeltrace2 reports a tracer counter that went
 * back (a packet's events_discarded below the previous packet's, or a
 * packet_seq_num below) as a difference modulo 2^64 (seen: 18446744073709550963
 * discarded events, in a real session). Such a count is unknown, not huge. */
static inline int letw_count_plausible(uint64_t n)
{
	return n <= (UINT64_C(1) << 48);
}

struct letw_ev;

/* Files of a rotated stream a problem is in (paths owned by the facts'
 * files[]); none for a stream of one file, whose name says it, or whose
 * files do not say (no index 1.1). */
struct letw_file_list {
	const char **path;
	size_t n;
};

/* A stream the graph delivered, or (stream == NULL) a stream file an
 * index names that no stream came from: lost, or a later file of a
 * rotated stream (read as part of it) that its own index finds short. */
struct letw_stream_facts {
	const bt_stream *stream; /* referenced; NULL for an unread file */
	char *path;              /* src.ctf.fs names a stream by its first file */
	uint64_t packets;        /* packet-beginning messages */
	int has_first;           /* first_ns is known (the first packet's clock) */
	int64_t first_ns;        /* when the stream's first retained packet begins */
	uint64_t first_raw;      /* the same, in clock cycles */
	/* From the first packet's context in the stream file (LTTng's layout,
	 * letw_ctf_first_packet), after finish: its packet_seq_num (> 0:
	 * packets before it are not in the trace: overwritten, or in an
	 * earlier chunk) and events_discarded (> 0: its channel discards
	 * events, so it is no overwrite-mode one). */
	int first_known;
	uint64_t first_seq, first_discarded;
	int live;                /* read, but from no file (a live session's
				    stream): where it began is unknown */
	int64_t indexed;         /* packets its index file lists; -1: no index */
	uint64_t discarded_events;
	int discarded_uncounted; /* a discarded-events message without a count */
	int discarded_back;      /* one of ~2^64: the counter went back (also
				    uncounted) */
	uint64_t discarded_packets; /* sequence gaps, as babeltrace2 counts them */
	int seq_back;            /* a gap of ~2^64: a sequence number went back */
	uint64_t absurd;         /* lttng-etw records with impossible values */
	char absurd_example[96];
	/* Which file of a rotated stream holds them: the reader names the
	 * stream by its first file. Kept per packet, not per event: the
	 * current packet's beginning (raw clock), and the distinct ones of
	 * packets holding absurd records, in stream order. */
	int pkt_clock;           /* packets carry a beginning clock value */
	uint64_t pkt_raw;
	uint64_t *absurd_at;
	size_t nabsurd_at, absurd_at_cap;
	/* Every packet's beginning (raw clock), in the order read, for
	 * finish to count the packets read of each file of a rotated stream
	 * against that file's index: 8 bytes a packet, where babeltrace2
	 * keeps an index entry of its own several times that size. */
	struct letw_grow pkt_at;
	size_t npkt_at;
	/* After finish, of a stream of several walked files: those holding
	 * its absurd records, those where its discarded-events counter rose
	 * (or, the first, starts above 0), and those of which fewer packets
	 * were read than their index lists. */
	struct letw_file_list absurd_in, discarded_in, short_in;
	size_t part_of;          /* for an unread file: 1 + the index of the
				    stream it is a later file of; 0: none */
	char *problem;           /* set by letw_facts_finish(); NULL: whole */
	char *note;              /* a check that could not be made */
};

/* A stream file walked packet by packet (LTTng's layout, index 1.1):
 * which stream it belongs to and its packet sequence numbers, to say in
 * which file of a rotated stream its sequence gaps are. */
struct letw_file_walk {
	char *path;
	struct letw_ctf_walk w;
	uint64_t indexed;   /* packets its index lists */
	int said;           /* its own check found it short (a problem
			       of its own): its packets read are not judged */
};

struct letw_trace_facts {
	struct letw_stream_facts *s;
	size_t n, cap;
	struct letw_file_walk *files;
	size_t nfiles, files_cap;
	size_t last;       /* index of the last stream looked up */
	int finished;
	int problems;      /* streams with a problem, after finish */
};

void letw_facts_init(struct letw_trace_facts *f);
void letw_facts_fini(struct letw_trace_facts *f);

/* Feed a message (stream beginning, packet beginning, discarded events or
 * packets; anything else is ignored). Returns 0 or -ENOMEM. */
int letw_facts_message(struct letw_trace_facts *f, const bt_message *msg);
/* A decoded lttng-etw record with impossible values (see
 * letw_ev_absurd()); returns 0 or -ENOMEM. */
int letw_facts_absurd(struct letw_trace_facts *f, const bt_stream *stream,
		      const char *what);

/* Cross-check every stream with LTTng's index files and judge it.
 * Returns the number of streams with a problem, or -ENOMEM. */
int letw_facts_finish(struct letw_trace_facts *f);

/* After finish: packets of some stream are not in the trace (its first
 * packet numbered above 0: overwritten, or in an earlier chunk; sequence
 * gaps or numbers going back; a stream with a problem; a stream read live,
 * from wherever the reader joined), so whatever they held may be missing. */
static inline int letw_facts_lost_packets(const struct letw_trace_facts *f)
{
	for (size_t i = 0; i < f->n; i++)
		if ((f->s[i].first_known && f->s[i].first_seq) || f->s[i].discarded_packets ||
		    f->s[i].seq_back ||
		    f->s[i].problem || f->s[i].live)
			return 1;
	return 0;
}

/* After finish: some stream was read live. The live reader starts each
 * stream at its latest packet when it joins (babeltrace2's lttng-live
 * source), and the packet context that numbers it never reaches a sink:
 * packets before the join count as lost (letw_facts_lost_packets). */
static inline int letw_facts_live(const struct letw_trace_facts *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->s[i].live)
			return 1;
	return 0;
}

/* After finish: a note only a sink can make of stream i (runtime_gaps.c:
 * runtime events that may be lost after a process's latest pass); a note
 * does not make the trace incomplete. Returns 0 or -ENOMEM. */
int letw_facts_note(struct letw_trace_facts *f, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "STREAM: PROBLEM" lines (prefix before each), problems then notes. */
void letw_facts_write_text(const struct letw_trace_facts *f, FILE *out,
			   const char *prefix);
/* "trace":{"complete":...,"streams":[...]} (without braces around). */
void letw_facts_write_json(const struct letw_trace_facts *f, FILE *out);

#endif /* LETW_BT_TRACE_FACTS_H */
