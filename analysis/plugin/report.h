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
	LETW_PASS_OVERWRITTEN,  /* not whole, and the ring buffer overwrote
				   packets in its window (snapshot, overwrite
				   channel): undersized buffers, not a bug */
	LETW_PASS_NR_STATUS,
};

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
	uint64_t bytes_seen;  /* estimated encoded size of its records */
	uint64_t bytes_needed; /* overwritten: estimated size of the whole pass */
	uint64_t discarded_events, discarded_msgs;
	int discarded_unknown_count;
	struct letw_example stale_ex[LETW_EXAMPLES], missing_ex[LETW_EXAMPLES];
	unsigned n_stale_ex, n_missing_ex;
	enum letw_pass_status status;
};

struct letw_rproc {
	int64_t vpid;           /* the process key (sink_common.h) */
	struct letw_codemap map;
	long open[2];          /* index of the open pass per flavour, or -1 */
	uint64_t orphan_records; /* rundown records outside any pass */
	uint64_t orphan_bytes;   /* their estimated size (see record_bytes) */
	uint64_t events;
};

struct letw_discard {
	int64_t begin_ns, end_ns;
	int has_times, has_count, packets;
	uint64_t count;
	int64_t vpid; /* from the trace environment, or -1: any process */
	int has_vpid;
};

/* A window in which a stream may have lost events: [begin, end]. */
struct letw_gap {
	int64_t begin_ns, end_ns;
	int has_vpid;
	int64_t vpid;
};

struct letw_report {
	struct letw_sink base; /* first: the component's user data */
	int json, fail_on_incomplete;
	char *output_path;
	char *chunk; /* the "chunk" parameter, or NULL */
	/* A new file next to output_path, made at initialization (fail
	 * before reading a trace), renamed to output_path once the report
	 * is written: a failed or interrupted read, or an output_path inside
	 * the trace being read, leaves output_path as it was. */
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
/* 1 when a stream that may carry the events of process key proc
 * (sink_common.h) lost packets in [a, b]. */
int letw_report_gap_in(const struct letw_report *r, int64_t proc, int64_t a, int64_t b);

/* report_check.c: fills the analysis fields of every pass; returns the
 * number of passes that are not complete, or -ENOMEM. */
int letw_report_check(struct letw_report *r);
const char *letw_pass_status_name(enum letw_pass_status st);

/* report_out.c */
void letw_report_write_text(const struct letw_report *r, FILE *f);
void letw_report_write_json(const struct letw_report *r, FILE *f);

#endif /* LETW_BT_REPORT_H */
