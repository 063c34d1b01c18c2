/* SPDX-License-Identifier: MIT */
/*
 * The "source" of minijit's functions: a listing of the kernel each one
 * compiles (kernel.h), one block per function, written to a real file
 * (--source FILE) so that line tables can point into it and perf can show
 * the lines:
 *
 *     # minijit.Module1::fn_1 (method 2)
 *     fn fn_1(x):                          <- CODEGEN_SRC_ENTRY
 *       for ctr = 1734 down to 1:          <- CODEGEN_SRC_LOOP
 *         x = x + 0x1f                     <- CODEGEN_SRC_OP(0)
 *         ...
 *       return x                           <- CODEGEN_SRC_RETURN(nops)
 *
 * Line numbers follow from the kernels alone, so they are known before
 * the file is written and stay fixed for the run.
 */
#ifndef MINIJIT_SOURCE_H
#define MINIJIT_SOURCE_H

#include <stdint.h>

#include "jitrt.h"

/* Sets every function's src_line (its "fn" line). */
void source_assign_lines(struct jitrt *rt);

/* Writes the listing to path (FILE.tmp, then renamed). 0 or -errno
 * (message printed). */
int source_write(const struct jitrt *rt, const char *path);

#endif
