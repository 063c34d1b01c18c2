/* SPDX-License-Identifier: MIT */
/*
 * sink.etw.report: event intake. Passes are paired by (vpid, flavour,
 * pass_id); rundown records carry no pass id, so a record belongs to the
 * open pass of its process and flavour (a process runs its passes one at a
 * time, on its control thread).
 *
 * Parameters:
 *   format              "text" (default) or "json"
 *   output              file to write to (default: standard output)
 *   fail-on-incomplete  yes (default): the component fails at the end of
 *                       the stream when a pass is not complete
 *   chunk               JSON: a "chunk" member naming the trace chunk or
 *                       snapshot this report is of (the CLI reads a
 *                       rotated or snapshot session one chunk at a time)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "names.h"
#include "replace_file.h"
#include "report.h"

#define LETW_LOG_SELF_COMP (r->base.self)
#include "log.h"

static struct letw_rproc *proc_get(struct letw_report *r, int64_t vpid)
{
	struct letw_rproc *p;
	size_t i;

	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].vpid == vpid)
			return &r->procs[i];
	if (letw_grow_small((void **)&r->procs, &r->capprocs, r->nprocs + 1, sizeof(*p)))
		return NULL;
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->vpid = vpid;
	p->open[0] = p->open[1] = -1;
	letw_codemap_init(&p->map, vpid);
	return p;
}

static struct letw_pass *pass_new(struct letw_report *r, struct letw_rproc *p,
				  const struct letw_ev *ev, enum letw_flavour fl)
{
	struct letw_pass *ps;

	if (letw_grow_small((void **)&r->passes, &r->cappasses, r->npasses + 1, sizeof(*ps)))
		return NULL;
	ps = &r->passes[r->npasses++];
	memset(ps, 0, sizeof(*ps));
	ps->vpid = p->vpid;
	ps->fl = fl;
	ps->pass_id = ev->pass_id;
	ps->instance_id = ev->instance_id;
	ps->first_ns = ps->last_ns = ev->ts_ns;
	return ps;
}

static int on_init(struct letw_report *r, struct letw_rproc *p,
		   const struct letw_ev *ev, enum letw_flavour fl)
{
	struct letw_pass *ps;

	/* An init while the previous pass of the same flavour is open: that
	 * pass never completed (its complete was lost); it stays truncated. */
	p->open[fl] = -1;
	ps = pass_new(r, p, ev, fl);
	if (!ps)
		return -ENOMEM;
	ps->has_init = 1;
	ps->init_ns = p->last_pass_ns = ev->ts_ns;
	p->last_pass_id = ev->pass_id;
	ps->control_code = ev->control_code;
	ps->match_any_keyword = ev->match_any_keyword;
	p->open[fl] = (long)(ps - r->passes);
	return 0;
}

/* bad: the Complete's counter that is no count (damaged_complete), or
 * NULL. */
static int on_complete(struct letw_report *r, struct letw_rproc *p,
		       const struct letw_ev *ev, enum letw_flavour fl, const char *bad)
{
	struct letw_pass *ps = NULL;

	if (p->open[fl] >= 0 && r->passes[p->open[fl]].pass_id == ev->pass_id)
		ps = &r->passes[p->open[fl]];
	p->open[fl] = -1;
	if (!ps) {
		/* Its init is not in the trace (lost, or the trace started
		 * in the middle of the pass). */
		ps = pass_new(r, p, ev, fl);
		if (!ps)
			return -ENOMEM;
	}
	ps->last_ns = p->last_pass_ns = ev->ts_ns;
	p->last_pass_id = ev->pass_id;
	if (bad) {
		/* The pass ended, but what its Complete says of it is not
		 * known: truncated, never complete, lossy or inconsistent
		 * against a number the damage made. */
		ps->complete_damaged = bad;
		return 0;
	}
	ps->has_complete = 1;
	ps->complete_ns = ev->ts_ns;
	ps->emitted = ev->emitted;
	ps->skipped_raced = ev->skipped_raced;
	ps->duration_ns = ev->duration_ns;
	return 0;
}

