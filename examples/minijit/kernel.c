/* SPDX-License-Identifier: MIT */
#include "kernel.h"

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void kernel_make(uint32_t index, int hot, struct kernel *k)
{
	uint64_t s = 0x6D696E696A6974ull ^ ((uint64_t)index << 20);

	/* 6..35 ops: the baseline tier spends ~15 bytes per op, which puts
	 * quick-tier bodies between ~120 and ~620 bytes; the optimized tier
	 * is 3-4 times smaller. */
	k->nops = 6 + (uint32_t)(splitmix64(&s) % 30);
	k->iters = hot ? 1500 + (uint32_t)(splitmix64(&s) % 500)
		       : 4 + (uint32_t)(splitmix64(&s) % 29);
	for (uint32_t i = 0; i < k->nops; i++) {
		uint64_t r = splitmix64(&s);
		struct kernel_op *op = &k->ops[i];

		op->kind = (uint8_t)(r % K_NKINDS);
		r >>= 8;
		switch (op->kind) {
		case K_MULI:
			/* Odd multipliers keep the map bijective, so the
			 * accumulator never collapses to zero. */
			op->imm = (int32_t)((r & 0x7FFFFF) | 1);
			break;
		case K_ROLI:
		case K_RORI:
		case K_XSHR:
			op->imm = 1 + (int32_t)(r % 63);
			break;
		case K_ADDI:
		case K_SUBI:
		case K_XORI:
			/* Mix small (imm8 encodings) and large immediates. */
			op->imm = (r & 0x100) ? (int32_t)(int8_t)(r >> 9)
					      : (int32_t)(uint32_t)(r >> 16);
			break;
		default:
			op->imm = 0;
			break;
		}
	}
}

static uint64_t rotl(uint64_t x, unsigned n)
{
	n &= 63;
	return n ? (x << n) | (x >> (64 - n)) : x;
}

static uint64_t bswap64(uint64_t x)
{
	uint64_t r = 0;

	for (int i = 0; i < 8; i++)
		r = (r << 8) | ((x >> (8 * i)) & 0xFF);
	return r;
}

int64_t kernel_eval(const struct kernel *k, int64_t arg)
{
	/* Unsigned arithmetic: wraps exactly like the machine code. */
	uint64_t x = (uint64_t)arg, a = (uint64_t)arg;

	for (uint64_t ctr = k->iters; ctr != 0; ctr--) {
		for (uint32_t i = 0; i < k->nops; i++) {
			const struct kernel_op *op = &k->ops[i];
			uint64_t imm = (uint64_t)(int64_t)op->imm;

			switch (op->kind) {
			case K_ADDI: x += imm; break;
			case K_SUBI: x -= imm; break;
			case K_XORI: x ^= imm; break;
			case K_MULI: x *= imm; break;
			case K_ROLI: x = rotl(x, (unsigned)op->imm); break;
			case K_RORI: x = rotl(x, 64 - (unsigned)op->imm); break;
			case K_XSHR: x ^= x >> (op->imm & 63); break;
			case K_ADDCTR: x += ctr; break;
			case K_XORARG: x ^= a; break;
			case K_ADDARG: x += a; break;
			case K_NOT: x = ~x; break;
			case K_BSWAP: x = bswap64(x); break;
			default: break;
			}
		}
	}
	return (int64_t)x;
}

int64_t kernel_arg(uint32_t index, uint32_t variant)
{
	uint64_t s = ((uint64_t)index << 8) ^ variant ^ 0xA5A5A5A5ull;

	return (int64_t)splitmix64(&s);
}
