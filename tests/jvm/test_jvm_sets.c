/* SPDX-License-Identifier: MIT */
/* The JVMTI agent's pure parts, second half: the scratch pool, stub kinds,
 * the stale-stub set against the real library, the replay set. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replayset.h"
#include "scratch.h"
#include "stats.h"
#include "stubs.h"
#include "stubset.h"

/* ---- scratch pool (each Criterion test runs in a fresh process) ---- */

Test(scratch, no_pool_before_init_is_not_counted_as_busy)
{
	cr_expect_null(jvm_scratch_get());
	cr_expect_eq(jvm_stat_get(JVM_ST_LINES_NO_SCRATCH), 0);
}

Test(scratch, claim_release_and_exhaustion)
{
	struct jvm_scratch *b[JVM_SCRATCH_BLOCKS], *again;
	char buf[900];
	unsigned int i, j;

	cr_assert_eq(jvm_scratch_init(), 0);
	for (i = 0; i < JVM_SCRATCH_BLOCKS; i++) {
		b[i] = jvm_scratch_get();
		cr_assert_not_null(b[i], "block %u", i);
		for (j = 0; j < i; j++)
			cr_assert_neq(b[i], b[j], "block %u handed out twice", i);
	}
	/* Every block busy: none, and counted (the caller then publishes
	 * the method without its line table). */
	cr_expect_null(jvm_scratch_get());
	cr_expect_null(jvm_scratch_get());
	cr_expect_eq(jvm_stat_get(JVM_ST_LINES_NO_SCRATCH), 2);
	jvm_stats_format(buf, sizeof(buf));
	cr_expect(strstr(buf, " lines_no_scratch=2 ") != NULL, "%s", buf);
	/* A released block is the one handed out next; a second init keeps
	 * the pool (a later jcmd after a refused load). */
	jvm_scratch_put(b[2]);
	cr_assert_eq(jvm_scratch_init(), 0);
	again = jvm_scratch_get();
	cr_expect_eq(again, b[2]);
	cr_expect_null(jvm_scratch_get());
	for (i = 0; i < JVM_SCRATCH_BLOCKS; i++)
		jvm_scratch_put(b[i]);
	for (i = 0; i < JVM_SCRATCH_BLOCKS; i++)
		cr_expect_not_null(jvm_scratch_get());
	cr_expect_eq(jvm_stat_get(JVM_ST_LINES_NO_SCRATCH), 3);
}

#define POOL_THREADS 8
#define POOL_ROUNDS 5000

static struct jvm_scratch *blocks_seen[JVM_SCRATCH_BLOCKS];
static atomic_int holders[JVM_SCRATCH_BLOCKS];
static atomic_int shared_twice, got;

static void *pool_worker(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	int i;

	for (i = 0; i < POOL_ROUNDS; i++) {
		struct jvm_scratch *s = jvm_scratch_get();
		unsigned int k;

		if (!s)
			continue;
		atomic_fetch_add(&got, 1);
		for (k = 0; k < JVM_SCRATCH_BLOCKS && s != blocks_seen[k]; k++)
			;
		if (k == JVM_SCRATCH_BLOCKS || atomic_fetch_add(&holders[k], 1) != 0) {
			atomic_fetch_add(&shared_twice, 1);
			jvm_scratch_put(s);
			continue;
		}
		/* A plain write read back: another holder would overwrite it. */
		s->mc_used = me;
		sched_yield();
		if (s->mc_used != me)
			atomic_fetch_add(&shared_twice, 1);
		atomic_fetch_sub(&holders[k], 1);
		jvm_scratch_put(s);
	}
	return NULL;
}

