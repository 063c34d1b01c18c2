/* SPDX-License-Identifier: MIT */
/*
 * The record store: memory for everything the publish paths keep, owned
 * by the library and never obtained from malloc on those paths.
 *
 *  - Slots (slot.h): 64-byte records in one reserved virtual region,
 *    committed in chunks of LETW_STORE_SLOT_CHUNK slots, indexed from 0 so
 *    the walker can visit them in order.
 *  - Chunks: size-classed blocks (strings, interned contexts, continuation
 *    nodes, line tables) in a second reserved region, named by a 32-bit
 *    handle (offset / 8; 0 is "none").
 *  - Names: a method's own name of 4..128 bytes, stored byte-exact without
 *    its NUL in a third region (names.h: a class per length, free bitmaps,
 *    a shared pool of prefaulted spare blocks), named by a 32-bit handle
 *    with bit 31 set, which no chunk handle has. A name then weighs its
 *    length and nothing more in bytes_in_use; the 8-byte-step chunk
 *    classes, NUL included, cost ~4 B per method more (issue #10).
 *
 * Slots and chunks come from lock-free free lists (cds_lfs). Pops run inside a
 * urcu_bp read-side section and everything is pushed back only after a
 * grace period (reclaim.c), which is what makes __cds_lfs_pop's ABA safe.
 * The control thread commits memory ahead of demand (letw_store_maintain)
 * and touches it, so a publisher neither allocates nor page-faults. When a
 * publisher still finds a free list empty it commits a block itself — the
 * one slow path: an mprotect() system call, no lock of ours, counted in
 * letw_stats.store_slow_grows. A publish fails with -ENOMEM when the
 * live records reach records_max, or when a region is exhausted (the slot
 * region only if more than its room beyond records_max are waiting for a
 * grace period).
 */
#ifndef LETW_STORE_H
#define LETW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <urcu/lfstack.h>

#include "names.h"
#include "slot.h"

#define LETW_STORE_SLOT_CHUNK 16384u            /* slots per commit (1 MiB) */
#define LETW_STORE_CHUNK_MAX  (2u * 1024 * 1024) /* largest chunk */
#define LETW_STORE_NR_CLASSES 44

struct letw_store_class {
	struct __cds_lfs_stack free; /* no mutex: only the lock-free calls are used */
	uint32_t size;   /* bytes per chunk */
	long nfree;      /* approximate (uatomic) */
	long total;      /* chunks committed in this class */
	int used;        /* ever popped: the control thread keeps it stocked */
} __attribute__((aligned(64)));

/*
 * The address range a chunk of slots' methods and stubs lie in, for the
 * big-record overlap scan (overlap.c letw_overlaps_any), which skips a
 * chunk whose range misses the big one. It only ever widens: a slot that
 * is freed or reused leaves it as wide as it was (harmless, the scan then
 * merely visits that chunk). Empty is [UINT64_MAX, 0), which meets nothing. One cache
 * line per chunk: small publishers of one chunk widen it, and it must not
 * false-share with their slots or another chunk's range.
 */
struct letw_store_summary {
	uint64_t lo, hi; /* [lo, hi), C11 atomics */
} __attribute__((aligned(64)));

struct letw_store {
	/* Slots. */
	struct letw_slot *slots;     /* reserved region */
	uint32_t slots_max;          /* reserved, a multiple of the chunk */
	uint32_t slots_claimed;      /* committed or being committed (uatomic) */
	uint8_t *slot_chunk_ready;   /* per chunk: initialised (acquire/release) */
	struct letw_store_summary *slot_summary; /* per chunk, see above */
	/* The free list's head and count: written by every pop (the
	 * publishers) and every push (the reclaim path, on another core), so
	 * on a line of their own: sharing one with `slots` and `chunks`,
	 * which every publish reads, made those reads miss whenever the
	 * reclaim path had just freed a slot. */
	struct __cds_lfs_stack slot_free __attribute__((aligned(64)));
	long slots_free;             /* approximate (uatomic) */