static int add_key(uint64_t **keys, size_t *n, size_t *cap, uint64_t k)
{
	if (letw_grow_small((void **)keys, cap, *n + 1, sizeof(**keys)))
		return -ENOMEM;
	(*keys)[(*n)++] = k;
	return 0;
}

/*
 * About how many bytes of ring buffer a rundown record takes: an LTTng
 * event header with a vpid/vtid context (~16) and the payload
 * (letw_fields.h: fixed fields, then NUL-terminated strings). Used only to
 * say how large a sub-buffer an overwritten pass needed.
 */
static uint64_t record_bytes(const struct letw_ev *ev, int obj)
{
	/* Decoded lengths (event.c) where the decoder keeps them; strings
	 * end with a NUL in the payload. */
	if (obj == LETW_OBJ_METHOD)
		return 16 + 46 + ev->ns_len + ev->name_len + ev->signature_len + 3;
	if (obj == LETW_OBJ_STUB)
		return 16 + 30 + ev->name_len + 1;
	return 16 + 14 + (ev->name ? strlen(ev->name) : 0) + 1;
}

static int on_record(struct letw_report *r, struct letw_rproc *p,
		     const struct letw_ev *ev, enum letw_flavour fl, int obj)
{
	struct letw_pass *ps = p->open[fl] >= 0 ? &r->passes[p->open[fl]] : NULL;
	struct letw_sink_name nm;
	struct letw_name_src src;
	size_t idx;
	int m;

	if (obj == LETW_OBJ_MODULE) {
		if (!ps) {
			p->orphan_records++;
			p->orphan_bytes += record_bytes(ev, obj);
			return 0;
		}
		ps->seen_modules++;
		ps->last_ns = ev->ts_ns;
		ps->bytes_seen += record_bytes(ev, obj);
		return add_key(&ps->module_keys, &ps->nmod, &ps->capmod, ev->module_id);
	}
	letw_sink_name_src(&nm, &src, &r->base, ev);
	letw_codemap_pass_begin(&p->map, ps && ps->has_init ? ps->init_ns : 0);
	m = letw_codemap_rundown_by(&p->map, ev->ts_ns, obj, ev->start, ev->size,
				    &src, &idx);
	if (m < 0)
		return m;
	if (!ps) {
		p->orphan_records++;
		p->orphan_bytes += record_bytes(ev, obj);
		return 0;
	}
	ps->last_ns = ev->ts_ns;
	ps->bytes_seen += record_bytes(ev, obj);
	if (obj == LETW_OBJ_METHOD)
		ps->seen_methods++;
	else
		ps->seen_stubs++;
	/* Copied by the walker, then unloaded and its start reused while
	 * the pass ran (codemap.c): a race the design allows. */
	if (m == LETW_RD_SUPERSEDED)
		ps->raced++;
	if (m == LETW_RD_AFTER_UNLOAD) {
		const struct letw_region *rg = &p->map.r[idx];

		/* Unloaded while the pass ran: the walker read it before
		 * its removal, which the design allows. Before the pass
		 * began: the walker listed freed code. */
		if (ps->has_init && rg->death_ns >= ps->init_ns) {
			ps->raced++;
		} else {
			if (ps->n_stale_ex < LETW_EXAMPLES)
				ps->stale_ex[ps->n_stale_ex++] = (struct letw_example){
					rg->start, rg->death_ns, rg->name };
			ps->stale++;
		}
	}
	return add_key(&ps->code_keys, &ps->ncode, &ps->capcode, ev->start);
}

/* The process of ev, with ev counted as its latest event; NULL when out
 * of memory. */
static struct letw_rproc *proc_event(struct letw_report *r, const struct letw_ev *ev)
{
	struct letw_rproc *p = proc_get(r, ev->proc);

	if (!p)
		return NULL;
	/* Whether a process went on after a pass that did not complete
	 * (report_cause.c): one compare an event. */
	if (!p->events++)
		p->first_ns = p->last_ns = ev->ts_ns; /* times may be < 0 (clock offset) */
	else if (ev->ts_ns > p->last_ns)
		p->last_ns = ev->ts_ns;
	return p;
}

