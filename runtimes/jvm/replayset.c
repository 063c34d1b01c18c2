/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

#include "replayset.h"

struct entry {
	uint64_t start, method;
};

static struct entry *set;
static atomic_size_t count;

int jvm_replayset_init(void)
{
	void *p;

	if (set)
		return 0;
	/* 16 MiB of address space; pages are touched (and so committed)
	 * only as entries are written, ~16 B per replayed method. */
	p = mmap(NULL, (size_t)JVM_REPLAYSET_CAP * sizeof(struct entry), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	set = p;
	return 0;
}

void jvm_replayset_add(uint64_t code_start, uint64_t method_id)
{
	size_t n = atomic_load_explicit(&count, memory_order_relaxed); /* one writer */

	if (!set || n >= JVM_REPLAYSET_CAP)
		return;
	set[n].start = code_start;
	set[n].method = method_id;
	/* Release: a reader that sees the new count sees the entry. */
	atomic_store_explicit(&count, n + 1, memory_order_release);
}

int jvm_replayset_has(uint64_t code_start, uint64_t method_id)
{
	size_t n = atomic_load_explicit(&count, memory_order_acquire);

	for (size_t i = 0; set && i < n; i++)
		if (set[i].start == code_start && set[i].method == method_id)
			return 1;
	return 0;
}

void jvm_replayset_reset(void)
{
	atomic_store_explicit(&count, 0, memory_order_relaxed);
}
