/* SPDX-License-Identifier: MIT */
/*
 * Compiles a kernel into x86-64 machine code (SysV: int64 argument in rdi,
 * int64 result in rax, only caller-saved registers and the red zone).
 *
 * Two tiers, like a tiering JIT:
 *  - quick: a baseline compiler that keeps every value in a stack slot
 *    (red zone) and reloads/spills around each operation;
 *  - optimized: register-allocated, adjacent constant operations folded,
 *    loop head aligned, small bodies unrolled twice.
 * Both must compute kernel_eval() exactly; the runtime checks that.
 */
#ifndef MINIJIT_CODEGEN_H
#define MINIJIT_CODEGEN_H

#include <stdint.h>

#include "kernel.h"
#include "x86emit.h"

enum codegen_tier {
	CODEGEN_QUICK,
	CODEGEN_OPTIMIZED,
};

/* Appends the function to b (which the caller has initialised). */
void codegen_kernel(struct x86_buf *b, const struct kernel *k, enum codegen_tier tier);

/*
 * Source positions of the generated code, for line tables: mark i says
 * the bytes from off[i] (relative to the function's start) to the next
 * mark came from source line rel[i] of the function's listing (source.h):
 * CODEGEN_SRC_ENTRY the function line, CODEGEN_SRC_LOOP the loop line,
 * CODEGEN_SRC_OP(k) the line of operation k (the first one of a run the
 * optimized tier folded together), CODEGEN_SRC_RETURN(k) the return line
 * of a kernel of k operations. Consecutive equal lines are one mark.
 */
#define CODEGEN_SRC_ENTRY 0u
#define CODEGEN_SRC_LOOP 1u
#define CODEGEN_SRC_OP(k) (2u + (k))
#define CODEGEN_SRC_RETURN(nops) (2u + (nops))
#define CODEGEN_MAX_MARKS (4u * KERNEL_MAX_OPS + 16u)

struct codegen_marks {
	uint32_t n;
	uint32_t off[CODEGEN_MAX_MARKS];
	uint16_t rel[CODEGEN_MAX_MARKS];
};

/* codegen_kernel, also recording where each source line's code starts
 * (marks may be NULL). */
void codegen_kernel_marked(struct x86_buf *b, const struct kernel *k,
			   enum codegen_tier tier, struct codegen_marks *marks);

/* A jump stub: "movabs rax, target; jmp rax", padded with int3. */
#define CODEGEN_STUB_SIZE 16u
void codegen_jump_stub(struct x86_buf *b, uint64_t target);

#endif
