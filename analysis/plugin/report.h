/* SPDX-License-Identifier: MIT */
/*
 * sink.etw.report: per process and per rundown pass, whether the pass is
 * complete and consistent. State shared by report.c (event intake),
 * report_check.c (end-of-stream analysis) and report_out.c (text / JSON).
 */
#ifndef LETW_BT_REPORT_H
#define LETW_BT_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <babeltrace2/babeltrace.h>

#include "codemap.h"
#include "event.h"
#include "sink_common.h"

#define LETW_EXAMPLES 5

enum letw_pass_status {
	LETW_PASS_COMPLETE = 0,
	LETW_PASS_LOSSY,        /* paired, but records or events were lost */
	LETW_PASS_INCONSISTENT, /* paired, nothing lost, wrong contents */
	LETW_PASS_TRUNCATED,    /* init without complete, or the reverse */
	LETW_PASS_OVERWRITTEN,  /* not whole, and packets of its window are
				   missing from a channel that discarded no
				   event: an overwrite-mode ring buffer
				   (snapshot, flight recorder) overwrote them;
				   undersized buffers, not a bug */
	LETW_PASS_NR_STATUS,
};

/* Why a pass is not complete, from what the trace shows (report_cause.c):
 * the status says what is wrong with the pass, this what made it so. */
enum letw_pass_cause {
	LETW_CAUSE_NONE = 0,       /* complete */
	LETW_CAUSE_OVERWRITTEN,    /* packets of its window missing, the
				      channel discarded no event */
	LETW_CAUSE_PACKETS_LOST,   /* packets missing from a channel that
				      discards events: not its ring buffer */
	LETW_CAUSE_EVENTS_DISCARDED, /* the channel discarded events in its
					window: sub-buffers full */
	LETW_CAUSE_MAYBE_OVERWRITTEN, /* a stream begins late, and the trace
					 cannot say whether it lost packets */
	LETW_CAUSE_TRACE_ENDS,     /* no Complete, nothing later in the trace */
	LETW_CAUSE_PROCESS_ENDS,   /* no Complete, the process's events end in
				      the pass while others' go on */
	LETW_CAUSE_COMPLETE_MISSING, /* no Complete, the process went on */
	LETW_CAUSE_COMPLETE_DAMAGED, /* its Complete's counters are no counts */
	LETW_CAUSE_TRACE_BEGINS,   /* no Init, the pass began before the trace */
	LETW_CAUSE_INIT_MISSING,   /* no Init, otherwise */
	LETW_CAUSE_RECORDS_MISSING, /* fewer records, no loss in its window */
	LETW_CAUSE_PASS_ID_REPEATS, /* inconsistent: */
	LETW_CAUSE_MORE_RECORDS,
	LETW_CAUSE_DUPLICATES,
	LETW_CAUSE_UNLOADED_BEFORE,
	LETW_CAUSE_MISSING,
};

/* Times read from a trace may be anything: compared and moved without
 * signed overflow. */
static inline int letw_ns_after(int64_t a, int64_t b, uint64_t by)
{
	return a > b && (uint64_t)a - (uint64_t)b > by;
}

static inline int64_t letw_ns_minus(int64_t t, uint64_t d)
{
	return d > (uint64_t)t - (uint64_t)INT64_MIN ? INT64_MIN : (int64_t)((uint64_t)t - d);
}

struct letw_example {
	uint64_t start;
	int64_t ts_ns; /* unload time for stale/raced, load time for missing */
	const char *name; /* borrowed from the process's codemap */
};

struct letw_pass {
	int64_t vpid;           /* the process key (sink_common.h) */
	enum letw_flavour fl;
	uint64_t pass_id;
	uint16_t instance_id;
	int has_init, has_complete;
	int64_t init_ns, complete_ns, first_ns, last_ns;
	uint32_t control_code;
	uint64_t match_any_keyword;
	uint64_t emitted, skipped_raced, duration_ns; /* from the complete */
	/* Its Complete came with this counter no count (letw_ev_bad_counter):
	 * has_complete stays 0, so nothing judges the pass by it; else NULL. */
	const char *complete_damaged;
	uint64_t seen_methods, seen_stubs, seen_modules;
	uint64_t *code_keys, *module_keys; /* starts / module ids seen */
	size_t ncode, capcode, nmod, capmod;
	/* filled by the end-of-stream analysis */
	uint64_t duplicates;
	uint64_t stale;      /* record of code unloaded before the pass began */
	uint64_t raced;      /* record of code unloaded during the pass: legal */
	uint64_t missing;    /* live before the pass, never unloaded, absent */
	uint64_t missing_maybe_raced; /* absent, unloaded after the pass */
	uint64_t missing_overwritten; /* absent, but its unload may be in
					 packets the ring buffer overwrote */
	uint64_t missing_maybe_discarded; /* absent, but its unload may be
					     among events the tracer
					     discarded after its load */
	uint64_t bytes_seen;  /* estimated encoded size of its records */
	uint64_t bytes_needed; /* overwritten: estimated size of the whole pass */
	uint64_t discarded_events, discarded_msgs;
	int discarded_unknown_count;
	struct letw_example stale_ex[LETW_EXAMPLES], missing_ex[LETW_EXAMPLES];
	unsigned n_stale_ex, n_missing_ex;
	enum letw_pass_status status;
	enum letw_pass_cause cause;
	const struct letw_gap *gap; /* the lost packets the cause names */
};

