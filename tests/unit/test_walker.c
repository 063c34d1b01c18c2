/* SPDX-License-Identifier: MIT */
/*
 * Walker invariants with concurrent publishers (DESIGN §5), on the real
 * store, table and walker with a capturing sink in place of LTTng:
 *  - a record live for the whole pass is emitted exactly once per flavour;
 *  - no record is emitted twice in one flavour of one pass;
 *  - a record whose unpublish returned before the pass began is never
 *    emitted by it;
 *  - skipped_raced is exact: at least every record published before the
 *    pass's begin whose unpublish began after it and ended before the
 *    pass's last emission without it being emitted, at most every unemitted record whose unpublish
 *    overlapped the pass (operations truly concurrent with the begin can
 *    go either way, nothing else);
 *  - a slot freed and reused in the middle of a pass is recognised: the
 *    old record is counted, the new one is left to its load event.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include "record.h"
#include "table.h"
#include "walker.h"

#define STABLE 3000
#define CHURN_THREADS 3
#define CHURN_IDS (1u << 20)
#define PASSES 60

static struct letw_table *table;
static int stop;

/* A logical clock: every bracket below is a fetch-add on it. */
static unsigned long clk;
static unsigned long tick(void)
{
	return uatomic_add_return(&clk, 1);
}

/* Per churn id: the end of its publish, its unpublish bracket (0: not
 * unpublished). */
static unsigned long pend[CHURN_IDS], ubeg[CHURN_IDS], uend[CHURN_IDS];

struct capture {
	uint64_t *ids[LETW_NR_FLAVOURS];
	size_t n[LETW_NR_FLAVOURS], cap;
	unsigned long t_begin, t_last;
};

static int cap_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	struct capture *c = ctx;

	cr_assert_lt(c->n[f], c->cap);
	c->ids[f][c->n[f]++] = m->method_id;
	c->t_last = tick();
	return 1;
}

static int cap_stub(void *ctx, enum letw_flavour f, const struct letw_tp_stub *s)
{
	return cap_method(ctx, f, &(struct letw_tp_method){ .method_id = s->owner });
}

static int cap_module(void *ctx, enum letw_flavour f, const struct letw_tp_module *md)
{
	return 0;
}

static void cap_begin(void *ctx, uint64_t accounted_from_ns)
{
	((struct capture *)ctx)->t_begin = tick();
}

static int publish(uint64_t id, uint64_t start, uint32_t size)
{
	struct letw_method m = { .method_id = id, .code_start = start,
				 .code_size = size, .name = "fn",
				 .method_namespace = "ns", .signature = "()" };
	struct letw_slot *s;
	struct letw_ext *ext;
	int ret;

	urcu_bp_read_lock();
	ret = letw_rec_method(table, &m, NULL, &s, &ext);
	if (!ret)
		ret = letw_table_insert(table, s, ext);
	urcu_bp_read_unlock();
	return ret;
}

static int unpublish(uint64_t start)
{
	struct letw_slot *s;
	int ret;

	urcu_bp_read_lock();
	ret = letw_table_remove(table, start, LETW_SLOT_METHOD, &s);
	if (!ret)
		letw_table_retire(table, s);
	urcu_bp_read_unlock();
	return ret;
}

