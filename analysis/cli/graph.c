/* SPDX-License-Identifier: MIT */
/* The graph itself, run in the child process supervise.c starts. Errors
 * go into the shared page for the parent to print with what it saw of the
 * reader's own log. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "graph.h"
#include "jitdump.h"
#include "perfmap.h"
#include "report.h"

/* Record what failed and the current thread's babeltrace2 error causes
 * in index order: the root cause (appended first, where the error began)
 * first. */
static void fail(struct letw_graph_shared *sh, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct letw_graph_shared *sh, const char *fmt, ...)
{
	const bt_error *err = bt_current_thread_take_error();
	size_t len = 0;
	uint64_t i, n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->err_what, sizeof(sh->err_what), fmt, ap);
	va_end(ap);
	sh->err_causes[0] = '\0';
	sh->has_error = 1;
	if (!err)
		return;
	n = bt_error_get_cause_count(err);
	for (i = 0; i < n && len < sizeof(sh->err_causes) - 1; i++) {
		const bt_error_cause *c = bt_error_borrow_cause_by_index(err, i);
		int comp = bt_error_cause_get_actor_type(c) == BT_ERROR_CAUSE_ACTOR_TYPE_COMPONENT;
		int w = snprintf(sh->err_causes + len, sizeof(sh->err_causes) - len,
				 "%s%s%s\t%s\n", comp ? "[" : "",
				 comp ? bt_error_cause_component_actor_get_component_name(c) :
					bt_error_cause_get_module_name(c),
				 comp ? "]" : "", bt_error_cause_get_message(c));

		if (w < 0)
			break;
		len += (size_t)w;
	}
	if (len >= sizeof(sh->err_causes))
		sh->err_causes[sizeof(sh->err_causes) - 1] = '\0';
	bt_error_release(err);
}

/* The plugins of the default search path, loaded once: bt_plugin_find()
 * loads every plugin of every directory to return one, so asking it for
 * `ctf` and then `utils` loaded (and initialised) them all twice. Same
 * precedence as bt_plugin_find(): the first plugin found of a name wins. */
static const bt_plugin_set *load_plugins(struct letw_graph_shared *sh)
{
	const bt_plugin_set *set = NULL;

	if (bt_plugin_find_all(BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &set) !=
	    BT_PLUGIN_FIND_ALL_STATUS_OK) {
		fail(sh, "no babeltrace2 plugin found (is babeltrace2 installed?)");
		return NULL;
	}
	return set;
}

/* A new reference to the plugin `name` of set, or NULL (error recorded). */
static const bt_plugin *find_plugin(const bt_plugin_set *set, const char *name,
				    struct letw_graph_shared *sh)
{
	uint64_t i, n = set ? bt_plugin_set_get_plugin_count(set) : 0;

	for (i = 0; i < n; i++) {
		const bt_plugin *p = bt_plugin_set_borrow_plugin_by_index_const(set, i);

		if (strcmp(bt_plugin_get_name(p), name) == 0) {
			bt_plugin_get_ref(p);
			return p;
		}
	}
	if (set)
		fail(sh, "babeltrace2 plugin `%s` not found (is babeltrace2 installed?)", name);
	return NULL;
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

static int add_sources(bt_graph *g, const struct letw_graph_opts *o, char **dirs,
		       size_t ndirs, const bt_component_filter *mux,
		       const bt_plugin_set *plugins, bt_logging_level lvl,
		       struct letw_graph_shared *sh)
{
	const bt_plugin *ctf = find_plugin(plugins, "ctf", sh);
	int live = ndirs == 0;
	int ret = -1;
	size_t i;

	if (!ctf)
		return -1;
	for (i = 0; i < (live ? 1 : ndirs); i++) {
		const char *input = live ? o->trace : dirs[i];
		const bt_component_class_source *cls =
			bt_plugin_borrow_source_component_class_by_name_const(
				ctf, live ? "lttng-live" : "fs");
		bt_value *params = bt_value_map_create(), *inputs = NULL;
		const bt_component_source *src = NULL;
		char name[32];
		int failed;

		sh->phase = LETW_PHASE_OPENING;
		snprintf(sh->current, sizeof(sh->current), "%s", input);
		failed = !params ||
			 bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
			 bt_value_array_append_string_element(inputs, input);
		/* A live session that does not exist (yet) is an error
		 * rather than an endless wait. */
		if (!failed && live)
			failed = bt_value_map_insert_string_entry(
				params, "session-not-found-action", "fail") != 0;
		snprintf(name, sizeof(name), "source-%zu", i);
		if (failed || bt_graph_add_source_component(g, cls, name, params, lvl, &src) !=
				      BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
			bt_value_put_ref(params);
			fail(sh, "cannot open the trace `%s`", input);
			goto out;
		}
		bt_value_put_ref(params);
		if (connect_all(g, src, mux)) {
			fail(sh, "cannot connect the source of `%s`", input);
			goto out;
		}
	}
	ret = 0;
out:
	bt_plugin_put_ref(ctf);
	return ret;
}

static bt_interrupter *the_interrupter;
static volatile sig_atomic_t the_signal;

static void on_signal(int sig)
{
	the_signal = sig;
	if (the_interrupter)
		bt_interrupter_set(the_interrupter);
}

static int run(bt_graph *g, const struct letw_graph_opts *o,
	       struct letw_graph_shared *sh)
{
	struct sigaction sa = { .sa_handler = on_signal }, old;
	bt_graph_run_once_status st;

