/* SPDX-License-Identifier: MIT */
/*
 * The "source program" of every minijit function: a counted loop applying
 * a short list of 64-bit integer operations to an accumulator. Each
 * function index derives its own list deterministically, so bodies (and
 * thus code sizes) differ between functions, and kernel_eval() is the C
 * reference the generated machine code is checked against.
 */
#ifndef MINIJIT_KERNEL_H
#define MINIJIT_KERNEL_H

#include <stdint.h>

#define KERNEL_MAX_OPS 40

enum kernel_opk {
	K_ADDI,   /* x += imm (imm sign-extended, like x86 imm32) */
	K_SUBI,   /* x -= imm */
	K_XORI,   /* x ^= imm */
	K_MULI,   /* x *= imm */
	K_ROLI,   /* x = rotl(x, imm) */
	K_RORI,   /* x = rotr(x, imm) */
	K_XSHR,   /* x ^= x >> imm (logical) */
	K_ADDCTR, /* x += loop counter */
	K_XORARG, /* x ^= argument */
	K_ADDARG, /* x += argument */
	K_NOT,    /* x = ~x */
	K_BSWAP,  /* x = byte-swapped x */
	K_NKINDS
};

struct kernel_op {
	uint8_t kind;
	int32_t imm;
};

/*
 * x = arg; for (ctr = iters; ctr != 0; ctr--) for each op: x = op(x);
 * return x.
 */
struct kernel {
	uint32_t iters; /* >= 1 */
	uint32_t nops;  /* 1..KERNEL_MAX_OPS */
	struct kernel_op ops[KERNEL_MAX_OPS];
};

/* Derive function index's kernel; hot functions loop much longer. */
void kernel_make(uint32_t index, int hot, struct kernel *k);
int64_t kernel_eval(const struct kernel *k, int64_t arg);
/* A per-function argument, so each function is checked on its own input. */
int64_t kernel_arg(uint32_t index, uint32_t variant);

#endif