/* Churn ids live above STABLE; each thread owns its own address slots. */
static void *churn(void *arg)
{
	unsigned long t = (unsigned long)arg;
	uint64_t next = STABLE + 1 + t;
	uint64_t slot_id[64] = { 0 };
	unsigned int i = 0;

	while (!uatomic_read(&stop) && next < CHURN_IDS) {
		unsigned int s = i++ % 64;
		uint64_t start = 0x10000000ull * (t + 1) + s * 0x200;

		if (slot_id[s]) {
			uint64_t id = slot_id[s];

			uatomic_set(&ubeg[id], tick());
			cr_assert_eq(unpublish(start), 0);
			uatomic_set(&uend[id], tick());
		}
		cr_assert_eq(publish(next, start, 0x100 + (i % 0x100)), 0);
		uatomic_set(&pend[next], tick());
		slot_id[s] = next;
		next += CHURN_THREADS;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int emitted(const struct capture *c, uint64_t id)
{
	return bsearch(&id, c->ids[0], c->n[0], sizeof(uint64_t), cmp_u64) != NULL;
}

Test(walker, invariants_under_concurrent_churn, .timeout = 120)
{
	pthread_t th[CHURN_THREADS];
	struct capture c = { .cap = STABLE + CHURN_THREADS * 64 * 4 };
	const struct letw_walk_sink sink = { .module = cap_module,
					     .method = cap_method,
					     .stub = cap_stub,
					     .begin = cap_begin,
					     .ctx = &c };
	uint64_t total_raced = 0;

	table = letw_table_new(0, 0);
	cr_assert_not_null(table);
	for (uint64_t id = 1; id <= STABLE; id++)
		cr_assert_eq(publish(id, 0x1000ull * id, 0x80 + (id % 0x700)), 0);
	for (int f = 0; f < LETW_NR_FLAVOURS; f++)
		c.ids[f] = malloc(c.cap * sizeof(uint64_t));
	for (unsigned long t = 0; t < CHURN_THREADS; t++)
		pthread_create(&th[t], NULL, churn, (void *)t);

	for (int p = 0; p < PASSES; p++) {
		struct letw_walk_stats st;
		unsigned long t_pre = tick(), t_post, lower = 0, upper = 0;
		struct timespec m0, m1;
		uint64_t mono0, mono1;

		c.n[0] = c.n[1] = 0;
		clock_gettime(CLOCK_MONOTONIC, &m0);
		cr_assert_eq(letw_walk(table, 0x3, &sink, &st), 0);
		clock_gettime(CLOCK_MONOTONIC, &m1);
		t_post = tick();
		mono0 = (uint64_t)m0.tv_sec * 1000000000ull + (uint64_t)m0.tv_nsec;
		mono1 = (uint64_t)m1.tv_sec * 1000000000ull + (uint64_t)m1.tv_nsec;
		/* The longest section's start is a CLOCK_MONOTONIC time within
		 * the walk (bench/ctxsw.py matches it with perf's -k mono). */
		cr_assert(st.max_section_start_ns >= mono0 &&
			  st.max_section_start_ns + st.max_section_ns <= mono1,
			  "pass %d: section [%llu, +%llu] outside the walk [%llu, %llu]", p,
			  (unsigned long long)st.max_section_start_ns,
			  (unsigned long long)st.max_section_ns,
			  (unsigned long long)mono0, (unsigned long long)mono1);
		letw_table_maintain(table); /* what the control thread does */
		total_raced += st.skipped_raced;
		cr_assert_eq(st.emitted[0], c.n[0]);
		cr_assert_eq(st.emitted[1], c.n[1]);
		cr_assert_eq(c.n[0], c.n[1], "both flavours come from one walk");
		for (int f = 0; f < LETW_NR_FLAVOURS; f++) {
			size_t stable_seen = 0;

			qsort(c.ids[f], c.n[f], sizeof(uint64_t), cmp_u64);
			for (size_t i = 0; i < c.n[f]; i++) {
				uint64_t id = c.ids[f][i];
				unsigned long ue;

				if (i > 0)
					cr_assert_neq(id, c.ids[f][i - 1],
						      "pass %d flavour %d: id %llu twice", p, f,
						      (unsigned long long)id);
				if (id <= STABLE) {
					stable_seen++;
					continue;
				}
				ue = uatomic_read(&uend[id]);
				cr_assert(ue == 0 || ue > t_pre,
					  "pass %d: id %llu was unpublished before the pass",
					  p, (unsigned long long)id);
			}
			cr_assert_eq(stable_seen, STABLE, "pass %d flavour %d", p, f);
		}
		for (uint64_t id = STABLE + 1; id < CHURN_IDS; id++) {
			unsigned long b = uatomic_read(&ubeg[id]), e = uatomic_read(&uend[id]);

			if (!b || emitted(&c, id))
				continue;
			/* Published before the begin, unpublish wholly inside
			 * the pass: present, not emitted, so counted. */
			if (uatomic_read(&pend[id]) < c.t_begin && b > c.t_begin &&
			    e && e < c.t_last)
				lower++;
			if ((!e || e > t_pre) && b < t_post)
				upper++;
		}
		cr_assert(lower <= st.skipped_raced && st.skipped_raced <= upper,
			  "pass %d: skipped_raced=%llu, must lie in [%lu, %lu]", p,
			  (unsigned long long)st.skipped_raced, lower, upper);
		cr_assert_leq(st.max_section_ns, st.read_side_ns);
		cr_assert_geq(st.sections, 1);
	}
	uatomic_set(&stop, 1);
	for (int t = 0; t < CHURN_THREADS; t++)
		pthread_join(th[t], NULL);
	cr_log_info("raced skips over %d passes: %llu", PASSES,
		    (unsigned long long)total_raced);
	letw_table_destroy(table);
	free(c.ids[0]);
	free(c.ids[1]);
}

Test(walker, single_flavour_and_empty_table)
{
	struct capture c = { .cap = 16 };
	const struct letw_walk_sink sink = { .module = cap_module,
					     .method = cap_method,
					     .stub = cap_stub,
					     .ctx = &c };
	struct letw_walk_stats st;

	c.ids[0] = calloc(16, sizeof(uint64_t));
	c.ids[1] = calloc(16, sizeof(uint64_t));
	table = letw_table_new(0, 0);
	cr_assert_eq(letw_walk(table, 0x1, &sink, &st), 0);
	cr_assert_eq(st.emitted[0] + st.emitted[1] + st.claimed, 0);
	cr_assert_eq(publish(1, 0x1000, 0x10), 0);
	cr_assert_eq(publish(2, 0x2000, 0x10), 0);
	cr_assert_eq(unpublish(0x2000), 0);
	cr_assert_eq(letw_walk(table, 0x2, &sink, &st), 0);
	cr_assert_eq(st.emitted[0], 0, "DCStart not asked for");
	cr_assert_eq(st.emitted[1], 1);
	cr_assert_eq(c.ids[1][0], 1);
	letw_table_destroy(table);
	free(c.ids[0]);
	free(c.ids[1]);
}

/*
 * A slot freed and reused while a pass is in the middle of its slab: from
 * the first emission callback (after the walker's first read-side section
 * holding records), unpublish a record further on, let a grace period
 * pass so the slot is free again, and publish a new record, which takes
 * that very slot (the free list is LIFO). The pass must count the old
 * record in skipped_raced, not emit it, and leave the new one alone.
 */
#define REUSE_N 4096

static int reuse_done;
static uint32_t reuse_idx;

static int reuse_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	struct capture *c = ctx;

	if (!reuse_done) {
		struct letw_slot *s = letw_store_slot(&table->store, reuse_idx);
		uint64_t old_start = s->start;
		uint32_t old_gen = letw_slot_state(s) & LETW_ST_GEN_MASK;

		reuse_done = 1;
		cr_assert_eq(unpublish(old_start), 0);
		letw_reclaim_tick(&table->reclaim);
		urcu_bp_barrier(); /* the batch callback has freed the slot */
		cr_assert_eq(publish(999999, 0x7f0000000000ull, 0x40), 0);
		cr_assert_eq(s->start, 0x7f0000000000ull, "the new record took the freed slot");
		cr_assert_neq(letw_slot_state(s) & LETW_ST_GEN_MASK, old_gen);
	}
	return cap_method(c, f, m);
}

Test(walker, slot_reused_mid_pass, .timeout = 60)
{
	struct capture c = { .cap = REUSE_N + 16 };
	const struct letw_walk_sink sink = { .module = cap_module,
					     .method = reuse_method,
					     .stub = cap_stub,
					     .ctx = &c };
	struct letw_walk_stats st;
	uint64_t old_id;

	c.ids[0] = calloc(c.cap, sizeof(uint64_t));
	c.ids[1] = calloc(c.cap, sizeof(uint64_t));
	table = letw_table_new(0, 0);
	for (uint64_t id = 1; id <= REUSE_N; id++)
		cr_assert_eq(publish(id, 0x100000ull * id, 0x40), 0);
	/* Slots are handed out from the top of the first chunk down: the
	 * record published 100th sits well past the walker's first
	 * non-empty read-side section. */
	for (reuse_idx = 0; letw_store_slot(&table->store, reuse_idx)->id != 100 ||
			    letw_st_life(letw_slot_state(letw_store_slot(&table->store,
									 reuse_idx))) !=
				    LETW_LIFE_LIVE;
	     reuse_idx++)
		cr_assert_lt(reuse_idx, LETW_STORE_SLOT_CHUNK);
	old_id = 100;
	cr_assert_eq(letw_walk(table, 0x1, &sink, &st), 0);
	cr_assert(reuse_done);
	cr_assert_eq(st.skipped_raced, 1);
	cr_assert_eq(st.emitted[0], REUSE_N - 1, "emitted %llu", (unsigned long long)st.emitted[0]);
	qsort(c.ids[0], c.n[0], sizeof(uint64_t), cmp_u64);
	cr_assert(!emitted(&c, old_id), "the unpublished record was emitted");
	cr_assert(!emitted(&c, 999999), "a record born during the pass was emitted");
	for (size_t i = 1; i < c.n[0]; i++)
		cr_assert_neq(c.ids[0][i], c.ids[0][i - 1]);
	/* The next pass sees the new record like any other. */
	c.n[0] = 0;
	reuse_done = 1;
	cr_assert_eq(letw_walk(table, 0x1, &sink, &st), 0);
	qsort(c.ids[0], c.n[0], sizeof(uint64_t), cmp_u64);
	cr_assert(emitted(&c, 999999));
	cr_assert_eq(st.emitted[0], REUSE_N);
	letw_table_destroy(table);
	free(c.ids[0]);
	free(c.ids[1]);
}

/*
 * Code bytes are attachments of the record they follow, never records:
 * with a sink that wants code, each method is still emitted once per
 * flavour (and counted once in `emitted`), its code-bytes events come
 * right after it and carry its bytes, and a method whose range is not
 * mapped gets none (its copy fails and is dropped). The churn checker once
 * counted code-bytes events as records ("emitted twice", issue 9); this
 * pins down what the walker hands a sink.
 */
#define CODE_N 3
#define CODE_SIZE 5000u /* more than one LETW_TP_CODE_CHUNK */

static uint8_t code_buf[CODE_N][CODE_SIZE];

struct code_capture {
	uint64_t last_method[LETW_NR_FLAVOURS];
	unsigned int methods[LETW_NR_FLAVOURS][2 * CODE_N + 1];
	uint32_t code_bytes[LETW_NR_FLAVOURS][2 * CODE_N + 1];
};

static int code_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	struct code_capture *c = ctx;

	cr_assert_leq(m->method_id, 2 * CODE_N);
	c->methods[f][m->method_id]++;
	c->last_method[f] = m->method_id;
	return 1;
}

