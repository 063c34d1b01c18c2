/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"

/* Written once at load, before any callback is enabled. */
static int diag_fd = -1;
static int diag_sock; /* diag_fd is a socket: send(MSG_DONTWAIT) */
static enum jvm_log_level diag_level = JVM_LOG_INFO;
/* Lines a full pipe or socket (or a full disk) did not take. */
static atomic_ulong diag_dropped;

/* stderr as the JVM has it, but never blocking: a pipe or terminal is
 * opened again through /proc (a new open file description, O_NONBLOCK,
 * so the JVM's own fd 2 keeps its blocking mode); a socket is written
 * with MSG_DONTWAIT. A regular file does not block on a reader. */
static int open_stderr(void)
{
	struct stat st;
	int fd;

	if (fstat(STDERR_FILENO, &st))
		return STDERR_FILENO; /* closed: writes fail, lines are dropped */
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	diag_sock = S_ISSOCK(st.st_mode);
	return STDERR_FILENO;
}

int jvm_diag_open(const char *dest, enum jvm_log_level level)
{
	diag_level = level;
	diag_sock = 0;
	if (!dest || !*dest) {
		diag_fd = -1;
		return 0;
	}
	if (!strcmp(dest, "stderr")) {
		diag_fd = open_stderr();
		return 0;
	}
	/* O_NONBLOCK: opening a FIFO nobody reads fails (ENXIO) instead of
	 * waiting for a reader, and a reader that stops reading costs lines,
	 * not a JVM thread. */
	diag_fd = open(dest, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		       0644);
	return diag_fd < 0 ? -errno : 0;
}

void jvm_diag_close(void)
{
	if (diag_fd > STDERR_FILENO)
		(void)close(diag_fd);
	diag_fd = -1;
}

unsigned long jvm_diag_dropped(void)
{
	return atomic_load_explicit(&diag_dropped, memory_order_relaxed);
}

int jvm_diag_enabled(enum jvm_log_level level)
{
	return diag_fd >= 0 && level >= diag_level;
}

static void emit(enum jvm_log_level level, const char *src, const char *fmt, va_list ap)
{
	static const char *const lv[] = { "debug", "info", "warn", "error" };
	char line[1024];
	ssize_t w;
	int n, m, i;

	n = snprintf(line, sizeof(line), "lttng-etw-jvmti[%d]: %s%s: ", (int)getpid(), src,
		     lv[level]);
	if (n < 0)
		return;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	m = n + m > (int)sizeof(line) - 2 ? (int)sizeof(line) - 2 : n + m;
	/* Names come from the application (class, method, loader names): a
	 * newline in one must not start a line of its own. */
	for (i = n; i < m; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[m++] = '\n';
	/* Best effort: a full disk, pipe or socket, or a closed stderr, is not
	 * the JVM's problem; the line is counted and dropped. */
	if (diag_sock)
		w = send(diag_fd, line, (size_t)m, MSG_DONTWAIT | MSG_NOSIGNAL);
	else
		w = write(diag_fd, line, (size_t)m);
	if (w != (ssize_t)m)
		atomic_fetch_add_explicit(&diag_dropped, 1, memory_order_relaxed);
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
