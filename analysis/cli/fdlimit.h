/* SPDX-License-Identifier: MIT */
/* The files the CTF reading child may hold open (supervise.c). */
#ifndef LETW_CLI_FDLIMIT_H
#define LETW_CLI_FDLIMIT_H

#include <stddef.h>

/* Parent side, before the fork: whether the reader may hold a file of
 * every stream of the trace directories dirs open at once under the hard
 * RLIMIT_NOFILE (what letw_fd_limit_raise() gives it). Returns 0, or -1
 * after saying how many streams and the limit. */
int letw_fd_limit_check(char **dirs, size_t ndirs);

/* In the child: raise the soft RLIMIT_NOFILE to the hard one. Returns 0
 * or a negative errno. */
int letw_fd_limit_raise(void);

#endif