	/* Chunks. */
	char *chunks __attribute__((aligned(64))); /* reserved region */
	size_t chunks_max;           /* bytes reserved */
	size_t chunks_claimed;       /* bytes handed to classes (uatomic) */
	struct letw_store_class cls[LETW_STORE_NR_CLASSES];

	long slow_grows;             /* publisher-side commits (uatomic) */
	uint64_t records_max;        /* live records at most; set at init */

	/* Method names of 4..128 bytes, byte-exact (names.h). */
	struct letw_names names;
};

/* Reserve the regions and commit room for `expected` records (0: a
 * default). `max_records` (0: a default) becomes records_max, the bound
 * the publish paths keep live records under; the slot region is larger
 * by a quarter (at least two commit chunks) for the slots waiting for
 * their grace period. */
int letw_store_init(struct letw_store *st, uint64_t expected, uint64_t max_records);
/* Unmap everything. No reader or writer may remain. */
void letw_store_fini(struct letw_store *st);

static inline struct letw_slot *letw_store_slot(const struct letw_store *st, uint32_t i)
{
	return &st->slots[i];
}

static inline uint32_t letw_store_slot_index(const struct letw_store *st,
					     const struct letw_slot *s)
{
	return (uint32_t)(s - st->slots);
}

/* Slots the walker may look at: [0, letw_store_slot_bound). A chunk of
 * them is safe to read only if letw_store_slot_chunk_ready says so. */
static inline uint32_t letw_store_slot_bound(const struct letw_store *st)
{
	uint32_t n = __atomic_load_n(&st->slots_claimed, __ATOMIC_ACQUIRE);

	/* A grower that found the region exhausted takes its claim back
	 * (grow_slots): until then the count is past the region, and
	 * slot_chunk_ready has no flag for that chunk. */
	return n < st->slots_max ? n : st->slots_max;
}

static inline int letw_store_slot_chunk_ready(const struct letw_store *st, uint32_t chunk)
{
	return __atomic_load_n(&st->slot_chunk_ready[chunk], __ATOMIC_ACQUIRE);
}

/* The first slot index >= i in a ready chunk, or `bound`: the loops that
 * visit every committed slot in order (table.c, table_fork.c). */
static inline uint32_t letw_store_slot_next_ready(const struct letw_store *st, uint32_t i,
						  uint32_t bound)
{
	while (i < bound && !letw_store_slot_chunk_ready(st, i / LETW_STORE_SLOT_CHUNK))
		i = (i / LETW_STORE_SLOT_CHUNK + 1) * LETW_STORE_SLOT_CHUNK;
	return i < bound ? i : bound;
}

/*
 * Widen the range of the chunk holding slot i to cover [lo, hi): lock-free
 * min/max CAS loops, no CAS when it already does. Relaxed: the caller's
 * full barrier that follows (its first node's cds_lfht_add_unique) orders
 * it (table.c letw_table_insert); C11 atomics so that TSan sees the pair.
 */
#define LETW_STORE_SUMMARY_GRAIN (1ull << 20)

