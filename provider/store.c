/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "store.h"
#include "tsan.h"

/*
 * Size classes: 8-byte steps up to 64, then four steps per power of two
 * (at most 25 % lost to rounding) up to 8 KiB, then coarser for the rare
 * large line tables.
 */
static const uint32_t class_sizes[LETW_STORE_NR_CLASSES] = {
	16, 24, 32, 40, 48, 56, 64,
	80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512,
	640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096,
	5120, 6144, 7168, 8192, 12288, 16384, 32768, 65536, 131072,
	262144, 524288, 1048576, 2097152,
};
_Static_assert(2097152 == LETW_STORE_CHUNK_MAX, "the last class is the largest chunk");

#define BLOCK_MIN (64u * 1024)          /* chunk-class commit grain */
#define DEFAULT_EXPECTED 16384u
#define DEFAULT_MAX_SLOTS (1u << 24)    /* 1.25 GiB of address space, with the room */
#define MAX_RECORDS_CAP (1ull << 30)    /* slot indexes stay below 2^31 */
#define CHUNK_REGION (4ull << 30)       /* 4 GiB of address space */
#define STOCKED_AT_INIT 256u            /* 15 classes, 960 KiB committed */

static size_t class_block(uint32_t size)
{
	return size > BLOCK_MIN ? size : BLOCK_MIN;
}

static int class_of(size_t bytes)
{
	for (int i = 0; i < LETW_STORE_NR_CLASSES; i++)
		if (class_sizes[i] >= bytes)
			return i;
	return -1;
}