struct letw_rproc {
	int64_t vpid;           /* the process key (sink_common.h) */
	struct letw_codemap map;
	long open[2];          /* index of the open pass per flavour, or -1 */
	uint64_t orphan_records; /* rundown records outside any pass */
	uint64_t orphan_bytes;   /* their estimated size (see record_bytes) */
	uint64_t events;
	int64_t first_ns, last_ns; /* its first and latest event */
	int64_t last_pass_ns;      /* its latest Init or Complete, */
	uint64_t last_pass_id;     /* ... of this pass */
	int no_pass; /* letw_sink_passless: the trace records passes, none of
		      * this process's (set at the end) */
};

struct letw_discard {
	int64_t begin_ns, end_ns;
	int has_times, has_count, packets;
	uint64_t count;
	int64_t vpid; /* from the trace environment, or -1: any process */
	int has_vpid;
	/* Its stream's entry in the trace facts (which hold a reference to
	 * every stream a message named), or SIZE_MAX. */
	size_t facts_idx;
};

struct letw_stream_facts;

enum letw_gap_kind {
	LETW_GAP_SEQ_SKIP,  /* packet sequence numbers skip (discarded-packets
			       message): count packets lost */
	LETW_GAP_FIRST_SEQ, /* a stream beginning late whose first packet is
			       numbered count: the packets before it lost */
	LETW_GAP_LATE,      /* a stream beginning late (count ms) whose
			       packet numbers are unknown: it may have lost
			       packets before its first */
};

/* A window in which a stream lost (or may have lost) packets: [begin, end]. */
struct letw_gap {
	int64_t begin_ns, end_ns;
	int has_vpid;
	int64_t vpid;
	enum letw_gap_kind kind;
	uint64_t count;
	/* Its channel discarded events (in the trace or, per its first
	 * packet, before it): a discard-mode channel, whose ring buffer
	 * never overwrites; its packets went missing after it. */
	int discard_mode;
	const struct letw_stream_facts *sf; /* the stream, or NULL */
};

struct letw_report {
	struct letw_sink base; /* first: the component's user data */
	int json, fail_on_incomplete;
	char *output_path;
	char *chunk; /* the "chunk" parameter, or NULL */
	/* A new file next to output_path, made when the report is to be
	 * written (one made and removed at initialization proves it can
	 * be, before reading a trace), renamed to output_path once the
	 * report is written: a failed or interrupted read, or an
	 * output_path inside the trace being read, leaves output_path as it
	 * was, and a reader that dies (a damaged trace, SIGTERM to
	 * babeltrace2, which has no supervisor to clean up) leaves no
	 * temporary file. */
	char *tmp_path;
	FILE *out;
	struct letw_rproc *procs;
	size_t nprocs, capprocs;
	struct letw_pass *passes;
	size_t npasses, cappasses;
	struct letw_discard *discards;
	size_t ndiscards, capdiscards;
	uint64_t discarded_total, discarded_unattributed;
	struct letw_gap *gaps; /* built by letw_report_gaps */
	size_t ngaps;
	/* The trace's first packet or event and its last event (also by
	 * letw_report_gaps): whether a pass was cut by the trace's ends. */
	int64_t span_first, span_last;
	int passless; /* processes with no_pass */
	int passless_judged; /* letw_sink_passless_judged: they make the
			      * trace incomplete; else a note */
};

bt_component_class_initialize_method_status
letw_report_initialize(bt_self_component_sink *self,
		       bt_self_component_sink_configuration *config,
		       const bt_value *params, void *init_data);
void letw_report_finalize(bt_self_component_sink *self);

/* report_gaps.c: the windows where packets were lost (discarded-packets
 * messages, streams whose first packet begins after the trace's: from the
 * trace facts). */
int letw_report_gaps(struct letw_report *r);
/* The gap of a stream that may carry the events of process key proc
 * (sink_common.h) in [a, b], the surest first (packets known lost from a
 * channel that discarded no event, then from one that did, then maybe
 * lost); NULL when none. */
const struct letw_gap *letw_report_gap_in(const struct letw_report *r, int64_t proc,
					  int64_t a, int64_t b);
/* 1 when the gap's packets are known lost (not only maybe). */
static inline int letw_gap_certain(const struct letw_gap *g)
{
	return g->kind != LETW_GAP_LATE;
}

/* report_cause.c: a pass's final status (overwritten or not) and its
 * cause, once the analysis fields are filled; and the words for it, the
 * same in the text and the JSON report. */
void letw_report_cause(const struct letw_report *r, struct letw_pass *ps,
		       const struct letw_rproc *p);
const char *letw_pass_cause_name(enum letw_pass_cause c);
/* The cause in words into buf (NUL-terminated, cut to len); "" when the
 * pass is complete. */
void letw_pass_cause_text(const struct letw_report *r, const struct letw_pass *ps,
			  char *buf, size_t len);

/* report_check.c: fills the analysis fields of every pass; returns the
 * number of passes that are not complete, or -ENOMEM. */
int letw_report_check(struct letw_report *r);
const char *letw_pass_status_name(enum letw_pass_status st);

/* report_out.c */
void letw_report_write_text(const struct letw_report *r, FILE *f);
void letw_report_write_json(const struct letw_report *r, FILE *f);

/* report_file.c: check r->output_path (at initialization, so a bad path
 * fails before the trace is read: a device or FIFO is opened there, a
 * regular file's temporary file made and removed), open the temporary
 * file when the report is to be written (r->out, r->tmp_path), and put
 * the finished report in place. Return 0 or a negative errno / -1, with
 * an error cause. */
int letw_report_open_output(struct letw_report *r);
/* probe: made only to be removed at once (letw_report_open_output's
 * check): the old file's mode and owner are not given to it, and a
 * failure to give them, said when the real one is made, is not said twice. */
int letw_report_open_temp(struct letw_report *r, int probe);
int letw_report_put_in_place(struct letw_report *r);

#endif /* LETW_BT_REPORT_H */
