/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "graph.h"
#include "jitdump.h"
#include "perfmap.h"
#include "report.h"

/* Print the current thread's babeltrace2 error, most recent cause first,
 * as the babeltrace2 CLI does. */
static void print_bt_error(void)
{
	const bt_error *err = bt_current_thread_take_error();
	uint64_t i, n;

	if (!err)
		return;
	n = bt_error_get_cause_count(err);
	for (i = 0; i < n; i++) {
		const bt_error_cause *c = bt_error_borrow_cause_by_index(err, i);

		if (bt_error_cause_get_actor_type(c) == BT_ERROR_CAUSE_ACTOR_TYPE_COMPONENT)
			fprintf(stderr, "  %s[%s]: %s\n", i ? "caused by " : "",
				bt_error_cause_component_actor_get_component_name(c),
				bt_error_cause_get_message(c));
		else
			fprintf(stderr, "  %s%s: %s\n", i ? "caused by " : "",
				bt_error_cause_get_module_name(c),
				bt_error_cause_get_message(c));
	}
	bt_error_release(err);
}

/* ---- discovering the CTF traces under a directory ---- */

struct trace_dirs {
	char **v;
	size_t n, cap;
};
static struct trace_dirs *walk_dirs; /* nftw has no user pointer */

static int on_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	char **nv;
	size_t len;

	if (flag != FTW_F || strcmp(path + ftw->base, "metadata") != 0)
		return 0;
	if (walk_dirs->n == walk_dirs->cap) {
		walk_dirs->cap = walk_dirs->cap ? walk_dirs->cap * 2 : 8;
		nv = realloc(walk_dirs->v, walk_dirs->cap * sizeof(*nv));
		if (!nv)
			return -1;
		walk_dirs->v = nv;
	}
	len = (size_t)ftw->base;
	walk_dirs->v[walk_dirs->n] = strndup(path, len > 1 ? len - 1 : len);
	return walk_dirs->v[walk_dirs->n++] ? 0 : -1;
}

static int find_traces(const char *root, struct trace_dirs *d)
{
	struct stat st;

	if (stat(root, &st) != 0) {
		letw_err("cannot open the trace `%s`: %s", root, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		letw_err("`%s` is not a directory (expected an LTTng trace or session output directory)", root);
		return -1;
	}
	walk_dirs = d;
	if (nftw(root, on_entry, 16, FTW_PHYS) != 0) {
		letw_err("cannot scan `%s`: %s", root, strerror(errno));
		return -1;
	}
	if (!d->n) {
		letw_err("no CTF trace under `%s` (no `metadata` file found)", root);
		return -1;
	}
	return 0;
}

/* ---- building the graph ---- */

static const bt_plugin *find_plugin(const char *name)
{
	const bt_plugin *p = NULL;

	if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &p) !=
	    BT_PLUGIN_FIND_STATUS_OK) {
		letw_err("babeltrace2 plugin `%s` not found (is babeltrace2 installed?)", name);
		return NULL;
	}
	return p;
}

