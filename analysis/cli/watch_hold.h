/* SPDX-License-Identifier: MIT */
/*
 * `watch`'s rule for a rotation that its own statedump may have caused.
 *
 * In a session that rotates on size, a rotation soon after watch's own
 * regenerate for it may have been made by that pass (a rotation size
 * smaller than a pass): regenerating again would rotate again, for ever (a
 * session-lifecycle audit: 15 rotations in 15 s of an idle process). Such a
 * rotation is held back when the pass could have filled its chunk, judged
 * from the pass sizes the processes report (LETW_CTL_STATUS_EMITTED), or,
 * when they cannot tell, whatever filled it: a runtime churning code fast
 * fills chunks in less time too, and then only a pass's size tells the two
 * apart. Manual and timer rotations are never held back: a pass cannot
 * cause them. Pure: the caller asks the processes and the session, so the
 * rule is tested on its own (tests/analysis/test_watch_hold.c).
 */
#ifndef LETW_CLI_WATCH_HOLD_H
#define LETW_CLI_WATCH_HOLD_H

#include <stddef.h>
#include <stdint.h>

#include "procs.h"

/* Within this of watch's regenerate, a rotation may be its pass's. */
#define LETW_WATCH_OWN_PASS_S 5.0
/* ... or later, up to this, while a process is busy in a pass (a long one:
 * seconds at 10^6 records). Bounded: a process busy in another session's
 * pass much later must not cost this session its chunk's pass. */
#define LETW_WATCH_OWN_PASS_BUSY_S 30.0

/* Why a rotation that began since_s after watch's regenerate for the
 * session (which rotates at rotation_size bytes, 0: unknown) is held back,
 * with *reason (what watch assumed) for the message; NULL when its chunk
 * gets a pass. v: the lttng-etw processes listed (NULL: none could be,
 * their pass sizes unknown). */
const char *letw_watch_held_back(double since_s, uint64_t rotation_size,
				 const struct letw_proc *v, int n, char *reason, size_t len);

#endif /* LETW_CLI_WATCH_HOLD_H */
