/* SPDX-License-Identifier: MIT */
/*
 * minijit's code generator and executable-memory allocator, without
 * lttng-etw: encodings against the architecture's byte patterns, both
 * tiers against the C reference (including hand-made kernels that hit
 * every constant-folding rule), stubs, and the W^X life cycle of chunks.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen.h"
#include "codeheap.h"
#include "kernel.h"
#include "x86emit.h"

typedef int64_t (*entry_fn)(int64_t);

static struct codeheap heap;

static void heap_setup(void)
{
	cr_assert_eq(codeheap_init(&heap, 16 * 1024, 1), 0);
}

static void heap_teardown(void)
{
	codeheap_destroy(&heap);
}

/* Seals one function of the given bytes and returns its allocation. */
static struct code_alloc install(const struct x86_buf *b)
{
	struct code_batch batch;
	struct code_alloc a;

	cr_assert(!b->oom);
	codeheap_batch_begin(&heap, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, b->bytes, b->len, &a), 0);
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	return a;
}

static const int64_t probe_args[] = {0, 1, -1, 42, INT64_MIN, INT64_MAX, 0x123456789abcdefll};

static void check_kernel(const struct kernel *k, enum codegen_tier tier, const char *what)
{
	struct x86_buf b;

	x86_init(&b);
	codegen_kernel(&b, k, tier);
	struct code_alloc a = install(&b);
	entry_fn f = (entry_fn)(uintptr_t)a.addr;

	for (size_t i = 0; i < sizeof(probe_args) / sizeof(probe_args[0]); i++)
		cr_assert_eq(f(probe_args[i]), kernel_eval(k, probe_args[i]),
			     "%s, tier %d, arg %lld", what, tier, (long long)probe_args[i]);
	codeheap_free(&heap, &a);
	x86_release(&b);
}

static void check_bytes(const struct x86_buf *b, const uint8_t *want, size_t n, const char *what)
{
	cr_assert_eq(b->len, n, "%s: %zu bytes, expected %zu", what, b->len, n);
	cr_assert_eq(memcmp(b->bytes, want, n), 0, "%s: wrong encoding", what);
}

