/* SPDX-License-Identifier: MIT */
#ifndef LH_FORK_H
#define LH_FORK_H

/* From now on fork() runs lttng-etw's fork hooks (fork.c); called once
 * letw_init succeeded. */
void lh_fork_hooks_on(void);

#endif