	the_interrupter = bt_interrupter_create();
	if (the_interrupter)
		bt_graph_add_interrupter(g, the_interrupter);
	/* A terminal hang-up reaches the whole group, this child too. The
	 * fork kept what the command found on entry (the parent catches
	 * after it): one ignored then (nohup) stays ignored here too. */
	letw_catch_unless_ignored(SIGINT, &sa, &old);
	letw_catch_unless_ignored(SIGTERM, &sa, &old);
	letw_catch_unless_ignored(SIGHUP, &sa, &old);
	sh->phase = LETW_PHASE_RUNNING;
	for (;;) {
		st = bt_graph_run_once(g);
		/* Before END too: the sinks write their outputs in the run
		 * that ends the graph, and a signal then stops the writer
		 * (letw_sink_interrupted: its temporary file removed, its
		 * cause kept for the message). One that came after the last
		 * output was put in place still asked the command to stop:
		 * said the same way, as the parent does of one after our
		 * exit. */
		if (the_interrupter && bt_interrupter_is_set(the_interrupter)) {
			sh->interrupted = the_signal ? the_signal : SIGINT;
			fail(sh, "interrupted");
			return -1;
		}
		if (st == BT_GRAPH_RUN_ONCE_STATUS_END)
			break;
		if (st == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
			/* Live source with nothing new yet. */
			struct timespec ts = { 0, 20 * 1000000L };

			nanosleep(&ts, NULL);
		} else if (st != BT_GRAPH_RUN_ONCE_STATUS_OK) {
			fail(sh, "cannot process the trace `%s`", o->trace);
			return -1;
		}
	}
	sh->phase = LETW_PHASE_DONE;
	return 0;
}

int letw_graph_run_here(const struct letw_graph_opts *o, char **dirs,
			size_t ndirs, struct letw_graph_shared *sh)
{
	/* The reader logs at error level only: its error lines (the
	 * metadata line a parse failed at, which 2.0 does not put in the
	 * error causes) reach the supervisor, which prints the first one
	 * as the reason. Our sink keeps its warnings (missing vpid, lost
	 * records). */
	bt_logging_level lvl = o->verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_ERROR;
	bt_logging_level sink_lvl = o->verbose ? BT_LOGGING_LEVEL_INFO : BT_LOGGING_LEVEL_WARNING;
	bt_component_class_sink *sink_cls;
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	const bt_plugin_set *plugins;
	const bt_plugin *utils;
	bt_graph *g;
	int ret = -1;

	/* The TSDL parser logs its syntax errors ("At line N in metadata
	 * stream: ...") at a level of its own, read from the environment
	 * when the ctf plugin loads (what babeltrace2 --log-level sets). */
	setenv("BABELTRACE_PLUGIN_CTF_METADATA_LOG_LEVEL", o->verbose ? "WARNING" : "ERROR", 0);
	sink_cls = make_sink_class(o->sink);
	plugins = load_plugins(sh);
	utils = find_plugin(plugins, "utils", sh);
	g = bt_graph_create(0);

	bt_logging_set_global_level(lvl);
	if (!sink_cls || !utils || !g) {
		if (!sh->has_error)
			fail(sh, "out of memory");
		goto out;
	}
	if (bt_graph_add_filter_component(g,
		    bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer"),
		    "muxer", NULL, lvl, &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		fail(sh, "cannot create the muxer");
		goto out;
	}
	/* Our code, not the reader's: a crash or a spin here is said as
	 * lttng-etw's (supervise.c), never as a damaged trace. */
	sh->phase = LETW_PHASE_SINK;
	if (bt_graph_add_sink_component_with_initialize_method_data(g, sink_cls,
		    "etw", o->params, &sh->result, sink_lvl, &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		fail(sh, "cannot create the sink");
		goto out;
	}
	if (add_sources(g, o, dirs, ndirs, mux, plugins, lvl, sh))
		goto out;
	if (bt_graph_connect_ports(g,
		    bt_component_filter_borrow_output_port_by_name_const(mux, "out"),
		    bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
		    NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		fail(sh, "cannot connect the muxer to the sink");
		goto out;
	}
	ret = run(g, o, sh);
out:
	bt_graph_put_ref(g);
	bt_plugin_put_ref(utils);
	bt_plugin_set_put_ref(plugins);
	bt_component_class_sink_put_ref(sink_cls);
	return ret;
}
