/* SPDX-License-Identifier: MIT */
/*
 * Method names, byte-exact: a name of LETW_NAMES_MIN..LETW_NAMES_MAX bytes
 * is stored without its NUL in a class of exactly its length, so a name
 * occupies strlen(name) bytes and nothing else (issue #10: the 8-byte-step
 * chunk classes, NUL included, lost ~4 B per method). Shorter names stay
 * inline in the slot (slot.h LETW_ST_NAME_INLINE), longer ones in a store
 * chunk with their NUL (store.h).
 *
 * Layout. A dedicated reserved region of 4 KiB blocks; a block holds
 * names of one length only: a header (free bitmap, 1 = free, and the
 * counters below) on its first cache line(s), then the names packed end to
 * end from the next 64-byte boundary. A handle is LETW_NAMES_HANDLE | the
 * byte offset of the name in the region; its length is the block's, read
 * from the block header (immutable once the block is committed), so
 * neither the slot nor the name spends a byte on it.
 *
 * Taking and giving back, lock-free, no intrusive free-list node:
 *  - a block's `nfree` counts its set bits not yet reserved: a taker first
 *    reserves one (decrement if positive, CAS), then clears a set bit
 *    (fetch-and; there is one for every reservation, since a giver sets
 *    the bit before it increments the count);
 *  - each class has a stack of the blocks that may have free names (the
 *    partial stack), a Treiber stack of block numbers whose head carries a
 *    32-bit tag bumped by every push and pop, so a pop's CAS fails on ABA
 *    (blocks are never unmapped: reading a stale `next` is harmless);
 *  - takers use the top block; the one that finds it full pops it;
 *  - a giver (reclaim.c, after a grace period) sets the bit, and when the
 *    block's count goes from 0 to 1 offers the block back to the stack;
 *  - a block's `instack` flag makes pushes exclusive (no block is ever
 *    twice on the stack): a pusher sets it by exchange, the popper clears
 *    it after its pop and then re-reads the count (seq_cst both sides, a
 *    Dekker pair with the giver's increment-then-exchange): a name freed
 *    while the block was leaving the stack is either seen by the popper,
 *    which offers the block again, or by the giver, which pushes it.
 *
 * Stock. Blocks are committed and prefaulted ahead of demand by the
 * control thread (letw_names_maintain) into one pool of spare blocks
 * shared by all 125 classes (a tagged stack like the classes'), not per
 * class: a taker whose class's stack is empty pops a spare, writes its
 * header for its length (no system call, no page fault) and pushes it to
 * its class. So the free names a class holds are those of its partly
 * used blocks only — at most about one block per length in use once the
 * runtime stops publishing — and a burst of one length draws on the whole
 * pool. Spare blocks never go back to the pool (a block keeps its length
 * for good), which keeps every stale `next` read harmless. A taker that
 * finds the pool empty too commits a block itself (one mprotect, counted
 * in slow_grows), as the store's other free lists do.
 */
#ifndef LETW_NAMES_H
#define LETW_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define LETW_NAMES_MIN    4u   /* shorter names are inline in the slot */
#define LETW_NAMES_MAX    128u /* longer ones go to the store's chunks */
#define LETW_NAMES_NR     (LETW_NAMES_MAX - LETW_NAMES_MIN + 1)
#define LETW_NAMES_BLOCK  4096u
#define LETW_NAMES_HANDLE 0x80000000u /* chunk handles never set it (< 2^29) */

/* A block's header, at its start. */
struct letw_names_blk {
	uint32_t next;     /* partial-stack link: a block number (C11 atomics) */
	uint32_t instack;  /* 1 while on the partial stack (C11 atomics) */
	int32_t nfree;     /* set bits not reserved by a taker (C11 atomics) */
	uint16_t len;      /* bytes per name: immutable once committed */
	uint16_t n;        /* names in the block */
	uint64_t bits[];   /* 1 = free (C11 atomics) */
};

struct letw_names_class {
	uint64_t partial; /* tag << 32 | block number (0: empty); C11 atomics */
	long nfree;       /* free names in the class (uatomic, for usage) */
	long total;       /* names in the class's blocks (uatomic) */
	uint16_t n;       /* names per block */
	uint16_t first;   /* byte offset of name 0 in a block */
} __attribute__((aligned(64)));

struct letw_names {
	char *base;        /* reserved region */
	size_t max;        /* bytes reserved (<= 2 GiB: offsets fit 31 bits) */
	size_t claimed;    /* bytes committed or being committed (uatomic) */
	long blocks;       /* blocks committed (uatomic) */
	long assigned;     /* blocks given a length (uatomic) */
	long seen;         /* `assigned` at the last maintain (control thread) */
	long slow_grows;   /* taker-side commits (uatomic) */
	uint64_t spare;    /* the pool: a tagged stack head, as `partial` */
	long nspare;       /* blocks in the pool (uatomic, approximate) */
	struct letw_names_class cls[LETW_NAMES_NR];
};

int letw_names_init(struct letw_names *nm);
/* Unmap everything. No reader or writer may remain. */
void letw_names_fini(struct letw_names *nm);

static inline int letw_names_handle_is(uint32_t h)
{
	return (h & LETW_NAMES_HANDLE) != 0;
}

/* Store `len` bytes of s (LETW_NAMES_MIN <= len <= LETW_NAMES_MAX), no
 * NUL: a handle, or 0 when the region is exhausted. Needs no read-side
 * section (the tags, not a grace period, make the pops ABA-safe); the
 * publish path calls it inside one anyway. No lock, no allocation; a
 * system call (mprotect) only on the slow path. */
uint32_t letw_names_get(struct letw_names *nm, const char *s, size_t len);
/* A hint, as letw_store_slot_prefetch (store.h): the header line of the
 * block letw_names_get(len) will most likely take from — the top of the
 * length's partial stack, whose count and bitmap the reclaim path updates
 * on another core. Relaxed, possibly stale, never faults (blocks are
 * never unmapped; a number past the committed ones is only prefetched). */
static inline void letw_names_prefetch(const struct letw_names *nm, size_t len)
{
	uint64_t top;

	if (len < LETW_NAMES_MIN || len > LETW_NAMES_MAX)
		return;
	top = __atomic_load_n(&nm->cls[len - LETW_NAMES_MIN].partial, __ATOMIC_RELAXED);
	if ((uint32_t)top)
		__builtin_prefetch(nm->base + (size_t)(uint32_t)top * LETW_NAMES_BLOCK, 1, 3);
}

/* After a grace period since the name was last reachable (reclaim.c):
 * the name may be taken again at once. */
void letw_names_put(struct letw_names *nm, uint32_t h);

/* The name's bytes (not NUL-terminated) and its length. */
static inline const char *letw_names_bytes(const struct letw_names *nm, uint32_t h,
					   size_t *len)
{
	size_t off = h & ~LETW_NAMES_HANDLE;
	const struct letw_names_blk *b = (const struct letw_names_blk *)
		(nm->base + (off & ~(size_t)(LETW_NAMES_BLOCK - 1)));

	/* `len` was written before the block was first pushed (release)
	 * and never again; the handle reached the reader through the slot,
	 * itself published (release) after the name was taken. */
	*len = b->len;
	return nm->base + off;
}

/* Control thread: keep the pool of spare blocks above its low-water mark. */
void letw_names_maintain(struct letw_names *nm);

/* committed: every byte of every committed block (headers, bitmaps and
 * tails included); in_use: exactly the bytes of the names held. */
void letw_names_usage(const struct letw_names *nm, uint64_t *committed, uint64_t *in_use,
		      uint64_t *slow_grows);

#endif
