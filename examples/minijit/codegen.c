/* SPDX-License-Identifier: MIT */
#include "codegen.h"

#include <limits.h>

/* Red-zone slots of the quick tier (a leaf function may use the 128 bytes
 * below rsp without adjusting it). */
#define SLOT_ARG (-8)
#define SLOT_ACC (-16)
#define SLOT_CTR (-24)

/* Records that the code appended from now on comes from source line rel;
 * offsets are relative to the function's first byte (at base). */
static void mark(struct codegen_marks *m, const struct x86_buf *b, size_t base,
		 uint32_t rel)
{
	if (!m || (m->n && m->rel[m->n - 1] == rel))
		return;
	if (m->n && m->off[m->n - 1] == b->len - base) {
		m->rel[m->n - 1] = (uint16_t)rel; /* nothing emitted since */
		return;
	}
	if (m->n < CODEGEN_MAX_MARKS) {
		m->off[m->n] = (uint32_t)(b->len - base);
		m->rel[m->n++] = (uint16_t)rel;
	}
}

/* One operation on rax; tmp is a scratch register, ctr/arg say where the
 * loop counter and the argument live (a register, or -1 for the slot). */
static void emit_op(struct x86_buf *b, const struct kernel_op *op, int ctr_reg, int arg_reg)
{
	switch (op->kind) {
	case K_ADDI: x86_alu_ri(b, X86_ADD, X86_RAX, op->imm); break;
	case K_SUBI: x86_alu_ri(b, X86_SUB, X86_RAX, op->imm); break;
	case K_XORI: x86_alu_ri(b, X86_XOR, X86_RAX, op->imm); break;
	case K_MULI: x86_imul_rri(b, X86_RAX, X86_RAX, op->imm); break;
	case K_ROLI: x86_shift_ri(b, X86_ROL, X86_RAX, (uint8_t)op->imm); break;
	case K_RORI: x86_shift_ri(b, X86_ROR, X86_RAX, (uint8_t)op->imm); break;
	case K_XSHR:
		x86_mov_rr(b, X86_RDX, X86_RAX);
		x86_shift_ri(b, X86_SHR, X86_RDX, (uint8_t)op->imm);
		x86_alu_rr(b, X86_XOR, X86_RAX, X86_RDX);
		break;
	case K_ADDCTR:
		if (ctr_reg < 0) {
			x86_load_rsp(b, X86_RDX, SLOT_CTR);
			x86_alu_rr(b, X86_ADD, X86_RAX, X86_RDX);
		} else {
			x86_alu_rr(b, X86_ADD, X86_RAX, (enum x86_reg)ctr_reg);
		}
		break;
	case K_XORARG:
	case K_ADDARG: {
		enum x86_alu alu = op->kind == K_XORARG ? X86_XOR : X86_ADD;

		if (arg_reg < 0) {
			x86_load_rsp(b, X86_RDX, SLOT_ARG);
			x86_alu_rr(b, alu, X86_RAX, X86_RDX);
		} else {
			x86_alu_rr(b, alu, X86_RAX, (enum x86_reg)arg_reg);
		}
		break;
	}
	case K_NOT: x86_not(b, X86_RAX); break;
	case K_BSWAP: x86_bswap(b, X86_RAX); break;
	default: break;
	}
}

static void emit_quick(struct x86_buf *b, const struct kernel *k, struct codegen_marks *m)
{
	size_t base = b->len;

	mark(m, b, base, CODEGEN_SRC_ENTRY);
	x86_store_rsp(b, SLOT_ARG, X86_RDI);
	x86_store_rsp(b, SLOT_ACC, X86_RDI);
	mark(m, b, base, CODEGEN_SRC_LOOP);
	x86_mov_ri32(b, X86_RCX, k->iters);
	x86_store_rsp(b, SLOT_CTR, X86_RCX);
	size_t loop = b->len;

	for (uint32_t i = 0; i < k->nops; i++) {
		mark(m, b, base, CODEGEN_SRC_OP(i));
		x86_load_rsp(b, X86_RAX, SLOT_ACC);
		emit_op(b, &k->ops[i], -1, -1);
		x86_store_rsp(b, SLOT_ACC, X86_RAX);
	}
	mark(m, b, base, CODEGEN_SRC_LOOP);
	x86_load_rsp(b, X86_RCX, SLOT_CTR);
	x86_dec(b, X86_RCX);
	x86_store_rsp(b, SLOT_CTR, X86_RCX); /* mov keeps dec's ZF for jnz */
	x86_jnz_back(b, loop);
	mark(m, b, base, CODEGEN_SRC_RETURN(k->nops));
	x86_load_rsp(b, X86_RAX, SLOT_ACC);
	x86_ret(b);
}