Test(scratch, never_two_holders_under_contention)
{
	pthread_t t[POOL_THREADS];
	unsigned int i;

	cr_assert_eq(jvm_scratch_init(), 0);
	for (i = 0; i < JVM_SCRATCH_BLOCKS; i++)
		blocks_seen[i] = jvm_scratch_get();
	for (i = 0; i < JVM_SCRATCH_BLOCKS; i++)
		jvm_scratch_put(blocks_seen[i]);
	for (i = 0; i < POOL_THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, pool_worker, (void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < POOL_THREADS; i++)
		pthread_join(t[i], NULL);
	cr_expect_eq(atomic_load(&shared_twice), 0);
	cr_expect_gt(atomic_load(&got), 0);
	/* Every claim was released: the whole pool is free again. */
	for (i = 0; i < JVM_SCRATCH_BLOCKS; i++)
		cr_expect_not_null(jvm_scratch_get());
}

/* ---- stub kinds ---- */

Test(stubs, hotspot_names_to_kinds)
{
	cr_expect_eq(jvm_stub_kind("Interpreter"), LETW_STUB_BLOCK);
	cr_expect_eq(jvm_stub_kind("StubRoutines (1)"), LETW_STUB_BLOCK);
	cr_expect_eq(jvm_stub_kind("vtable stub"), LETW_STUB_DISPATCH);
	cr_expect_eq(jvm_stub_kind("itable stub"), LETW_STUB_DISPATCH);
	cr_expect_eq(jvm_stub_kind("resolve_virtual_call"), LETW_STUB_RESOLVE);
	cr_expect_eq(jvm_stub_kind("wrong_method_stub"), LETW_STUB_RESOLVE);
	cr_expect_eq(jvm_stub_kind("I2C/C2I adapters"), LETW_STUB_THUNK);
	cr_expect_eq(jvm_stub_kind("new_instance Runtime1 stub"), LETW_STUB_THUNK);
	cr_expect_eq(jvm_stub_kind(NULL), LETW_STUB_UNKNOWN);
}

/* ---- stale stubs (stubset.h), against the real library ---- */

static void stubset_setup(void)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.flags = LETW_CONFIG_NO_CONTROL_SOCKET,
	};

	/* The table without tracing: publishing is what is tested. */
	setenv("LETW_DISABLE", "1", 1);
	cr_assert_eq(letw_init(&cfg), 0);
}

static void stubset_teardown(void)
{
	jvm_stubset_reset();
	letw_shutdown();
}

TestSuite(stubset, .init = stubset_setup, .fini = stubset_teardown, .timeout = 30);

static int stub_at(uint64_t start, uint32_t size, const char *name)
{
	struct letw_stub st = { .start = start, .size = size, .kind = LETW_STUB_BLOCK,
				.name = name };

	return jvm_stubset_publish(&st);
}

static struct letw_method method_at(uint64_t start, uint32_t size)
{
	return (struct letw_method){ .method_id = start, .code_start = start, .code_size = size,
				     .method_flags = LETW_METHOD_JITTED, .version_id = 1,
				     .method_namespace = "p.C", .name = "m", .signature = "()V" };
}

Test(stubset, a_method_over_stale_stubs_unpublishes_them_and_only_them)
{
	struct letw_method m = method_at(0x10800, 0x1000);
	unsigned stale = 99;

	/* Three stubs inside the method's range, one ending where it starts
	 * and one starting where it ends. */
	cr_assert_eq(stub_at(0x10000, 0x800, "before"), 0);
	cr_assert_eq(stub_at(0x10400, 0x800, "x"), -EEXIST, "overlapping stubs are refused");
	cr_assert_eq(stub_at(0x10800, 0x100, "at its start"), 0);
	cr_assert_eq(stub_at(0x10a00, 0x200, "freed blob"), 0);
	cr_assert_eq(stub_at(0x11700, 0x100, "at its end"), 0);
	cr_assert_eq(stub_at(0x11800, 0x100, "after"), 0);
	cr_assert_eq(jvm_stubset_count(), 5, "a refused stub is not remembered");
	cr_assert_eq(letw_method_publish(&m), -EEXIST, "the library refuses the method alone");

	cr_assert_eq(jvm_stubset_publish_method(&m, NULL, &stale), 0);
	cr_expect_eq(stale, 3);
	cr_expect_eq(jvm_stubset_count(), 2);
	cr_expect_eq(letw_stub_unpublish(0x10800), -ENOENT);
	cr_expect_eq(letw_stub_unpublish(0x10a00), -ENOENT);
	cr_expect_eq(letw_stub_unpublish(0x11700), -ENOENT);
	cr_expect_eq(letw_stub_unpublish(0x10000), 0, "the stub before is kept");
	cr_expect_eq(letw_stub_unpublish(0x11800), 0, "the stub after is kept");
	cr_expect_eq(letw_method_unpublish(0x10800), 0, "the method is live");
}

Test(stubset, stubs_straddling_either_end)
{
	struct letw_method m = method_at(0x30080, 0xf00);
	unsigned stale = 0;

	cr_assert_eq(stub_at(0x30000, 0x100, "over its start"), 0);
	cr_assert_eq(stub_at(0x30f00, 0x200, "over its end"), 0);
	cr_assert_eq(jvm_stubset_publish_method(&m, NULL, &stale), 0);
	cr_expect_eq(stale, 2);
	cr_expect_eq(jvm_stubset_count(), 0);
}

