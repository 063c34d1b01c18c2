/* SPDX-License-Identifier: MIT */
/*
 * The babeltrace2 plugin `etw`. Only declarations live here: the plugin
 * descriptor is static to this translation unit, so every component class
 * descriptor must be in it too, while the methods live with their class
 * (perfmap.c, report.c, jitdump.c) and are shared with the lttng-etw CLI.
 */
#include <babeltrace2/babeltrace.h>

#include "jitdump.h"
#include "perfmap.h"
#include "report.h"

BT_PLUGIN_MODULE();

BT_PLUGIN(etw);
BT_PLUGIN_DESCRIPTION("lttng-etw analyses: perf maps, perf jitdumps and rundown completeness reports");
BT_PLUGIN_AUTHOR("lttng-etw authors");
BT_PLUGIN_LICENSE("MIT");
BT_PLUGIN_VERSION(LETW_PV_MAJOR, LETW_PV_MINOR, LETW_PV_PATCH, NULL);

BT_PLUGIN_SINK_COMPONENT_CLASS(perfmap, letw_sink_consume);
BT_PLUGIN_SINK_COMPONENT_CLASS_DESCRIPTION(perfmap,
	"Write perf-PID.map files reconstructed from lttng-etw load/unload/rundown events");
BT_PLUGIN_SINK_COMPONENT_CLASS_HELP(perfmap,
	"Parameters: output-dir=DIR (default .), mode=latest|all (address reuse), fail-on-incomplete=yes|no");
BT_PLUGIN_SINK_COMPONENT_CLASS_INITIALIZE_METHOD(perfmap, letw_perfmap_initialize);
BT_PLUGIN_SINK_COMPONENT_CLASS_FINALIZE_METHOD(perfmap, letw_perfmap_finalize);
BT_PLUGIN_SINK_COMPONENT_CLASS_GRAPH_IS_CONFIGURED_METHOD(perfmap,
	letw_sink_graph_is_configured);

BT_PLUGIN_SINK_COMPONENT_CLASS(report, letw_sink_consume);
BT_PLUGIN_SINK_COMPONENT_CLASS_DESCRIPTION(report,
	"Per process and per rundown pass: complete, truncated, lossy or inconsistent");
BT_PLUGIN_SINK_COMPONENT_CLASS_HELP(report,
	"Parameters: format=text|json, output=FILE, fail-on-incomplete=yes|no, chunk=NAME (JSON: names the chunk)");
BT_PLUGIN_SINK_COMPONENT_CLASS_INITIALIZE_METHOD(report, letw_report_initialize);
BT_PLUGIN_SINK_COMPONENT_CLASS_FINALIZE_METHOD(report, letw_report_finalize);
BT_PLUGIN_SINK_COMPONENT_CLASS_GRAPH_IS_CONFIGURED_METHOD(report,
	letw_sink_graph_is_configured);

BT_PLUGIN_SINK_COMPONENT_CLASS(jitdump, letw_sink_consume);
BT_PLUGIN_SINK_COMPONENT_CLASS_DESCRIPTION(jitdump,
	"Write perf jitdump files (jit-PID.dump, for perf inject --jit) from lttng-etw events: time-correct code, code bytes, line tables");
BT_PLUGIN_SINK_COMPONENT_CLASS_HELP(jitdump,
	"Parameters: output-dir=DIR (default .), elf-text-offset=N (default 0; 64 for perf before 5.8), fail-on-incomplete=yes|no");
BT_PLUGIN_SINK_COMPONENT_CLASS_INITIALIZE_METHOD(jitdump, letw_jitdump_initialize);
BT_PLUGIN_SINK_COMPONENT_CLASS_FINALIZE_METHOD(jitdump, letw_jitdump_finalize);
BT_PLUGIN_SINK_COMPONENT_CLASS_GRAPH_IS_CONFIGURED_METHOD(jitdump,
	letw_sink_graph_is_configured);
