/* SPDX-License-Identifier: MIT */
/* Noticing the reader child's failed allocations (allocwatch.c). */
#ifndef LETW_CLI_ALLOCWATCH_H
#define LETW_CLI_ALLOCWATCH_H

/* From now on, a malloc(), calloc(), realloc() or aligned allocation of
 * this process that fails sets *flag to 1. For the reader's child, with
 * flag in memory the supervisor shares. */
void letw_allocwatch_arm(volatile int *flag);

#endif