#define EXPECT_BYTES(stmt, ...)                                             \
	do {                                                                \
		static const uint8_t want_[] = {__VA_ARGS__};               \
		struct x86_buf b_;                                          \
		x86_init(&b_);                                              \
		{                                                           \
			struct x86_buf *b = &b_;                            \
			stmt;                                               \
		}                                                           \
		check_bytes(&b_, want_, sizeof(want_), #stmt);              \
		x86_release(&b_);                                           \
	} while (0)

Test(x86emit, encodings_match_the_manual)
{
	EXPECT_BYTES(x86_mov_rr(b, X86_RAX, X86_RDI), 0x48, 0x89, 0xF8);
	EXPECT_BYTES(x86_mov_rr(b, X86_R8, X86_RAX), 0x49, 0x89, 0xC0);
	EXPECT_BYTES(x86_mov_rr(b, X86_RAX, X86_R11), 0x4C, 0x89, 0xD8);
	EXPECT_BYTES(x86_mov_ri32(b, X86_RCX, 16), 0xB9, 0x10, 0x00, 0x00, 0x00);
	EXPECT_BYTES(x86_mov_ri32(b, X86_R9, 1), 0x41, 0xB9, 0x01, 0x00, 0x00, 0x00);
	EXPECT_BYTES(x86_mov_ri64(b, X86_RAX, 0x1122334455667788ull),
		     0x48, 0xB8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);
	EXPECT_BYTES(x86_store_rsp(b, -8, X86_RDI), 0x48, 0x89, 0x7C, 0x24, 0xF8);
	EXPECT_BYTES(x86_load_rsp(b, X86_RDX, -24), 0x48, 0x8B, 0x54, 0x24, 0xE8);
	EXPECT_BYTES(x86_load_rsp(b, X86_R10, 16), 0x4C, 0x8B, 0x54, 0x24, 0x10);
	EXPECT_BYTES(x86_alu_rr(b, X86_XOR, X86_RAX, X86_RDX), 0x48, 0x31, 0xD0);
	EXPECT_BYTES(x86_alu_rr(b, X86_SUB, X86_RCX, X86_R8), 0x4C, 0x29, 0xC1);
	EXPECT_BYTES(x86_alu_ri(b, X86_ADD, X86_RAX, -18), 0x48, 0x83, 0xC0, 0xEE);
	EXPECT_BYTES(x86_alu_ri(b, X86_SUB, X86_RAX, 0x12345678), 0x48, 0x2D, 0x78, 0x56, 0x34, 0x12);
	EXPECT_BYTES(x86_alu_ri(b, X86_XOR, X86_RDX, 0x1000), 0x48, 0x81, 0xF2, 0x00, 0x10, 0x00, 0x00);
	EXPECT_BYTES(x86_imul_rri(b, X86_RAX, X86_RAX, 3), 0x48, 0x6B, 0xC0, 0x03);
	EXPECT_BYTES(x86_imul_rri(b, X86_RAX, X86_RCX, 1000), 0x48, 0x69, 0xC1, 0xE8, 0x03, 0x00, 0x00);
	EXPECT_BYTES(x86_shift_ri(b, X86_ROR, X86_RAX, 27), 0x48, 0xC1, 0xC8, 0x1B);
	EXPECT_BYTES(x86_shift_ri(b, X86_SHR, X86_RDX, 10), 0x48, 0xC1, 0xEA, 0x0A);
	EXPECT_BYTES(x86_not(b, X86_RAX), 0x48, 0xF7, 0xD0);
	EXPECT_BYTES(x86_bswap(b, X86_RAX), 0x48, 0x0F, 0xC8);
	EXPECT_BYTES(x86_dec(b, X86_RCX), 0x48, 0xFF, 0xC9);
	EXPECT_BYTES(x86_jmp_reg(b, X86_RAX), 0xFF, 0xE0);
	EXPECT_BYTES(x86_jmp_reg(b, X86_R11), 0x41, 0xFF, 0xE3);
	EXPECT_BYTES((x86_ret(b), x86_jnz_back(b, 0)), 0xC3, 0x75, 0xFD);
}

Test(x86emit, far_backward_jump_uses_rel32)
{
	struct x86_buf b;

	x86_init(&b);
	for (int i = 0; i < 200; i++)
		x86_byte(&b, 0x90);
	x86_jnz_back(&b, 0);
	cr_assert_eq(b.len, 206u);
	cr_assert_eq(b.bytes[200], 0x0F);
	cr_assert_eq(b.bytes[201], 0x85);
	int32_t rel;

	memcpy(&rel, &b.bytes[202], 4);
	cr_assert_eq(rel, -206);
	x86_release(&b);
}

Test(x86emit, alignment_nops_decode_as_nops)
{
	for (size_t start = 0; start < 16; start++) {
		struct x86_buf b;

		x86_init(&b);
		for (size_t i = 0; i < start; i++)
			x86_byte(&b, 0xC3);
		x86_align_nop(&b, 16);
		cr_assert_eq(b.len % 16, 0u);
		x86_release(&b);
	}
}

TestSuite(codegen, .init = heap_setup, .fini = heap_teardown);

Test(codegen, generated_kernels_match_the_reference_in_both_tiers)
{
	for (uint32_t i = 0; i < 600; i++) {
		struct kernel k;
		char what[32];

		kernel_make(i, i % 100 == 0, &k);
		snprintf(what, sizeof(what), "kernel %u", i);
		check_kernel(&k, CODEGEN_QUICK, what);
		check_kernel(&k, CODEGEN_OPTIMIZED, what);
	}
}

/* Every op kind alone, with an odd and an even count (the optimized tier
 * unrolls even counts) and a single iteration. */
Test(codegen, every_operation_alone)
{
	static const int32_t imms[] = {0, 1, -1, 63, 127, -128, 128, INT32_MAX, INT32_MIN};
	static const uint32_t iters[] = {1, 2, 7};

	for (int kind = 0; kind < K_NKINDS; kind++) {
		for (size_t i = 0; i < sizeof(imms) / sizeof(imms[0]); i++) {
			for (size_t n = 0; n < sizeof(iters) / sizeof(iters[0]); n++) {
				struct kernel k = {.iters = iters[n], .nops = 1};
				int32_t imm = imms[i];
				char what[64];

				if (kind == K_ROLI || kind == K_RORI || kind == K_XSHR)
					imm = 1 + (int32_t)((uint32_t)imm % 63);
				k.ops[0] = (struct kernel_op){(uint8_t)kind, imm};
				snprintf(what, sizeof(what), "op %d imm %d iters %u", kind, imm, iters[n]);
				check_kernel(&k, CODEGEN_QUICK, what);
				check_kernel(&k, CODEGEN_OPTIMIZED, what);
			}
		}
	}
}

/* Sequences each folding rule of the optimized tier must get right:
 * overflowing sums and products (must not fold), cancelling constants,
 * rotations adding up to 64, SUBI of INT32_MIN (cannot be negated). */
Test(codegen, constant_folding_edge_cases)
{
	static const struct kernel_op seqs[][4] = {
		{{K_ADDI, INT32_MAX}, {K_ADDI, 1}, {K_ADDI, -1}, {K_ADDCTR, 0}},
		{{K_ADDI, 5}, {K_SUBI, 5}, {K_XORARG, 0}, {K_ADDI, 0}},
		{{K_SUBI, INT32_MIN}, {K_SUBI, INT32_MIN}, {K_ADDI, INT32_MIN}, {K_ADDARG, 0}},
		{{K_XORI, 0x55}, {K_XORI, 0x55}, {K_XORI, -1}, {K_ADDCTR, 0}},
		{{K_XORI, INT32_MIN}, {K_XORI, -1}, {K_NOT, 0}, {K_ADDARG, 0}},
		{{K_ROLI, 32}, {K_ROLI, 32}, {K_RORI, 1}, {K_ADDCTR, 0}},
		{{K_RORI, 63}, {K_ROLI, 1}, {K_ROLI, 63}, {K_XORARG, 0}},
		{{K_MULI, 65537}, {K_MULI, 65537}, {K_MULI, 3}, {K_ADDCTR, 0}},
		{{K_MULI, -3}, {K_MULI, 5}, {K_MULI, 1}, {K_ADDARG, 0}},
		{{K_NOT, 0}, {K_NOT, 0}, {K_NOT, 0}, {K_ADDCTR, 0}},
		{{K_BSWAP, 0}, {K_BSWAP, 0}, {K_XSHR, 63}, {K_ADDARG, 0}},
	};

	for (size_t s = 0; s < sizeof(seqs) / sizeof(seqs[0]); s++) {
		for (uint32_t iters = 1; iters <= 4; iters++) {
			struct kernel k = {.iters = iters, .nops = 4};
			char what[48];

			memcpy(k.ops, seqs[s], sizeof(seqs[s]));
			snprintf(what, sizeof(what), "sequence %zu iters %u", s, iters);
			check_kernel(&k, CODEGEN_QUICK, what);
			check_kernel(&k, CODEGEN_OPTIMIZED, what);
		}
	}
}

Test(codegen, tiers_differ_and_bodies_vary)
{
	size_t min = SIZE_MAX, max = 0;

	for (uint32_t i = 0; i < 2000; i++) {
		struct kernel k;
		struct x86_buf q, o;

		kernel_make(i, 0, &k);
		x86_init(&q);
		x86_init(&o);
		codegen_kernel(&q, &k, CODEGEN_QUICK);
		codegen_kernel(&o, &k, CODEGEN_OPTIMIZED);
		cr_assert_lt(o.len, q.len, "kernel %u: optimized (%zu) not smaller than quick (%zu)",
			     i, o.len, q.len);
		min = q.len < min ? q.len : min;
		max = q.len > max ? q.len : max;
		x86_release(&q);
		x86_release(&o);
	}
	/* The README promises roughly 64..600-byte quick bodies. */
	cr_assert_geq(min, 64u);
	cr_assert_leq(max, 700u);
	cr_assert_gt(max, 4 * min, "bodies should differ in size");
}

Test(codegen, jump_stub_reaches_its_target)
{
	struct kernel k;
	struct x86_buf fb, sb;

	kernel_make(7, 0, &k);
	x86_init(&fb);
	x86_init(&sb);
	codegen_kernel(&fb, &k, CODEGEN_OPTIMIZED);
	struct code_alloc fn = install(&fb);

	codegen_jump_stub(&sb, (uint64_t)(uintptr_t)fn.addr);
	cr_assert_eq(sb.len, CODEGEN_STUB_SIZE);
	struct code_alloc stub = install(&sb);

	cr_assert_eq(((entry_fn)(uintptr_t)stub.addr)(99), kernel_eval(&k, 99));
	x86_release(&fb);
	x86_release(&sb);
}

/* Permissions of the mapping holding addr, from /proc/self/maps. */
static int perms_of(const void *addr, char out[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;

	cr_assert_not_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && (uintptr_t)addr >= lo &&
		    (uintptr_t)addr < hi) {
			memcpy(out, p, 5);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

Test(codeheap, write_xor_execute_life_cycle)
{
	struct codeheap h;
	struct code_batch batch;
	struct code_alloc a, b2, c;
	static const uint8_t ret[] = {0xC3};
	char p[5];

	cr_assert_eq(codeheap_init(&h, 16 * 1024, 1), 0);
	codeheap_batch_begin(&h, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, ret, 1, &a), 0);
	cr_assert_eq(codeheap_batch_put(&batch, ret, 1, &b2), 0);
	cr_assert_eq((uintptr_t)b2.addr % 16, 0u);
	cr_assert(perms_of(a.addr, p));
	cr_assert_str_eq(p, "rw-p", "open batch must be writable, not executable");
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	cr_assert(perms_of(a.addr, p));
	cr_assert_str_eq(p, "r-xp", "sealed code must be executable, not writable");
	((void (*)(void))(uintptr_t)a.addr)();

	/* Chunk stays while one allocation lives; then goes to the free list
	 * (max 1), is reused by the next batch, and the one after that maps a
	 * fresh chunk. */
	codeheap_free(&h, &a);
	cr_assert(perms_of(b2.addr, p));
	cr_assert_str_eq(p, "r-xp");
	codeheap_free(&h, &b2);
	cr_assert(perms_of(b2.addr, p));
	cr_assert_str_eq(p, "---p", "an empty chunk must not stay executable");
	codeheap_batch_begin(&h, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, ret, 1, &c), 0);
	cr_assert_eq(c.addr, a.addr, "the free chunk should be reused");
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	cr_assert_eq(h.reused, 1u);
	codeheap_free(&h, &c);
	cr_assert_eq(h.unmapped, 0u);

	/* A second empty chunk does not fit the free list: it is unmapped. */
	static uint8_t rets[16 * 1024 - 8];
	struct code_alloc d, e;

	memset(rets, 0xC3, sizeof(rets));
	codeheap_batch_begin(&h, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, ret, 1, &d), 0); /* reuses the free one */
	cr_assert_eq(codeheap_batch_put(&batch, rets, sizeof(rets), &e), 0);
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	cr_assert_neq(d.chunk, e.chunk, "a full chunk must overflow into a new one");
	codeheap_free(&h, &d);
	codeheap_free(&h, &e);
	cr_assert_eq(h.unmapped, 1u);
	codeheap_destroy(&h);
}

