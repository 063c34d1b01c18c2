/* SPDX-License-Identifier: MIT */
/*
 * Executable memory for the JIT, kept W^X: code is copied into chunks
 * mapped read-write, and a batch's chunks are flipped to read-execute with
 * mprotect() before any of its code is published or called. A sealed
 * chunk is never made writable again while it holds live code (another
 * thread may be executing it); when its last allocation is freed it goes
 * to a small free list for reuse (so addresses get reused, as in a real
 * JIT) or is unmapped.
 *
 * Thread-safety: every function takes the heap mutex; a batch belongs to
 * one thread. Freeing code that a thread may still execute is the
 * caller's problem (the runtime waits for an RCU grace period first).
 */
#ifndef MINIJIT_CODEHEAP_H
#define MINIJIT_CODEHEAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct code_chunk;

struct codeheap {
	pthread_mutex_t lock;
	size_t chunk_size;
	unsigned max_free;
	struct code_chunk *all;   /* every mapped chunk, for destroy */
	struct code_chunk *free;  /* empty, mapped, PROT_NONE */
	unsigned nfree;
	uint64_t mapped, unmapped, reused; /* chunk counters */
};

/* The chunks one builder is filling; sealed all at once. */
struct code_batch {
	struct codeheap *heap;
	struct code_chunk *open; /* singly linked through batch_next */
};

/* A code allocation: where it runs and which chunk owns it. */
struct code_alloc {
	uint8_t *addr;
	size_t size;
	struct code_chunk *chunk;
};

int codeheap_init(struct codeheap *h, size_t chunk_size, unsigned max_free_chunks);
/* Unmaps everything; no code from the heap may run afterwards. */
void codeheap_destroy(struct codeheap *h);

void codeheap_batch_begin(struct codeheap *h, struct code_batch *b);
/* Copies len bytes of code (16-byte aligned, gaps filled with int3).
 * Returns 0 or a negative errno; out is valid once the batch is sealed. */
int codeheap_batch_put(struct code_batch *b, const void *code, size_t len,
		       struct code_alloc *out);
/* Flips every chunk of the batch to read-execute and ends the batch. If it
 * fails, nothing of the batch may be called: the caller frees its
 * allocations. */
int codeheap_batch_seal(struct code_batch *b);

/* Releases one allocation (after no thread can be executing it). */
void codeheap_free(struct codeheap *h, const struct code_alloc *a);

/* Unmaps every chunk of the free list, so that the next chunk released is
 * the next one reused (the --reuse demo relies on it). */
void codeheap_trim(struct codeheap *h);

#endif
