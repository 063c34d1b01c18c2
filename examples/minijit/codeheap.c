/* SPDX-License-Identifier: MIT */
#include "codeheap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CODE_ALIGN 16u
#define INT3 0xCC

struct code_chunk {
	uint8_t *base;
	size_t used;
	unsigned live;  /* allocations not yet freed */
	int sealed;
	struct code_chunk *next;       /* heap->all */
	struct code_chunk *prev;
	struct code_chunk *batch_next; /* batch->open, or heap->free */
};

int codeheap_init(struct codeheap *h, size_t chunk_size, unsigned max_free_chunks)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(h, 0, sizeof(*h));
	if (page <= 0 || chunk_size == 0 || chunk_size % (size_t)page)
		return -EINVAL;
	h->chunk_size = chunk_size;
	h->max_free = max_free_chunks;
	return -pthread_mutex_init(&h->lock, NULL);
}

void codeheap_destroy(struct codeheap *h)
{
	struct code_chunk *c = h->all, *n;

	for (; c; c = n) {
		n = c->next;
		munmap(c->base, h->chunk_size);
		free(c);
	}
	pthread_mutex_destroy(&h->lock);
	memset(h, 0, sizeof(*h));
}

static void link_all(struct codeheap *h, struct code_chunk *c)
{
	c->prev = NULL;
	c->next = h->all;
	if (h->all)
		h->all->prev = c;
	h->all = c;
}

static void unlink_all(struct codeheap *h, struct code_chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		h->all = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

/* Called with the heap lock held. */
static struct code_chunk *chunk_get(struct codeheap *h)
{
	struct code_chunk *c = h->free;

	if (c) {
		/* Empty since its last allocation was freed: nobody can be
		 * executing it, so it may turn writable again. */
		if (mprotect(c->base, h->chunk_size, PROT_READ | PROT_WRITE))
			return NULL;
		h->free = c->batch_next;
		h->nfree--;
		h->reused++;
	} else {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->base = mmap(NULL, h->chunk_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c->base == MAP_FAILED) {
			free(c);
			return NULL;
		}
		link_all(h, c);
		h->mapped++;
	}
	memset(c->base, INT3, h->chunk_size);
	c->used = 0;
	c->live = 0;
	c->sealed = 0;
	c->batch_next = NULL;
	return c;
}

/* Called with the heap lock held, once c holds no live code. */
static void chunk_release(struct codeheap *h, struct code_chunk *c)
{
	if (h->nfree < h->max_free &&
	    mprotect(c->base, h->chunk_size, PROT_NONE) == 0) {
		c->batch_next = h->free;
		h->free = c;
		h->nfree++;
		return;
	}
	unlink_all(h, c);
	munmap(c->base, h->chunk_size);
	free(c);
	h->unmapped++;
}

void codeheap_batch_begin(struct codeheap *h, struct code_batch *b)
{
	b->heap = h;
	b->open = NULL;
}

int codeheap_batch_put(struct code_batch *b, const void *code, size_t len,
		       struct code_alloc *out)
{
	struct codeheap *h = b->heap;
	struct code_chunk *c = b->open;
	size_t off;

	if (len == 0 || len > h->chunk_size)
		return -EINVAL;
	pthread_mutex_lock(&h->lock);
	off = c ? (c->used + CODE_ALIGN - 1) & ~(size_t)(CODE_ALIGN - 1) : 0;
	if (!c || off + len > h->chunk_size) {
		c = chunk_get(h);
		if (!c) {
			pthread_mutex_unlock(&h->lock);
			return -ENOMEM;
		}
		c->batch_next = b->open;
		b->open = c;
		off = 0;
	}
	memcpy(c->base + off, code, len);
	c->used = off + len;
	c->live++;
	pthread_mutex_unlock(&h->lock);
	out->addr = c->base + off;
	out->size = len;
	out->chunk = c;
	return 0;
}

int codeheap_batch_seal(struct code_batch *b)
{
	struct codeheap *h = b->heap;
	int ret = 0;

	pthread_mutex_lock(&h->lock);
	for (struct code_chunk *c = b->open; c; c = c->batch_next) {
		if (mprotect(c->base, h->chunk_size, PROT_READ | PROT_EXEC) && !ret)
			ret = -errno;
		c->sealed = 1;
	}
	/* Sealed chunks are never written again; the batch lets go of them.
	 * A chunk whose code was all freed before the seal goes back now. */
	for (struct code_chunk *c = b->open, *n; c; c = n) {
		n = c->batch_next;
		c->batch_next = NULL;
		if (c->live == 0)
			chunk_release(h, c);
	}
	b->open = NULL;
	pthread_mutex_unlock(&h->lock);
	return ret;
}

void codeheap_free(struct codeheap *h, const struct code_alloc *a)
{
	struct code_chunk *c = a->chunk;

	pthread_mutex_lock(&h->lock);
	if (c->live > 0 && --c->live == 0 && c->sealed)
		chunk_release(h, c);
	pthread_mutex_unlock(&h->lock);
}

void codeheap_trim(struct codeheap *h)
{
	pthread_mutex_lock(&h->lock);
	for (struct code_chunk *c = h->free, *n; c; c = n) {
		n = c->batch_next;
		unlink_all(h, c);
		munmap(c->base, h->chunk_size);
		free(c);
		h->unmapped++;
	}
	h->free = NULL;
	h->nfree = 0;
	pthread_mutex_unlock(&h->lock);
}