Test(codeheap, rejects_impossible_sizes)
{
	struct codeheap h;
	struct code_batch batch;
	struct code_alloc a;
	static uint8_t big[16 * 1024 + 1];

	cr_assert_eq(codeheap_init(&h, 1000, 1), -EINVAL); /* not page sized */
	cr_assert_eq(codeheap_init(&h, 16 * 1024, 1), 0);
	codeheap_batch_begin(&h, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, big, 0, &a), -EINVAL);
	cr_assert_eq(codeheap_batch_put(&batch, big, sizeof(big), &a), -EINVAL);
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	codeheap_destroy(&h);
}

/* Source marks (line tables): start at 0, strictly increasing, inside the
 * code, entry first and return last; the quick tier marks every operation
 * in order, the optimized one a subset (folds) in order per loop copy. */
Test(codegen, source_marks_cover_the_code)
{
	for (uint32_t i = 0; i < 300; i++) {
		struct kernel k;

		kernel_make(i, i % 7 == 0, &k);
		for (int t = 0; t < 2; t++) {
			enum codegen_tier tier = t ? CODEGEN_OPTIMIZED : CODEGEN_QUICK;
			struct codegen_marks m;
			struct x86_buf b;
			uint32_t next_op = 0;

			x86_init(&b);
			codegen_kernel_marked(&b, &k, tier, &m);
			cr_assert_geq(m.n, 3u);
			cr_assert_eq(m.off[0], 0u);
			cr_assert_eq(m.rel[0], CODEGEN_SRC_ENTRY);
			cr_assert_eq(m.rel[m.n - 1], CODEGEN_SRC_RETURN(k.nops));
			for (uint32_t j = 0; j < m.n; j++) {
				cr_assert_lt(m.off[j], b.len, "fn %u tier %d mark %u", i, t, j);
				if (j)
					cr_assert_gt(m.off[j], m.off[j - 1]);
				cr_assert_leq(m.rel[j], CODEGEN_SRC_RETURN(k.nops));
				if (m.rel[j] >= CODEGEN_SRC_OP(0) && m.rel[j] < CODEGEN_SRC_RETURN(k.nops)) {
					uint32_t op = m.rel[j] - CODEGEN_SRC_OP(0);

					if (tier == CODEGEN_QUICK)
						cr_assert_eq(op, next_op, "fn %u: op %u out of order", i, op);
					next_op = op + 1;
				} else if (m.rel[j] == CODEGEN_SRC_LOOP) {
					next_op = 0;
				}
			}
			/* The unmarked entry point gives the same code. */
			struct x86_buf plain;

			x86_init(&plain);
			codegen_kernel(&plain, &k, tier);
			cr_assert_eq(plain.len, b.len);
			cr_assert_eq(memcmp(plain.bytes, b.bytes, b.len), 0);
			x86_release(&plain);
			x86_release(&b);
		}
	}
}

/* codeheap_trim: the free list emptied, the next chunk released is the
 * next one handed out, at the same address (what --reuse relies on). */
Test(codeheap, trim_then_reuse_gives_the_same_address)
{
	struct codeheap h;
	struct code_batch batch;
	struct code_alloc a, b, c;
	static const uint8_t ret[] = { 0xc3 };

	cr_assert_eq(codeheap_init(&h, 16 * 1024, 4), 0);
	codeheap_batch_begin(&h, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, ret, 1, &a), 0);
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	codeheap_batch_begin(&h, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, ret, 1, &b), 0);
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	codeheap_free(&h, &a); /* a's chunk to the free list */
	cr_assert_eq(h.nfree, 1u);
	codeheap_trim(&h);
	cr_assert_eq(h.nfree, 0u);
	codeheap_free(&h, &b);
	codeheap_batch_begin(&h, &batch);
	cr_assert_eq(codeheap_batch_put(&batch, ret, 1, &c), 0);
	cr_assert_eq(codeheap_batch_seal(&batch), 0);
	cr_assert_eq(c.addr, b.addr);
	codeheap_free(&h, &c);
	codeheap_destroy(&h);
}
