/* SPDX-License-Identifier: MIT */
/* Text and JSON renderings of the report (format documented in
 * analysis/README.md; the JSON keys are a stable interface for scripts). */
#include <inttypes.h>

#include "json_out.h"
#include "report.h"

static uint64_t seen_of(const struct letw_pass *ps)
{
	return ps->seen_methods + ps->seen_stubs + ps->seen_modules;
}

/* A cause names at most a stream's path and a few figures. */
#define CAUSE_MAX (4096 + 512)

/* A method's name comes from the trace: written as text. */
static void text_example(FILE *f, const char *what, const struct letw_example *ex,
			 const char *when)
{
	fprintf(f, "      %s: 0x%" PRIx64 " ", what, ex->start);
	letw_text_str(f, ex->name);
	fprintf(f, " (%s at %" PRId64 ")\n", when, ex->ts_ns);
}

static void text_pass(const struct letw_report *r, const struct letw_pass *ps, FILE *f)
{
	char cause[CAUSE_MAX];
	unsigned i;

	letw_pass_cause_text(r, ps, cause, sizeof(cause));
	fprintf(f, "  %s pass %" PRIu64 " (instance %u): %s", letw_flavour_name(ps->fl),
		ps->pass_id, ps->instance_id, letw_pass_status_name(ps->status));
	if (cause[0])
		fprintf(f, " (%s)", cause);
	fprintf(f, "\n");
	if (ps->has_complete)
		fprintf(f, "    records: %" PRIu64 " seen / %" PRIu64
			" emitted (methods %" PRIu64 ", stubs %" PRIu64 ", modules %" PRIu64
			"), skipped_raced %" PRIu64 ", walk %.3f ms\n",
			seen_of(ps), ps->emitted, ps->seen_methods, ps->seen_stubs,
			ps->seen_modules, ps->skipped_raced, ps->duration_ns / 1e6);
	else
		fprintf(f, "    records: %" PRIu64 " seen (methods %" PRIu64
			", stubs %" PRIu64 ", modules %" PRIu64 "), emitted unknown\n",
			seen_of(ps), ps->seen_methods, ps->seen_stubs, ps->seen_modules);
	fprintf(f, "    discarded events in the pass window: %" PRIu64 "%s\n",
		ps->discarded_events, ps->discarded_unknown_count ? " (+ uncounted)" : "");
	fprintf(f, "    duplicates: %" PRIu64 ", unloaded before the pass: %" PRIu64
		", unloaded during the pass (race): %" PRIu64 ", missing: %" PRIu64,
		ps->duplicates, ps->stale, ps->raced, ps->missing);
	if (ps->missing_maybe_raced)
		fprintf(f, " (+%" PRIu64 " absent but unloaded just after: may have raced)",
			ps->missing_maybe_raced);
	if (ps->missing_overwritten)
		fprintf(f, " (+%" PRIu64 " absent whose unload may be in lost packets)",
			ps->missing_overwritten);
	if (ps->missing_maybe_discarded)
		fprintf(f, " (+%" PRIu64 " absent whose unload may be among discarded events)",
			ps->missing_maybe_discarded);
	fprintf(f, "\n");
	if (ps->status == LETW_PASS_OVERWRITTEN)
		fprintf(f, "    overwritten: the pass's records alone need about %" PRIu64 " bytes of"
			" sub-buffer space in the channel recording letw_rundown events (give them"
			" a channel of their own); code bytes and line tables, if enabled, and the"
			" other flavour's records when one walk writes both, come on top\n",
			ps->bytes_needed);
	for (i = 0; i < ps->n_stale_ex; i++)
		text_example(f, "unloaded before the pass", &ps->stale_ex[i], "unload");
	for (i = 0; i < ps->n_missing_ex; i++)
		text_example(f, "missing", &ps->missing_ex[i], "loaded");
}

