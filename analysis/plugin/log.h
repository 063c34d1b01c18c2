/* SPDX-License-Identifier: MIT */
/*
 * Component logging in the style of babeltrace2's internal BT_COMP_LOG*
 * macros (which are not part of the public API): messages are filtered by
 * the component's own logging level, and the _APPEND_CAUSE variants also
 * push an error cause on the current thread, so babeltrace2 (or the
 * lttng-etw CLI) prints the full chain when a component fails.
 *
 * Every user defines LETW_LOG_SELF_COMP to an expression of type
 * bt_self_component * before using the macros.
 */
#ifndef LETW_BT_LOG_H
#define LETW_BT_LOG_H

#include <stdio.h>
#include <babeltrace2/babeltrace.h>

static inline int letw_bt_log_on(bt_self_component *self, bt_logging_level lvl)
{
	return lvl >= bt_component_get_logging_level(
			      bt_self_component_as_component(self));
}

#define LETW_COMP_LOG(_lvl, _tag, _fmt, ...)                                  \
	do {                                                                  \
		bt_self_component *_sc = (LETW_LOG_SELF_COMP);                \
		if (letw_bt_log_on(_sc, _lvl))                                \
			fprintf(stderr, "%s [%s] " _fmt "\n", _tag,           \
				bt_component_get_name(                        \
					bt_self_component_as_component(_sc)), \
				##__VA_ARGS__);                               \
	} while (0)

#define BT_COMP_LOGD(_fmt, ...) LETW_COMP_LOG(BT_LOGGING_LEVEL_DEBUG, "D", _fmt, ##__VA_ARGS__)
#define BT_COMP_LOGI(_fmt, ...) LETW_COMP_LOG(BT_LOGGING_LEVEL_INFO, "I", _fmt, ##__VA_ARGS__)
#define BT_COMP_LOGW(_fmt, ...) LETW_COMP_LOG(BT_LOGGING_LEVEL_WARNING, "W", _fmt, ##__VA_ARGS__)
#define BT_COMP_LOGE(_fmt, ...) LETW_COMP_LOG(BT_LOGGING_LEVEL_ERROR, "E", _fmt, ##__VA_ARGS__)

/* Log at error level and append an error cause from this component. */
#define BT_COMP_LOGE_APPEND_CAUSE(_fmt, ...)                                  \
	do {                                                                  \
		BT_COMP_LOGE(_fmt, ##__VA_ARGS__);                            \
		(void)bt_current_thread_error_append_cause_from_component(    \
			(LETW_LOG_SELF_COMP), __FILE__, __LINE__, _fmt,       \
			##__VA_ARGS__);                                       \
	} while (0)

#endif /* LETW_BT_LOG_H */