Test(stubset, a_method_over_a_live_method_is_still_refused)
{
	struct letw_method a = method_at(0x20000, 0x1000), b = method_at(0x20800, 0x1000);
	unsigned stale = 99;

	cr_assert_eq(stub_at(0x21400, 0x100, "beside a, under b"), 0);
	cr_assert_eq(jvm_stubset_publish_method(&a, NULL, &stale), 0);
	cr_expect_eq(stale, 0);
	/* b overlaps method a: the stub under b's end goes (it is stale
	 * whatever else b overlaps), and b is still refused because of a. */
	cr_expect_eq(jvm_stubset_publish_method(&b, NULL, &stale), -EEXIST);
	cr_expect_eq(stale, 1);
	cr_expect_eq(letw_method_unpublish(0x20000), 0, "a is untouched");
	cr_expect_eq(letw_method_unpublish(0x20800), -ENOENT);
}

Test(stubset, many_stale_stubs_under_one_method)
{
	struct letw_method m = method_at(0x40000, 0x10000);
	unsigned stale = 0;

	/* More than one take's worth (16): the publish keeps going. */
	for (unsigned i = 0; i < 40; i++)
		cr_assert_eq(stub_at(0x40000 + i * 0x400, 0x100, "blob"), 0);
	cr_assert_eq(jvm_stubset_publish_method(&m, NULL, &stale), 0);
	cr_expect_eq(stale, 40);
	cr_expect_eq(jvm_stubset_count(), 0);
}

Test(stubset, stubs_in_any_order_stay_sorted)
{
	/* Published high to low, then a method over the middle two. */
	for (int i = 9; i >= 0; i--)
		cr_assert_eq(stub_at(0x50000 + (uint64_t)i * 0x1000, 0x100, "s"), 0);
	struct letw_method m = method_at(0x54000, 0x1100);
	unsigned stale = 0;

	cr_assert_eq(jvm_stubset_publish_method(&m, NULL, &stale), 0);
	cr_expect_eq(stale, 2);
	cr_expect_eq(letw_stub_unpublish(0x53000), 0);
	cr_expect_eq(letw_stub_unpublish(0x54000), -ENOENT);
	cr_expect_eq(letw_stub_unpublish(0x55000), -ENOENT);
	cr_expect_eq(letw_stub_unpublish(0x56000), 0);
}

/* ---- replay set (replayset.h) ---- */

static atomic_int replay_writer_done;

static void *replay_writer(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < 200000; i++)
		jvm_replayset_add(0x7f0000000000ull + i * 64, i + 1);
	atomic_store(&replay_writer_done, 1);
	return NULL;
}

/* A method the replay published is recognised by any thread (the queue's
 * copy refused second was counted as an overlap); another method at the
 * same start, or the same method elsewhere, is not; what a reader sees is
 * always a prefix of what the writer appended (release/acquire). */
Test(replayset, lookups_while_the_replay_appends)
{
	pthread_t w;
	uint64_t seen = 0, checks = 0, after = 0;

	cr_assert_eq(jvm_replayset_init(), 0);
	jvm_replayset_reset();
	cr_expect(!jvm_replayset_has(0x7f0000000000ull, 1));
	atomic_store(&replay_writer_done, 0);
	cr_assert_eq(pthread_create(&w, NULL, replay_writer, NULL), 0);
	/* 1000 lookups after the writer is done, whatever happened before:
	 * with the writer descheduled (a loaded machine) every earlier one
	 * can come while the set is nearly empty, and `seen` stayed 0. */
	while (after < 1000) {
		int done = atomic_load(&replay_writer_done);
		uint64_t j = (checks * 7919) % 200000;

		if (jvm_replayset_has(0x7f0000000000ull + j * 64, j + 1)) {
			seen++;
			if (j)
				cr_assert(jvm_replayset_has(0x7f0000000000ull + (j - 1) * 64, j),
					  "entry %llu seen before entry %llu", (unsigned long long)j,
					  (unsigned long long)j - 1);
		}
		cr_assert(!jvm_replayset_has(0x7f0000000000ull + j * 64, j + 2));
		checks++;
		after += done;
	}
	pthread_join(w, NULL);
	cr_expect(jvm_replayset_has(0x7f0000000000ull + 199999 * 64, 200000));
	cr_expect(!jvm_replayset_has(0x7f0000000000ull + 200000 * 64, 200001));
	cr_expect_gt(seen, 0);
	jvm_replayset_reset();
	cr_expect(!jvm_replayset_has(0x7f0000000000ull, 1));
}
