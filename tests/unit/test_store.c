/* SPDX-License-Identifier: MIT */
/*
 * The record store's chunk classes (provider/store.h), white-box: once the
 * chunk region is spent, free chunks of larger classes move to the
 * classes left without any (letw_store_rebalance). Before, a freed chunk
 * went back to its own class only: after a burst of very large line
 * tables, freed, every other class got -ENOMEM for good with almost
 * nothing live. And (at the end) a commit refused for want of memory
 * burns no part of the region.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <urcu/uatomic.h>

#include "store.h"

static struct letw_store st;

static void setup(void)
{
	cr_assert_eq(letw_store_init(&st, 0, 0), 0);
}

static void teardown(void)
{
	letw_store_fini(&st);
}

TestSuite(store, .init = setup, .fini = teardown, .timeout = 30);

/* Takes every chunk of the class `bytes` falls in; returns how many. */
static unsigned drain(size_t bytes)
{
	unsigned n = 0;

	while (letw_store_chunk_get(&st, bytes))
		n++;
	return n;
}

Test(store, a_spent_region_gives_large_free_chunks_to_starved_classes)
{
	uint32_t big = letw_store_chunk_get(&st, 1u << 20);
	uint32_t h;

	cr_assert_neq(big, 0);
	/* The region spent: nothing more can be committed. */
	st.chunks_max = st.chunks_claimed;
	cr_expect_eq(letw_store_rebalance(&st), 0, "nothing starved yet");
	/* A 1 MiB line table freed (after its grace period: at once here,
	 * one thread); a class of mid-sized strings drained. Classes above
	 * 256 bytes are not stocked at init: its first take commits. */
	letw_store_chunk_put(&st, big, 1u << 20);
	(void)drain(300);
	cr_assert_eq(letw_store_chunk_get(&st, 300), 0, "the class is empty, the region spent");
	cr_assert_geq(letw_store_rebalance(&st), 1);
	h = letw_store_chunk_get(&st, 300);
	cr_expect_neq(h, 0, "the 320-byte class got memory back");
	/* The whole megabyte became 320-byte chunks (less what one more
	 * piece would not fit). */
	cr_expect_geq(drain(300) + 1, (1u << 20) / 320 - 1);
	/* Nothing left to give: the next rebalance moves nothing into it. */
	cr_expect_eq(letw_store_chunk_get(&st, 1u << 20), 0);
}

Test(store, no_move_while_the_region_has_room)
{
	uint32_t big = letw_store_chunk_get(&st, 1u << 20);

	/* A starved class and a free large chunk, but room to commit more:
	 * growing wastes nothing, so nothing moves. */
	letw_store_chunk_put(&st, big, 1u << 20);
	cr_assert_neq(letw_store_chunk_get(&st, 300), 0);
	cr_expect_eq(letw_store_rebalance(&st), 0);
}

/*
 * Out of memory while committing (mprotect refused: strict overcommit
 * short of memory, or the map count), as on the control thread
 * (letw_store_maintain, every wake-up) and a publisher's slow path. A
 * failed commit used to keep its claim: each try burnt a range of the
 * region for good, so seconds of shortage used the region up and, memory
 * back, every publish got -ENOMEM. Here the store's commits are refused
 * by this executable's own mprotect (store.c and names.c, linked in from
 * the internals archive, call it) while `refuse` is set: the slots, the
 * chunk classes and the names must each take their claim back, and once
 * memory is back the whole region must still be there.
 */
static int refuse;

static int in_store(const char *a)
{
	const char *slots = (const char *)st.slots;

	return (a >= slots && a < slots + (size_t)st.slots_max * sizeof(struct letw_slot)) ||
	       (a >= st.chunks && a < st.chunks + st.chunks_max) ||
	       (a >= st.names.base && a < st.names.base + st.names.max);
}

int mprotect(void *addr, size_t len, int prot)
{
	if (refuse && (prot & PROT_WRITE) && st.slots && in_store(addr)) {
		errno = ENOMEM;
		return -1;
	}
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

/* max_records 1: the region is three chunks of slots, one committed at
 * init (store.c: room for unpublished slots beyond the bound). */
static void setup_small(void)
{
	refuse = 0;
	cr_assert_eq(letw_store_init(&st, 0, 1), 0);
	cr_assert_eq(st.slots_max, 3 * LETW_STORE_SLOT_CHUNK);
	cr_assert_eq(st.slots_claimed, LETW_STORE_SLOT_CHUNK);
}

Test(store, a_refused_commit_burns_nothing, .init = setup_small, .fini = teardown)
{
	size_t chunks_claimed, names_claimed;
	uint32_t got = 0;

	/* The committed chunk's slots, then nothing: memory is short. */
	refuse = 1;
	while (letw_store_slot_get(&st))
		got++;
	cr_assert_eq(got, LETW_STORE_SLOT_CHUNK);
	chunks_claimed = st.chunks_claimed;
	names_claimed = st.names.claimed;
	/* Names: make the pool want more than it has (as after a burst). */
	uatomic_add(&st.names.assigned, 100000);
	for (int i = 0; i < 50; i++) {
		cr_assert_null(letw_store_slot_get(&st));
		cr_assert_eq(letw_store_chunk_get(&st, 1u << 20), 0, "an unstocked class");
		letw_store_maintain(&st);
	}
	cr_expect_eq(st.slots_claimed, LETW_STORE_SLOT_CHUNK, "slot chunks burnt: %u claimed",
		     st.slots_claimed);
	cr_expect_eq(st.chunks_claimed, chunks_claimed, "chunk region burnt: %zu bytes",
		     st.chunks_claimed - chunks_claimed);
	cr_expect_eq(st.names.claimed, names_claimed, "name region burnt: %zu bytes",
		     st.names.claimed - names_claimed);

	/* Memory back: every slot of the region can still be had. */
	refuse = 0;
	got = 0;
	while (letw_store_slot_get(&st))
		got++;
	cr_expect_eq(got, st.slots_max - LETW_STORE_SLOT_CHUNK);
	cr_expect_neq(letw_store_chunk_get(&st, 1u << 20), 0);
	letw_store_maintain(&st);
	cr_expect_gt(st.names.claimed, names_claimed, "the names' pool did not grow again");
}