/* Appends op to out[], merging it into the previous operation when both
 * are constant operations of a foldable kind. Every fold is exact modulo
 * 2^64, so the optimized tier computes what the quick tier computes. */
static void fold_into(struct kernel_op *out, uint16_t *src, uint32_t *n,
		      struct kernel_op op, uint16_t op_src)
{
	if (op.kind == K_SUBI && op.imm != INT32_MIN) {
		op.kind = K_ADDI;
		op.imm = -op.imm;
	}
	if (op.kind == K_RORI) {
		op.kind = K_ROLI;
		op.imm = 64 - op.imm;
	}
	if (*n == 0) {
		src[*n] = op_src;
		out[(*n)++] = op;
		return;
	}
	struct kernel_op *last = &out[*n - 1];
	int64_t merged;

	/* A folded operation keeps the source index of the first one. */
	if (last->kind != op.kind) {
		src[*n] = op_src;
		out[(*n)++] = op;
		return;
	}
	switch (op.kind) {
	case K_ADDI:
		merged = (int64_t)last->imm + op.imm;
		if (merged < INT32_MIN || merged > INT32_MAX)
			break;
		last->imm = (int32_t)merged;
		if (merged == 0)
			(*n)--;
		return;
	case K_XORI:
		last->imm ^= op.imm; /* sign extension commutes with xor */
		if (last->imm == 0)
			(*n)--;
		return;
	case K_ROLI:
		last->imm = (last->imm + op.imm) & 63;
		if (last->imm == 0)
			(*n)--;
		return;
	case K_MULI:
		merged = (int64_t)last->imm * op.imm;
		if (merged < INT32_MIN || merged > INT32_MAX)
			break;
		last->imm = (int32_t)merged;
		return;
	case K_NOT:
		(*n)--; /* ~~x == x */
		return;
	default:
		break;
	}
	src[*n] = op_src;
	out[(*n)++] = op;
}

static void emit_optimized(struct x86_buf *b, const struct kernel *k, struct codegen_marks *m)
{
	struct kernel_op folded[KERNEL_MAX_OPS];
	uint16_t src[KERNEL_MAX_OPS];
	uint32_t n = 0;
	size_t base = b->len;

	for (uint32_t i = 0; i < k->nops; i++)
		fold_into(folded, src, &n, k->ops[i], (uint16_t)i);

	/* rax = accumulator, rdi = argument, rcx = counter, rdx = scratch. */
	mark(m, b, base, CODEGEN_SRC_ENTRY);
	x86_mov_rr(b, X86_RAX, X86_RDI);
	mark(m, b, base, CODEGEN_SRC_LOOP);
	x86_mov_ri32(b, X86_RCX, k->iters);
	x86_align_nop(b, 16);
	size_t loop = b->len;
	/* With an even count the counter is never zero between the copies. */
	int unroll = (k->iters % 2 == 0 && n <= 12) ? 2 : 1;

	for (int u = 0; u < unroll; u++) {
		for (uint32_t i = 0; i < n; i++) {
			mark(m, b, base, CODEGEN_SRC_OP(src[i]));
			emit_op(b, &folded[i], X86_RCX, X86_RDI);
		}
		mark(m, b, base, CODEGEN_SRC_LOOP);
		x86_dec(b, X86_RCX);
	}
	x86_jnz_back(b, loop);
	mark(m, b, base, CODEGEN_SRC_RETURN(k->nops));
	x86_ret(b);
}

void codegen_kernel_marked(struct x86_buf *b, const struct kernel *k,
			   enum codegen_tier tier, struct codegen_marks *marks)
{
	if (marks)
		marks->n = 0;
	if (tier == CODEGEN_QUICK)
		emit_quick(b, k, marks);
	else
		emit_optimized(b, k, marks);
}

void codegen_kernel(struct x86_buf *b, const struct kernel *k, enum codegen_tier tier)
{
	codegen_kernel_marked(b, k, tier, NULL);
}

void codegen_jump_stub(struct x86_buf *b, uint64_t target)
{
	size_t start = b->len;

	x86_mov_ri64(b, X86_RAX, target);
	x86_jmp_reg(b, X86_RAX);
	while (b->len - start < CODEGEN_STUB_SIZE)
		x86_int3(b);
}
