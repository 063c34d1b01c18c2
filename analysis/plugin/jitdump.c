/* SPDX-License-Identifier: MIT */
/*
 * sink.etw.jitdump: per traced process, a perf jitdump (jit-PID.dump)
 * built from the trace alone, for `perf inject --jit`: one LOAD per load
 * event and per rundown record (or unload) of code the trace had not seen
 * loaded, dated on perf's clock (jitdump_proc.h), so an address range
 * that held different code over time resolves to the right code at each
 * sample; the code's real bytes where the trace has them (perf annotate),
 * else unique filler; a DEBUG_INFO record where it has the line table
 * (perf's srcline). Written when the stream ends.
 *
 * Parameters:
 *   output-dir       directory to write jit-<vpid>.dump into (default ".").
 *                    perf inject reads the dump at the path the process
 *                    mapped (its LETW_JITDUMP_DIR placeholder) and writes
 *                    its jitted-PID-N.so files next to it.
 *   elf-text-offset  added to DEBUG_INFO addresses (default 0, right for
 *                    perf 5.8 and later; 64 for older perfs, whose DWARF
 *                    writer did not add its ELF header size itself)
 *   fail-on-incomplete  yes (default): the dumps are written, then the
 *                    component fails when the trace was not read whole
 *                    (sink_common.c says so on stderr either way); the
 *                    CLI passes no and decides itself (letw_graph_verdict)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "jitdump.h"
#include "jitdump_extra.h"
#include "jitdump_proc.h"
#include "jitdump_read.h"
#include "jitdump_write.h"
#include "names.h"
#include "replace_file.h"
#include "sink_common.h"

#define LETW_LOG_SELF_COMP (jd->base.self)
#include "log.h"

#if defined(__x86_64__)
#define LETW_ELF_MACH EM_X86_64
#elif defined(__aarch64__)
#define LETW_ELF_MACH EM_AARCH64
#elif defined(__i386__)
#define LETW_ELF_MACH EM_386
#else
#define LETW_ELF_MACH EM_NONE
#endif

struct jitdump {
	struct letw_sink base; /* first: the component's user data */
	char *output_dir;
	uint32_t elf_text_offset;
	int fail_on_incomplete;
	struct letw_jdx_cache xcache;
	GHashTable *by_vpid;   /* process key (sink_common.h) → struct letw_jd_proc * */
	GPtrArray *procs;      /* in order of first appearance; owns them */
	struct letw_jd_proc *last; /* the process of the previous event */
};

static struct letw_jd_proc *proc_get(struct jitdump *jd, int64_t vpid)
{
	struct letw_jd_proc *p;
	gint64 *key;

	/* Events come in runs of one process: no hash per event. */
	if (jd->last && jd->last->vpid == vpid)
		return jd->last;
	p = g_hash_table_lookup(jd->by_vpid, &vpid);
	if (p)
		return jd->last = p;
	p = letw_jd_proc_new(vpid);
	key = g_new(gint64, 1);
	*key = vpid;
	g_hash_table_insert(jd->by_vpid, key, p);
	g_ptr_array_add(jd->procs, p);
	return jd->last = p;
}

/* A failure: a jitdump without times is no use. */
static int no_clock(struct jitdump *jd, const bt_message *msg)
{
	BT_COMP_LOGE_APPEND_CAUSE(
		"event `%s` has no clock snapshot: a jitdump needs the events' CLOCK_MONOTONIC times",
		bt_event_class_get_name(bt_event_borrow_class_const(
			bt_message_event_borrow_event_const(msg))));
	return -1;
}

/* perf's clock, or a failure. */
static int event_ns(struct jitdump *jd, const bt_message *msg, uint64_t *ns)
{
	return letw_jdx_raw_ns(msg, ns) == 0 ? 0 : no_clock(jd, msg);
}

static void ev_ids(void *ev, uint64_t *method_id, uint64_t *version_id)
{
	letw_ev_method_ids(ev, method_id, version_id);
}

