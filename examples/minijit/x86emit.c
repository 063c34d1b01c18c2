/* SPDX-License-Identifier: MIT */
#include "x86emit.h"

#include <stdlib.h>
#include <string.h>

void x86_init(struct x86_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void x86_release(struct x86_buf *b)
{
	free(b->bytes);
	memset(b, 0, sizeof(*b));
}

void x86_byte(struct x86_buf *b, uint8_t v)
{
	if (b->oom)
		return;
	if (b->len == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		uint8_t *n = realloc(b->bytes, ncap);

		if (!n) {
			b->oom = 1;
			return;
		}
		b->bytes = n;
		b->cap = ncap;
	}
	b->bytes[b->len++] = v;
}

void x86_u32(struct x86_buf *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		x86_byte(b, (uint8_t)(v >> (8 * i)));
}

void x86_u64(struct x86_buf *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		x86_byte(b, (uint8_t)(v >> (8 * i)));
}

/* REX.W plus the R (ModRM.reg) and B (ModRM.rm / opcode reg) extensions. */
static void rex_w(struct x86_buf *b, unsigned reg, unsigned rm)
{
	x86_byte(b, (uint8_t)(0x48 | ((reg >> 3) & 1) << 2 | ((rm >> 3) & 1)));
}

static void modrm_rr(struct x86_buf *b, unsigned reg, unsigned rm)
{
	x86_byte(b, (uint8_t)(0xC0 | (reg & 7) << 3 | (rm & 7)));
}

static int fits_i8(int64_t v)
{
	return v >= -128 && v <= 127;
}

void x86_mov_rr(struct x86_buf *b, enum x86_reg dst, enum x86_reg src)
{
	rex_w(b, src, dst);
	x86_byte(b, 0x89);
	modrm_rr(b, src, dst);
}

void x86_mov_ri32(struct x86_buf *b, enum x86_reg dst, uint32_t imm)
{
	if (dst >= 8)
		x86_byte(b, 0x41);
	x86_byte(b, (uint8_t)(0xB8 + (dst & 7)));
	x86_u32(b, imm);
}

void x86_mov_ri64(struct x86_buf *b, enum x86_reg dst, uint64_t imm)
{
	rex_w(b, 0, dst);
	x86_byte(b, (uint8_t)(0xB8 + (dst & 7)));
	x86_u64(b, imm);
}

/* mod=01 rm=100 needs a SIB byte; SIB 0x24 = base rsp, no index. */
static void rsp_disp8(struct x86_buf *b, unsigned reg, int8_t disp)
{
	x86_byte(b, (uint8_t)(0x44 | (reg & 7) << 3));
	x86_byte(b, 0x24);
	x86_byte(b, (uint8_t)disp);
}

void x86_load_rsp(struct x86_buf *b, enum x86_reg dst, int8_t disp)
{
	rex_w(b, dst, 0);
	x86_byte(b, 0x8B);
	rsp_disp8(b, dst, disp);
}

void x86_store_rsp(struct x86_buf *b, int8_t disp, enum x86_reg src)
{
	rex_w(b, src, 0);
	x86_byte(b, 0x89);
	rsp_disp8(b, src, disp);
}

void x86_alu_rr(struct x86_buf *b, enum x86_alu op, enum x86_reg dst, enum x86_reg src)
{
	/* The "r/m64, r64" opcodes are op*8 + 1 for the group-1 ops. */
	rex_w(b, src, dst);
	x86_byte(b, (uint8_t)(op * 8 + 1));
	modrm_rr(b, src, dst);
}

void x86_alu_ri(struct x86_buf *b, enum x86_alu op, enum x86_reg dst, int32_t imm)
{
	rex_w(b, 0, dst);
	if (fits_i8(imm)) {
		x86_byte(b, 0x83);
		modrm_rr(b, op, dst);
		x86_byte(b, (uint8_t)imm);
	} else if (dst == X86_RAX) {
		x86_byte(b, (uint8_t)(op * 8 + 5)); /* short rax, imm32 form */
		x86_u32(b, (uint32_t)imm);
	} else {
		x86_byte(b, 0x81);
		modrm_rr(b, op, dst);
		x86_u32(b, (uint32_t)imm);
	}
}

void x86_imul_rri(struct x86_buf *b, enum x86_reg dst, enum x86_reg src, int32_t imm)
{
	rex_w(b, dst, src);
	if (fits_i8(imm)) {
		x86_byte(b, 0x6B);
		modrm_rr(b, dst, src);
		x86_byte(b, (uint8_t)imm);
	} else {
		x86_byte(b, 0x69);
		modrm_rr(b, dst, src);
		x86_u32(b, (uint32_t)imm);
	}
}

void x86_shift_ri(struct x86_buf *b, enum x86_shift op, enum x86_reg dst, uint8_t count)
{
	rex_w(b, 0, dst);
	x86_byte(b, 0xC1);
	modrm_rr(b, op, dst);
	x86_byte(b, count & 63);
}

void x86_not(struct x86_buf *b, enum x86_reg dst)
{
	rex_w(b, 0, dst);
	x86_byte(b, 0xF7);
	modrm_rr(b, 2, dst);
}

void x86_bswap(struct x86_buf *b, enum x86_reg dst)
{
	rex_w(b, 0, dst);
	x86_byte(b, 0x0F);
	x86_byte(b, (uint8_t)(0xC8 + (dst & 7)));
}

void x86_dec(struct x86_buf *b, enum x86_reg dst)
{
	rex_w(b, 0, dst);
	x86_byte(b, 0xFF);
	modrm_rr(b, 1, dst);
}

void x86_jnz_back(struct x86_buf *b, size_t target)
{
	/* Displacements are relative to the end of the jump instruction. */
	int64_t rel8 = (int64_t)target - (int64_t)(b->len + 2);

	if (fits_i8(rel8)) {
		x86_byte(b, 0x75);
		x86_byte(b, (uint8_t)rel8);
	} else {
		int64_t rel32 = (int64_t)target - (int64_t)(b->len + 6);

		x86_byte(b, 0x0F);
		x86_byte(b, 0x85);
		x86_u32(b, (uint32_t)(int32_t)rel32);
	}
}

void x86_jmp_reg(struct x86_buf *b, enum x86_reg r)
{
	if (r >= 8)
		x86_byte(b, 0x41);
	x86_byte(b, 0xFF);
	modrm_rr(b, 4, r);
}

void x86_ret(struct x86_buf *b)
{
	x86_byte(b, 0xC3);
}

void x86_int3(struct x86_buf *b)
{
	x86_byte(b, 0xCC);
}

void x86_align_nop(struct x86_buf *b, size_t align)
{
	/* Intel SDM's recommended NOP sequences, 1..9 bytes. */
	static const uint8_t nops[9][9] = {
		{0x90},
		{0x66, 0x90},
		{0x0F, 0x1F, 0x00},
		{0x0F, 0x1F, 0x40, 0x00},
		{0x0F, 0x1F, 0x44, 0x00, 0x00},
		{0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00},
		{0x0F, 0x1F, 0x80, 0x00, 0x00, 0x00, 0x00},
		{0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
		{0x66, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	};
	size_t pad = (align - b->len % align) % align;

	while (pad) {
		size_t n = pad > 9 ? 9 : pad;

		for (size_t i = 0; i < n; i++)
			x86_byte(b, nops[n - 1][i]);
		pad -= n;
	}
}
