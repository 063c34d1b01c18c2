/* SPDX-License-Identifier: MIT */
/*
 * Another `lttng-etw watch` already on this lttng-sessiond: each watch
 * regenerates a session's statedump at each of its rotations, so two give
 * every chunk two passes. A watch names its triggers
 * lttng-etw-watch.<pid>-<start>.<n> (cmd_watch.c); a trigger of a live
 * lttng-etw watch process on a session this one would watch is a peer.
 * Triggers of a watch that exited stay registered (a 2.13 sessiond crash,
 * cmd_watch.c) and are no peer.
 */
#ifndef LETW_CLI_WATCH_PEER_H
#define LETW_CLI_WATCH_PEER_H

#include <sys/types.h>

/* A peer watch of a session in only[0..nonly) (nonly 0: any session), not
 * self: 1 with *peer and *session (malloc()ed) set, 0 if none, or a
 * negative errno when the triggers cannot be listed. */
int letw_watch_peer(const char *const *only, int nonly, pid_t self, pid_t *peer,
		    char **session);

/* At watch's start: a peer watch of its sessions is said, and
 * -EEXIST returned (watch then exits 1); 0 to go on (a trigger list that
 * cannot be read is said too: a peer then goes unnoticed). */
int letw_watch_refuse_peer(const char *const *only, int nonly);

/* Whether session is one of only[0..nonly) (nonly 0: every session). */
int letw_watch_wanted(const char *const *only, int nonly, const char *session);

/* Whether lttng-sessiond holds a trigger whose name begins with tag: 1, 0,
 * or a negative errno when the triggers cannot be listed. */
int letw_watch_tag_registered(const char *tag);

#endif /* LETW_CLI_WATCH_PEER_H */