static int report_damaged_complete(struct letw_sink *s, const struct letw_ev *ev,
				   const char *bad)
{
	struct letw_report *r = (struct letw_report *)s;
	struct letw_rproc *p = proc_event(r, ev);

	if (!p || on_complete(r, p, ev, letw_ev_flavour(ev->kind), bad)) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int report_event(struct letw_sink *s, const struct letw_ev *ev)
{
	struct letw_report *r = (struct letw_report *)s;
	struct letw_rproc *p = proc_event(r, ev);
	enum letw_flavour fl = letw_ev_flavour(ev->kind);
	int obj = letw_ev_object(ev->kind), ret = 0;
	const char *name;

	if (!p)
		goto nomem;
	switch (ev->kind) {
	case LETW_EV_METHOD_LOAD:
	case LETW_EV_STUB_LOAD:
	case LETW_EV_METHOD_UNLOAD:
	case LETW_EV_STUB_UNLOAD:
		name = letw_sink_region_name(s, ev);
		if (!name)
			goto nomem;
		if (ev->kind == LETW_EV_METHOD_LOAD || ev->kind == LETW_EV_STUB_LOAD)
			ret = letw_codemap_load_copy(&p->map, ev->ts_ns, obj, ev->start,
						     ev->size, name);
		else
			ret = letw_codemap_unload_copy(&p->map, ev->ts_ns, obj, ev->start,
						       ev->size, name);
		break;
	case LETW_EV_MODULE_LOAD:
	case LETW_EV_MODULE_UNLOAD:
		break;
	default:
		if (obj == LETW_OBJ_INIT)
			ret = on_init(r, p, ev, fl);
		else if (obj == LETW_OBJ_COMPLETE)
			ret = on_complete(r, p, ev, fl, NULL);
		else
			ret = on_record(r, p, ev, fl, obj);
		break;
	}
	if (ret)
		goto nomem;
	return 0;
nomem:
	BT_COMP_LOGE_APPEND_CAUSE("out of memory");
	return -ENOMEM;
}

static int report_discarded(struct letw_sink *s, const bt_message *msg)
{
	struct letw_report *r = (struct letw_report *)s;
	int packets = bt_message_get_type(msg) == BT_MESSAGE_TYPE_DISCARDED_PACKETS;
	const bt_clock_snapshot *b = NULL, *e = NULL;
	const bt_stream *stream;
	struct letw_discard *d;
	bt_property_availability avail;
	int okb = 0, oke = 0;

	if (letw_grow_small((void **)&r->discards, &r->capdiscards, r->ndiscards + 1,
			    sizeof(*d))) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return -ENOMEM;
	}
	d = &r->discards[r->ndiscards++];
	memset(d, 0, sizeof(*d));
	d->packets = packets;
	if (packets) {
		stream = bt_message_discarded_packets_borrow_stream_const(msg);
		avail = bt_message_discarded_packets_get_count(msg, &d->count);
		if (bt_stream_class_discarded_packets_have_default_clock_snapshots(
			    bt_stream_borrow_class_const(stream))) {
			b = bt_message_discarded_packets_borrow_beginning_default_clock_snapshot_const(msg);
			e = bt_message_discarded_packets_borrow_end_default_clock_snapshot_const(msg);
		}
	} else {
		stream = bt_message_discarded_events_borrow_stream_const(msg);
		avail = bt_message_discarded_events_get_count(msg, &d->count);
		if (bt_stream_class_discarded_events_have_default_clock_snapshots(
			    bt_stream_borrow_class_const(stream))) {
			b = bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(msg);
			e = bt_message_discarded_events_borrow_end_default_clock_snapshot_const(msg);
		}
	}
	d->has_count = avail == BT_PROPERTY_AVAILABILITY_AVAILABLE && letw_count_plausible(d->count);
	d->begin_ns = letw_clock_ns(b, &okb);
	d->end_ns = letw_clock_ns(e, &oke);
	d->has_times = okb && oke;
	/* Per-process buffers name their process in the trace environment;
	 * per-user buffers are shared, so a discard may hit any process. */
	d->has_vpid = letw_trace_env_vpid(stream, &d->vpid);
	/* The shared loop has just fed this message to the facts, which
	 * looked its stream up last. */
	d->facts_idx = s->facts.last < s->facts.n &&
		       s->facts.s[s->facts.last].stream == stream ? s->facts.last : SIZE_MAX;
	if (!packets && d->has_count)
		r->discarded_total = letw_count_add(r->discarded_total, d->count);
	BT_COMP_LOGI("%s discarded %s%llu in [%lld, %lld]",
		     packets ? "packets" : "events", d->has_count ? "" : "~",
		     (unsigned long long)d->count, (long long)d->begin_ns,
		     (long long)d->end_ns);
	return 0;
}

