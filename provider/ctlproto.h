/* SPDX-License-Identifier: MIT */
/*
 * Wire protocol of the per-process control socket, shared by the provider
 * (server) and the lttng-etw CLI (client). Private to lttng-etw.
 *
 * Transport: AF_UNIX SOCK_SEQPACKET on the abstract name
 * "\0lttng-etw/<pid>" (no file to clean up, gone with the process). Message
 * boundaries are kept by the socket type, so a request is exactly one
 * datagram of sizeof(struct letw_ctl_request) bytes; anything else is
 * answered with -EBADMSG and the connection closed. The server checks the
 * peer's credentials (SO_PEERCRED): same uid as the process, or root.
 * Integers are host-endian: both ends are on the same machine.
 */
#ifndef LETW_CTLPROTO_H
#define LETW_CTLPROTO_H

#include <stdint.h>

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

struct letw_ctl_reply {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	int32_t status;             /* 0 or a negative errno */
	uint32_t passes;            /* LETW_PASS_* bits that ran; STATUS: LETW_CTL_STATUS_* */
	uint64_t request_id;
	uint64_t pass_id;           /* 0 when no pass ran */
	uint64_t emitted;           /* records written, summed over the flavours run */
	uint64_t skipped_raced;
	uint64_t rundown_mask;      /* the mask the pass used (STATUS: live mask) */
	uint64_t last_dcstart_pass_id; /* last pass whose dcstart_complete was emitted */
	uint64_t last_dcend_pass_id;   /* same for dcend_complete; 0: none yet */
	uint32_t pid;
	uint16_t instance_id;
	/* STATUS: session statedumps (`lttng start`, `lttng regenerate
	 * statedump`) whose pass is queued or running. lttng-sessiond's
	 * command returns once each process's callback returned, which may be
	 * before a long pass ends: wait for 0 before relying on the trace. */
	uint16_t pending_statedumps;
};

#endif /* LETW_CTLPROTO_H */
