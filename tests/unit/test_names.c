/* SPDX-License-Identifier: MIT */
/*
 * The byte-exact name allocator (provider/names.h), white-box: taking and
 * giving back, the pool running dry (slow path) and the region running
 * out, several takers and givers at once with the control thread's
 * maintenance running, and a name of every length through publish and a
 * rundown pass (the walker must add the NUL the store does not keep).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "names.h"
#include "record.h"
#include "table.h"
#include "walker.h"

static uint64_t in_use(const struct letw_names *nm, uint64_t *slow)
{
	uint64_t committed, used, s;

	letw_names_usage(nm, &committed, &used, &s);
	if (slow)
		*slow = s;
	return used;
}

static void fill(char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (char)('!' + (seed * 7 + i * 13) % 90);
}

static int intact(const struct letw_names *nm, uint32_t h, size_t len, unsigned seed)
{
	char want[LETW_NAMES_MAX];
	size_t got;
	const char *p = letw_names_bytes(nm, h, &got);

	fill(want, len, seed);
	return got == len && !memcmp(p, want, len);
}

Test(names, geometry)
{
	struct letw_names nm;

	cr_assert_eq(letw_names_init(&nm), 0);
	for (uint32_t c = 0; c < LETW_NAMES_NR; c++) {
		const struct letw_names_class *k = &nm.cls[c];
		uint32_t len = c + LETW_NAMES_MIN;

		cr_assert_geq(k->first, sizeof(struct letw_names_blk) + 8 * ((k->n + 63) / 64),
			      "len %u: the bitmap overlaps the names", len);
		cr_assert_leq(k->first + (uint32_t)k->n * len, LETW_NAMES_BLOCK, "len %u", len);
		cr_assert_gt(k->n, 0);
	}
	letw_names_fini(&nm);
}

Test(names, take_and_give_back)
{
	struct letw_names nm;
	char s[LETW_NAMES_MAX];
	uint32_t h, h2;
	size_t len;

	cr_assert_eq(letw_names_init(&nm), 0);
	cr_assert_eq(letw_names_get(&nm, "abc", 3), 0, "too short: the slot's inline case");
	cr_assert_eq(letw_names_get(&nm, s, LETW_NAMES_MAX + 1), 0, "too long: a chunk's");
	h = letw_names_get(&nm, "abcdefghij", 10);
	cr_assert(letw_names_handle_is(h));
	cr_assert_eq(memcmp(letw_names_bytes(&nm, h, &len), "abcdefghij", 10), 0);
	cr_assert_eq(len, 10);
	cr_assert_eq(in_use(&nm, NULL), 10, "exactly the name's bytes, no NUL");
	letw_names_put(&nm, h);
	cr_assert_eq(in_use(&nm, NULL), 0);
	h2 = letw_names_get(&nm, "0123456789", 10);
	cr_assert_eq(h2, h, "the freed name is taken again");
	cr_assert_eq(memcmp(letw_names_bytes(&nm, h2, &len), "0123456789", 10), 0);
	for (size_t l = LETW_NAMES_MIN; l <= LETW_NAMES_MAX; l++) {
		fill(s, l, (unsigned)l);
		h = letw_names_get(&nm, s, l);
		cr_assert(h);
		cr_assert(intact(&nm, h, l, (unsigned)l), "len %zu", l);
	}
	letw_names_fini(&nm);
}

/* The pool at init, then the slow path, then the end of the region. */
Test(names, exhaustion)
{
	struct letw_names nm;
	static uint32_t h[1 << 16];
	size_t n = 0, max;
	uint64_t slow, spare_blocks;
	char s[100];

	cr_assert_eq(letw_names_init(&nm), 0);
	spare_blocks = (uint64_t)nm.nspare;
	max = nm.max;
	nm.max = nm.claimed + 2 * LETW_NAMES_BLOCK; /* two more blocks to commit */
	for (;;) {
		fill(s, sizeof(s), (unsigned)n);
		cr_assert_lt(n, sizeof(h) / sizeof(h[0]));
		if (!(h[n] = letw_names_get(&nm, s, sizeof(s))))
			break;
		n++;
	}
	in_use(&nm, &slow);
	cr_assert_eq(slow, 2, "the pool's blocks, then two commits (a failed one is not counted)");
	cr_assert_eq(n, (spare_blocks + 2) * nm.cls[100 - LETW_NAMES_MIN].n);
	for (size_t i = 0; i < n; i++)
		cr_assert(intact(&nm, h[i], sizeof(s), (unsigned)i), "name %zu", i);
	cr_assert_eq(letw_names_get(&nm, s, 7), 0, "no block left for another length");
	letw_names_put(&nm, h[n / 2]);
	cr_assert_neq(letw_names_get(&nm, s, sizeof(s)), 0, "a name given back is taken");
	in_use(&nm, &slow);
	cr_assert_eq(slow, 2, "a failed commit for length 7, not counted; none since");
	nm.max = max;
	letw_names_fini(&nm);
}

#define THREADS 4
#define HELD 512
#define ROUNDS 40000

static struct letw_names cnm;
static int cstop;

struct held {
	uint32_t h;
	uint16_t len;
	unsigned seed;
};

static struct held kept[THREADS][HELD];