static void code_code(void *ctx, enum letw_flavour f, const struct letw_tp_code *k)
{
	struct code_capture *c = ctx;
	uint64_t id = k->method_id;

	cr_assert_eq(id, c->last_method[f], "code bytes of %llu after method %llu",
		     (unsigned long long)id, (unsigned long long)c->last_method[f]);
	cr_assert(id >= 1 && id <= CODE_N, "code bytes for unmapped method %llu",
		  (unsigned long long)id);
	cr_assert_eq(k->offset, c->code_bytes[f][id], "chunks in order, none twice");
	cr_assert_eq(memcmp(k->bytes, code_buf[id - 1] + k->offset, k->len), 0);
	c->code_bytes[f][id] += k->len;
}

static int code_wants(void *ctx, enum letw_flavour f, int what)
{
	return what == LETW_WANT_CODE ? LETW_WANT_CODE : 0;
}

Test(walker, code_bytes_are_attachments)
{
	struct code_capture c = { 0 };
	const struct letw_walk_sink sink = { .module = cap_module,
					     .method = code_method,
					     .stub = cap_stub,
					     .code = code_code,
					     .wants = code_wants,
					     .ctx = &c };
	struct letw_walk_stats st;

	table = letw_table_new(0, 0);
	for (uint64_t id = 1; id <= CODE_N; id++) {
		memset(code_buf[id - 1], (int)(0x10 * id), CODE_SIZE);
		code_buf[id - 1][CODE_SIZE - 1] = (uint8_t)id;
		cr_assert_eq(publish(id, (uint64_t)(uintptr_t)code_buf[id - 1], CODE_SIZE), 0);
		/* Below vm.mmap_min_addr: never mapped. */
		cr_assert_eq(publish(CODE_N + id, 0x1000ull * id, 0x100), 0);
	}
	cr_assert_eq(letw_walk(table, 0x3, &sink, &st), 0);
	for (int f = 0; f < LETW_NR_FLAVOURS; f++) {
		cr_assert_eq(st.emitted[f], 2 * CODE_N, "emitted counts records only");
		for (uint64_t id = 1; id <= 2 * CODE_N; id++) {
			cr_assert_eq(c.methods[f][id], 1, "method %llu emitted %u times",
				     (unsigned long long)id, c.methods[f][id]);
			cr_assert_eq(c.code_bytes[f][id], id <= CODE_N ? CODE_SIZE : 0);
		}
	}
	letw_table_destroy(table);
}