static inline void letw_store_summary_widen(struct letw_store *st, uint32_t i,
					    uint64_t lo, uint64_t hi)
{
	struct letw_store_summary *r = &st->slot_summary[i / LETW_STORE_SLOT_CHUNK];
	uint64_t cur;

	/* Out to whole grains (1 MiB): a code heap filled in address order
	 * then CASes the line once per grain, not once per publish (a
	 * locked instruction on a line every publisher of the chunk
	 * writes); a big scan visits a chunk at most a grain early, which
	 * is harmless. hi <= UINT64_MAX (no range wraps): where rounding
	 * up would wrap, hi stays as it is. */
	lo &= ~(LETW_STORE_SUMMARY_GRAIN - 1);
	if (hi <= UINT64_MAX - (LETW_STORE_SUMMARY_GRAIN - 1))
		hi = (hi + LETW_STORE_SUMMARY_GRAIN - 1) & ~(LETW_STORE_SUMMARY_GRAIN - 1);
	cur = __atomic_load_n(&r->lo, __ATOMIC_RELAXED);

	while (lo < cur && !__atomic_compare_exchange_n(&r->lo, &cur, lo, 0,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	cur = __atomic_load_n(&r->hi, __ATOMIC_RELAXED);
	while (hi > cur && !__atomic_compare_exchange_n(&r->hi, &cur, hi, 0,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Does chunk `chunk`'s range meet [lo, hi)? Relaxed, after the caller's
 * full barrier. */
static inline int letw_store_summary_meets(const struct letw_store *st, uint32_t chunk,
					   uint64_t lo, uint64_t hi)
{
	const struct letw_store_summary *r = &st->slot_summary[chunk];

	return __atomic_load_n(&r->lo, __ATOMIC_RELAXED) < hi &&
	       lo < __atomic_load_n(&r->hi, __ATOMIC_RELAXED);
}

/* Caller inside a read-side section. NULL: the region is exhausted. */
struct letw_slot *letw_store_slot_get(struct letw_store *st);

/*
 * A hint, issued at the start of a publish: bring the slot that
 * letw_store_slot_get is about to pop into this core's cache, for
 * writing, while the caller validates its strings. That slot was last
 * written by the reclaim path on another core (reclaim.c pushes it back
 * after a grace period), so the pop's read of its link otherwise stalls
 * on a cache miss with nothing to overlap (~10 % of a publish in the
 * 2026-12-06 profile). The head is read relaxed and may be stale by the
 * time of the pop: a prefetch never faults and orders nothing, the pop
 * itself reads the head again.
 */
static inline void letw_store_slot_prefetch(const struct letw_store *st)
{
	__builtin_prefetch(__atomic_load_n(&st->slot_free.head, __ATOMIC_RELAXED), 1, 3);
}
/* After a grace period since the slot was last reachable. */
void letw_store_slot_put(struct letw_store *st, struct letw_slot *s);

/* A chunk of at least `bytes` (<= LETW_STORE_CHUNK_MAX): a handle, or 0
 * when the region is exhausted. Caller inside a read-side section. */
uint32_t letw_store_chunk_get(struct letw_store *st, size_t bytes);
/* After a grace period; `bytes` as passed to letw_store_chunk_get. */
void letw_store_chunk_put(struct letw_store *st, uint32_t h, size_t bytes);

static inline void *letw_store_chunk_ptr(const struct letw_store *st, uint32_t h)
{
	return st->chunks + (size_t)h * 8;
}

static inline uint32_t letw_store_chunk_handle(const struct letw_store *st, const void *p)
{
	return (uint32_t)(((const char *)p - st->chunks) / 8);
}

/* Control thread: keep every free list above its low-water mark. */
void letw_store_maintain(struct letw_store *st);

/*
 * Control thread, outside any read-side section and holding nothing a
 * publisher waits for (it waits for a grace period): once the chunk
 * region is spent, give each class in use that is below its low-water
 * mark one free chunk of the smallest larger class that has one, carved
 * into its size. A freed chunk otherwise returns to its own class only, and a
 * burst of large line tables, freed, left every other class without
 * memory for good (-ENOMEM with nothing live). Returns how many chunks
 * moved.
 */
int letw_store_rebalance(struct letw_store *st);

struct letw_store_usage {
	uint64_t slots_committed, slots_free;
	uint64_t chunk_bytes_committed, chunk_bytes_in_use;
	uint64_t name_bytes_committed, name_bytes_in_use; /* names.h */
	uint64_t slow_grows;
};
void letw_store_usage(const struct letw_store *st, struct letw_store_usage *out);

#endif