/* Address space only: PROT_NONE, no swap reserved, no page touched. */
static void *reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A commit whose mprotect failed (ENOMEM: strict overcommit short of
 * memory, or the process's map count) gives its claim back, so that the
 * next try takes the same range. Left claimed, as it used to be, each
 * failed try burnt its range for good, and the control thread tries at
 * every wake-up (letw_store_maintain, 200 a second by default): seconds
 * of memory shortage used the region up, and every publish after got
 * -ENOMEM, memory back or not. Only while no later claim was made: one
 * made meanwhile (another grower's, which may already be in use) cannot
 * be moved, so that range alone stays claimed and unused, once per such
 * race rather than once per try.
 */
static void unclaim_slots(struct letw_store *st, uint32_t first)
{
	(void)uatomic_cmpxchg(&st->slots_claimed, first + LETW_STORE_SLOT_CHUNK, first);
}

static void unclaim_chunks(struct letw_store *st, size_t off, size_t len)
{
	(void)uatomic_cmpxchg(&st->chunks_claimed, off + len, off);
}

/*
 * Commit one chunk of slots: make it accessible, initialise every slot as
 * FREE (this touches every page, so later publishers do not fault), flag
 * the chunk ready for the walker, then push the slots. The flag goes up
 * before the first push (release; letw_store_slot_chunk_ready acquires):
 * once a slot can be popped and published, the walker and the big-record
 * overlap scan, which skip chunks not ready, must already see its chunk —
 * flagged after the pushes, a record published from a chunk still being
 * pushed was missed by both (TSan's slowness made it visible:
 * hostile_api's big overlap went unrefused). The FREE slots a scan then
 * meets are skipped like any free slot. Any thread may commit;
 * concurrent growers take distinct chunks (fetch-add on slots_claimed)
 * and nobody waits for anybody. `keep` receives one slot for the caller
 * (the slow path) instead of pushing it.
 */
static int grow_slots(struct letw_store *st, struct letw_slot **keep)
{
	uint32_t first = uatomic_add_return(&st->slots_claimed, LETW_STORE_SLOT_CHUNK) -
			 LETW_STORE_SLOT_CHUNK;
	struct letw_slot *base;

	if (first >= st->slots_max) {
		uatomic_sub(&st->slots_claimed, LETW_STORE_SLOT_CHUNK);
		return -ENOMEM;
	}
	base = &st->slots[first];
	if (mprotect(base, (size_t)LETW_STORE_SLOT_CHUNK * sizeof(*base),
		     PROT_READ | PROT_WRITE)) {
		/* Never ready: the walker skips it while it is claimed. */
		unclaim_slots(st, first);
		return -ENOMEM;
	}
	memset(base, 0, (size_t)LETW_STORE_SLOT_CHUNK * sizeof(*base));
	/* Empty, before the flag (its release covers it): a scan that sees
	 * the chunk ready reads no stale range. */
	__atomic_store_n(&st->slot_summary[first / LETW_STORE_SLOT_CHUNK].lo, UINT64_MAX,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&st->slot_summary[first / LETW_STORE_SLOT_CHUNK].hi, 0,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&st->slot_chunk_ready[first / LETW_STORE_SLOT_CHUNK], 1,
			 __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < LETW_STORE_SLOT_CHUNK; i++) {
		struct letw_slot *s = &base[i];

		if (keep && i == 0) {
			*keep = s;
			continue;
		}
		cds_lfs_node_init((struct cds_lfs_node *)&s->node);
		letw_hb_release(s);
		cds_lfs_push(&st->slot_free, (struct cds_lfs_node *)&s->node);
	}
	uatomic_add(&st->slots_free, (long)LETW_STORE_SLOT_CHUNK - (keep ? 1 : 0));
	return 0;
}

/* Same for one block of a chunk class; `prefault` touches every page. */
static int grow_class(struct letw_store *st, int c, int prefault, uint32_t *keep)
{
	struct letw_store_class *k = &st->cls[c];
	size_t block = class_block(k->size);
	size_t off = uatomic_add_return(&st->chunks_claimed, block) - block;
	char *base;
	size_t n = block / k->size;

	if (off + block > st->chunks_max) {
		uatomic_sub(&st->chunks_claimed, block);
		return -ENOMEM;
	}
	base = st->chunks + off;
	if (mprotect(base, block, PROT_READ | PROT_WRITE)) {
		unclaim_chunks(st, off, block);
		return -ENOMEM;
	}
	if (prefault)
		memset(base, 0, block);
	for (size_t i = 0; i < n; i++) {
		char *p = base + i * k->size;

		if (keep && i == 0) {
			*keep = letw_store_chunk_handle(st, p);
			continue;
		}
		cds_lfs_node_init((struct cds_lfs_node *)p);
		letw_hb_release(p);
		cds_lfs_push(&k->free, (struct cds_lfs_node *)p);
	}
	uatomic_add(&k->total, (long)n);
	uatomic_add(&k->nfree, (long)n - (keep ? 1 : 0));
	return 0;
}

/* How many slots the machine's physical memory holds. */
static uint64_t phys_slots(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || psz <= 0)
		return UINT64_MAX;
	return (uint64_t)pages * (uint64_t)psz / sizeof(struct letw_slot);
}

int letw_store_init(struct letw_store *st, uint64_t expected, uint64_t max_records)
{
	uint64_t max = max_records ? max_records : DEFAULT_MAX_SLOTS;
	uint64_t room;
	uint32_t nchunks;

	memset(st, 0, sizeof(*st));
	if (max > MAX_RECORDS_CAP)
		max = MAX_RECORDS_CAP;
	st->records_max = max;
	/* max_records bounds live records (record.c slot_new), not slots:
	 * an unpublished record, or a refused publish's slot, holds its slot
	 * until a grace period has passed (the free list's ABA safety,
	 * above), so the region has room beyond the bound for those. */
	room = max + (max / 4 > 2ull * LETW_STORE_SLOT_CHUNK ? max / 4 :
		      2ull * LETW_STORE_SLOT_CHUNK);
	nchunks = (uint32_t)((room + LETW_STORE_SLOT_CHUNK - 1) / LETW_STORE_SLOT_CHUNK);
	st->slots_max = nchunks * LETW_STORE_SLOT_CHUNK;
	st->slots = reserve((size_t)st->slots_max * sizeof(struct letw_slot));
	/* The per-chunk flags: one page per 4096 chunks, committed now. */
	st->slot_chunk_ready = mmap(NULL, nchunks, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* The per-chunk ranges: one line each, touched only when its chunk
	 * is committed (grow_slots). */
	st->slot_summary = mmap(NULL, (size_t)nchunks * sizeof(*st->slot_summary),
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	st->chunks_max = CHUNK_REGION;
	st->chunks = reserve(st->chunks_max);
	if (!st->slots || st->slot_chunk_ready == MAP_FAILED ||
	    st->slot_summary == MAP_FAILED || !st->chunks || letw_names_init(&st->names)) {
		if (st->slot_chunk_ready == MAP_FAILED)
			st->slot_chunk_ready = NULL;
		if (st->slot_summary == MAP_FAILED)
			st->slot_summary = NULL;
		letw_store_fini(st);
		return -ENOMEM;
	}
	/* Handle 0 means "none": burn the first 8 bytes' block for it. */
	st->chunks_claimed = BLOCK_MIN;
	__cds_lfs_init(&st->slot_free);
	for (int i = 0; i < LETW_STORE_NR_CLASSES; i++) {
		__cds_lfs_init(&st->cls[i].free);
		st->cls[i].size = class_sizes[i];
	}
	if (!expected)
		expected = DEFAULT_EXPECTED;
	/* Room beyond the bound is never used live; and a config asking for
	 * more than the machine's memory gets -ENOMEM, not the OOM killer
	 * (committed slots are written: the free list runs through them). */
	if (expected > st->records_max)
		expected = st->records_max;
	if (expected > phys_slots()) {
		letw_store_fini(st);
		return -ENOMEM;
	}
	while ((uint64_t)st->slots_claimed < expected && st->slots_claimed < st->slots_max)
		if (grow_slots(st, NULL))
			break;
	/* The classes names and contexts fall in: stocked now and kept so by
	 * the control thread, so that a first string of a new size does not
	 * take the publisher's slow path (an mprotect) in steady state. */
	for (int i = 0; i < LETW_STORE_NR_CLASSES && class_sizes[i] <= STOCKED_AT_INIT; i++) {
		if (grow_class(st, i, 1, NULL))
			break;
		st->cls[i].used = 1;
	}
	return 0;
}

void letw_store_fini(struct letw_store *st)
{
	if (st->slots)
		munmap(st->slots, (size_t)st->slots_max * sizeof(struct letw_slot));
	if (st->slot_chunk_ready)
		munmap(st->slot_chunk_ready, st->slots_max / LETW_STORE_SLOT_CHUNK);
	if (st->slot_summary)
		munmap(st->slot_summary, (size_t)(st->slots_max / LETW_STORE_SLOT_CHUNK) *
					 sizeof(*st->slot_summary));
	if (st->chunks)
		munmap(st->chunks, st->chunks_max);
	letw_names_fini(&st->names);
	memset(st, 0, sizeof(*st));
}

struct letw_slot *letw_store_slot_get(struct letw_store *st)
{
	struct cds_lfs_node *n = __cds_lfs_pop(&st->slot_free);
	struct letw_slot *s = NULL;

	if (n) {
		letw_hb_acquire(n);
		uatomic_dec(&st->slots_free);
		return caa_container_of((struct cds_lfht_node *)n, struct letw_slot, node);
	}
	/* Counted when it commits: a store at max_records fails every
	 * publish here, and counting those made slow_grows a failure count. */
	if (grow_slots(st, &s))
		return NULL;
	uatomic_inc(&st->slow_grows);
	return s;
}

void letw_store_slot_put(struct letw_store *st, struct letw_slot *s)
{
	cds_lfs_node_init((struct cds_lfs_node *)&s->node);
	letw_hb_release(s);
	cds_lfs_push(&st->slot_free, (struct cds_lfs_node *)&s->node);
	uatomic_inc(&st->slots_free);
}

uint32_t letw_store_chunk_get(struct letw_store *st, size_t bytes)
{
	int c = class_of(bytes);
	struct letw_store_class *k;
	struct cds_lfs_node *n;
	uint32_t h = 0;

	if (c < 0)
		return 0;
	k = &st->cls[c];
	if (!__atomic_load_n(&k->used, __ATOMIC_RELAXED))
		__atomic_store_n(&k->used, 1, __ATOMIC_RELAXED);
	if ((n = __cds_lfs_pop(&k->free))) {
		letw_hb_acquire(n);
		uatomic_dec(&k->nfree);
		return letw_store_chunk_handle(st, n);
	}
	if (grow_class(st, c, 0, &h))
		return 0;
	uatomic_inc(&st->slow_grows); /* as for slots */
	return h;
}

void letw_store_chunk_put(struct letw_store *st, uint32_t h, size_t bytes)
{
	int c = class_of(bytes);
	struct cds_lfs_node *n = letw_store_chunk_ptr(st, h);

	if (c < 0 || !h)
		return;
	cds_lfs_node_init(n);
	letw_hb_release(n);
	cds_lfs_push(&st->cls[c].free, n);
	uatomic_inc(&st->cls[c].nfree);
}

/*
 * Low-water marks: a quarter of what is committed, at least one commit
 * grain, so that at the control thread's poll period (5 ms) a publisher
 * would have to outrun it by that much to reach the slow path. Bounded
 * work per call (64 grains) keeps the thread responsive.
 */
void letw_store_maintain(struct letw_store *st)
{
	for (int n = 0; n < 64; n++) {
		long committed = (long)uatomic_read(&st->slots_claimed);
		long low = committed / 4 > (long)LETW_STORE_SLOT_CHUNK ?
			committed / 4 : (long)LETW_STORE_SLOT_CHUNK;

		if (uatomic_read(&st->slots_free) >= low || grow_slots(st, NULL))
			break;
	}
	for (int c = 0; c < LETW_STORE_NR_CLASSES; c++) {
		struct letw_store_class *k = &st->cls[c];
		long per_block = (long)(class_block(k->size) / k->size);

		if (!__atomic_load_n(&k->used, __ATOMIC_RELAXED))
			continue;
		for (int n = 0; n < 16; n++) {
			long total = uatomic_read(&k->total);
			long low = total / 4 > per_block ? total / 4 : per_block;

			if (uatomic_read(&k->nfree) >= low || grow_class(st, c, 1, NULL))
				break;
		}
	}
	letw_names_maintain(&st->names);
}

int letw_store_rebalance(struct letw_store *st)
{
	int moved = 0;

	/* While the region has room, growing a class is cheaper and
	 * wastes nothing. */
	if (uatomic_read(&st->chunks_claimed) + BLOCK_MIN <= st->chunks_max)
		return 0;
	for (int c = 0; c < LETW_STORE_NR_CLASSES - 1; c++) {
		struct letw_store_class *k = &st->cls[c];
		struct cds_lfs_node *n = NULL;
		struct letw_store_class *from = NULL;
		size_t pieces;

		long per_block = (long)(class_block(k->size) / k->size);
		long total = uatomic_read(&k->total);

		/* The low-water mark letw_store_maintain keeps: ahead of
		 * demand, not once publishes already fail. */
		if (!__atomic_load_n(&k->used, __ATOMIC_RELAXED) ||
		    uatomic_read(&k->nfree) >= (total / 4 > per_block ? total / 4 : per_block))
			continue;
		for (int j = c + 1; j < LETW_STORE_NR_CLASSES && !n; j++) {
			if (uatomic_read(&st->cls[j].nfree) <= 0)
				continue;
			/* As a publisher pops (store.h): in a read-side
			 * section. */
			urcu_bp_read_lock();
			n = __cds_lfs_pop(&st->cls[j].free);
			urcu_bp_read_unlock();
			from = &st->cls[j];
		}
		if (!n)
			continue;
		letw_hb_acquire(n);
		uatomic_dec(&from->nfree);
		uatomic_dec(&from->total);
		/* A publisher that read this chunk at the head of its list
		 * just before our pop may still read its next pointer, which
		 * carving overwrites: after a grace period nobody can. */
		urcu_bp_synchronize_rcu();
		pieces = from->size / k->size;
		for (size_t i = 0; i < pieces; i++) {
			struct cds_lfs_node *p = (struct cds_lfs_node *)((char *)n + i * k->size);

			cds_lfs_node_init(p);
			letw_hb_release(p);
			cds_lfs_push(&k->free, p);
		}
		uatomic_add(&k->total, (long)pieces);
		uatomic_add(&k->nfree, (long)pieces);
		moved++;
	}
	return moved;
}

void letw_store_usage(const struct letw_store *st, struct letw_store_usage *out)
{
	uint64_t name_slow;

	memset(out, 0, sizeof(*out));
	out->slots_committed = uatomic_read(&st->slots_claimed);
	out->slots_free = (uint64_t)uatomic_read(&st->slots_free);
	for (int c = 0; c < LETW_STORE_NR_CLASSES; c++) {
		const struct letw_store_class *k = &st->cls[c];
		long total = uatomic_read(&k->total), nfree = uatomic_read(&k->nfree);

		out->chunk_bytes_committed += (uint64_t)total * k->size;
		out->chunk_bytes_in_use += (uint64_t)(total - nfree) * k->size;
	}
	out->slow_grows = (uint64_t)uatomic_read(&st->slow_grows);
	letw_names_usage(&st->names, &out->name_bytes_committed, &out->name_bytes_in_use,
			 &name_slow);
	out->slow_grows += name_slow;
}
