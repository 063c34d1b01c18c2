/* SPDX-License-Identifier: MIT */
/* The analysis commands' heap on transparent huge pages (hugeheap.c). */
#ifndef LETW_CLI_HUGEHEAP_H
#define LETW_CLI_HUGEHEAP_H

/* Below this many bytes of trace files the exec costs more than the
 * huge pages save (hugeheap.c). */
#define LETW_HUGEHEAP_MIN_BYTES (6 * 1024 * 1024)

/* For a trace directory of at least LETW_HUGEHEAP_MIN_BYTES, re-executes
 * the program (letw_argv) with glibc's malloc tunables for huge pages set
 * in GLIBC_TUNABLES, unless they are set already, THP is off, or malloc
 * is not glibc's. LETW_HUGEHEAP=never turns it off, =always on whatever
 * the trace's size. Call it before anything is printed or created: the
 * program starts again. Returns only when it did not re-execute: 0 when
 * there was nothing to do, a negative errno when the exec failed (the
 * program then runs as it is; nothing changed). */
int letw_hugeheap_reexec(const char *trace);

#endif
