/* SPDX-License-Identifier: MIT */
/*
 * Recording sessions driven through the real `lttng` CLI (liblttng-ctl's
 * headers are not installed here). Each benchmark process creates its own
 * session, named <prefix>-<tag>-<pid>, whose event rules are filtered on
 * the process's own vpid (tracked with `lttng track --vpid` and filtered),
 * so other engineers' traced processes never land in it nor see its event
 * rules; run.sh destroys every <prefix>-* session on exit as a backstop.
 */
#ifndef LETW_BENCH_SESSION_H
#define LETW_BENCH_SESSION_H

#include <stdint.h>

#include "common.h"

struct bench_session {
	char name[160];
	char path[512];
	int created;
};

/* One user-space channel of a session and the event rules it records. */
struct bench_channel {
	const char *name;
	const char *subbuf;          /* lttng --subbuf-size */
	unsigned num_subbuf;
	int blocking;                /* 1: --blocking-timeout=inf, 0: discard */
	const char *const *events;   /* NULL-terminated patterns */
};

/* Create the session with one user-space channel ("bench", configured from
 * opts) and one event rule per pattern in events (NULL-terminated), each
 * filtered on our vpid. 0 or -1 (the lttng error went to stderr). */
int bench_session_create(struct bench_session *s, const struct bench_opts *o,
			 const char *tag, const char *const *events);
/* The same with the channels given (per-UID buffers, events filtered on
 * our vpid, vpid tracked): e.g. rundown events in a blocking channel and
 * runtime events in another. */
int bench_session_create_channels(struct bench_session *s, const struct bench_opts *o,
				  const char *tag, const struct bench_channel *ch,
				  unsigned nch);
/* `lttng start`; *before_ns is CLOCK_MONOTONIC read right before the
 * command is spawned, *after_ns right after it returned. */
int bench_session_start(struct bench_session *s, uint64_t *before_ns,
			uint64_t *after_ns);
int bench_session_stop(struct bench_session *s);
/* Discarded events and lost packets summed over the session's channels
 * (from `lttng --mi xml list`); valid after stop. */
int bench_session_discarded(struct bench_session *s, uint64_t *discarded,
			    uint64_t *lost_packets);
/* The same for one channel of the session. */
int bench_session_channel_discarded(struct bench_session *s, const char *channel,
				    uint64_t *discarded, uint64_t *lost_packets);
/* Destroy the session and, unless keep, remove its trace directory. */
void bench_session_destroy(struct bench_session *s, int keep);

/* Run argv (argv[0] looked up in PATH) and wait. If out is non-NULL, the
 * command's stdout is collected into a malloc'd NUL-terminated string.
 * Returns the exit status, or -1 if it could not run. */
int bench_run(char *const argv[], char **out);

/* Channel description for results: "blocking, 8 x 4M per CPU, per-UID". */
void bench_channel_desc(const struct bench_opts *o, char *buf, size_t len);
void bench_channel_desc_of(const struct bench_channel *c, char *buf, size_t len);

#endif
