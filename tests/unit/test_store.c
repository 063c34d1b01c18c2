/* SPDX-License-Identifier: MIT */
/*
 * The record store's chunk classes (provider/store.h), white-box: once the
 * chunk region is spent, free chunks of larger classes move to the
 * classes left without any (letw_store_rebalance). Before, a freed chunk
 * went back to its own class only: after a burst of very large line
 * tables, freed, every other class got -ENOMEM for good with almost
 * nothing live.
 */
#include <criterion/criterion.h>

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
