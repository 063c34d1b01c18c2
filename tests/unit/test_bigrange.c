/* SPDX-License-Identifier: MIT */
/*
 * Big records (more than 64 pages) against small ones, through the public
 * API. A big publish checks the small records by a scan of the store that
 * skips each slot chunk whose address summary misses its range
 * (provider/store.h, overlap.c letw_overlaps_any): these tests fail if a
 * small publish does not widen its chunk's summary, or widens it too late
 * for the Dekker pair with a racing big publish (table.c
 * letw_table_insert).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>

#include "table_fixture.h"

#define PAGE 4096ull
#define BIG_SIZE (256u * 4096u) /* 256 pages: over the 64 of a small record */
/* A big range starts this far before the small record it must meet, so
 * that the small one is not on the big one's first page: that page's
 * table node would find it whatever the summaries say. */
#define BIG_LEAD (16 * PAGE)


static struct letw_method method_at(uint64_t start, uint32_t size, const char *name)
{
	return (struct letw_method){
		.method_id = start,
		.code_start = start,
		.code_size = size,
		.name = name,
	};
}

static struct letw_stub big_at(uint64_t start)
{
	return (struct letw_stub){
		.start = start, .size = BIG_SIZE, .kind = LETW_STUB_BLOCK, .name = "heap",
	};
}

TestSuite(bigrange, .init = letw_test_table_setup, .fini = letw_test_table_teardown);

/*
 * Small records filling several slot chunks (16384 slots each), with a
 * "far" record every FAR_EVERY publishes at an address of its own: which
 * slot, hence which chunk, a publish gets is the store's business, so
 * far records are spread over the fill and most land past the first
 * chunk. Each must be found by a big publish over it; big ranges that
 * meet no record are accepted, whether or not they meet a chunk's range.
 */
#define LOW_BASE 0x200000000000ull
#define FAR_BASE 0x300000000000ull
#define FAR_STRIDE (16ull << 20) /* 16 MiB: a big range meets one far record */
#define FILL (3u * 16384u + 4096u)
#define FAR_EVERY 4096u

Test(bigrange, far_chunks_are_scanned_and_missed_ranges_skipped)
{
	struct letw_store_stats ss = { .size = sizeof(ss) };
	unsigned nfar = 0;

	for (unsigned i = 0; i < FILL; i++) {
		struct letw_method m = method_at(LOW_BASE + (uint64_t)i * 0x100, 0x80, "low");

		cr_assert_eq(letw_method_publish(&m), 0, "low %u", i);
		if (i % FAR_EVERY == FAR_EVERY - 1) {
			m = method_at(FAR_BASE + nfar * FAR_STRIDE, 0x40, "far");
			cr_assert_eq(letw_method_publish(&m), 0, "far %u", nfar);
			nfar++;
		}
	}
	cr_assert_eq(letw_get_store_stats(&ss), 0);
	cr_assert_geq(ss.slots_committed, 4 * 16384ull, "%llu slots: not several chunks",
		      (unsigned long long)ss.slots_committed);

	for (unsigned k = 0; k < nfar; k++) {
		struct letw_stub over = big_at(FAR_BASE + k * FAR_STRIDE - BIG_LEAD);
		/* Between two far records: inside some chunk's range, on no
		 * record, so the scan visits that chunk and finds nothing. */
		struct letw_stub gap = big_at(FAR_BASE + k * FAR_STRIDE + (4ull << 20));

		cr_assert_eq(letw_stub_publish(&over), -EEXIST, "far record %u not found", k);
		cr_assert_eq(letw_stub_publish(&gap), 0, "gap after far record %u", k);
		cr_assert_eq(letw_stub_unpublish(gap.start), 0);
	}
	/* Above and below everything: every chunk's range misses these. */
	{
		struct letw_stub above = big_at(FAR_BASE + (1ull << 40));
		struct letw_stub below = big_at(LOW_BASE - (1ull << 30));

		cr_assert_eq(letw_stub_publish(&above), 0);
		cr_assert_eq(letw_stub_publish(&below), 0);
		cr_assert_eq(letw_stub_unpublish(above.start), 0);
		cr_assert_eq(letw_stub_unpublish(below.start), 0);
	}
	/* And a low record in the middle of the fill, for completeness. */
	{
		struct letw_stub mid = big_at(LOW_BASE + (uint64_t)(FILL / 2) * 0x100 - BIG_LEAD);

		cr_assert_eq(letw_stub_publish(&mid), -EEXIST);
	}
}