/* Beside processes with passes, one without (per-process buffers: its
 * pass overwritten in a snapshot, or lost): its own line, not silence.
 * Records outside any pass are said on their own line already. */
static void mark_passless(struct letw_report *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct letw_rproc *p = &r->procs[i];
		int has = 0;

		for (size_t j = 0; j < r->npasses && !has; j++)
			has = r->passes[j].vpid == p->vpid;
		p->no_pass = !p->orphan_records && letw_sink_passless(&r->base, has);
		r->passless += p->no_pass;
	}
	r->passless_judged = letw_sink_passless_judged(&r->base);
}

static int report_end(struct letw_sink *s)
{
	struct letw_report *r = (struct letw_report *)s;
	FILE *f;
	int streams = s->facts.problems, bad, wret;

	/* Without a pass there is nothing to report on, unless the trace
	 * itself says why: then the report shows what is missing. */
	if (!r->npasses && !streams) {
		if (r->nprocs && r->chunk)
			/* The usual cause here is not the events: a chunk a
			 * rotation began holds no pass unless one was asked for
			 * (analysis audit: the old hint blamed the events). */
			BT_COMP_LOGE_APPEND_CAUSE("chunk `%s` holds lttng-etw events but no rundown pass: a rotation begins a chunk without one unless `lttng-etw watch` runs (or `lttng regenerate statedump` is run after it); else are letw_rundown:dc*_init/complete enabled?",
						  r->chunk);
		else if (r->nprocs && letw_facts_live(&s->facts))
			BT_COMP_LOGE_APPEND_CAUSE("the live trace holds lttng-etw events but no rundown pass: a live reader starts each stream at its latest packet, so a pass run before it joined is not read (start reading before the pass, or run one after: `lttng-etw start SESSION --pid PID` or `lttng regenerate statedump`); else are letw_rundown:dc*_init/complete enabled?");
		else if (r->nprocs)
			BT_COMP_LOGE_APPEND_CAUSE("the trace holds lttng-etw events but no rundown pass (letw_rundown:dc*_init/complete not enabled, or dropped by an event rule's --filter on record fields, which they lack?)");
		else
			BT_COMP_LOGE_APPEND_CAUSE("no lttng-etw events in the trace");
		return -1;
	}
	bad = letw_report_check(r);
	if (bad < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return -1;
	}
	mark_passless(r);
	/* Interrupted (SIGTERM) after the checks: no report, and with -o
	 * the previous FILE stays (finalize removes tmp_path). */
	if (letw_sink_interrupted(s)) {
		letw_sink_say_interrupted(s, r->output_path ? r->output_path : "the report");
		return -1;
	}
	/* A regular file's temporary file, only now (report.h). */
	if (r->output_path && !r->out && letw_report_open_temp(r, 0))
		return -1;
	f = r->out ? r->out : stdout;
	errno = 0; /* letw_close_output */
	if (r->json)
		letw_report_write_json(r, f);
	else
		letw_report_write_text(r, f);
	wret = letw_close_output(f, f != stdout);
	r->out = NULL;
	if (wret != 0) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot write the report to %s: %s",
					  r->output_path ? r->output_path : "standard output",
					  strerror(wret));
		return -1;
	}
	if (r->tmp_path && letw_sink_interrupted(s)) {
		letw_sink_say_interrupted(s, r->output_path);
		return -1;
	}
	if (r->tmp_path && letw_report_put_in_place(r))
		return -1;
	if (r->base.result) {
		r->base.result->incomplete_passes = bad;
		r->base.result->passless_processes = r->passless_judged ? r->passless : 0;
		r->base.result->processes = (int)r->nprocs;
	}
	if ((bad || streams || (r->passless && r->passless_judged)) && r->fail_on_incomplete) {
		if (streams)
			BT_COMP_LOGE_APPEND_CAUSE("the trace is incomplete: %d stream(s) with missing or damaged data", streams);
		if (r->passless && r->passless_judged)
			BT_COMP_LOGE_APPEND_CAUSE("%d process(es) with events but no rundown pass",
						  r->passless);
		if (bad)
			BT_COMP_LOGE_APPEND_CAUSE("%d rundown pass(es) not complete", bad);
		return -1;
	}
	return 0;
}