static void *taker(void *arg)
{
	unsigned long t = (unsigned long)arg;
	unsigned r = (unsigned)t * 2654435761u + 1;
	struct held *mine = kept[t];
	char s[LETW_NAMES_MAX];

	for (unsigned i = 0; i < ROUNDS; i++) {
		struct held *e = &mine[i % HELD];
		size_t len;

		r = r * 1103515245u + 12345u;
		len = LETW_NAMES_MIN + (r >> 8) % LETW_NAMES_NR;
		if (e->h) {
			cr_assert(intact(&cnm, e->h, e->len, e->seed),
				  "thread %lu: a name changed under its holder", t);
			letw_names_put(&cnm, e->h); /* no reader: no grace period needed */
		}
		e->seed = (unsigned)t << 24 | i;
		e->len = (uint16_t)len;
		fill(s, len, e->seed);
		e->h = letw_names_get(&cnm, s, len);
		cr_assert(e->h);
	}
	return NULL;
}

static void *maintainer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&cstop, __ATOMIC_RELAXED))
		letw_names_maintain(&cnm);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

Test(names, concurrent_takers_and_givers, .timeout = 120)
{
	pthread_t th[THREADS], mt;
	static uint32_t all[THREADS * HELD];
	uint64_t want = 0;
	size_t n = 0;

	cr_assert_eq(letw_names_init(&cnm), 0);
	pthread_create(&mt, NULL, maintainer, NULL);
	for (unsigned long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, taker, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	__atomic_store_n(&cstop, 1, __ATOMIC_RELAXED);
	pthread_join(mt, NULL);
	for (int t = 0; t < THREADS; t++)
		for (int i = 0; i < HELD; i++) {
			const struct held *e = &kept[t][i];

			cr_assert(intact(&cnm, e->h, e->len, e->seed));
			all[n++] = e->h;
			want += e->len;
		}
	qsort(all, n, sizeof(all[0]), cmp_u32);
	for (size_t i = 1; i < n; i++)
		cr_assert_neq(all[i], all[i - 1], "one name handed out twice");
	cr_assert_eq(in_use(&cnm, NULL), want, "in use: exactly the bytes held");
	for (size_t i = 0; i < n; i++)
		letw_names_put(&cnm, all[i]);
	cr_assert_eq(in_use(&cnm, NULL), 0);
	letw_names_fini(&cnm);
}

/* Publish → rundown: every length, inline, byte-exact and chunked. */
#define LONGEST (LETW_NAMES_MAX + 4)

static char got[LONGEST + 2][LETW_STRING_MAX + 1];

static int cap_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	(void)ctx;
	if (f == LETW_FLAVOUR_DCSTART && m->method_id <= LONGEST + 1)
		snprintf(got[m->method_id], sizeof(got[0]), "%s", m->name);
	return 1;
}

static int cap_stub(void *ctx, enum letw_flavour f, const struct letw_tp_stub *s)
{
	(void)ctx, (void)f, (void)s;
	return 0;
}

static int cap_module(void *ctx, enum letw_flavour f, const struct letw_tp_module *md)
{
	(void)ctx, (void)f, (void)md;
	return 0;
}

static void name_of(char *s, size_t len)
{
	fill(s, len, (unsigned)len);
	s[len] = '\0';
}

Test(names, every_length_through_publish_and_rundown, .timeout = 60)
{
	static char name[LETW_STRING_MAX + 1];
	const struct letw_walk_sink sink = { .module = cap_module, .method = cap_method,
					     .stub = cap_stub };
	struct letw_table *t = letw_table_new(0, 0);
	struct letw_walk_stats st;
	/* ids 1..LONGEST: that many bytes; LONGEST + 1: the longest allowed. */
	size_t lens[LONGEST + 2];

	cr_assert_not_null(t);
	for (size_t id = 1; id <= LONGEST + 1; id++) {
		struct letw_slot *s;
		struct letw_ext *ext;
		struct letw_method m = { .method_id = id, .code_start = 0x100000 * id,
					 .code_size = 0x40, .name = name,
					 .method_namespace = "ns", .signature = "()" };

		lens[id] = id <= LONGEST ? id : LETW_STRING_MAX;
		name_of(name, lens[id]);
		urcu_bp_read_lock();
		cr_assert_eq(letw_rec_method(t, &m, NULL, &s, &ext), 0);
		cr_assert_eq(letw_table_insert(t, s, ext), 0);
		urcu_bp_read_unlock();
	}
	cr_assert_eq(letw_walk(t, 0x1, &sink, &st), 0);
	cr_assert_eq(st.emitted[0], LONGEST + 1);
	for (size_t id = 1; id <= LONGEST + 1; id++) {
		name_of(name, lens[id]);
		cr_assert_str_eq(got[id], name, "a name of %zu bytes", lens[id]);
	}
	/* Unpublished, then freed after the grace period: nothing left. */
	for (size_t id = 1; id <= LONGEST + 1; id++) {
		struct letw_slot *s;

		urcu_bp_read_lock();
		cr_assert_eq(letw_table_remove(t, 0x100000 * id, LETW_SLOT_METHOD, &s), 0);
		letw_table_retire(t, s);
		urcu_bp_read_unlock();
	}
	letw_table_tick(t);
	urcu_bp_barrier();
	cr_assert_eq(in_use(&t->store.names, NULL), 0);
	letw_table_destroy(t);
}
