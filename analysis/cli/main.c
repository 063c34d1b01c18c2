/* SPDX-License-Identifier: MIT */
/*
 * lttng-etw: analyse lttng-etw traces (perf maps, rundown reports) and
 * drive rundowns in traced processes (capture-state, start, stop).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

const char *letw_prog = "lttng-etw";

/* Errors and notes look the same: one line on stderr, prefixed. */
static void say(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", letw_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void letw_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

void letw_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

int letw_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int letw_parse_pid(const char *s, pid_t *out)
{
	uint64_t v;

	if (letw_parse_u64(s, &v) || v == 0 || v > 0x7fffffff)
		return -1;
	*out = (pid_t)v;
	return 0;
}

int letw_run(char *const argv[], int quiet)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		letw_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
			}
		} else {
			dup2(STDERR_FILENO, STDOUT_FILENO);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", letw_prog, argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		letw_err("cannot run `%s` (is it installed?)", argv[0]);
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

char *letw_run_capture(char *const argv[])
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	int pfd[2], st, ok;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return NULL;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(pfd[1], STDOUT_FILENO);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 16384;
			nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		n = read(pfd[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ok = buf && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!ok) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s COMMAND [OPTION]... [ARG]...\n"
		"\n"
		"Analyse lttng-etw traces and drive rundowns in traced processes.\n"
		"\n"
		"Commands:\n"
		"  perfmap TRACE -o DIR     write perf-PID.map files reconstructed from TRACE\n"
		"  jitdump TRACE -o DIR     write perf jitdumps (jit-PID.dump) for perf inject --jit\n"
		"  report TRACE [--json]    per process and pass: complete, truncated, lossy...\n"
		"  capture-state [--pid PID|--all] [--wait]\n"
		"                           ask processes for a rundown (CAPTURE_STATE)\n"
		"  status [--pid PID|--all] rundown mask and last pass ids of each process\n"
		"  start SESSION            lttng start, then capture-state for processes whose\n"
		"                           rundown events another session had already enabled\n"
		"  stop SESSION             DCEnd rundown in every traced process, then lttng stop\n"
		"\n"
		"TRACE is an LTTng trace or session output directory, or a live session URL\n"
		"net://HOST[:PORT]/host/HOSTNAME/SESSION (lttng-relayd).\n"
		"Run `%s COMMAND --help` for a command's options.\n"
		"\n"
		"Exit status: 0 ok, 1 error, 2 usage error, 3 (report) a pass is not complete.\n",
		letw_prog, letw_prog);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "perfmap", letw_cmd_perfmap },
		{ "jitdump", letw_cmd_jitdump },
		{ "report", letw_cmd_report },
		{ "capture-state", letw_cmd_capture_state },
		{ "status", letw_cmd_status },
		{ "start", letw_cmd_start },
		{ "stop", letw_cmd_stop },
	};
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return LETW_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return LETW_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("lttng-etw 0.1.0\n");
		return LETW_EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	letw_err("unknown command `%s` (try `%s --help`)", argv[1], letw_prog);
	return LETW_EXIT_USAGE;
}