static int jitdump_event(struct letw_sink *s, const struct letw_ev *ev)
{
	struct jitdump *jd = (struct jitdump *)s;
	int obj = letw_ev_object(ev->kind);
	struct letw_jd_ids ids = { ev_ids, (void *)ev };
	struct letw_sink_name nm;
	struct letw_name_src src;
	struct letw_jd_proc *p;
	uint64_t method_id, version_id;
	const char *name;
	uint64_t ns;
	int ret;

	/* Decoded with the event (cache.raw_ns). */
	if (!ev->has_ts)
		return no_clock(jd, ev->msg);
	ns = ev->raw_ns;
	p = proc_get(jd, ev->proc);
	letw_jd_proc_touch(p, ns);
	if (obj != LETW_OBJ_METHOD && obj != LETW_OBJ_STUB)
		return 0;
	/* Names are built in the sink's buffer, only when a region is
	 * added (the process copies them into its string chunk). */
	letw_sink_name_src(&nm, &src, s, ev);
	switch (ev->kind) {
	case LETW_EV_METHOD_LOAD:
	case LETW_EV_STUB_LOAD:
		name = letw_sink_region_name(s, ev);
		letw_ev_method_ids(ev, &method_id, &version_id);
		ret = name ? letw_jd_proc_load(p, ns, obj, ev->start, ev->size, name,
					       method_id, version_id) : -ENOMEM;
		break;
	case LETW_EV_METHOD_UNLOAD:
	case LETW_EV_STUB_UNLOAD:
		ret = letw_jd_proc_unload(p, ns, obj, ev->start, ev->size, &src, &ids);
		break;
	default:
		p->pass_begin_ns = (uint64_t)letw_sink_pass_begin(s, ev->proc,
								  letw_ev_flavour(ev->kind));
		ret = letw_jd_proc_rundown(p, ns, obj, ev->start, ev->size, &src, &ids);
		break;
	}
	if (ret) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return ret;
	}
	return 0;
}

static int jitdump_other(struct letw_sink *s, const bt_message *msg)
{
	struct jitdump *jd = (struct jitdump *)s;
	struct letw_jdx x;
	const char *err = NULL;
	struct letw_jd_proc *p;
	uint64_t ns;
	int64_t key;
	int ret = letw_jdx_decode(&jd->xcache, msg, &x, &err);

	if (ret == 0)
		return 0;
	if (ret < 0) {
		BT_COMP_LOGE_APPEND_CAUSE(
			"event `%s` lacks or has a bad field `%s` (not the lttng-etw schema?)",
			bt_event_class_get_name(bt_event_borrow_class_const(
				bt_message_event_borrow_event_const(msg))), err);
		return -1;
	}
	if (event_ns(jd, msg, &ns))
		return -1;
	if (letw_sink_proc_of(s, x.has_vpid, x.vpid, x.has_pid_ns, x.pid_ns, &key)) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return -1;
	}
	p = proc_get(jd, key);
	letw_jd_proc_touch(p, ns);
	letw_jd_proc_extra(p, &x);
	if (s->result)
		s->result->letw_events++;
	return 0;
}

struct dump_counts {
	uint64_t loads, code, lines, code_partial, lines_partial, too_big;
};

static int write_regions(struct jitdump *jd, struct letw_jd_out *f, struct letw_jd_proc *p,
			 GArray *order, struct dump_counts *n)
{
	/* perf matches a LOAD's pid with the process it sees: the vpid. */
	uint32_t pid = (uint32_t)letw_proc_vpid(p->vpid);

	for (guint k = 0; k < order->len; k++) {
		const struct letw_jd_region *r = &p->regions[g_array_index(order, guint, k)];
		const uint8_t *code = letw_jd_region_code(r);
		/* Unique for the whole file: perf names the ELF file it
		 * generates for a LOAD jitted-PID-INDEX.so. */
		uint64_t index = (uint64_t)k + 1;
		int ret = 0;

		if (r->size > LETW_JD_LOAD_MAX) {
			n->too_big++;
			continue;
		}
		if (letw_jd_region_has_lines(r)) {
			GArray *lines = letw_jd_region_debug_lines(r);

			/* DEBUG_INFO goes before its LOAD: perf keeps it for
			 * the next LOAD it reads. */
			if (lines->len)
				ret = letw_jd_write_debug_info(
					f, r->load_ns, r->start,
					(const struct letw_jd_line *)(void *)lines->data,
					lines->len, jd->elf_text_offset);
			if (lines->len)
				n->lines++;
			g_array_free(lines, TRUE);
		} else if (letw_jd_region_some_lines(r)) {
			n->lines_partial++;
		}
		if (!ret)
			ret = letw_jd_write_load(f, r->load_ns, pid, pid, r->start,
						 r->size, index, r->name, code);
		if (ret)
			return ret;
		n->loads++;
		if (code)
			n->code++;
		else if (letw_jd_region_some_code(r))
			n->code_partial++;
	}
	return 0;
}

/* What one process's dump is written from (write_dump's fill). */
struct dump_fill {
	struct jitdump *jd;
	struct letw_jd_proc *p;
	GArray *order;
	uint64_t since;
	struct dump_counts n;
};

static int interrupted(void *data)
{
	return letw_sink_interrupted(&((struct dump_fill *)data)->jd->base);
}

