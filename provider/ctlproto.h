/* SPDX-License-Identifier: MIT */
/*
 * Wire protocol of the per-process control socket, shared by the provider
 * (server) and the lttng-etw CLI (client). Private to lttng-etw.
 *
 * Transport: AF_UNIX SOCK_SEQPACKET on the abstract name
 * "\0lttng-etw/<pidns>/<vpid>" (no file to clean up, gone with the process):
 * vpid is the process's pid in its own pid namespace and pidns that
 * namespace's inode (/proc/self/ns/pid, the value LTTng's pid_ns context
 * records). Abstract names live in the network namespace, which containers
 * may share with the host (`--network host`) while each has its own pid 1:
 * the pid alone named one socket for all of them, and a client on the host
 * could not reach a process by the pid it sees. A client resolves a pid it
 * sees into the pair from the last NSpid of /proc/PID/status and
 * letw_ctl_pidns() (its own namespace when NSpid has one level: reading
 * another process's /proc/PID/ns needs ptrace access). Message
 * boundaries are kept by the socket type, so a request is exactly one
 * datagram of sizeof(struct letw_ctl_request) bytes; anything else is
 * answered with -EBADMSG and the connection closed. The server checks the
 * peer's credentials (SO_PEERCRED): same uid as the process, or root.
 * Integers are host-endian: both ends are on the same machine.
 */
#ifndef LETW_CTLPROTO_H
#define LETW_CTLPROTO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#define LETW_CTL_MAGIC   0x4c455457u /* "LETW" */
#define LETW_CTL_VERSION 1u
#define LETW_CTL_ABSTRACT_PREFIX "lttng-etw/"

enum letw_ctl_type {
	LETW_CTL_PING = 1,          /* reply only: is the provider there? */
	LETW_CTL_CAPTURE_STATE = 2, /* run CAPTURE_STATE, reply after Complete */
	LETW_CTL_STATUS = 3,        /* reply with the last completed pass ids */
};

struct letw_ctl_request {
	uint32_t magic;
	uint16_t version;
	uint16_t type;              /* enum letw_ctl_type */
	uint64_t match_any_keyword; /* 0: the rundown provider's live mask */
	uint64_t request_id;        /* echoed in the reply */
};

/* STATUS replies: `passes` carries this bit when the process serves each
 * session through its statedump (`lttng start`, `lttng regenerate
 * statedump`); without it the process polls (fallback) and answers
 * statedumps with nothing. */
#define LETW_CTL_STATUS_HOOK 0x1u
/* ... and this one when a session's statedump since letw_init was served
 * by an all-sessions capture-state (64 other sessions each waiting for a
 * pass; statedump.c). Until 2026-12-07 the same bit said it was dropped. */
#define LETW_CTL_STATUS_OVERFLOW 0x2u
/* ... and this one when `emitted` is the records the last completed pass
 * wrote (0: no pass yet), summed over its flavours, and `skipped_raced`
 * their payload bytes (line tables and code bytes included; without the
 * event headers and contexts: provider/emit.h): `watch` weighs a pass
 * against a session's rotation size with them. A provider from before it
 * leaves the bit and the fields 0: the size is unknown. */
#define LETW_CTL_STATUS_EMITTED 0x4u
/* ... and this one when tracing is off in the process (LETW_DISABLE, or
 * lttng-ust not loaded): it answers, but runs no pass. A command waiting
 * for its pass says so instead of asking whether the session traces it. A
 * provider from before it leaves the bit 0. */
#define LETW_CTL_STATUS_UNTRACED 0x8u

struct letw_ctl_reply {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	int32_t status;             /* 0 or a negative errno */
	uint32_t passes;            /* LETW_PASS_* bits that ran; STATUS: LETW_CTL_STATUS_* */
	uint64_t request_id;
	uint64_t pass_id;           /* 0 when no pass ran */
	uint64_t emitted;           /* records written, summed over the flavours run
				     * (STATUS: the last completed pass's, with
				     * LETW_CTL_STATUS_EMITTED) */
	uint64_t skipped_raced;     /* STATUS: the last pass's bytes, see above */
	uint64_t rundown_mask;      /* the mask the pass used (STATUS: live mask) */
	uint64_t last_dcstart_pass_id; /* last pass whose dcstart_complete was emitted */
	uint64_t last_dcend_pass_id;   /* same for dcend_complete; 0: none yet */
	uint32_t pid;
	uint16_t instance_id;
	/* STATUS: session statedumps (`lttng start`, `lttng regenerate
	 * statedump`) whose pass is queued or running, and sessions whose
	 * pass could not begin (no memory), tried again about once a
	 * second until it runs. lttng-sessiond's
	 * command returns once each process's callback returned, which may be
	 * before a long pass ends: wait for 0 before relying on the trace. */
	uint16_t pending_statedumps;
};

/* The inode of PID's pid namespace (pid 0: the caller's), or a negative
 * errno (-ENOENT: no such process; -EACCES: not ours to inspect). */
static inline int64_t letw_ctl_pidns(pid_t pid)
{
	char path[48];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/pid");
	if (stat(path, &st))
		return -errno;
	return (int64_t)st.st_ino;
}

/* Fill *sun with the socket name of process vpid of pid namespace pidns;
 * returns the address length (the name's bytes only: abstract names are
 * not NUL-terminated). */
static inline socklen_t letw_ctl_sockaddr(struct sockaddr_un *sun, uint64_t pidns,
					  pid_t vpid)
{
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "%s%llu/%d",
		     LETW_CTL_ABSTRACT_PREFIX, (unsigned long long)pidns, (int)vpid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

#endif /* LETW_CTLPROTO_H */
