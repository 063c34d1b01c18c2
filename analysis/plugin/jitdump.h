/* SPDX-License-Identifier: MIT */
/* sink.etw.jitdump component-class methods (registered by plugin.c and by
 * the lttng-etw CLI, which links them in). */
#ifndef LETW_BT_JITDUMP_H
#define LETW_BT_JITDUMP_H

#include <babeltrace2/babeltrace.h>

bt_component_class_initialize_method_status
letw_jitdump_initialize(bt_self_component_sink *self,
			bt_self_component_sink_configuration *config,
			const bt_value *params, void *init_data);
void letw_jitdump_finalize(bt_self_component_sink *self);

#endif /* LETW_BT_JITDUMP_H */