static int fill_dump(struct letw_jd_out *o, void *data)
{
	struct dump_fill *d = data;
	struct letw_jd_proc *p = d->p;
	int err = letw_jd_write_header(o, LETW_ELF_MACH, (uint32_t)letw_proc_vpid(p->vpid),
				       d->since ? d->since : p->first_ns);

	if (!err)
		err = write_regions(d->jd, o, p, d->order, &d->n);
	return err ? err : letw_jd_write_close(o, p->last_ns);
}

static int write_dump(struct jitdump *jd, struct letw_jd_proc *p)
{
	struct dump_fill d = { .jd = jd, .p = p };
	struct dump_counts *n = &d.n;
	struct letw_jd_file_err e = { 0 };
	char *path = NULL, *dir = NULL, label[LETW_PROC_LABEL_MAX];
	long long vpid = (long long)letw_proc_vpid(p->vpid);
	int ret = -1, err;

	if (letw_sink_proc_dir(&jd->base, p->vpid, jd->output_dir, &dir))
		goto out;
	letw_sink_proc_label(&jd->base, p->vpid, label);
	if (asprintf(&path, "%s/jit-%lld.dump", dir, vpid) < 0) {
		path = NULL;
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		goto out;
	}
	d.since = letw_jd_process_since(path, vpid, p->first_ns);
	d.order = letw_jd_proc_finish(p, d.since ? d.since + 1 : LETW_JD_BEFORE_TRACE_NS);
	err = letw_jd_write_file(path, fill_dump, interrupted, &d, &e);
	if (err == -EINTR) {
		letw_sink_say_interrupted(&jd->base, path);
		goto out;
	}
	if (err) {
		if (!strcmp(e.step, "name"))
			BT_COMP_LOGE_APPEND_CAUSE("cannot write `%s`: %s", path,
						  letw_temp_path_why(err));
		else if (!strcmp(e.step, "rename"))
			BT_COMP_LOGE_APPEND_CAUSE("cannot rename `%s` to `%s`: %s", e.tmp, path,
						  strerror(-err));
		else
			BT_COMP_LOGE_APPEND_CAUSE("cannot %s `%s`: %s", e.step, e.tmp,
						  strerror(-err));
		goto out;
	}
	if (e.kept)
		BT_COMP_LOGW("%s is in place, but the file it replaced (now `%s`) cannot be removed: %s",
			     path, e.tmp, strerror(e.kept));
	BT_COMP_LOGI("wrote %s: %llu LOAD(s) (%llu from loads, %llu from rundown records, %llu from unloads), %llu with code bytes, %llu with line tables",
		     path, (unsigned long long)n->loads, (unsigned long long)p->stats.loads,
		     (unsigned long long)p->stats.rundown_new,
		     (unsigned long long)p->stats.unload_only, (unsigned long long)n->code,
		     (unsigned long long)n->lines);
	if (n->too_big)
		BT_COMP_LOGW("process %s: %llu code region(s) larger than %u MiB left out (perf would need that many bytes each)",
			     label, (unsigned long long)n->too_big,
			     LETW_JD_LOAD_MAX >> 20);
	if (n->code_partial || n->lines_partial || p->stats.orphan_chunks || p->stats.bad_chunks)
		BT_COMP_LOGW("process %s: %llu code version(s) with only part of their bytes (filler written), %llu with part of their line table (no DEBUG_INFO), %llu chunk(s) of code the trace does not name, %llu inconsistent chunk(s): events lost?",
			     label, (unsigned long long)n->code_partial,
			     (unsigned long long)n->lines_partial,
			     (unsigned long long)p->stats.orphan_chunks,
			     (unsigned long long)p->stats.bad_chunks);
	if (jd->base.result) {
		jd->base.result->jit_loads += n->loads;
		jd->base.result->jit_code += n->code;
		jd->base.result->jit_lines += n->lines;
	}
	ret = 0;
out:
	free(dir);
	free(path);
	free(e.tmp);
	if (d.order)
		g_array_free(d.order, TRUE);
	return ret;
}

