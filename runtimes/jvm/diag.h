/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_DIAG_H
#define LETW_JVM_DIAG_H

#include <lttng-etw/lttng-etw.h>

#include "options.h"

/*
 * The agent's diagnostics, and lttng-etw's (through letw_set_log_fn), go
 * where the user said with log=: nowhere by default, stderr, or a file
 * opened once at load (O_APPEND). One line is formatted on the stack and
 * written with a single write(2): no stdio lock, no allocation, lines from
 * concurrent threads never interleave. Never waits for a reader: the
 * destination is non-blocking (diag.c), a line it does not take is
 * dropped and counted, and control characters from names become '?'. Callback paths only log at debug
 * level (one line per refused record), which the user asks for
 * explicitly; everything else is counted (stats.h) and summarised.
 */

/* Returns 0, or -errno when the file cannot be opened. */
int jvm_diag_open(const char *dest, enum jvm_log_level level);

/* Back to no destination, closing a file jvm_diag_open opened. Only when
 * the agent refuses to load: no callback is enabled then. */
void jvm_diag_close(void);

int jvm_diag_enabled(enum jvm_log_level level);

/* Lines dropped so far (destination full or gone). */
unsigned long jvm_diag_dropped(void);

void jvm_diag(enum jvm_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* letw_log_fn adapter. */
void jvm_diag_letw(enum letw_log_level level, const char *msg, void *ctx);

#endif