void letw_report_write_text(const struct letw_report *r, FILE *f)
{
	size_t i, j;
	int counts[LETW_PASS_NR_STATUS] = { 0 };

	for (i = 0; i < r->nprocs; i++) {
		const struct letw_rproc *p = &r->procs[i];
		const struct letw_pass_ids *ids = letw_sink_pass_ids(&r->base, p->vpid);
		char label[LETW_PROC_LABEL_MAX];

		fprintf(f, "process %s\n", letw_sink_proc_label(&r->base, p->vpid, label));
		if (ids && ids->repeats)
			fprintf(f, "  %" PRIu64 " pass id(s) seen again (first: pass %" PRIu64 " at %" PRId64
				"): " LETW_PASS_IDS_WHY "; its passes mix them and are not judged"
				" complete\n",
				ids->repeats, ids->first_id, ids->first_ns);
		for (j = 0; j < r->npasses; j++)
			if (r->passes[j].vpid == p->vpid)
				text_pass(r, &r->passes[j], f);
		if (p->orphan_records)
			fprintf(f, "  rundown records outside any pass: %" PRIu64 "\n",
				p->orphan_records);
		if (p->no_pass && r->passless_judged)
			fprintf(f, "  no rundown pass, in a trace that records passes and lost packets: the code it loaded before its first event (at %" PRId64 ") is in none (its pass was overwritten or lost, or is in another chunk%s)\n",
				p->first_ns, letw_facts_live(&r->base.facts) ?
				", or ran before this live reader joined: it starts each stream at its latest packet" : "");
		else if (p->no_pass)
			fprintf(f, "  note: no rundown pass, in a trace that records passes (first event at %" PRId64 "): if it ran before the session, the code it loaded before is in none (its pass dropped by an event rule's --filter?); if it started during the session it may have run none (polling, LETW_STATEDUMP=0, and gone within ~10 ms)\n",
				p->first_ns);
	}
	for (j = 0; j < r->npasses; j++)
		counts[r->passes[j].status]++;
	if (r->base.facts.problems)
		fprintf(f, "trace: incomplete: %d stream(s) with missing or damaged data\n",
			r->base.facts.problems);
	letw_facts_write_text(&r->base.facts, f, "  ");
	fprintf(f, "summary: %zu process(es), %zu pass(es): %d complete, %d truncated, %d lossy, %d inconsistent, %d overwritten; %" PRIu64 " discarded event(s) in the trace; trace %s\n",
		r->nprocs, r->npasses, counts[LETW_PASS_COMPLETE],
		counts[LETW_PASS_TRUNCATED], counts[LETW_PASS_LOSSY],
		counts[LETW_PASS_INCONSISTENT], counts[LETW_PASS_OVERWRITTEN],
		r->discarded_total, r->base.facts.problems ? "incomplete" : "complete");
	if (r->passless)
		fprintf(f, "processes without a rundown pass: %d%s\n", r->passless,
			!r->passless_judged ? " (a note: the trace lost no packet)" :
			letw_facts_live(&r->base.facts) ?
			" (read live, each stream from its latest packet when the reader joined: incomplete)" :
			" (the trace lost packets: incomplete)");
}

static void json_examples(FILE *f, const char *key, const struct letw_example *ex,
			  unsigned n)
{
	unsigned i;

	fprintf(f, ",\"%s\":[", key);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s{\"start\":\"0x%" PRIx64 "\",\"ts_ns\":%" PRId64 ",\"name\":",
			i ? "," : "", ex[i].start, ex[i].ts_ns);
		letw_json_str(f, ex[i].name);
		fputc('}', f);
	}
	fputc(']', f);
}

