/* SPDX-License-Identifier: MIT */
/*
 * A tiny x86-64 instruction encoder: just the 64-bit integer forms the
 * minijit kernels and stubs need. It appends to a growable heap buffer;
 * the finished bytes are copied into executable memory afterwards, so the
 * emitter itself never touches code pages.
 */
#ifndef MINIJIT_X86EMIT_H
#define MINIJIT_X86EMIT_H

#include <stddef.h>
#include <stdint.h>

enum x86_reg {
	X86_RAX = 0, X86_RCX = 1, X86_RDX = 2, X86_RBX = 3,
	X86_RSP = 4, X86_RBP = 5, X86_RSI = 6, X86_RDI = 7,
	X86_R8 = 8, X86_R9 = 9, X86_R10 = 10, X86_R11 = 11,
};

/* Group-1 ALU operations; the value is the /digit of the 0x81 form. */
enum x86_alu {
	X86_ADD = 0, X86_OR = 1, X86_AND = 4, X86_SUB = 5, X86_XOR = 6,
};

/* Group-2 shifts/rotates; the value is the /digit of the 0xC1 form. */
enum x86_shift {
	X86_ROL = 0, X86_ROR = 1, X86_SHL = 4, X86_SHR = 5, X86_SAR = 7,
};

struct x86_buf {
	uint8_t *bytes;
	size_t len, cap;
	int oom; /* sticky: set once an append failed, checked at the end */
};

void x86_init(struct x86_buf *b);
void x86_release(struct x86_buf *b);

void x86_byte(struct x86_buf *b, uint8_t v);
void x86_u32(struct x86_buf *b, uint32_t v);
void x86_u64(struct x86_buf *b, uint64_t v);

void x86_mov_rr(struct x86_buf *b, enum x86_reg dst, enum x86_reg src);
void x86_mov_ri32(struct x86_buf *b, enum x86_reg dst, uint32_t imm); /* zero-extends */
void x86_mov_ri64(struct x86_buf *b, enum x86_reg dst, uint64_t imm);
/* [rsp + disp8] loads and stores (the SysV red zone for negative disp). */
void x86_load_rsp(struct x86_buf *b, enum x86_reg dst, int8_t disp);
void x86_store_rsp(struct x86_buf *b, int8_t disp, enum x86_reg src);

void x86_alu_rr(struct x86_buf *b, enum x86_alu op, enum x86_reg dst, enum x86_reg src);
void x86_alu_ri(struct x86_buf *b, enum x86_alu op, enum x86_reg dst, int32_t imm);
void x86_imul_rri(struct x86_buf *b, enum x86_reg dst, enum x86_reg src, int32_t imm);
void x86_shift_ri(struct x86_buf *b, enum x86_shift op, enum x86_reg dst, uint8_t count);
void x86_not(struct x86_buf *b, enum x86_reg dst);
void x86_bswap(struct x86_buf *b, enum x86_reg dst);
void x86_dec(struct x86_buf *b, enum x86_reg dst);

/* jnz back to an earlier offset of the same buffer (rel8 when it fits). */
void x86_jnz_back(struct x86_buf *b, size_t target);
void x86_jmp_reg(struct x86_buf *b, enum x86_reg r);
void x86_ret(struct x86_buf *b);
void x86_int3(struct x86_buf *b);
/* Recommended multi-byte NOPs up to the next multiple of align. */
void x86_align_nop(struct x86_buf *b, size_t align);

#endif
