/* SPDX-License-Identifier: MIT */
/*
 * sink.etw.perfmap: one perf-PID.map per traced process, reconstructed from
 * the trace alone (loads, unloads and rundown records), written when the
 * stream ends.
 *
 * Parameters:
 *   output-dir  directory to write perf-<vpid>.map into (default ".")
 *   mode        "latest" (default) or "all": what to write for an address
 *               range that held different code over time (see codemap.h)
 *   fail-on-incomplete  yes (default): the maps are written, then the
 *               component fails when the trace is incomplete
 *               (trace_facts.h) or a rundown pass is truncated or
 *               lossy (passids.h), so the loss is never silent
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codemap.h"
#include "names.h"
#include "perfmap.h"
#include "grow.h"
#include "replace_file.h"
#include "sink_common.h"

#define LETW_LOG_SELF_COMP (pm->base.self)
#include "log.h"

struct perfmap {
	struct letw_sink base; /* first: the component's user data */
	char *output_dir;
	enum letw_map_mode mode;
	struct letw_codemap *procs;
	int fail_on_incomplete;
	size_t nprocs, capprocs;
	size_t last; /* index of the last process hit: events come in runs */
};

static struct letw_codemap *proc_get(struct perfmap *pm, int64_t vpid)
{
	size_t i;

	if (pm->last < pm->nprocs && pm->procs[pm->last].vpid == vpid)
		return &pm->procs[pm->last];
	for (i = 0; i < pm->nprocs; i++)
		if (pm->procs[i].vpid == vpid)
			return &pm->procs[pm->last = i];
	if (letw_grow_small((void **)&pm->procs, &pm->capprocs, pm->nprocs + 1, sizeof(*pm->procs)))
		return NULL;
	letw_codemap_init(&pm->procs[pm->nprocs], vpid);
	pm->last = pm->nprocs;
	return &pm->procs[pm->nprocs++];
}

static int perfmap_event(struct letw_sink *s, const struct letw_ev *ev)
{
	struct perfmap *pm = (struct perfmap *)s;
	int obj = letw_ev_object(ev->kind);
	struct letw_codemap *m;
	struct letw_sink_name nm;
	struct letw_name_src src;
	size_t idx;
	const char *name;
	int ret;

	if (obj != LETW_OBJ_METHOD && obj != LETW_OBJ_STUB)
		return 0;
	m = proc_get(pm, ev->proc);
	if (!m) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return -ENOMEM;
	}
	switch (ev->kind) {
	case LETW_EV_METHOD_LOAD:
	case LETW_EV_STUB_LOAD:
	case LETW_EV_METHOD_UNLOAD:
	case LETW_EV_STUB_UNLOAD:
		name = letw_sink_region_name(s, ev);
		if (!name)
			ret = -ENOMEM;
		else if (ev->kind == LETW_EV_METHOD_LOAD || ev->kind == LETW_EV_STUB_LOAD)
			ret = letw_codemap_load_copy(m, ev->ts_ns, obj, ev->start, ev->size, name);
		else
			ret = letw_codemap_unload_copy(m, ev->ts_ns, obj, ev->start, ev->size,
						       name);
		break;
	default:
		/* Rundown records: most name code the map holds, compared
		 * without building the name. */
		letw_sink_name_src(&nm, &src, s, ev);
		letw_codemap_pass_begin(m, letw_sink_pass_begin(s, ev->proc,
								 letw_ev_flavour(ev->kind)));
		ret = letw_codemap_rundown_by(m, ev->ts_ns, obj, ev->start, ev->size,
					      &src, &idx);
		break;
	}
	if (ret < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		return ret;
	}
	return 0;
}

/* Lowercase hex without leading zeros into buf (>= 17 bytes); returns the
 * length. */