/*
 * A small publish racing a big publish over it, each round at a fresh
 * address above every earlier one, so the small publisher must widen its
 * chunk's summary each round and the big publisher's scan depends on
 * seeing that widen. The API's promise: never both succeed (both may
 * fail).
 */
#define ROUNDS 3000u
#define RACE_BASE 0x500000000000ull
#define RACE_STRIDE (2ull << 20)

/*
 * A spinning two-party barrier: the racers leave it within a few hundred
 * nanoseconds of each other, which a futex wake would not give, nor a
 * spin that yields early: with a sched_yield after 1000 plain spins, the
 * thread that had waited always left ~2 us late and the publishes never
 * met. It yields after ~5000 pauses (~150 us here) all the same: when the
 * two shared cores are busy elsewhere the racers may share one, and the
 * spinner then holds up the thread it waits for.
 */
static unsigned arrived, generation;

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("pause");
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static void meet(void)
{
	unsigned gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL) == 2) {
		__atomic_store_n(&arrived, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&generation, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	for (unsigned spins = 0; __atomic_load_n(&generation, __ATOMIC_ACQUIRE) == gen; spins++) {
		relax();
		if (spins > 5000)
			sched_yield();
	}
}

static int big_ret[ROUNDS];

/*
 * Put the calling thread on the nth CPU it may run on, if there are two:
 * left to the scheduler on a busy two-core machine, the racers mostly
 * shared one core and took turns, ~150 us apart (a spinner's time before
 * it yields), so no two publishes met. Best effort.
 */
static void pin(int nth)
{
	cpu_set_t allowed, one;
	int seen = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) || CPU_COUNT(&allowed) < 2)
		return;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed) || seen++ != nth)
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		(void)sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

/*
 * A publish lasts a few hundred nanoseconds up to its barrier: left to
 * themselves, the two would mostly run in one order. So one side waits
 * after meeting, by an offset that sweeps from "big 750 ns ahead" to
 * "small 750 ns ahead" in 25 ns steps over the rounds, and each step
 * lands the two barriers on each other in some rounds.
 */
#define SWEEP 61

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void delay(unsigned r, int small_side)
{
	int d = (int)(r % SWEEP) - SWEEP / 2;
	uint64_t until;

	if (small_side ? d <= 0 : d >= 0)
		return;
	until = now_ns() + 25u * (unsigned)(d < 0 ? -d : d);
	while (now_ns() < until)
		relax();
}

static uint64_t small_start(unsigned r)
{
	return RACE_BASE + r * RACE_STRIDE;
}

/* The big publisher; results are checked on the test's thread (Criterion
 * asserts belong there). */
static void *big_racer(void *arg)
{
	(void)arg;
	pin(1);
	for (unsigned r = 0; r < ROUNDS; r++) {
		struct letw_stub b = big_at(small_start(r) - BIG_LEAD);

		meet();
		delay(r, 0);
		big_ret[r] = letw_stub_publish(&b);
		meet(); /* the small publisher checks and cleans up */
		meet();
	}
	return NULL;
}

Test(bigrange, racing_small_and_big_never_both_succeed, .timeout = 240)
{
	unsigned small_won = 0, big_won = 0, none = 0;
	pthread_t th;

	cr_assert_eq(pthread_create(&th, NULL, big_racer, NULL), 0);
	pin(0); /* this test's own process: Criterion forks one per test */
	for (unsigned r = 0; r < ROUNDS; r++) {
		struct letw_method m = method_at(small_start(r), 0x40, "racer");
		int small_ret;

		meet();
		delay(r, 1);
		small_ret = letw_method_publish(&m);
		meet();
		cr_assert(small_ret == 0 || small_ret == -EEXIST, "round %u: small %d", r,
			  small_ret);
		cr_assert(big_ret[r] == 0 || big_ret[r] == -EEXIST, "round %u: big %d", r,
			  big_ret[r]);
		cr_assert(small_ret != 0 || big_ret[r] != 0,
			  "round %u: both overlapping publishes succeeded", r);
		if (!small_ret) {
			small_won++;
			cr_assert_eq(letw_method_unpublish(m.code_start), 0);
		} else if (!big_ret[r]) {
			big_won++;
			cr_assert_eq(letw_stub_unpublish(small_start(r) - BIG_LEAD), 0);
		} else {
			none++;
		}
		meet();
	}
	pthread_join(th, NULL);
	cr_log_info("%u rounds: small won %u, big won %u, both refused %u", ROUNDS,
		    small_won, big_won, none);
	cr_assert_gt(small_won + big_won, 0, "no round had a winner");
}
