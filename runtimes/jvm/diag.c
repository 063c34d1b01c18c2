/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

/* Written once at load, before any callback is enabled. */
static int diag_fd = -1;
static enum jvm_log_level diag_level = JVM_LOG_INFO;

int jvm_diag_open(const char *dest, enum jvm_log_level level)
{
	diag_level = level;
	if (!dest || !*dest) {
		diag_fd = -1;
		return 0;
	}
	if (!strcmp(dest, "stderr")) {
		diag_fd = STDERR_FILENO;
		return 0;
	}
	diag_fd = open(dest, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	return diag_fd < 0 ? -errno : 0;
}

void jvm_diag_close(void)
{
	if (diag_fd > STDERR_FILENO)
		(void)close(diag_fd);
	diag_fd = -1;
}

int jvm_diag_enabled(enum jvm_log_level level)
{
	return diag_fd >= 0 && level >= diag_level;
}

static void emit(enum jvm_log_level level, const char *src, const char *fmt, va_list ap)
{
	static const char *const lv[] = { "debug", "info", "warn", "error" };
	char line[1024];
	int n, m;

	n = snprintf(line, sizeof(line), "lttng-etw-jvmti[%d]: %s%s: ", (int)getpid(), src,
		     lv[level]);
	if (n < 0)
		return;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* Best effort: a full disk or closed stderr is not the JVM's problem. */
	(void)!write(diag_fd, line, (size_t)n);
}

void jvm_diag(enum jvm_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!jvm_diag_enabled(level))
		return;
	va_start(ap, fmt);
	emit(level, "", fmt, ap);
	va_end(ap);
}

static void emit_lib(enum jvm_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, "lttng-etw ", fmt, ap);
	va_end(ap);
}

void jvm_diag_letw(enum letw_log_level level, const char *msg, void *ctx)
{
	/* Same numeric order: debug, info, warn, error. */
	enum jvm_log_level l = level <= LETW_LOG_ERROR ? (enum jvm_log_level)level : JVM_LOG_ERROR;

	if (jvm_diag_enabled(l))
		emit_lib(l, "%s", msg);
}
