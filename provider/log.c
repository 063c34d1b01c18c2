/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/uatomic.h>

#include "log.h"

/*
 * The callback and its context are published as one pair so a logging
 * thread never sees a new function with an old context. Runtimes set the
 * callback once, near letw_init; the two slots make one replacement racing
 * with a log call safe (the reader uses the old pair). Back-to-back
 * replacements racing with a log call are not supported.
 */
struct log_sink {
	letw_log_fn fn;
	void *ctx;
};

static struct log_sink sinks[2];
/* Depth of log callbacks running on this thread: letw_init, letw_shutdown
 * and letw_capture_state refuse to run inside one (internal.h
 * letw_reentry_refused), since init logs while it holds lifecycle_lock. */
static __thread int in_callback;
static struct log_sink *current;
static int to_stderr = -1;
static enum letw_log_level min_level = LETW_LOG_INFO;

static void stderr_sink(enum letw_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = { "debug", "info", "warning", "error" };

	fprintf(stderr, "lttng-etw: %s: %s\n", names[level & 3], msg);
}

void letw_log_set(letw_log_fn fn, void *ctx)
{
	static unsigned int slot;
	struct log_sink *s = &sinks[(slot++) & 1];

	s->fn = fn;
	s->ctx = ctx;
	/* Release: the fields are written before the pointer that publishes
	 * them, so a reader that sees the pointer sees both. */
	cmm_smp_wmb();
	uatomic_set(&current, s);
}

void letw_log_env(void)
{
	const char *env = getenv("LETW_LOG");

	to_stderr = env && (!strcmp(env, "stderr") || !strcmp(env, "debug"));
	if (env && !strcmp(env, "debug"))
		min_level = LETW_LOG_DEBUG;
}

void letw_log_init(letw_log_fn fn, void *ctx)
{
	letw_log_env();
	letw_log_set(fn, ctx);
}

void letw_log(enum letw_log_level level, const char *fmt, ...)
{
	struct log_sink *s = uatomic_read(&current);
	char buf[512];
	va_list ap;

	if (level < min_level)
		return;
	cmm_smp_rmb();
	if ((!s || !s->fn) && to_stderr != 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s && s->fn) {
		in_callback++;
		s->fn(level, buf, s->ctx);
		in_callback--;
	} else
		stderr_sink(level, buf, NULL);
}

int letw_log_in_callback(void)
{
	return in_callback;
}
