/* SPDX-License-Identifier: MIT */
/*
 * Interned contexts: what repeats across records is stored once,
 * reference-counted, and named by a 32-bit store handle from a slot's
 * `ctx` field. A method's context is (module_id, namespace, signature);
 * a stub's or a module's is (0, name, "").
 *
 * Lookups and inserts are lock-free (cds_lfht, add_unique). A reference is
 * taken only while the count is non-zero, so an entry whose count reached
 * zero is never revived: its last holder unlinks it and retires it, and
 * it is reused after a grace period (reclaim.c). A slot's reference is
 * put on the reclaim path, after the grace period of the slot that held
 * it. A publishing thread's cache (icache.c) also holds references, in
 * batches, so that a repeated context costs neither a lookup nor an
 * atomic; it puts them when it evicts the entry or the thread exits.
 */
#ifndef LETW_INTERN_H
#define LETW_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include <urcu/rculfhash.h>
#include <urcu/lfstack.h>

struct letw_store;
struct letw_reclaim;

struct letw_ictx {
	struct cds_lfht_node node;   /* intern table, key: hash of (a, bytes) */
	struct cds_lfs_node retire;  /* once unlinked, or never linked */
	uint32_t refs;
	uint32_t len;                /* bytes of `bytes`, both NULs included */
	uint64_t a;
	char bytes[];                /* s1 '\0' s2 '\0' */
};

struct letw_intern {
	struct cds_lfht *ht;
	struct letw_store *st;
	struct letw_reclaim *rc;
	long live; /* entries linked (uatomic) */
	uint64_t serial; /* unique per table ever made: keys threads' caches (icache.c) */
	unsigned long size; /* control thread: the table size last asked for */
};

int letw_intern_init(struct letw_intern *in, struct letw_store *st,
		     struct letw_reclaim *rc);
/* No reader may remain; every entry must have been put. */
void letw_intern_fini(struct letw_intern *in);

/* A reference to the context (a, s1, s2): its handle (> 0), 0 for the
 * empty context (0, "", ""), or -ENOMEM. Lengths exclude the NUL; h1, h2
 * are the strings' hashes from record.c letw_scan_string (0 for NULL).
 * Caller inside a read-side section. */
long letw_intern_get(struct letw_intern *in, uint64_t a, const char *s1,
		     size_t l1, uint64_t h1, const char *s2, size_t l2, uint64_t h2);
/* The same with the key's hash from letw_intern_hash, for a non-empty
 * context. */
long letw_intern_get_hashed(struct letw_intern *in, uint64_t a, const char *s1,
			    size_t l1, const char *s2, size_t l2, unsigned long hash);
unsigned long letw_intern_hash(uint64_t a, size_t l1, uint64_t h1, size_t l2, uint64_t h2);
/* Is handle h (held by the caller) the context (a, s1, s2)? */
int letw_intern_is(const struct letw_intern *in, uint32_t h, uint64_t a,
		   const char *s1, size_t l1, const char *s2, size_t l2);
/* n more references on h, of which the caller already holds one. */
void letw_intern_ref(struct letw_intern *in, uint32_t h, uint32_t n);
/* Drop a reference (h may be 0). Reclaim path, inside a read-side
 * section; put_n also from a thread's cache (icache.c), inside one. */
void letw_intern_put(struct letw_intern *in, uint32_t h);
void letw_intern_put_n(struct letw_intern *in, uint32_t h, uint32_t n);

size_t letw_ictx_size(uint32_t len);

/* Control thread: resize the table as it grows (see table.c). */
void letw_intern_maintain(struct letw_intern *in);

#endif
