/* SPDX-License-Identifier: MIT */
/*
 * What both sinks share: one input port, its message iterator, the consume
 * loop, the decoding of lttng-etw events, and the per-process bookkeeping
 * keyed by vpid. Each sink supplies callbacks for events, discarded
 * events and the end of the stream.
 */
#ifndef LETW_BT_SINK_COMMON_H
#define LETW_BT_SINK_COMMON_H

#include <stdint.h>
#include <babeltrace2/babeltrace.h>

#include "event.h"

/* Progress and outcome shared with a caller that adds the sink with
 * initialize-method data (the lttng-etw CLI); NULL under babeltrace2. */
struct letw_sink_result {
	uint64_t messages;      /* updated while consuming */
	uint64_t letw_events;
	int incomplete_passes;  /* report sink: passes not "complete" */
	int processes;
	uint64_t map_lines;     /* perfmap sink */
	uint64_t jit_loads;     /* jitdump sink: LOAD records written, */
	uint64_t jit_code;      /* ... of which with the code's bytes, */
	uint64_t jit_lines;     /* ... and with a DEBUG_INFO record */
};

struct letw_sink;

struct letw_sink_ops {
	/* Return 0, or a negative errno to fail the graph (cause appended). */
	int (*event)(struct letw_sink *s, const struct letw_ev *ev);
	/* Optional: every other event message (schemas the shared decoder
	 * leaves to the sink that wants them). */
	int (*other)(struct letw_sink *s, const bt_message *msg);
	int (*discarded)(struct letw_sink *s, const bt_message *msg);
	/* Optional: every packet beginning (per-stream facts). */
	int (*packet)(struct letw_sink *s, const bt_message *msg);
	int (*end)(struct letw_sink *s);
};

struct letw_sink {
	bt_self_component *self;
	bt_message_iterator *iter;
	const struct letw_sink_ops *ops;
	struct letw_sink_result *result; /* may be NULL */
	struct letw_ev_class_cache cache;
	int warned_vpid;
};

void letw_sink_init(struct letw_sink *s, bt_self_component_sink *self,
		    const struct letw_sink_ops *ops, void *init_data);

/* Shared component-class methods. Each sink's state struct starts with a
 * struct letw_sink, which is the component's user data. */
bt_component_class_sink_graph_is_configured_method_status
letw_sink_graph_is_configured(bt_self_component_sink *self);
bt_component_class_sink_consume_method_status
letw_sink_consume(bt_self_component_sink *self);
/* Adds the "in" port; returns 0 or -1 (cause appended). */
int letw_sink_add_port(bt_self_component_sink *self);
void letw_sink_fini(struct letw_sink *s);

/* Parameter helpers: return 0 on success (missing optional parameter
 * leaves *out unchanged), -1 with an error cause on a bad type/value. */
int letw_param_string(bt_self_component *self, const bt_value *params,
		      const char *key, const char **out);
int letw_param_bool(bt_self_component *self, const bt_value *params,
		    const char *key, int *out);
/* Fails with a cause naming the first key of params not in allowed. */
int letw_params_check(bt_self_component *self, const bt_value *params,
		      const char *const *allowed);

#endif /* LETW_BT_SINK_COMMON_H */