static int connect_all(bt_graph *g, const bt_component_source *src,
		       const bt_component_filter *mux)
{
	uint64_t i, n = bt_component_source_get_output_port_count(src);

	for (i = 0; i < n; i++) {
		const bt_port_output *out =
			bt_component_source_borrow_output_port_by_index_const(src, i);
		/* The muxer always keeps exactly one unconnected input
		 * port, its last one, and adds another on connection. */
		const bt_port_input *in = bt_component_filter_borrow_input_port_by_index_const(
			mux, bt_component_filter_get_input_port_count(mux) - 1);

		if (bt_graph_connect_ports(g, out, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
			return -1;
	}
	return 0;
}

static bt_component_class_sink *make_sink_class(enum letw_sink_kind k)
{
	bt_component_class_sink *c = bt_component_class_sink_create(
		k == LETW_SINK_PERFMAP ? "perfmap" : k == LETW_SINK_JITDUMP ? "jitdump" : "report",
		letw_sink_consume);

	if (!c)
		return NULL;
	if (k == LETW_SINK_PERFMAP) {
		bt_component_class_sink_set_initialize_method(c, letw_perfmap_initialize);
		bt_component_class_sink_set_finalize_method(c, letw_perfmap_finalize);
	} else if (k == LETW_SINK_JITDUMP) {
		bt_component_class_sink_set_initialize_method(c, letw_jitdump_initialize);
		bt_component_class_sink_set_finalize_method(c, letw_jitdump_finalize);
	} else {
		bt_component_class_sink_set_initialize_method(c, letw_report_initialize);
		bt_component_class_sink_set_finalize_method(c, letw_report_finalize);
	}
	bt_component_class_sink_set_graph_is_configured_method(c, letw_sink_graph_is_configured);
	return c;
}

static int add_sources(bt_graph *g, const struct letw_graph_opts *o,
		       const bt_component_filter *mux, bt_logging_level lvl)
{
	const bt_plugin *ctf = find_plugin("ctf");
	struct trace_dirs d = { 0 };
	int live = strncmp(o->trace, "net://", 6) == 0 ||
		   strncmp(o->trace, "net4://", 7) == 0;
	int ret = -1;
	size_t i;

	if (!ctf)
		return -1;
	if (!live && find_traces(o->trace, &d))
		goto out;
	for (i = 0; i < (live ? 1 : d.n); i++) {
		const bt_component_class_source *cls =
			bt_plugin_borrow_source_component_class_by_name_const(
				ctf, live ? "lttng-live" : "fs");
		bt_value *params = bt_value_map_create(), *inputs = NULL;
		const bt_component_source *src = NULL;
		char name[32];
		int failed;

		failed = !params ||
			 bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
			 bt_value_array_append_string_element(inputs, live ? o->trace : d.v[i]);
		/* A live session that does not exist (yet) is an error
		 * rather than an endless wait. */
		if (!failed && live)
			failed = bt_value_map_insert_string_entry(
				params, "session-not-found-action", "fail") != 0;
		snprintf(name, sizeof(name), "source-%zu", i);
		if (failed || bt_graph_add_source_component(g, cls, name, params, lvl, &src) !=
				      BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
			bt_value_put_ref(params);
			letw_err("cannot open the trace `%s`:", live ? o->trace : d.v[i]);
			goto out;
		}
		bt_value_put_ref(params);
		if (connect_all(g, src, mux)) {
			letw_err("cannot connect the source of `%s`:", live ? o->trace : d.v[i]);
			goto out;
		}
	}
	if (o->verbose && !live)
		letw_note("%zu CTF trace(s) under %s", d.n, o->trace);
	ret = 0;
out:
	for (i = 0; i < d.n; i++)
		free(d.v[i]);
	free(d.v);
	bt_plugin_put_ref(ctf);
	return ret;
}

static volatile sig_atomic_t interrupted;
static bt_interrupter *the_interrupter;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
	if (the_interrupter)
		bt_interrupter_set(the_interrupter);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void show_progress(const struct letw_sink_result *r, double t0, int final)
{
	fprintf(stderr, "\r%s: %llu messages, %llu lttng-etw events, %.1f s%s",
		letw_prog, (unsigned long long)r->messages,
		(unsigned long long)r->letw_events, now_s() - t0, final ? "\n" : "");
}

static int run(bt_graph *g, const struct letw_graph_opts *o,
	       struct letw_sink_result *r)
{
	int progress = o->progress < 0 ? isatty(STDERR_FILENO) : o->progress;
	double t0 = now_s(), last = t0;
	struct sigaction sa = { .sa_handler = on_sigint }, old_int, old_term;
	bt_graph_run_once_status st;
	int ret = -1;

	the_interrupter = bt_interrupter_create();
	if (the_interrupter)
		bt_graph_add_interrupter(g, the_interrupter);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (;;) {
		st = bt_graph_run_once(g);
		if (st == BT_GRAPH_RUN_ONCE_STATUS_END) {
			ret = 0;
			break;
		}
		if (interrupted) {
			if (progress)
				fprintf(stderr, "\n");
			letw_err("interrupted");
			break;
		}
		if (st == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
			/* Live source with nothing new yet. */
			struct timespec ts = { 0, 20 * 1000000L };

			nanosleep(&ts, NULL);
		} else if (st != BT_GRAPH_RUN_ONCE_STATUS_OK) {
			if (progress)
				fprintf(stderr, "\n");
			letw_err("cannot process the trace `%s`:", o->trace);
			print_bt_error();
			break;
		}
		if (progress && now_s() - last >= 0.5) {
			last = now_s();
			show_progress(r, t0, 0);
		}
	}
	if (progress && ret == 0 && last != t0)
		show_progress(r, t0, 1);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	bt_interrupter_put_ref(the_interrupter);
	the_interrupter = NULL;
	return ret;
}

int letw_graph_run(const struct letw_graph_opts *o, struct letw_sink_result *r)
{
	/* Upstream components log their failures as error causes, which
	 * are printed once, in order; their own log lines would repeat them.
	 * Our sink keeps its warnings (missing vpid, lost records). */
	bt_logging_level lvl = o->verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE;
	bt_logging_level sink_lvl = o->verbose ? BT_LOGGING_LEVEL_INFO : BT_LOGGING_LEVEL_WARNING;
	bt_component_class_sink *sink_cls = make_sink_class(o->sink);
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	const bt_plugin *utils = find_plugin("utils");
	bt_graph *g = bt_graph_create(0);
	int ret = -1;

	bt_logging_set_global_level(lvl);
	if (!sink_cls || !utils || !g) {
		letw_err("out of memory, or babeltrace2 plugins missing");
		goto out;
	}
	if (bt_graph_add_filter_component(g,
		    bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer"),
		    "muxer", NULL, lvl, &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		letw_err("cannot create the muxer:");
		print_bt_error();
		goto out;
	}
	if (bt_graph_add_sink_component_with_initialize_method_data(g, sink_cls,
		    "etw", o->params, r, sink_lvl, &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		letw_err("cannot create the sink:");
		print_bt_error();
		goto out;
	}
	if (add_sources(g, o, mux, lvl)) {
		print_bt_error();
		goto out;
	}
	if (bt_graph_connect_ports(g,
		    bt_component_filter_borrow_output_port_by_name_const(mux, "out"),
		    bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
		    NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		letw_err("cannot connect the muxer to the sink:");
		print_bt_error();
		goto out;
	}
	ret = run(g, o, r);
out:
	bt_graph_put_ref(g);
	bt_plugin_put_ref(utils);
	bt_component_class_sink_put_ref(sink_cls);
	return ret;
}
