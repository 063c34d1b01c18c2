/* SPDX-License-Identifier: MIT */
/* The analysis commands' heap on transparent huge pages (hugeheap.c). */
#ifndef LETW_CLI_HUGEHEAP_H
#define LETW_CLI_HUGEHEAP_H

/* Re-executes the program (argv as main() got it) with glibc's malloc
 * tunables for huge pages set in GLIBC_TUNABLES, unless they are set
 * already, THP is off, or malloc is not glibc's. Returns only when it did
 * not re-execute: 0 when there was nothing to do, a negative errno when
 * the exec failed (the program then runs as it is; nothing changed). */
int letw_hugeheap_reexec(char **argv);

#endif