static int jitdump_end(struct letw_sink *s)
{
	struct jitdump *jd = (struct jitdump *)s;
	guint written = 0;
	int mixed;

	for (guint i = 0; i < jd->procs->len; i++) {
		struct letw_jd_proc *p = g_ptr_array_index(jd->procs, i);

		/* A process whose only events are passes or modules has no
		 * code to map. */
		if (!p->nregions)
			continue;
		if (write_dump(jd, p))
			return -1;
		written++;
	}
	if (!written) {
		BT_COMP_LOGE_APPEND_CAUSE(
			"no lttng-etw code records (letw_runtime:method_*/stub_*, letw_rundown:*_dc*) in the trace%s",
			s->facts.problems ? " that was read (the trace is incomplete)" : "");
		return -1;
	}
	mixed = letw_sink_say_mixed(s, "dump");
	if (jd->base.result) {
		jd->base.result->processes = (int)written;
		jd->base.result->mixed_processes = mixed;
	}
	if (s->facts.problems && jd->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("dumps written from an incomplete trace (%d stream(s) with missing or damaged data)",
					  s->facts.problems);
		return -1;
	}
	if (s->passless && jd->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("dumps written for %d process(es) without a rundown pass in a trace that records passes (see the warnings)",
					  s->passless);
		return -1;
	}
	if (s->acct.truncated + s->acct.lossy && jd->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("dumps written from %d rundown pass(es) not complete (see the warnings)",
					  s->acct.truncated + s->acct.lossy);
		return -1;
	}
	if (mixed && jd->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("%d dump(s) mix processes that shared a vpid (see the warnings)",
					  mixed);
		return -1;
	}
	return 0;
}

static const struct letw_sink_ops jitdump_ops = {
	.event = jitdump_event,
	.other = jitdump_other,
	.end = jitdump_end,
	.name = "jitdump",
	.count_passes = 1,
	.dates_code = 1,
};

static int param_offset(struct jitdump *jd, const bt_value *params)
{
	const bt_value *v = params && bt_value_is_map(params) ?
		bt_value_map_borrow_entry_value_const(params, "elf-text-offset") : NULL;
	uint64_t off;

	if (!v)
		return 0;
	if (bt_value_is_unsigned_integer(v)) {
		off = bt_value_integer_unsigned_get(v);
	} else if (bt_value_is_signed_integer(v) && bt_value_integer_signed_get(v) >= 0) {
		off = (uint64_t)bt_value_integer_signed_get(v);
	} else {
		BT_COMP_LOGE_APPEND_CAUSE("parameter `elf-text-offset` must be a non-negative integer");
		return -1;
	}
	if (off > 65536) {
		BT_COMP_LOGE_APPEND_CAUSE("parameter `elf-text-offset` is %llu: more than 65536 is no ELF header size",
					  (unsigned long long)off);
		return -1;
	}
	jd->elf_text_offset = (uint32_t)off;
	return 0;
}

bt_component_class_initialize_method_status
letw_jitdump_initialize(bt_self_component_sink *self,
			bt_self_component_sink_configuration *config,
			const bt_value *params, void *init_data)
{
	static const char *const allowed[] = { "output-dir", "elf-text-offset",
					       "fail-on-incomplete", NULL };
	bt_self_component *sc = bt_self_component_sink_as_self_component(self);
	struct jitdump *jd = calloc(1, sizeof(*jd));
	const char *dir = ".";

	if (!jd)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	letw_sink_init(&jd->base, self, &jitdump_ops, init_data);
	/* Regions are matched to their line and code chunks by method_id
	 * and version_id; the other identifiers go nowhere. */
	jd->base.cache.skip_method_refs = 1;
	jd->base.cache.raw_ns = 1;
	jd->base.cache.lazy_method_ids = 1;
	jd->elf_text_offset = LETW_JD_ELF_TEXT_OFFSET_DEFAULT;
	jd->fail_on_incomplete = 1;
	jd->by_vpid = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	jd->procs = g_ptr_array_new_with_free_func((GDestroyNotify)letw_jd_proc_free);
	if (letw_jdx_cache_init(&jd->xcache))
		goto error;
	if (letw_params_check(sc, params, allowed) ||
	    letw_param_path(sc, params, "output-dir", &dir) || param_offset(jd, params) ||
	    letw_param_bool(sc, params, "fail-on-incomplete", &jd->fail_on_incomplete))
		goto error;
	jd->output_dir = strdup(dir);
	if (!jd->output_dir)
		goto error;
	if (letw_sink_output_dir(&jd->base, jd->output_dir))
		goto error;
	if (letw_sink_add_port(self))
		goto error;
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
error:
	letw_jitdump_finalize(self);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
}

void letw_jitdump_finalize(bt_self_component_sink *self)
{
	struct jitdump *jd = bt_self_component_get_data(
		bt_self_component_sink_as_self_component(self));

	if (!jd)
		return;
	letw_sink_fini(&jd->base);
	letw_jdx_cache_fini(&jd->xcache);
	if (jd->by_vpid)
		g_hash_table_destroy(jd->by_vpid);
	if (jd->procs)
		g_ptr_array_free(jd->procs, TRUE);
	free(jd->output_dir);
	free(jd);
	bt_self_component_set_data(bt_self_component_sink_as_self_component(self), NULL);
}
