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

/* A jump stub: "movabs rax, target; jmp rax", padded with int3. */
#define CODEGEN_STUB_SIZE 16u
void codegen_jump_stub(struct x86_buf *b, uint64_t target);

#endif
