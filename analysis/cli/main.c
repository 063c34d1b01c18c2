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
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json_out.h"

const char *letw_prog = "lttng-etw";

/* Errors and notes look the same: one line on stderr, prefixed. They
 * quote paths and trace data: written as text (letw_text_str). */
static void say(const char *fmt, va_list ap)
{
	char *msg = NULL, prefix[64];

	snprintf(prefix, sizeof(prefix), "%s: ", letw_prog);
	if (vasprintf(&msg, fmt, ap) < 0) {
		letw_text_line(stderr, prefix, "(out of memory)");
	} else {
		letw_text_line(stderr, prefix, msg);
		free(msg);
	}
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

volatile sig_atomic_t letw_interrupted;

/* What a second signal leaves (letw_set_kill_note): two buffers, the one
 * in use named by kill_note, so the handler never reads one being
 * written (the main thread fills the other, then switches). */
static char kill_notes[2][1024];
static volatile size_t kill_note_lens[2];
static volatile sig_atomic_t kill_note = -1;

static void on_interrupt(int sig)
{
	int i = kill_note;

	atomic_signal_fence(memory_order_acquire); /* pairs with letw_set_kill_note */

	if (!letw_interrupted) {
		letw_interrupted = sig;
		return;
	}
	/* The second: a call into liblttng-ctl is not cut short, and the
	 * user is escaping a hung sessiond. Say what may be left (write(2),
	 * all a handler may use), then die of the signal: it is blocked
	 * while we run, so the raise takes effect on return. */
	if (i >= 0 && write(STDERR_FILENO, kill_notes[i], kill_note_lens[i]) < 0) {
		/* nothing more to try: dying anyway */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int letw_set_kill_note(const char *fmt, ...)
{
	int next = kill_note == 0 ? 1 : 0, ret = 0;
	char *body = NULL;
	va_list ap;
	FILE *f;
	long len;

	va_start(ap, fmt);
	len = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (len < 0)
		return -ENOMEM; /* the note in place stays: less precise, not wrong */
	/* As say() writes: prefixed, escaped, one line. */
	f = fmemopen(kill_notes[next], sizeof(kill_notes[next]) - 1, "w");
	if (f) {
		fprintf(f, "%s: ", letw_prog);
		letw_text_str(f, body);
		fputc('\n', f);
		fflush(f);
		len = ftell(f);
		fclose(f);
		if (len > 0) {
			if ((size_t)len >= sizeof(kill_notes[next]) - 1) { /* cut: still a line */
				len = (long)sizeof(kill_notes[next]) - 1;
				kill_notes[next][len - 1] = '\n';
				ret = -ENAMETOOLONG;
			}
			kill_note_lens[next] = (size_t)len;
			/* The note whole before the handler may pick it: a
			 * compiler fence, the handler runs on this thread. */
			atomic_signal_fence(memory_order_release);
			kill_note = next;
		}
	}
	free(body);
	return ret;
}

/* SIGHUP too: a closed terminal or ssh session is an interrupt, as for the
 * analysis commands (supervise.c). The first only sets letw_interrupted:
 * a call into liblttng-ctl is not cut short, so if sessiond hangs, the
 * second ends the command at once (on_interrupt), after the note of what
 * it may leave
 * (letw_set_kill_note). A signal ignored on entry stays so:
 * `nohup lttng-etw stop ...` is to outlive the terminal, and a script's
 * `lttng-etw stop ... &` its Ctrl-C. */
void letw_catch_interrupts(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_interrupt }, old;

	/* The three blocked while one is handled: a SIGTERM just after a
	 * SIGINT is the second signal, not a race on letw_interrupted. */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		letw_catch_unless_ignored(sigs[i], &sa, &old);
}

void letw_catch_unless_ignored(int sig, const struct sigaction *sa, struct sigaction *old)
{
	if (sigaction(sig, NULL, old) == 0 && old->sa_handler != SIG_IGN)
		sigaction(sig, sa, NULL);
}

char *letw_shell_quote(const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-.,/:=@%+";
	size_t n = 0, i;
	char *q, *p;

	/* As is when every character is one no shell reads specially (not
	 * even ~ or # at the start of a word): the usual session name stays
	 * readable. */
	if (*s && strspn(s, plain) == strlen(s))
		return strdup(s);
	for (i = 0; s[i]; i++)
		n += s[i] == '\'' ? 4 : 1;
	q = malloc(n + 3);
	if (!q)
		return NULL;
	p = q;
	*p++ = '\'';
	for (i = 0; s[i]; i++) {
		if (s[i] == '\'') {
			memcpy(p, "'\\''", 4); /* close, a quoted quote, reopen */
			p += 4;
		} else {
			*p++ = s[i];
		}
	}
	*p++ = '\'';
	*p = 0;
	return q;
}

void letw_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

double letw_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Decimal, or hexadecimal after 0x (masks): never octal (`--pid 010` is
 * pid 10, as a user reads it), and no blank or sign, which strtoull
 * would take ("-1" as 2^64 - 1). */
int letw_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int base = 10;

	if (!s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		base = 16;
	}
	if (!((*s >= '0' && *s <= '9') ||
	      (base == 16 && ((*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))))
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
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
		"  capture-state --pid PID|--all [--wait]\n"
		"                           ask processes for a rundown (CAPTURE_STATE)\n"
		"  status [--pid PID|--all] rundown mask and last pass ids of each process\n"
		"  start SESSION            lttng start, then wait for every process's DCStart\n"
		"                           pass into SESSION\n"
		"  stop SESSION             DCEnd pass into SESSION in every traced process, then\n"
		"                           lttng stop\n"
		"  snapshot SESSION         regenerate SESSION's statedump, wait for every pass,\n"
		"                           then lttng snapshot record\n"
		"  watch [--session NAME]   daemon: each new trace chunk of a rotating session\n"
		"                           gets its own rundown\n"
		"\n"
		"TRACE is an LTTng trace or session output directory, or a live session URL\n"
		"net://HOST[:PORT]/host/HOSTNAME/SESSION (lttng-relayd).\n"
		"Run `%s COMMAND --help` for a command's options.\n"
		"\n"
		"Exit status: 0 ok, 1 error, 2 usage error, 3 (report, perfmap, jitdump) the trace\n"
		"or a pass in it is not complete (the output is still written), 130 interrupted\n"
		"by SIGINT, SIGTERM or SIGHUP (what is left is said; no half-written output is\n"
		"put in place; start, stop and snapshot finish a call into lttng-sessiond first,\n"
		"and a second signal kills them at once, saying what may be left). watch stops\n"
		"on those signals: exit 0.\n",
		letw_prog, letw_prog);
}

/* The errno of the first write to standard output letw_out() saw fail:
 * glibc drops the buffer of a failed write, so a later flush succeeds and
 * only the error flag is left (a closed pipe said "Input/output error"). */
static int stdout_errno;

int letw_out(const char *fmt, ...)
{
	va_list ap;
	int ret;

	if (stdout_errno)
		return -stdout_errno;
	errno = 0;
	va_start(ap, fmt);
	ret = vprintf(fmt, ap);
	va_end(ap);
	if (ret >= 0 && fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	stdout_errno = errno ? errno : EIO;
	return -stdout_errno;
}

int letw_out_line(const char *fmt, ...)
{
	va_list ap;
	char *body = NULL;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (ret < 0) {
		letw_err("out of memory");
		return -ENOMEM;
	}
	ret = letw_out("%s", ""); /* the error of an earlier write, if any */
	if (!ret) {
		letw_text_str(stdout, body);
		ret = letw_out("\n");
	}
	free(body);
	return ret;
}

/* What the command printed must have reached standard output: a full
 * disk or a closed pipe is an error, not exit 0 (as coreutils' tools do).
 * Nearly everything is still in stdio's buffer here, so the flush says
 * why; a write that failed earlier left only the error flag, and its errno
 * if letw_out() made it. */
static int stdout_checked(int ret)
{
	int failed = ferror(stdout) || stdout_errno, e;

	errno = 0;
	if (fflush(stdout) == 0 && !failed)
		return ret;
	e = stdout_errno ? stdout_errno : errno ? errno : EIO;
	letw_err("cannot write standard output: %s", strerror(e));
	return LETW_EXIT_ERROR;
}

/* A standard descriptor closed by the caller (`watch >&-`) is a slot the
 * next open() takes: the notification channel's socket became fd 1 and
 * watch's first line went to lttng-sessiond, which dropped the client (an
 * audit). Each closed one gets /dev/null opened read-only, so the slot is
 * taken and a write to it still fails with EBADF, as to a closed one:
 * "cannot write standard output: Bad file descriptor". */
static void hold_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDONLY) < 0)
			break; /* the lowest free slot is fd: nothing else to do */
}