static const struct letw_sink_ops report_ops = {
	.event = report_event,
	.discarded = report_discarded,
	.end = report_end,
	.damaged_complete = report_damaged_complete,
	.name = "report",
	.quiet_incomplete = 1,
};

bt_component_class_initialize_method_status
letw_report_initialize(bt_self_component_sink *self,
		       bt_self_component_sink_configuration *config,
		       const bt_value *params, void *init_data)
{
	static const char *const allowed[] = { "format", "output",
					       "fail-on-incomplete", "chunk", NULL };
	bt_self_component *sc = bt_self_component_sink_as_self_component(self);
	struct letw_report *r = calloc(1, sizeof(*r));
	const char *format = "text", *output = NULL, *chunk = NULL;

	if (!r)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	letw_sink_init(&r->base, self, &report_ops, init_data);
	/* Regions are keyed by address and named by their strings. */
	r->base.cache.skip_method_ids = 1;
	r->fail_on_incomplete = 1;
	if (letw_params_check(sc, params, allowed) ||
	    letw_param_string(sc, params, "format", &format) ||
	    letw_param_path(sc, params, "output", &output) ||
	    letw_param_string(sc, params, "chunk", &chunk) ||
	    letw_param_bool(sc, params, "fail-on-incomplete", &r->fail_on_incomplete))
		goto error;
	if (strcmp(format, "json") == 0) {
		r->json = 1;
	} else if (strcmp(format, "text") != 0) {
		BT_COMP_LOGE_APPEND_CAUSE("parameter `format` must be \"text\" or \"json\", not \"%s\"", format);
		goto error;
	}
	if ((output && !(r->output_path = strdup(output))) ||
	    (chunk && !(r->chunk = strdup(chunk))))
		goto error;
	if (r->output_path && letw_report_open_output(r))
		goto error;
	if (letw_sink_add_port(self))
		goto error;
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
error:
	letw_report_finalize(self);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
}

void letw_report_finalize(bt_self_component_sink *self)
{
	struct letw_report *r = bt_self_component_get_data(
		bt_self_component_sink_as_self_component(self));
	size_t i;

	if (!r)
		return;
	letw_sink_fini(&r->base);
	for (i = 0; i < r->nprocs; i++)
		letw_codemap_fini(&r->procs[i].map);
	for (i = 0; i < r->npasses; i++) {
		free(r->passes[i].code_keys);
		free(r->passes[i].module_keys);
	}
	free(r->procs);
	free(r->passes);
	free(r->discards);
	free(r->gaps);
	if (r->out)
		fclose(r->out);
	/* Still there: no report was written (a failed or interrupted read),
	 * and output_path stays as it was. */
	if (r->tmp_path)
		unlink(r->tmp_path);
	free(r->tmp_path);
	free(r->output_path);
	free(r->chunk);
	free(r);
	bt_self_component_set_data(bt_self_component_sink_as_self_component(self), NULL);
}
