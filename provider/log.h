/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics. The library never prints on its own: messages go to the
 * runtime's log callback, or to stderr when LETW_LOG=stderr. Never called
 * from the publish/unpublish paths (they report through return codes only).
 */
#ifndef LETW_LOG_H
#define LETW_LOG_H

#include <lttng-etw/lttng-etw.h>

/* LETW_LOG (stderr, debug) from the environment, then the callback. */
void letw_log_init(letw_log_fn fn, void *ctx);
/* LETW_LOG only: the callback set before (letw_set_log_fn) stays. */
void letw_log_env(void);
void letw_log_set(letw_log_fn fn, void *ctx);
void letw_log(enum letw_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Non-zero inside the runtime's log callback, on the thread running it. */
int letw_log_in_callback(void);

#define letw_debug(...) letw_log(LETW_LOG_DEBUG, __VA_ARGS__)
#define letw_info(...)  letw_log(LETW_LOG_INFO, __VA_ARGS__)
#define letw_warn(...)  letw_log(LETW_LOG_WARN, __VA_ARGS__)
#define letw_err(...)   letw_log(LETW_LOG_ERROR, __VA_ARGS__)

#endif
