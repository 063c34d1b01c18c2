/* SPDX-License-Identifier: MIT */
/* Shared declarations of the lttng-etw CLI. */
#ifndef LETW_CLI_H
#define LETW_CLI_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit statuses (documented in --help and analysis/README.md). */
#define LETW_EXIT_OK 0
#define LETW_EXIT_ERROR 1      /* could not do what was asked */
#define LETW_EXIT_USAGE 2      /* bad command line */
#define LETW_EXIT_INCOMPLETE 3 /* report, perfmap, jitdump: a trace or pass not complete */
#define LETW_EXIT_INTERRUPTED 130 /* SIGINT, SIGTERM or SIGHUP (all but watch) */

extern const char *letw_prog; /* "lttng-etw" */

/* Print "lttng-etw: <fmt>\n" on stderr. */
void letw_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void letw_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int letw_cmd_perfmap(int argc, char **argv);
int letw_cmd_report(int argc, char **argv);
int letw_cmd_jitdump(int argc, char **argv);
int letw_cmd_capture_state(int argc, char **argv);
int letw_cmd_status(int argc, char **argv);
int letw_cmd_start(int argc, char **argv);
int letw_cmd_stop(int argc, char **argv);
int letw_cmd_snapshot(int argc, char **argv);
int letw_cmd_watch(int argc, char **argv);

/* Print a line (or any text) on standard output and flush it at once, for
 * a command that runs until stopped (watch): 0, or -errno of the first
 * failed write (a closed pipe: -EPIPE, SIGPIPE being ignored), remembered
 * and said at exit. */
int letw_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for one line holding names (sessions): written as letw_err()
 * writes them, control characters escaped (letw_text_str), so a session
 * named with an escape sequence neither splits the line nor drives the
 * terminal; the newline is added. */
int letw_out_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The signal that interrupted the command, once letw_catch_interrupts()
 * caught SIGINT, SIGTERM or SIGHUP; 0 before. Control requests (ctl.c)
 * then fail at once with -EINTR, and the waits built on them end: the
 * command says what it leaves and exits LETW_EXIT_INTERRUPTED. */
extern volatile sig_atomic_t letw_interrupted;
void letw_catch_interrupts(void);
/* What the command may leave if a second SIGINT/SIGTERM/SIGHUP kills it
 * from now on (the first sets letw_interrupted; the second, meant to
 * escape a hung lttng-sessiond, writes this line on stderr and kills the
 * command with the signal). Formatted now, as letw_err() would write it:
 * the handler may only write(2). No note set: it dies unsaid. Returns 0,
 * -ENAMETOOLONG when the note was cut to its fixed buffer (set anyway), or
 * -ENOMEM (the note before it kept). */
int letw_set_kill_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Install sa for sig unless sig is ignored (*old: the disposition found,
 * to restore). Every command's interrupt handling goes through it: a
 * signal ignored on entry stays so, `nohup lttng-etw jitdump ... &` is to
 * outlive the terminal and a script's `lttng-etw report ... &` its Ctrl-C
 * (the analysis commands and watch caught SIGHUP under nohup and stopped,
 * while start/stop/snapshot kept on). */
void letw_catch_unless_ignored(int sig, const struct sigaction *sa, struct sigaction *old);

/* s as one word of a command line printed for the user to paste into a
 * shell: as is when it needs no quoting, else in single quotes with an
 * embedded ' as '\'' (a session named "my run" or "bob's" printed bare
 * ran another command). malloc()ed; NULL when out of memory. */
char *letw_shell_quote(const char *s);

/* Sleep ms milliseconds (a signal cuts it short: every caller polls). */
void letw_sleep_ms(long ms);
/* CLOCK_MONOTONIC in seconds. */
double letw_now_s(void);

/* Parse a non-negative number, decimal or hexadecimal after 0x (no
 * octal, blank or sign); -1 on error. */
int letw_parse_u64(const char *s, uint64_t *out);
/* Parse a positive pid; -1 on error. */
int letw_parse_pid(const char *s, pid_t *out);

/* lttngctl.c: lttng-sessiond through liblttng-ctl. Each returns 0, or a
 * negative errno after printing why (lttng_strerror; the errno as
 * letw_lttng_sessions maps it); letw_lttng_regenerate returns the
 * (negative) LTTng error code, printed unless quiet (a caller that expects
 * some codes says itself what the others mean). */
int letw_lttng_start(const char *session);
int letw_lttng_stop(const char *session);
int letw_lttng_regenerate(const char *session, int quiet);
int letw_lttng_snapshot(const char *session);
/* Enable letw_rundown:*dcend* in SESSION's user-space CHANNEL (NULL: the
 * default), with an optional filter; 0 also when it was enabled, or when
 * the session's own rules (CHANNEL's alone if explicit_channel) record
 * every DCEnd event already: theirs, filters included, decide. */
int letw_lttng_enable_dcend(const char *session, const char *channel,
			    const char *filter, int explicit_channel);
/* 1 when an enabled rule of an enabled user-space channel of SESSION
 * matches a DCStart event (whatever its filter, exclusions or log level:
 * it may record it), 0 when none does: the session gets no DCStart pass.
 * A negative errno after printing why it cannot tell. */
int letw_lttng_may_record_dcstart(const char *session);
/* The channel of SESSION's user-space domain that holds letw_rundown event
 * rules, else one holding other letw_ rules, else its only channel;
 * malloc()ed; NULL when none or on error. */
char *letw_session_rundown_channel(const char *session);
/* Names of every session (malloc()ed, NULL-terminated); their count, or a
 * negative errno, unsaid (-ECONNREFUSED: no sessiond; -EPERM: not allowed,
 * -ENOMEM, else -EIO): watch asks every second, where a sessiond gone is
 * no error, and says the cause itself when it is one. */
int letw_lttng_sessions(char ***names);
/* 1 when lttng-sessiond has a session of that name, 0 when not, a
 * negative errno after printing why it cannot tell. */
int letw_lttng_session_exists(const char *session);
/* The same, with whether it is started and in snapshot mode. */
int letw_lttng_session_state(const char *session, int *enabled, int *snapshot);
/* 1 when SESSION's user-space domain has CHANNEL, 0 when not, a negative
 * errno after printing why it cannot tell. */
int letw_lttng_channel_exists(const char *session, const char *channel);
/* 1 when SESSION rotates on size (`lttng enable-rotation --size`), with
 * the size in *bytes (0: it cannot read it); 0 when not or when it cannot
 * tell (quiet: asked at every rotation). */
int letw_lttng_rotation_size(const char *session, uint64_t *bytes);
/* The name (malloc()ed) of a started session (not in snapshot mode) of
 * this user's lttng-sessiond whose local output is trace, holds it or is
 * inside it;
 * NULL when none, or when it cannot tell (no session daemon: quiet). */
char *letw_lttng_recording_into(const char *trace);

#endif /* LETW_CLI_H */