int main(int argc, char **argv)
{
	/* talks: the command talks to lttng-sessiond or to the traced
	 * processes over sockets. liblttng-ctl writes to sessiond's socket
	 * without MSG_NOSIGNAL, and sessiond closes the connection after
	 * refusing a command's header (a session that does not exist), so
	 * writing the payload raised SIGPIPE: `lttng-etw stop NOSUCH` died
	 * without a word (exit 141). Those commands ignore SIGPIPE, as the
	 * `lttng` command does, and get EPIPE back as an error. The trace
	 * commands keep it: `lttng-etw report T | head` ends quietly. */
	static const struct {
		const char *name;
		int (*fn)(int, char **);
		int talks;
	} cmds[] = {
		{ "perfmap", letw_cmd_perfmap, 0 },
		{ "jitdump", letw_cmd_jitdump, 0 },
		{ "report", letw_cmd_report, 0 },
		{ "capture-state", letw_cmd_capture_state, 1 },
		{ "status", letw_cmd_status, 1 },
		{ "start", letw_cmd_start, 1 },
		{ "stop", letw_cmd_stop, 1 },
		{ "snapshot", letw_cmd_snapshot, 1 },
		{ "watch", letw_cmd_watch, 1 },
	};
	size_t i;

	hold_std_fds();
	if (argc < 2) {
		usage(stderr);
		return LETW_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return stdout_checked(LETW_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("lttng-etw %s\n", LETW_PV_STRING);
		return stdout_checked(LETW_EXIT_OK);
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			/* getopt_long words its errors with argv[0]: "lttng-etw
			 * report: option requires an argument", as ours are. */
			static char name[64];

			snprintf(name, sizeof(name), "%s %s", letw_prog, cmds[i].name);
			argv[1] = name;
			if (cmds[i].talks)
				signal(SIGPIPE, SIG_IGN);
			return stdout_checked(cmds[i].fn(argc - 1, argv + 1));
		}
	letw_err("unknown command `%s` (try `%s --help`)", argv[1], letw_prog);
	return LETW_EXIT_USAGE;
}