static size_t hex(char *buf, uint64_t v)
{
	char tmp[16];
	size_t n = 0, i;

	do {
		tmp[n++] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

/* Map lines go through one buffer written in large blocks: a map holds
 * 10^5 lines and more, and printf (or three locked stdio calls) per line
 * cost more than building the whole map. */
struct linebuf {
	FILE *f;
	char buf[1 << 16];
	size_t len;
	int err;                 /* 1: a write failed, -EINTR: interrupted */
	const struct letw_sink *sink;
};

static void flush_lines(struct linebuf *lb)
{
	/* Per 64 KiB block: a map of 10^6 lines stops within a block of a
	 * SIGTERM (letw_sink_interrupted) instead of being written out. */
	if (!lb->err && letw_sink_interrupted(lb->sink))
		lb->err = -EINTR;
	if (!lb->err && lb->len && fwrite(lb->buf, 1, lb->len, lb->f) != lb->len)
		lb->err = 1;
	lb->len = 0;
}

/* "%llx %x %s\n" */
/* perf skips a map line whose NAME has fewer than 3 bytes
 * (dso__load_perf_map: `if (len + 2 >= line_len) continue;`): a method
 * published as `f` or `go` lost every sample. Such names get "()". */
#define PERF_MAP_MIN_NAME 3

static void put_line(struct linebuf *lb, const struct letw_map_entry *e)
{
	size_t nlen = strlen(e->name);
	int pad = nlen < PERF_MAP_MIN_NAME;

	if (lb->len + nlen + 40 > sizeof(lb->buf))
		flush_lines(lb);
	if (nlen + 40 > sizeof(lb->buf)) { /* a huge name: on its own */
		fprintf(lb->f, "%llx %x %s\n", (unsigned long long)e->start, e->size, e->name);
		return;
	}
	lb->len += hex(lb->buf + lb->len, e->start);
	lb->buf[lb->len++] = ' ';
	lb->len += hex(lb->buf + lb->len, e->size);
	lb->buf[lb->len++] = ' ';
	memcpy(lb->buf + lb->len, e->name, nlen);
	lb->len += nlen;
	if (pad) {
		memcpy(lb->buf + lb->len, "()", 2);
		lb->len += 2;
	}
	lb->buf[lb->len++] = '\n';
}

/* perf reads "START SIZE NAME" with hexadecimal START and SIZE. The file
 * is written under a temporary name and renamed (replace_file.h), so a
 * perf running at the same time never reads half a map; a name nobody can
 * guess, made afresh, as the directory may be another user's /tmp. */
static int write_map(struct perfmap *pm, const struct letw_codemap *m,
		     const struct letw_map_entry *e, size_t n)
{
	char *path = NULL, *tmp = NULL;
	struct linebuf *lb;
	FILE *f = NULL;
	size_t i;
	int ret = -1, werr, fd;

	char *dir = NULL;

	if (letw_sink_proc_dir(&pm->base, m->vpid, pm->output_dir, &dir))
		goto out;
	/* perf finds a process's map by the pid perf-VPID.map says: its vpid
	 * (perf reads a containerised process's map from its /tmp). */
	if (asprintf(&path, "%s/perf-%lld.map", dir,
		     (long long)letw_proc_vpid(m->vpid)) < 0)
		path = NULL;
	/* Named by our pid: the supervisor removes it should we die before
	 * the rename (replace_file.h). */
	fd = path ? letw_temp_path(path, &tmp) : -ENOMEM;
	if (fd) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot write `%s`: %s", path ? path : "perf-PID.map",
					  letw_temp_path_why(fd));
		goto out;
	}
	fd = letw_create_temp(tmp);
	if (fd < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot create `%s`: %s", tmp, strerror(-fd));
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot write `%s`: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	lb = malloc(sizeof(*lb));
	if (!lb) {
		BT_COMP_LOGE_APPEND_CAUSE("out of memory");
		fclose(f);
		f = NULL;
		unlink(tmp);
		goto out;
	}
	lb->f = f;
	lb->len = 0;
	lb->err = 0;
	lb->sink = &pm->base;
	for (i = 0; i < n && !lb->err; i++) {
		/* Lines go in address order, names lie in the order they were
		 * first seen: fetch ahead, or each line waits for a miss. */
		if (i + 16 < n)
			__builtin_prefetch(e[i + 16].name);
		put_line(lb, &e[i]);
	}
	flush_lines(lb);
	werr = lb->err || ferror(f);
	if (lb->err == -EINTR)
		werr = -EINTR;
	free(lb);
	if (fclose(f) != 0 && !werr)
		werr = 1;
	f = NULL;
	/* After the last block: the last moment to leave the old map. */
	if (werr == -EINTR || (!werr && letw_sink_interrupted(&pm->base))) {
		unlink(tmp);
		letw_sink_say_interrupted(&pm->base, path);
		goto out;
	}
	if (werr) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot write `%s`: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	werr = letw_replace_file(tmp, path);
	if (werr < 0) {
		BT_COMP_LOGE_APPEND_CAUSE("cannot rename `%s` to `%s`: %s", tmp,
					  path, strerror(-werr));
		unlink(tmp);
		goto out;
	}
	if (werr > 0)
		BT_COMP_LOGW("%s is in place, but the file it replaced (now `%s`) cannot be removed: %s",
			     path, tmp, strerror(werr));
	BT_COMP_LOGI("wrote %s (%zu symbols)", path, n);
	ret = 0;
out:
	if (f)
		fclose(f);
	free(dir);
	free(path);
	free(tmp);
	return ret;
}

static void report_reuse(struct perfmap *pm, const struct letw_codemap *m,
			 const struct letw_reuse *r)
{
	/* Always shown (not gated by the log level): the map alone cannot
	 * tell which code owned a reused range at a given sample time. Said
	 * before the map is written: "writes", not "wrote", a claim the
	 * crash or failure of that write would make false. One fprintf:
	 * glibc writes each call on unbuffered stderr at once, and a line
	 * printed in five calls came apart among other writers' lines. */
	char label[LETW_PROC_LABEL_MAX], eg[4 * 20] = "";
	size_t i, shown = r->ranges < 4 ? r->ranges : 4, at = 0;

	if (!r->ranges)
		return;
	for (i = 0; i < shown && at < sizeof(eg); i++)
		at += (size_t)snprintf(eg + at, sizeof(eg) - at, " 0x%llx",
				       (unsigned long long)r->example[i]);
	if (pm->mode == LETW_MAP_LATEST)
		fprintf(stderr,
			"perfmap: process %s: %zu address range(s) held different code over time (%zu regions); mode=latest writes the most recent code of each, %zu older region(s) omitted, %zu trimmed to the part no newer code covers; e.g. at%s\n",
			letw_sink_proc_label(&pm->base, m->vpid, label), r->ranges, r->regions,
			r->omitted, r->trimmed, eg);
	else
		fprintf(stderr,
			"perfmap: process %s: %zu address range(s) held different code over time (%zu regions); mode=all writes every region; e.g. at%s\n",
			letw_sink_proc_label(&pm->base, m->vpid, label), r->ranges, r->regions, eg);
}

static int perfmap_end(struct letw_sink *s)
{
	struct perfmap *pm = (struct perfmap *)s;
	struct letw_map_entry *e;
	struct letw_reuse reuse;
	size_t i, n;
	uint64_t lines = 0;
	int mixed;

	if (!pm->nprocs) {
		BT_COMP_LOGE_APPEND_CAUSE(
			"no lttng-etw code records (letw_runtime:method_*/stub_*, letw_rundown:*_dc*) in the trace%s",
			s->facts.problems ? " that was read (the trace is incomplete)" : "");
		return -1;
	}
	for (i = 0; i < pm->nprocs; i++) {
		struct letw_codemap *m = &pm->procs[i];
		char label[LETW_PROC_LABEL_MAX];

		/* The trace is read: no more lookups by address. */
		letw_codemap_drop_index(m);
		if (letw_codemap_build(m, pm->mode, &e, &n, &reuse)) {
			BT_COMP_LOGE_APPEND_CAUSE("out of memory");
			return -1;
		}
		report_reuse(pm, m, &reuse);
		if (m->stats.implicit_replacements)
			BT_COMP_LOGW("process %s: %llu region(s) replaced without an unload record (events lost?)",
				     letw_sink_proc_label(&pm->base, m->vpid, label),
				     (unsigned long long)m->stats.implicit_replacements);
		if (write_map(pm, m, e, n)) {
			free(e);
			return -1;
		}
		lines += n;
		free(e);
	}
	mixed = letw_sink_say_mixed(s, "map");
	if (pm->base.result) {
		pm->base.result->processes = (int)pm->nprocs;
		pm->base.result->map_lines = lines;
		pm->base.result->mixed_processes = mixed;
	}
	if (s->facts.problems && pm->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("maps written from an incomplete trace (%d stream(s) with missing or damaged data)",
					  s->facts.problems);
		return -1;
	}
	if (s->passless && pm->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("maps written for %d process(es) without a rundown pass in a trace that records passes (see the warnings)",
					  s->passless);
		return -1;
	}
	if (s->acct.truncated + s->acct.lossy && pm->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("maps written from %d rundown pass(es) not complete (see the warnings)",
					  s->acct.truncated + s->acct.lossy);
		return -1;
	}
	if (mixed && pm->fail_on_incomplete) {
		BT_COMP_LOGE_APPEND_CAUSE("%d map(s) mix processes that shared a vpid (see the warnings)",
					  mixed);
		return -1;
	}
	return 0;
}

static const struct letw_sink_ops perfmap_ops = {
	.event = perfmap_event,
	.end = perfmap_end,
	.name = "perfmap",
	.count_passes = 1,
};

bt_component_class_initialize_method_status
letw_perfmap_initialize(bt_self_component_sink *self,
			bt_self_component_sink_configuration *config,
			const bt_value *params, void *init_data)
{
	static const char *const allowed[] = { "output-dir", "mode",
					       "fail-on-incomplete", NULL };
	bt_self_component *sc = bt_self_component_sink_as_self_component(self);
	struct perfmap *pm = calloc(1, sizeof(*pm));
	const char *dir = ".", *mode = "latest";

	if (!pm)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	letw_sink_init(&pm->base, self, &perfmap_ops, init_data);
	/* Regions are keyed by address and named by their strings. */
	pm->base.cache.skip_method_ids = 1;
	pm->fail_on_incomplete = 1;
	if (letw_params_check(sc, params, allowed) ||
	    letw_param_path(sc, params, "output-dir", &dir) ||
	    letw_param_string(sc, params, "mode", &mode) ||
	    letw_param_bool(sc, params, "fail-on-incomplete", &pm->fail_on_incomplete))
		goto error;
	if (strcmp(mode, "latest") == 0) {
		pm->mode = LETW_MAP_LATEST;
	} else if (strcmp(mode, "all") == 0) {
		pm->mode = LETW_MAP_ALL;
	} else {
		BT_COMP_LOGE_APPEND_CAUSE("parameter `mode` must be \"latest\" or \"all\", not \"%s\"", mode);
		goto error;
	}
	pm->output_dir = strdup(dir);
	if (!pm->output_dir)
		goto error;
	if (letw_sink_output_dir(&pm->base, pm->output_dir))
		goto error;
	if (letw_sink_add_port(self))
		goto error;
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
error:
	letw_perfmap_finalize(self);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
}

void letw_perfmap_finalize(bt_self_component_sink *self)
{
	struct perfmap *pm = bt_self_component_get_data(
		bt_self_component_sink_as_self_component(self));
	size_t i;

	if (!pm)
		return;
	letw_sink_fini(&pm->base);
	for (i = 0; i < pm->nprocs; i++)
		letw_codemap_fini(&pm->procs[i]);
	free(pm->procs);
	free(pm->output_dir);
	free(pm);
	bt_self_component_set_data(bt_self_component_sink_as_self_component(self), NULL);
}
