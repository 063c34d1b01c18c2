/* SPDX-License-Identifier: MIT */
/*
 * A publishing thread's cache of the contexts it interned last (intern.h):
 * a repeated (module, namespace, signature) — the common case of a JIT
 * compiling one class after another — is found by comparing bytes in a
 * thread-local array instead of a lookup in the intern table, and its
 * reference comes from a batch the cache took earlier, not from a cmpxchg
 * on the entry's shared count.
 */
#ifndef LETW_ICACHE_H
#define LETW_ICACHE_H

#include <stddef.h>
#include <stdint.h>

struct letw_intern;

/* letw_intern_get through the calling thread's cache: a reference to the
 * context, its handle (0 for the empty context) or -ENOMEM. h1, h2: the
 * strings' hashes (record.c letw_scan_string). Caller inside a read-side
 * section. */
long letw_icache_get(struct letw_intern *in, uint64_t a, const char *s1, size_t l1,
		     uint64_t h1, const char *s2, size_t l2, uint64_t h2);

/* A thread's first publish call (api.c thread_init): arrange for the
 * cache's references to be put back when the thread exits. 0 or -errno
 * (then they are only put back when the table is destroyed). */
int letw_icache_thread_init(void);

#endif
