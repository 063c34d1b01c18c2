/* SPDX-License-Identifier: MIT */
/* Client side of the per-process control socket (provider/ctlproto.h). */
#ifndef LETW_CLI_CTL_H
#define LETW_CLI_CTL_H

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctlproto.h"

/*
 * One request, one reply, to the process we see as pid (which may be in a
 * pid namespace of its own: see ctlproto.h). With wait_reply == 0 the request is sent and the
 * connection closed (the provider still runs it: the datagram stays queued
 * after the close). timeout_ms bounds the wait for the reply (<= 0:
 * forever). Returns 0 (reply in *out, its status not interpreted), or a
 * negative errno: -ECONNREFUSED/-ENOENT when the process has no control
 * socket, -EACCES when it serves another user (root and its own user only),
 * -EADDRINUSE when the socket named for it is served by another
 * process, -ETIMEDOUT, -EPROTO for a malformed reply, -EINTR once the
 * command is interrupted (letw_interrupted, cli.h) before the request was
 * sent, -EINPROGRESS when interrupted after (the provider still runs it):
 * at once, not waited.
 */
int letw_ctl_call(pid_t pid, uint16_t type, uint64_t mask, int wait_reply,
		  int timeout_ms, struct letw_ctl_reply *out);

/* A call's or reply's status saying the process serves another user
 * (-EACCES from its provider or from letw_ctl_call's own check, -EPERM). */
static inline int letw_ctl_denied(int status)
{
	return status == -EACCES || status == -EPERM;
}

/* The pids, as we see them, of the processes with a control socket in
 * /proc/net/unix, sorted; sockets of processes we cannot see are noted on
 * stderr. Returns the count (>= 0) with *pids malloc()ed, or a negative
 * errno. */
int letw_ctl_list(pid_t **pids);

/* PID's pid inside its own pid namespace (what LTTng records as vpid):
 * 0, or a negative errno when /proc does not show the process. */
int letw_ctl_vpid(pid_t pid, pid_t *vpid);

/* A user-facing message for a letw_ctl_call error or reply status. */
const char *letw_ctl_strerror(int err);

#endif /* LETW_CLI_CTL_H */
