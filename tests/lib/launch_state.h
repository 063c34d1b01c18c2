/* SPDX-License-Identifier: MIT */
#ifndef LETW_LAUNCH_STATE_H
#define LETW_LAUNCH_STATE_H

#include <stddef.h>

/* Make this launcher's directory (the test's TMPDIR and
 * LETW_LAUNCH_STATE) under the outer launcher's, or under $TMPDIR or
 * /tmp. 0 or a negative errno. */
int letw_launch_state_init(char *dir, size_t len);

/* Once nothing of the test runs: destroy the sessions and remove the
 * triggers registered under dir that sessiond still has, each reported as
 * a leftover of `who`, then remove dir. Returns how many there were. */
int letw_launch_state_clean(const char *dir, const char *who);

#endif
