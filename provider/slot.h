/* SPDX-License-Identifier: MIT */
/*
 * A record slot: one published method version, stub or module, in one
 * 64-byte cache line of the record store (store.h). Slots are never
 * malloc'd or freed: they are taken from and returned to the store's free
 * list, and the walker visits them in index order.
 *
 * The state word is the only field that changes while a slot holds a
 * record; every other field is written before the record becomes visible
 * and is immutable until the slot is freed (after a grace period), with one
 * exception: once DEAD, `version` is reused as the retire-queue link (see
 * below). Readers therefore load `state` (acquire) first and re-validate
 * it with a cmpxchg when they need the fields to belong to a live record
 * (the walker's claim), or read only `start`/`size` (overlap checks, which
 * ignore DEAD records).
 *
 * Layout (64 bytes):
 *   node     cds_lfht node in the code table (key: 4 KiB page of start) or
 *            the module table (key: module id); the free list's link
 *            while free (cds_lfs_node overlays node.next).
 *   state    life | kind | flags | generation | pass mark, see LETW_ST_*.
 *   size     code size (methods, stubs), module flags (modules).
 *   start    code start (methods, stubs), module id (modules).
 *   id       method_id (methods), owner (stubs).
 *   version  version_id (methods); the retire link once DEAD.
 *   token    method_token (methods), kind (stubs).
 *   flags    method_flags (methods).
 *   ctx      interned context: (module_id, namespace, signature) for
 *            methods, the name for stubs and modules (intern.h).
 *   name     a method's own name: a string handle, or up to 3 bytes
 *            inline (LETW_ST_NAME_INLINE).
 */
#ifndef LETW_SLOT_H
#define LETW_SLOT_H

#include <stdint.h>

#include <urcu/rculfhash.h>
#include <urcu/lfstack.h>

struct letw_slot {
	struct cds_lfht_node node;
	uint32_t state;
	uint32_t size;
	uint64_t start;
	uint64_t id;
	union {
		uint64_t version;
		struct cds_lfs_node retire;
	};
	uint32_t token;
	uint32_t flags;
	uint32_t ctx;
	uint32_t name;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct letw_slot) == 64, "a slot is one cache line");
_Static_assert(sizeof(struct cds_lfs_node) <= sizeof(uint64_t),
	       "the retire link fits in `version`");

/*
 * State word. Bits 0-15: the mark of the last pass that claimed this
 * record (the walker's exactly-once and skipped_raced accounting, see
 * rundown/walker.c); kind; flags; life; a generation bumped at every reuse
 * (it makes a claim's cmpxchg fail if the slot was freed and reused in
 * between, whatever else matches).
 */
#define LETW_ST_MARK_MASK   0x0000ffffu
#define LETW_ST_KIND_SHIFT  16
#define LETW_ST_KIND_MASK   (0x3u << LETW_ST_KIND_SHIFT)
#define LETW_ST_NAME_INLINE (1u << 18) /* name bytes in `name` itself */
#define LETW_ST_LINES       (1u << 19) /* a line table in the ext table */
#define LETW_ST_BIG         (1u << 20) /* in the big-record registry */
#define LETW_ST_CONT        (1u << 21) /* never set in a slot: tags cont nodes */
#define LETW_ST_LIFE_SHIFT  22
#define LETW_ST_LIFE_MASK   (0x3u << LETW_ST_LIFE_SHIFT)
#define LETW_ST_GEN_SHIFT   24
#define LETW_ST_GEN_MASK    (0xffu << LETW_ST_GEN_SHIFT)

enum letw_slot_kind {
	LETW_SLOT_FREE = 0,
	LETW_SLOT_METHOD = 1,
	LETW_SLOT_STUB = 2,
	LETW_SLOT_MODULE = 3,
};

enum letw_slot_life {
	LETW_LIFE_FREE = 0,
	LETW_LIFE_PENDING = 1, /* being published: occupies its range, not yet live */
	LETW_LIFE_LIVE = 2,
	LETW_LIFE_DEAD = 3,    /* unpublished, waiting for a grace period */
};

static inline uint32_t letw_st_kind(uint32_t st)
{
	return (st & LETW_ST_KIND_MASK) >> LETW_ST_KIND_SHIFT;
}

static inline uint32_t letw_st_life(uint32_t st)
{
	return (st & LETW_ST_LIFE_MASK) >> LETW_ST_LIFE_SHIFT;
}

static inline uint32_t letw_st_with_life(uint32_t st, enum letw_slot_life l)
{
	return (st & ~LETW_ST_LIFE_MASK) | ((uint32_t)l << LETW_ST_LIFE_SHIFT);
}

static inline uint32_t letw_st_with_mark(uint32_t st, uint32_t mark)
{
	return (st & ~LETW_ST_MARK_MASK) | (mark & LETW_ST_MARK_MASK);
}

/* The state word is only ever accessed through these (C11 atomics, so
 * TSan sees every publish/read pair). Acquire: a reader that sees a state
 * sees the fields written before it was stored. */
static inline uint32_t letw_slot_state(const struct letw_slot *s)
{
	return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
}

static inline void letw_slot_set_state(struct letw_slot *s, uint32_t st)
{
	__atomic_store_n(&s->state, st, __ATOMIC_RELEASE);
}

/* Full barrier either way (the Dekker pairs in table.c and the walker's
 * accounting rely on it). On failure *expected holds the current state. */
static inline int letw_slot_cas(struct letw_slot *s, uint32_t *expected, uint32_t st)
{
	return __atomic_compare_exchange_n(&s->state, expected, st, 0,
					   __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE);
}

static inline int letw_slot_kind_is_module(const struct letw_slot *s)
{
	return letw_st_kind(letw_slot_state(s)) == LETW_SLOT_MODULE;
}

/* The occupied range, or none: overlap checks ignore free and dead slots. */
static inline int letw_slot_occupies(uint32_t st)
{
	uint32_t l = letw_st_life(st);

	return l == LETW_LIFE_PENDING || l == LETW_LIFE_LIVE;
}

#endif
