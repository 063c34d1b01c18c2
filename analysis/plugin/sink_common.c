/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "sink_common.h"

#define LETW_LOG_SELF_COMP (s->self)
#include "log.h"

void letw_sink_init(struct letw_sink *s, bt_self_component_sink *self,
		    const struct letw_sink_ops *ops, void *init_data)
{
	memset(s, 0, sizeof(*s));
	s->self = bt_self_component_sink_as_self_component(self);
	s->self_sink = self;
	s->ops = ops;
	s->result = init_data;
	letw_facts_init(&s->facts);
	bt_self_component_set_data(s->self, s);
}

static void set_stage(struct letw_sink *s, enum letw_sink_stage st)
{
	/* Read by another process (the CLI's supervisor) after a crash. */
	if (s->result)
		__atomic_store_n(&s->result->stage, (int)st, __ATOMIC_RELAXED);
}

int letw_sink_add_port(bt_self_component_sink *self)
{
	if (bt_self_component_sink_add_input_port(self, "in", NULL, NULL) !=
	    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
		BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(
			bt_self_component_sink_as_self_component(self),
			"cannot add the input port");
		return -1;
	}
	return 0;
}

int letw_sink_proc_of_ns(struct letw_sink *s, int64_t vpid, uint64_t pid_ns, int64_t *key)
{
	uint32_t i;

	/* Few namespaces, and events come in runs of one process. */
	if (s->npidns && s->pidns[s->last_pidns] == pid_ns) {
		i = s->last_pidns;
	} else {
		for (i = 0; i < s->npidns && s->pidns[i] != pid_ns; i++)
			;
		if (i == s->npidns) {
			if (s->npidns == s->cappidns) {
				uint32_t cap = s->cappidns ? 2 * s->cappidns : 4;
				uint64_t *nv = realloc(s->pidns, cap * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				s->pidns = nv;
				s->cappidns = cap;
			}
			s->pidns[s->npidns++] = pid_ns;
			if (s->result) {
				s->result->pid_namespaces = (int)s->npidns;
				s->result->pidns_only = s->npidns == 1 ? pid_ns : 0;
			}
		}
		s->last_pidns = i;
	}
	*key = letw_proc_key(i, vpid);
	return 0;
}

static struct letw_vpid_ids *vid_find(const struct letw_sink *s, int64_t vpid)
{
	if (s->nvids && s->vids[s->last_vid].vpid == vpid)
		return &s->vids[s->last_vid];
	for (size_t i = 0; i < s->nvids; i++)
		if (s->vids[i].vpid == vpid)
			return &s->vids[i];
	return NULL;
}

int letw_stream_declares(const bt_stream *stream, const char *prefix, const char *suffix)
{
	const bt_stream_class *sc = bt_stream_borrow_class_const(stream);
	uint64_t n = bt_stream_class_get_event_class_count(sc);
	size_t lp = strlen(prefix), ls = strlen(suffix);

	for (uint64_t i = 0; i < n; i++) {
		const char *name = bt_event_class_get_name(
			bt_stream_class_borrow_event_class_by_index_const(sc, i));
		size_t len = name ? strlen(name) : 0;

		if (len >= lp + ls && !strncmp(name, prefix, lp) &&
		    !strcmp(name + len - ls, suffix))
			return 1;
	}
	return 0;
}

/* An event's time from origin, the unit of the streams' first packets
 * (trace facts) that a process's first event and latest Init are compared
 * with (runtime_gaps.c) and printed in: a raw_ns cache (the jitdump sink)
 * decodes only the clock's own value and leaves ts_ns 0, which noted every
 * late runtime stream as dated decades after its pass. One conversion per
 * process and per Init: both are few. */
static int64_t origin_ts(const struct letw_sink *s, const struct letw_ev *ev)
{
	int ok;

	if (!s->cache.raw_ns || !ev->has_ts)
		return ev->ts_ns;
	return letw_clock_ns(bt_message_event_borrow_default_clock_snapshot_const(ev->msg), &ok);
}

/* The entry of ev->proc, made at its first event; NULL when out of
 * memory. */
static struct letw_vpid_ids *vid_get(struct letw_sink *s, const struct letw_ev *ev)
{
	struct letw_vpid_ids *v = vid_find(s, ev->proc);

	if (!v) {
		if (letw_grow_small((void **)&s->vids, &s->capvids, s->nvids + 1, sizeof(*s->vids)))
			return NULL;
		v = &s->vids[s->nvids++];
		memset(v, 0, sizeof(*v));
		v->vpid = ev->proc;
		v->first_ns = origin_ts(s, ev);
	}
	s->last_vid = (size_t)(v - s->vids);
	return v;
}

/* A rundown event (Init, Complete, record) of ev->proc: the pass ids of
 * its Inits (all sinks) and, for ops->count_passes, its passes. */
static int see_rundown(struct letw_sink *s, const struct letw_ev *ev)
{
	struct letw_vpid_ids *v = vid_get(s, ev);
	enum letw_flavour fl = letw_ev_flavour(ev->kind);
	enum letw_ev_object obj = letw_ev_object(ev->kind);

	if (!v)
		return -ENOMEM;
	v->rundown_seen = 1;
	if (obj == LETW_OBJ_INIT) {
		int64_t ts = origin_ts(s, ev);

		v->init_ns[fl == LETW_FL_DCEND] = s->cache.raw_ns ? (int64_t)ev->raw_ns : ev->ts_ns;
		if (!v->has_init || ts > v->last_init_ts)
			v->last_init_ts = ts;
		if (!v->has_init || ts < v->first_init_ts)
			v->first_init_ts = ts;
		v->has_init = 1;
		letw_pass_ids_see(&v->ids, fl, ev->pass_id, ts);
		if (s->ops->count_passes)
			letw_pass_acct_init(&s->acct, &v->open[fl], ev->proc, fl, ev->pass_id);
	} else if (obj == LETW_OBJ_COMPLETE) {
		letw_pass_acct_complete(&s->acct, &v->open[fl], ev->proc, fl, ev->pass_id,
					ev->emitted);
	} else if (v->open[fl].open) {
		v->open[fl].seen++;
	} else {
		v->open[fl].orphans++;
	}
	return 0;
}

/* A Complete whose counters are no counts: kept out of every analysis
 * like any absurd record, but it still ends its pass, as damaged: left
 * open, the pass would read as one whose Complete is missing. (One with
 * a field too wide for the schema stays dropped: its pass_id may be the
 * wide one.) */
static int damaged_complete(struct letw_sink *s, const struct letw_ev *ev)
{
	enum letw_flavour fl = letw_ev_flavour(ev->kind);
	const char *bad = letw_ev_bad_counter(ev);
	struct letw_vpid_ids *v;

	if (!bad || ev->overflow)
		return 0;
	if (s->ops->count_passes) {
		v = vid_get(s, ev);
		if (!v)
			return -ENOMEM;
		v->rundown_seen = 1;
		letw_pass_acct_damaged(&s->acct, &v->open[fl], ev->proc, fl, ev->pass_id, bad);
	}
	return s->ops->damaged_complete ? s->ops->damaged_complete(s, ev, bad) : 0;
}

int64_t letw_sink_pass_begin(const struct letw_sink *s, int64_t key, enum letw_flavour fl)
{
	/* Records come in runs of one process: vid_find's first guess. */
	const struct letw_vpid_ids *v = vid_find(s, key);

	return v ? v->init_ns[fl == LETW_FL_DCEND] : 0;
}

const struct letw_pass_ids *letw_sink_pass_ids(const struct letw_sink *s, int64_t vpid)
{
	const struct letw_vpid_ids *v = vid_find(s, vpid);

	return v ? &v->ids : NULL;
}

int letw_sink_say_passes(struct letw_sink *s)
{
	struct letw_pass_acct *a = &s->acct;
	char label[LETW_PROC_LABEL_MAX];
	const char *name = s->ops->name;
	int n;

	for (size_t i = 0; i < s->nvids; i++)
		for (int fl = 0; fl < 2; fl++) {
			struct letw_pass_open *o = &s->vids[i].open[fl];

			if (o->open)
				letw_pass_acct_bad(a, s->vids[i].vpid, (enum letw_flavour)fl,
						   o->id, o->seen, 0, 0, 0);
			if (o->orphans)
				letw_pass_acct_orphans(a, s->vids[i].vpid, (enum letw_flavour)fl,
						       o->orphans);
			o->open = 0;
			o->orphans = 0;
		}
	n = a->truncated + a->lossy;
	if (!n)
		return 0;
	/* Always on stderr, as the trace's incompleteness: what was written
	 * lacks the code of the records the passes did not deliver. */
	fprintf(stderr, "%s: %d rundown pass(es) not complete (%d truncated, %d lossy): the output may lack code\n",
		name, n, a->truncated, a->lossy);
	for (unsigned i = 0; i < a->nex; i++) {
		const struct letw_pass_bad *b = &a->ex[i];

		letw_sink_proc_label(s, b->proc, label);
		if (b->lossy)
			fprintf(stderr, "%s:   process %s: %s pass %llu lossy: %llu of %llu record(s) in the trace (lost, overwritten or filtered out)\n",
				name, label, letw_flavour_name((enum letw_flavour)b->fl),
				(unsigned long long)b->id, (unsigned long long)b->seen,
				(unsigned long long)b->emitted);
		else if (b->orphans)
			fprintf(stderr, "%s:   process %s: %llu %s record(s) outside any pass (no init or complete event around them: lost, or dropped by an event rule whose --filter names record fields, which init and complete events lack)\n",
				name, label, (unsigned long long)b->seen,
				letw_flavour_name((enum letw_flavour)b->fl));
		else if (b->damaged)
			fprintf(stderr, "%s:   process %s: %s pass %llu truncated: its complete event is damaged (%s is not a count; %llu record(s) seen)\n",
				name, label, letw_flavour_name((enum letw_flavour)b->fl),
				(unsigned long long)b->id, b->damaged, (unsigned long long)b->seen);
		else if (b->no_init)
			fprintf(stderr, "%s:   process %s: %s pass %llu truncated: its complete event (%llu record(s) emitted) without its init\n",
				name, label, letw_flavour_name((enum letw_flavour)b->fl),
				(unsigned long long)b->id, (unsigned long long)b->emitted);
		else
			fprintf(stderr, "%s:   process %s: %s pass %llu truncated: its init without its complete event (%llu record(s) seen)\n",
				name, label, letw_flavour_name((enum letw_flavour)b->fl),
				(unsigned long long)b->id, (unsigned long long)b->seen);
	}
	if ((unsigned)n > a->nex)
		fprintf(stderr, "%s:   ... and %u more\n", name, n - a->nex);
	return n;
}

int letw_sink_say_passless(struct letw_sink *s)
{
	const char *name = s->ops->name;
	char label[LETW_PROC_LABEL_MAX];
	int n = 0, judged = letw_sink_passless_judged(s);

	for (size_t i = 0; i < s->nvids; i++) {
		const struct letw_vpid_ids *v = &s->vids[i];

		/* A Complete or records without an Init were said as a
		 * truncated pass. */
		if (!letw_sink_passless(s, v->has_init) || v->rundown_seen)
			continue;
		if (!n++ && judged)
			fprintf(stderr, "%s: process(es) with events but no rundown pass, in a trace that records passes and lost packets: the output lacks the code each loaded before its first event here (its pass was overwritten or lost, or is in another chunk%s)\n",
				name, letw_facts_live(&s->facts) ?
				", or ran before this live reader joined: it starts each stream at its latest packet" : "");
		else if (n == 1)
			fprintf(stderr, "%s: note: process(es) with events but no rundown pass, in a trace that records passes: one that ran before the session lacks the code it loaded before its first event here (its pass dropped by an event rule's --filter?); one that started during the session may have run none (polling, LETW_STATEDUMP=0, and gone within ~10 ms)\n",
				name);
		if (n <= LETW_PASS_ACCT_EX)
			fprintf(stderr, "%s:   process %s: no rundown pass; its first event at %" PRId64 " ns\n",
				name, letw_sink_proc_label(s, v->vpid, label), v->first_ns);
	}
	if (n > LETW_PASS_ACCT_EX)
		fprintf(stderr, "%s:   ... and %d more\n", name, n - LETW_PASS_ACCT_EX);
	s->passless = judged ? n : 0;
	return s->passless;
}

int letw_sink_say_mixed(struct letw_sink *s, const char *what)
{
	int n = 0;

	for (size_t i = 0; i < s->nvids; i++) {
		const struct letw_vpid_ids *v = &s->vids[i];
		char label[LETW_PROC_LABEL_MAX];

		if (!v->ids.repeats)
			continue;
		n++;
		BT_COMP_LOGW("process %s: %llu pass id(s) seen again (first: pass %llu): "
			     LETW_PASS_IDS_WHY "; its %s mixes them",
			     letw_sink_proc_label(s, v->vpid, label),
			     (unsigned long long)v->ids.repeats,
			     (unsigned long long)v->ids.first_id, what);
	}
	return n;
}

void letw_sink_fini(struct letw_sink *s)
{
	/* Taken back if empty: a run that wrote nothing (a trace that did
	 * not open, one without lttng-etw events, an interrupt, a write
	 * that failed) leaves no directory behind. */
	letw_made_dirs_take_back(&s->made);
	bt_message_iterator_put_ref(s->iter);
	s->iter = NULL;
	letw_facts_fini(&s->facts);
	letw_ev_class_cache_fini(&s->cache);
	letw_namebuf_fini(&s->names);
	free(s->vids);
	free(s->pidns);
	s->vids = NULL;
	s->nvids = s->capvids = 0;
}

const char *letw_sink_region_name(struct letw_sink *s, const struct letw_ev *ev)
{
	if (letw_ev_object(ev->kind) == LETW_OBJ_METHOD)
		return letw_name_method_len(&s->names, ev->ns, ev->ns_len, ev->name,
					    ev->name_len, ev->signature, ev->signature_len,
					    ev->method_flags);
	return letw_name_stub_in(&s->names, ev->stub_kind, ev->owner, ev->name);
}

static const char *name_get(void *arg)
{
	struct letw_sink_name *n = arg;

	return letw_sink_region_name(n->s, n->ev);
}

static int name_is(const char *stored, void *arg)
{
	struct letw_sink_name *n = arg;
	const struct letw_ev *ev = n->ev;
	const char *name;
	int r = -1;

	if (letw_ev_object(ev->kind) == LETW_OBJ_METHOD)
		r = letw_name_method_is(stored, ev->ns, ev->ns_len, ev->name, ev->name_len,
					ev->signature, ev->signature_len, ev->method_flags);
	if (r >= 0)
		return r;
	/* Stubs (few), and names with bytes the naming replaces. */
	name = name_get(arg);
	if (!name)
		return -ENOMEM;
	return strcmp(stored, name) == 0;
}

void letw_sink_name_src(struct letw_sink_name *n, struct letw_name_src *src,
			struct letw_sink *s, const struct letw_ev *ev)
{
	n->s = s;
	n->ev = ev;
	src->is = name_is;
	src->get = name_get;
	src->arg = n;
}

static struct letw_sink *sink_of(bt_self_component_sink *self)
{
	return bt_self_component_get_data(
		bt_self_component_sink_as_self_component(self));
}

int letw_sink_interrupted(const struct letw_sink *s)
{
	return bt_self_component_sink_is_interrupted(s->self_sink) == BT_TRUE;
}

void letw_sink_say_interrupted(struct letw_sink *s, const char *path)
{
	/* After the CLI's "interrupted: "; babeltrace2 says it its way. */
	BT_COMP_LOGE_APPEND_CAUSE("`%s` not written (its temporary file removed)", path);
}

bt_component_class_sink_graph_is_configured_method_status
letw_sink_graph_is_configured(bt_self_component_sink *self)
{
	struct letw_sink *s = sink_of(self);
	bt_self_component_port_input *port =
		bt_self_component_sink_borrow_input_port_by_name(self, "in");

	if (!bt_port_is_connected(bt_port_input_as_port_const(
		    bt_self_component_port_input_as_port_input(port)))) {
		BT_COMP_LOGE_APPEND_CAUSE("the input port is not connected");
		return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
	}
	if (bt_message_iterator_create_from_sink_component(self, port, &s->iter) !=
	    BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot create the input message iterator");
		return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
	}
	return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

/*
 * The clock the sink's times are values of, for the CLI: it merges a
 * rotated session's jitdumps only when every chunk's times are values of
 * one clock (LTTng's `monotonic`, the same boot uuid). Once per stream, at
 * its beginning (it was once per event).
 */
static void note_clock(struct letw_sink_result *r, const bt_clock_class *cc)
{
	struct letw_clock_id id = { .name = "" };
	const char *name;
	const uint8_t *uuid;

	if (!cc || !r)
		return;
	name = bt_clock_class_get_name(cc);
	uuid = bt_clock_class_get_uuid(cc);
	snprintf(id.name, sizeof(id.name), "%s", name ? name : "");
	id.has_uuid = uuid != NULL;
	if (uuid)
		memcpy(id.uuid, uuid, sizeof(id.uuid));
	if (!r->clock_known) {
		r->clock_known = 1;
		r->clock = id;
	} else if (!letw_clock_id_same(&r->clock, &id)) {
		r->clocks_mixed = 1;
	}
}

static int handle(struct letw_sink *s, const bt_message *msg)
{
	struct letw_ev ev;
	const char *missing = NULL;
	char why[96];
	int ret;

	switch (bt_message_get_type(msg)) {
	case BT_MESSAGE_TYPE_EVENT:
		ret = letw_ev_decode(&s->cache, msg, &ev, &missing);
		if (ret == 0)
			return s->ops->other ? s->ops->other(s, msg) : 0;
		if (ret < 0) {
			BT_COMP_LOGE_APPEND_CAUSE(
				"event `%s` lacks integer/string field `%s` (not the lttng-etw schema?)",
				bt_event_class_get_name(bt_event_borrow_class_const(
					bt_message_event_borrow_event_const(msg))),
				missing);
			return -1;
		}
		if (!ev.has_vpid) {
			/* Events still count, under process 0, so a session
			 * without the context gives a usable (merged) map. */
			if (!s->warned_vpid) {
				s->warned_vpid = 1;
				BT_COMP_LOGW("events carry no vpid context (lttng add-context -u -t vpid); attributing them to process 0");
			}
		}
		if (letw_sink_proc_of(s, ev.has_vpid, ev.vpid, ev.has_pid_ns, ev.pid_ns,
				      &ev.proc))
			goto nomem;
		if (s->result)
			s->result->letw_events++;
		/* Kept out of every analysis (a region of 2^63 bytes would
		 * name every sample), and counted against its stream. */
		if (letw_ev_absurd(&ev, why, sizeof(why))) {
			if (letw_facts_absurd(&s->facts, bt_event_borrow_stream_const(
				    bt_message_event_borrow_event_const(msg)), why))
				goto nomem;
			if (letw_ev_object(ev.kind) == LETW_OBJ_COMPLETE)
				return damaged_complete(s, &ev);
			return 0;
		}
		/* Runtime events pay one comparison; rundown records one
		 * more for the sinks that do not count passes. */
		if (ev.kind >= LETW_EV_DCSTART_INIT) {
			if ((s->ops->count_passes || letw_ev_object(ev.kind) == LETW_OBJ_INIT) &&
			    see_rundown(s, &ev))
				goto nomem;
		} else if (s->ops->count_passes && !vid_get(s, &ev)) {
			goto nomem; /* a process with runtime events only */
		}
		return s->ops->event(s, &ev);
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
	case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
		if (letw_facts_message(&s->facts, msg))
			goto nomem;
		return s->ops->discarded ? s->ops->discarded(s, msg) : 0;
	case BT_MESSAGE_TYPE_STREAM_BEGINNING: {
		const bt_stream *st = bt_message_stream_beginning_borrow_stream_const(msg);

		if (!s->rundown_declared)
			s->rundown_declared = letw_stream_declares(st, "letw_rundown:", "_init");
		note_clock(s->result, bt_stream_class_borrow_default_clock_class_const(
					      bt_stream_borrow_class_const(st)));
	}
		/* fall through */
	case BT_MESSAGE_TYPE_PACKET_BEGINNING:
		if (letw_facts_message(&s->facts, msg))
			goto nomem;
		return 0;
	default:
		return 0;
	}
nomem:
	BT_COMP_LOGE_APPEND_CAUSE("out of memory");
	return -1;
}

/* End of the graph: judge the trace's completeness, then the sink's own
 * end (which reads the verdict). */
static int end_of_stream(struct letw_sink *s)
{
	char prefix[64];
	int bad;

	set_stage(s, LETW_STAGE_WRITING);
	bad = letw_facts_finish(&s->facts);
	if (bad < 0 || letw_sink_runtime_gaps(s) < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return -1;
	}
	if (s->result) {
		s->result->incomplete_streams = bad;
		s->result->no_letw_events = !bad && s->result->letw_events == 0;
	}
	if (bad && !s->ops->quiet_incomplete) {
		/* What was written from a partial trace lacks code perf will
		 * ask for: said before the sink's own end, which may fail on
		 * what is left. */
		fprintf(stderr, "%s: the trace is incomplete (%d stream(s) with missing or damaged data): the output may lack code\n",
			s->ops->name, bad);
		snprintf(prefix, sizeof(prefix), "%s:   ", s->ops->name);
		letw_facts_write_text(&s->facts, stderr, prefix);
	}
	if (s->ops->count_passes) {
		int passes = letw_sink_say_passes(s), passless = letw_sink_say_passless(s);

		if (s->result) {
			s->result->incomplete_passes = passes;
			s->result->passless_processes = passless;
		}
	}
	return s->ops->end(s);
}

bt_component_class_sink_consume_method_status
letw_sink_consume(bt_self_component_sink *self)
{
	struct letw_sink *s = sink_of(self);
	bt_message_array_const msgs;
	uint64_t count = 0, i;
	int failed = 0;
	bt_message_iterator_next_status st;

	set_stage(s, LETW_STAGE_READING);
	st = bt_message_iterator_next(s->iter, &msgs, &count);
	set_stage(s, LETW_STAGE_ANALYSING);
	switch (st) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		bt_message_iterator_put_ref(s->iter);
		s->iter = NULL;
		if (end_of_stream(s))
			return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
	default:
		BT_COMP_LOGE_APPEND_CAUSE("cannot read the trace (upstream message iterator failed)");
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
	}
	for (i = 0; i < count; i++) {
		/* Every message is released, even after a failure. */
		if (!failed && handle(s, msgs[i]))
			failed = 1;
		bt_message_put_ref(msgs[i]);
	}
	if (s->result)
		s->result->messages += count;
	return failed ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR :
			BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}
