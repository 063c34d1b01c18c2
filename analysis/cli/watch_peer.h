/* SPDX-License-Identifier: MIT */
/*
 * Another `lttng-etw watch` already on this lttng-sessiond: each watch
 * regenerates a session's statedump at each of its rotations, so two give
 * every chunk two passes. A watch names its triggers
 * lttng-etw-watch.<pid>-<realtime ns, hex>-<start>.<n> (letw_watch_tag(),
 * <start> its process's start time in clock ticks since boot); a trigger
 * on a session this one would watch whose process still runs (that pid,
 * started at that tick) is a peer: told by the names in sessiond, not by
 * the process's command line, which a renamed binary or valgrind changes.
 * Triggers of a watch that exited stay registered (a 2.13 sessiond crash,
 * cmd_watch.c) and are no peer. Asked at watch's start and again each
 * time it watches a restarted sessiond (a peer may have started there
 * meanwhile, finding none of its triggers).
 */
#ifndef LETW_CLI_WATCH_PEER_H
#define LETW_CLI_WATCH_PEER_H

#include <stddef.h>
#include <sys/types.h>

/* Room for letw_watch_tag()'s name with its NUL. */
#define LETW_WATCH_TAG_MAX 80

/* This watch's trigger name prefix (see the top comment) in tag[0..len):
 * 0, or -ENAMETOOLONG. */
int letw_watch_tag(char *tag, size_t len);

/* A peer watch of a session in only[0..nonly) (nonly 0: any session), not
 * self: 1 with *peer and *session (malloc()ed) set, 0 if none, or a
 * negative errno when the triggers cannot be listed. */
int letw_watch_peer(const char *const *only, int nonly, pid_t self, pid_t *peer,
		    char **session);

/* At watch's start (back 0), or once it watches a restarted sessiond
 * (back 1), before any trigger of its own: a peer watch of its sessions is
 * said (as a refusal to start, or as this watch stopping), and -EEXIST
 * returned (watch then exits 1); 0 to go on (a trigger list that cannot be
 * read is said too: a peer then goes unnoticed). */
int letw_watch_refuse_peer(const char *const *only, int nonly, int back);

/* Whether session is one of only[0..nonly) (nonly 0: every session). */
int letw_watch_wanted(const char *const *only, int nonly, const char *session);

/* Whether lttng-sessiond holds a trigger whose name begins with tag: 1, 0,
 * or a negative errno when the triggers cannot be listed. */
int letw_watch_tag_registered(const char *tag);

#endif /* LETW_CLI_WATCH_PEER_H */