static void json_pass(const struct letw_report *r, const struct letw_pass *ps, FILE *f)
{
	char cause[CAUSE_MAX];

	fprintf(f, "{\"flavour\":\"%s\",\"pass_id\":%" PRIu64 ",\"instance_id\":%u,"
		"\"status\":\"%s\",",
		letw_flavour_name(ps->fl), ps->pass_id, ps->instance_id,
		letw_pass_status_name(ps->status));
	/* The words of the text report's status line, and their key. */
	letw_pass_cause_text(r, ps, cause, sizeof(cause));
	if (cause[0]) {
		fprintf(f, "\"cause\":\"%s\",\"cause_text\":", letw_pass_cause_name(ps->cause));
		letw_json_str(f, cause);
		fputc(',', f);
	} else {
		fprintf(f, "\"cause\":null,\"cause_text\":null,");
	}
	fprintf(f, "\"has_init\":%s,\"has_complete\":%s,",
		ps->has_init ? "true" : "false", ps->has_complete ? "true" : "false");
	/* Its Complete was there, with a counter that is no count: which,
	 * not its value (has_complete is false, so no counter is given). */
	if (ps->complete_damaged)
		fprintf(f, "\"complete_damaged\":\"%s\",", ps->complete_damaged);
	else
		fputs("\"complete_damaged\":null,", f);
	if (ps->has_init)
		fprintf(f, "\"init_ns\":%" PRId64 ",\"control_code\":%u,"
			"\"match_any_keyword\":\"0x%" PRIx64 "\",",
			ps->init_ns, ps->control_code, ps->match_any_keyword);
	if (ps->has_complete)
		fprintf(f, "\"complete_ns\":%" PRId64 ",\"emitted\":%" PRIu64
			",\"skipped_raced\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",",
			ps->complete_ns, ps->emitted, ps->skipped_raced, ps->duration_ns);
	fprintf(f, "\"seen\":%" PRIu64 ",\"seen_methods\":%" PRIu64 ",\"seen_stubs\":%" PRIu64
		",\"seen_modules\":%" PRIu64 ",\"discarded_events\":%" PRIu64
		",\"discarded_messages\":%" PRIu64 ",\"discarded_uncounted\":%s"
		",\"duplicates\":%" PRIu64 ",\"unloaded_before_pass\":%" PRIu64
		",\"raced_with_unload\":%" PRIu64 ",\"missing\":%" PRIu64
		",\"missing_maybe_raced\":%" PRIu64 ",\"missing_overwritten\":%" PRIu64
		",\"missing_maybe_discarded\":%" PRIu64 ",\"bytes_needed\":%" PRIu64,
		seen_of(ps), ps->seen_methods, ps->seen_stubs, ps->seen_modules,
		ps->discarded_events, ps->discarded_msgs,
		ps->discarded_unknown_count ? "true" : "false", ps->duplicates,
		ps->stale, ps->raced, ps->missing, ps->missing_maybe_raced,
		ps->missing_overwritten, ps->missing_maybe_discarded, ps->bytes_needed);
	json_examples(f, "unloaded_before_pass_examples", ps->stale_ex, ps->n_stale_ex);
	json_examples(f, "missing_examples", ps->missing_ex, ps->n_missing_ex);
	fputc('}', f);
}

void letw_report_write_json(const struct letw_report *r, FILE *f)
{
	size_t i, j;
	int first, counts[LETW_PASS_NR_STATUS] = { 0 };

	fputc('{', f);
	if (r->chunk) {
		fputs("\"chunk\":", f);
		letw_json_str(f, r->chunk);
		fputc(',', f);
	}
	fprintf(f, "\"processes\":[");
	for (i = 0; i < r->nprocs; i++) {
		const struct letw_rproc *p = &r->procs[i];
		const struct letw_pass_ids *ids = letw_sink_pass_ids(&r->base, p->vpid);

		fprintf(f, "%s{\"vpid\":%" PRId64, i ? "," : "", letw_proc_vpid(p->vpid));
		/* Whenever the trace recorded it: a reader keying processes
		 * by (pid_ns, vpid) needs it even when one namespace shows. */
		if (r->base.npidns)
			fprintf(f, ",\"pid_ns\":%" PRIu64, letw_sink_proc_pidns(&r->base, p->vpid));
		fprintf(f, ",\"orphan_records\":%" PRIu64 ",\"pass_id_repeats\":%" PRIu64
			",\"no_pass\":%s,\"passes\":[", p->orphan_records, ids ? ids->repeats : 0,
			p->no_pass ? "true" : "false");
		first = 1;
		for (j = 0; j < r->npasses; j++) {
			if (r->passes[j].vpid != p->vpid)
				continue;
			if (!first)
				fputc(',', f);
			first = 0;
			json_pass(r, &r->passes[j], f);
		}
		fprintf(f, "]}");
	}
	for (j = 0; j < r->npasses; j++)
		counts[r->passes[j].status]++;
	fprintf(f, "],");
	letw_facts_write_json(&r->base.facts, f);
	fprintf(f, ",\"summary\":{\"processes\":%zu,\"passes\":%zu,\"complete\":%d,"
		"\"truncated\":%d,\"lossy\":%d,\"inconsistent\":%d,\"overwritten\":%d,"
		"\"discarded_events\":%" PRIu64 ",\"discarded_events_unattributed\":%" PRIu64
		",\"processes_without_pass\":%d,\"processes_without_pass_judged\":%s"
		",\"trace_complete\":%s}}\n",
		r->nprocs, r->npasses, counts[LETW_PASS_COMPLETE],
		counts[LETW_PASS_TRUNCATED], counts[LETW_PASS_LOSSY],
		counts[LETW_PASS_INCONSISTENT], counts[LETW_PASS_OVERWRITTEN],
		r->discarded_total, r->discarded_unattributed, r->passless,
		r->passless_judged ? "true" : "false",
		r->base.facts.problems ? "false" : "true");
}
