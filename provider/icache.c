/* SPDX-License-Identifier: MIT */
/*
 * The per-thread intern cache (icache.h).
 *
 * ICACHE_SETS sets of ICACHE_WAYS entries, the set chosen by the key's
 * hash (a runtime cycling through a few dozen namespace/signature pairs
 * must not thrash: direct-mapped, 24 contexts in 32 entries missed about
 * half the time). An entry keeps its own copy of the key (module id,
 * lengths, the two strings' bytes) and compares the caller's strings with
 * that copy, in memory no other thread touches: the interned entry's
 * bytes share a cache line with its reference count, which the reclaim
 * path decrements on another core for every record released (comparing
 * against them measured slower: bench/results/pubcost.md). Keys longer
 * than ICACHE_KEY_MAX bytes bypass the cache.
 *
 * An entry names the context by handle and holds `refs` references on it,
 * taken ICACHE_BATCH at a time with one atomic add: while the cache holds
 * at least one, the context cannot die (intern.h: a count never goes back
 * up from 0) and its handle keeps naming it. A hit hands one of the held
 * references to the slot; the cache never reads a record. A miss interns
 * through the table, evicts the set's last entry and puts the new one
 * first.
 *
 * The whole cache is keyed by the intern table's serial: after a
 * letw_shutdown and a new letw_init the old table's entries are merely
 * forgotten (their memory went with that table's store; letw_intern_fini
 * unlinked them).
 *
 * The caller's strings are compared by content (a runtime may reuse its
 * buffers). Plain thread-local memory: no other thread ever reads it.
 *
 * What a cache holds is put back when the entry is evicted (on the
 * publish path: a sub on the count and, for the last reference, the
 * lock-free unlink and retire of intern.c) and when the thread exits (a
 * pthread key destructor, off every publish path). A thread that dies
 * without running destructors (the threads other than the forker, in a
 * fork child) leaves its entries pinned until the table is destroyed: at
 * most ICACHE_SETS * ICACHE_WAYS contexts per such thread, still counted
 * in use.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <urcu/urcu-bp.h>

#include "bytes.h"
#include "icache.h"
#include "intern.h"
#include "internal.h"

#define ICACHE_SETS 16u    /* a power of two */
#define ICACHE_WAYS 4u     /* 64 entries of 128 bytes: 8 KiB per thread */
#define ICACHE_KEY_MAX 96u /* namespace + signature bytes kept per entry */
#define ICACHE_BATCH 64u   /* references taken per atomic add */

struct icache_ent {
	unsigned long hash; /* letw_intern_hash of the key */
	uint64_t a;
	uint32_t h;         /* the context's handle; 0: empty */
	uint32_t refs;      /* references held by the cache, >= 1 when not empty */
	uint16_t l1, l2;
	char key[ICACHE_KEY_MAX]; /* s1 then s2, no NULs */
} __attribute__((aligned(32)));

_Static_assert(sizeof(struct icache_ent) == 128, "two lines per entry");

struct icache {
	struct icache_ent set[ICACHE_SETS][ICACHE_WAYS];
	uint64_t serial; /* letw_intern.serial the entries belong to; 0: none */
};

static __thread struct icache cache;

/* The cache belongs to another (destroyed) table: forget it. */
static void reset(struct letw_intern *in)
{
	for (unsigned i = 0; i < ICACHE_SETS; i++)
		for (unsigned w = 0; w < ICACHE_WAYS; w++)
			cache.set[i][w].h = 0;
	cache.serial = in->serial;
}

static int is_key(const struct icache_ent *c, unsigned long hash, uint64_t a,
		  const char *s1, size_t l1, const char *s2, size_t l2)
{
	return c->hash == hash && c->h && c->a == a && c->l1 == l1 && c->l2 == l2 &&
	       letw_bytes_eq(c->key, s1, l1) && letw_bytes_eq(c->key + l1, s2, l2);
}

long letw_icache_get(struct letw_intern *in, uint64_t a, const char *s1, size_t l1,
		     uint64_t h1, const char *s2, size_t l2, uint64_t h2)
{
	unsigned long hash;
	struct icache_ent *set, *c;
	long r;

	if (!a && !l1 && !l2)
		return 0;
	hash = letw_intern_hash(a, l1, h1, l2, h2);
	if (l1 + l2 > ICACHE_KEY_MAX)
		return letw_intern_get_hashed(in, a, s1, l1, s2, l2, hash);
	if (__builtin_expect(cache.serial != in->serial, 0))
		reset(in);
	set = cache.set[hash & (ICACHE_SETS - 1)];
	for (unsigned w = 0; w < ICACHE_WAYS; w++) {
		c = &set[w];
		if (!is_key(c, hash, a, s1, l1, s2, l2))
			continue;
		if (c->refs == 1) {
			letw_intern_ref(in, c->h, ICACHE_BATCH);
			c->refs += ICACHE_BATCH;
		}
		c->refs--;
		return c->h;
	}
	r = letw_intern_get_hashed(in, a, s1, l1, s2, l2, hash);
	if (r <= 0)
		return r;
	/* Evict the last way: its references go back (the last one
	 * unlinks and retires the context, lock-free). */
	c = &set[ICACHE_WAYS - 1];
	if (c->h)
		letw_intern_put_n(in, c->h, c->refs);
	for (unsigned w = ICACHE_WAYS - 1; w > 0; w--)
		set[w] = set[w - 1];
	/* We hold r's reference (the slot's, not yet released): the count
	 * is not 0, a plain add is safe. */
	letw_intern_ref(in, (uint32_t)r, ICACHE_BATCH);
	c = &set[0];
	c->hash = hash;
	c->a = a;
	c->h = (uint32_t)r;
	c->refs = ICACHE_BATCH;
	c->l1 = (uint16_t)l1;
	c->l2 = (uint16_t)l2;
	if (l1) /* s1, s2 may be NULL when empty */
		memcpy(c->key, s1, l1);
	if (l2)
		memcpy(c->key + l1, s2, l2);
	return r;
}

/*
 * Thread exit: put back what the cache holds in the live table, if it is
 * still the one the entries belong to. Inside a read-side section, like a
 * publish: letw_shutdown unpublishes the table and waits for a grace
 * period before destroying it, so the table seen here stays valid until
 * the unlock. (If urcu-bp already unregistered this thread, its read lock
 * registers it again: thread exit, not a publish path.)
 */
static void thread_exit(void *unused)
{
	struct letw_table *t;

	(void)unused;
	if (!cache.serial)
		return;
	urcu_bp_read_lock();
	t = rcu_dereference(letw_g.table);
	for (unsigned i = 0; i < ICACHE_SETS; i++)
		for (unsigned w = 0; w < ICACHE_WAYS; w++) {
			struct icache_ent *c = &cache.set[i][w];

			if (t && cache.serial == t->intern.serial && c->h)
				letw_intern_put_n(&t->intern, c->h, c->refs);
			c->h = 0;
		}
	cache.serial = 0;
	urcu_bp_read_unlock();
}

static pthread_key_t exit_key;
static int exit_key_err;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void make_key(void)
{
	exit_key_err = pthread_key_create(&exit_key, thread_exit);
}

int letw_icache_thread_init(void)
{
	pthread_once(&exit_once, make_key);
	if (exit_key_err)
		return -exit_key_err;
	/* Any non-NULL value: the destructor runs only for those. */
	return -pthread_setspecific(exit_key, (void *)&cache);
}
