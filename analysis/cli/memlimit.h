/* SPDX-License-Identifier: MIT */
/* The memory the CTF reading child may take (supervise.c). */
#ifndef LETW_CLI_MEMLIMIT_H
#define LETW_CLI_MEMLIMIT_H

#include <stdint.h>

/* The limit in MiB: opt_mib if > 0, else $LETW_MEMORY_LIMIT, else half
 * of physical memory (at least 1024). Parent side, before the fork, so
 * a bad $LETW_MEMORY_LIMIT is reported once. */
uint64_t letw_memory_limit_mib(uint64_t opt_mib);

/* In the child: cap its data segment at mib MiB. Returns 0 or a
 * negative errno: -ENOMEM when the limit is set but the process holds
 * that much already (nothing more can be allocated). A no-op under
 * AddressSanitizer (its shadow memory counts as data). */
int letw_memory_limit_apply(uint64_t mib);

#endif
