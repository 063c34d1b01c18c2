/* SPDX-License-Identifier: MIT */
/*
 * Walker invariants with concurrent publishers (DESIGN §5), on the real
 * table and walker with a capturing sink in place of LTTng:
 *  - a record live for the whole pass is emitted exactly once per flavour;
 *  - no record is emitted twice in one flavour of one pass;
 *  - a record whose unpublish returned before the pass began is never
 *    emitted by it;
 *  - every pinned record is either emitted or counted in skipped_raced.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
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
static unsigned long pass_epoch;             /* incremented before each pass */
static unsigned long unpub_epoch[CHURN_IDS]; /* epoch read after unpublish */

struct capture {
	uint64_t *ids[LETW_NR_FLAVOURS];
	size_t n[LETW_NR_FLAVOURS], cap;
};

static int cap_method(void *ctx, enum letw_flavour f, const struct letw_tp_method *m)
{
	struct capture *c = ctx;

	cr_assert_lt(c->n[f], c->cap);
	c->ids[f][c->n[f]++] = m->method_id;
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

static int publish(uint64_t id, uint64_t start, uint32_t size)
{
	struct letw_method m = { .method_id = id, .code_start = start,
				 .code_size = size, .name = "fn" };
	struct letw_rec *rec;
	int ret = letw_rec_new_method(&m, NULL, 0, &rec);

	if (ret)
		return ret;
	urcu_bp_read_lock();
	ret = letw_table_insert(table, rec);
	urcu_bp_read_unlock();
	return ret;
}

static int unpublish(uint64_t start)
{
	struct letw_rec *rec;
	int ret;

	urcu_bp_read_lock();
	ret = letw_table_remove(table, start, LETW_REC_METHOD, &rec);
	urcu_bp_read_unlock();
	if (!ret)
		letw_rec_put_deferred(rec);
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
			cr_assert_eq(unpublish(start), 0);
			/* Read after unpublish returned: a pass whose epoch is
			 * larger began after this point... or just before;
			 * a smaller recorded epoch proves "before". */
			uatomic_set(&unpub_epoch[slot_id[s]],
				    uatomic_read(&pass_epoch) + 1);
		}
		cr_assert_eq(publish(next, start, 0x100 + (i % 0x100)), 0);
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

Test(walker, invariants_under_concurrent_churn, .timeout = 120)
{
	pthread_t th[CHURN_THREADS];
	struct capture c = { .cap = STABLE + CHURN_THREADS * 64 * 4 };
	const struct letw_walk_sink sink = { .module = cap_module,
					     .method = cap_method,
					     .stub = cap_stub,
					     .ctx = &c };
	uint64_t total_raced = 0;

	table = letw_table_new();
	cr_assert_not_null(table);
	for (uint64_t id = 1; id <= STABLE; id++)
		cr_assert_eq(publish(id, 0x1000ull * id, 0x80 + (id % 0x700)), 0);
	for (int f = 0; f < LETW_NR_FLAVOURS; f++)
		c.ids[f] = malloc(c.cap * sizeof(uint64_t));
	for (unsigned long t = 0; t < CHURN_THREADS; t++)
		pthread_create(&th[t], NULL, churn, (void *)t);

	for (int p = 0; p < PASSES; p++) {
		struct letw_walk_stats st;
		unsigned long epoch = uatomic_add_return(&pass_epoch, 1);

		c.n[0] = c.n[1] = 0;
		cr_assert_eq(letw_walk(table, 0x3, &sink, &st), 0);
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
				ue = uatomic_read(&unpub_epoch[id]);
				cr_assert(ue == 0 || ue >= epoch,
					  "pass %d: id %llu was unpublished before the pass",
					  p, (unsigned long long)id);
			}
			cr_assert_eq(stable_seen, STABLE, "pass %d flavour %d", p, f);
		}
		/* Every pinned code record was emitted or counted as raced. */
		cr_assert_leq(c.n[0], st.pinned);
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
	table = letw_table_new();
	cr_assert_eq(letw_walk(table, 0x1, &sink, &st), 0);
	cr_assert_eq(st.emitted[0] + st.emitted[1] + st.pinned, 0);
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
