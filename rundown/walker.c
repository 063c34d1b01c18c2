/* SPDX-License-Identifier: MIT */
/*
 * The walker. One pass:
 *
 *   1. accounted_from := now; mark_unpub := M   (M: this pass's mark,
 *      the low bits of its id)
 *   2. begin(): the Init events, carrying accounted_from
 *   3. mark_pub := M
 *   4. for each slot, in index order, in read-side sections of at most
 *      LETW_WALK_SECTION_SLOTS slots: if LIVE and its mark is not M, copy
 *      its fields and strings (and line table, and code bytes) into the
 *      walker's buffer, then claim it: cmpxchg(state, seen, seen | M).
 *      Emit the claimed copies after the section.
 *   5. mark_pub := mark_unpub := 0, synchronize_rcu, read `skipped`.
 *
 * Why it is exact. A claim succeeds only if the state word did not change
 * since the copy began, and a slot's fields change only after its state
 * did (DEAD, then a grace period — which this section holds off — then
 * reuse): a claimed copy is the record as it was, live, at the claim. The
 * unpublish path (table.c, kill) reads mark_unpub *before* its own cmpxchg
 * to DEAD and counts the record in `skipped` when it read M and the
 * record's mark is not M: the record was killed after step 1 and before
 * any claim, so it is present at the pass and will never be emitted. The
 * two cmpxchg on one word order every kill against the claim, so no record
 * is both emitted and counted, and none is emitted twice (the mark).
 * Records published after step 3 carry M from birth (table.c): they have
 * their own load event and this pass leaves them alone. Step 5's grace
 * period waits for every unpublish that read M to finish counting.
 *
 * Against the trace: an unpublish not counted in skipped_raced read
 * mark_unpub before step 1, so it began before the Init; one counted read
 * it after step 1, so its unload event comes after the Init's
 * accounted_from_ns — which may be a little *before* the Init's own
 * timestamp (an unpublish can run whole between step 1 and step 2). A
 * checker bounding skipped_raced from the trace must count unloads from
 * accounted_from_ns, not from the Init (tests/reliability/check_churn.py).
 * A publish that read mark_pub before step 3 may still load just after
 * the Init; such a record is emitted if it is still live when the walker
 * gets to it (never missed, at worst a record the consumer also has a
 * load event for).
 *
 * Nothing is allocated per pass: the buffer is mapped once and reused.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <urcu/urcu-bp.h>
#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>
#include "record.h"
#include "table.h"
#include "walker.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct item {
	uint32_t kind;
	uint32_t lines_off;   /* arena offset of a struct letw_lines, or 0 */
	uint32_t code_off;    /* arena offset of the code bytes */
	uint32_t code_len;    /* 0: none copied */
	union {
		struct letw_tp_method m;
		struct letw_tp_stub s;
		struct letw_tp_module md;
	} p;
	/* Arena offsets of the strings, turned into pointers at emission. */
	uint32_t str_off[3];
};

/*
 * The copy buffer: items and an arena for their strings, line tables and
 * code. A section stops taking records when the arena could not hold one
 * more of the largest kind, so a copy never overflows and the arena never
 * moves (pointers into it are fixed up only at emission).
 */
#define ARENA_BYTES (8u << 20)
#define ITEM_MAX_BYTES (3u * (LETW_STRING_MAX + 1) + 8 + LETW_STORE_CHUNK_MAX + LETW_CODE_BYTES_MAX)

struct buf {
	struct item items[LETW_WALK_SECTION_SLOTS];
	char arena[ARENA_BYTES];
};

static struct buf *buf;
static int walking;

static uint32_t arena_put(uint32_t *used, const void *p, size_t n)
{
	uint32_t off = *used;

	memcpy(buf->arena + off, p, n);
	*used += (uint32_t)((n + 7) & ~(size_t)7);
	return off;
}

static uint32_t arena_str(uint32_t *used, const char *s)
{
	return arena_put(used, s, strlen(s) + 1);
}

/* The record's line table, columns and names copied after the struct. */
static uint32_t copy_lines(uint32_t *used, const struct letw_lines *l)
{
	uint32_t off = *used, col = l->nr * (uint32_t)sizeof(uint32_t);
	struct letw_lines *c;

	*used += (uint32_t)sizeof(*c);
	c = (struct letw_lines *)(buf->arena + off);
	*c = *l;
	/* Columns as offsets for now; emission makes them pointers. */
	c->native_offsets = (const uint32_t *)(uintptr_t)arena_put(used, l->native_offsets, col);
	c->lines = (const uint32_t *)(uintptr_t)arena_put(used, l->lines, col);
	c->files_idx = (const uint32_t *)(uintptr_t)arena_put(used, l->files_idx, col);
	c->inline_depths = (const uint32_t *)(uintptr_t)arena_put(used, l->inline_depths, col);
	c->files = (const char *)(uintptr_t)arena_put(used, l->files, l->files_len + 1);
	return off;
}

struct pass_ctx {
	struct letw_table *t;
	const struct letw_walk_sink *sink;
	unsigned int passes;
	int want[LETW_NR_FLAVOURS];
	int any_lines, any_code;
	uint32_t mark;
};

/*
 * Copy one LIVE record, then claim it. Returns 1 when claimed (the item is
 * kept), 0 when the record changed under us (the copy is dropped).
 */
static int take(struct pass_ctx *pc, struct letw_slot *s, uint32_t st,
		struct item *it, uint32_t *used)
{
	struct letw_table *t = pc->t;
	uint32_t kind = letw_st_kind(st), start = *used;

	memset(it, 0, sizeof(*it));
	it->kind = kind;
	switch (kind) {
	case LETW_SLOT_METHOD: {
		/* A byte-exact name (names.h) has no NUL in the store: it
		 * is copied here and terminated, then into the arena with
		 * the other strings (the pointer left in it->p.m is replaced
		 * at emission). Inside the section the name cannot be freed
		 * (reclaim.c waits for a grace period). */
		char name[LETW_REC_NAME_BUF];

		letw_rec_tp_method(t, s, st, pc->sink->instance_id, name, &it->p.m);
		it->str_off[0] = arena_str(used, it->p.m.method_namespace);
		it->str_off[1] = arena_str(used, it->p.m.name);
		it->str_off[2] = arena_str(used, it->p.m.signature);
		if (pc->any_lines && (st & LETW_ST_LINES)) {
			const struct letw_lines *l =
				letw_table_lines(t, letw_store_slot_index(&t->store, s));

			if (l)
				it->lines_off = copy_lines(used, l);
		}
		if (pc->any_code) {
			uint32_t n = s->size < LETW_CODE_BYTES_MAX ? s->size : LETW_CODE_BYTES_MAX;

			/* Copied before the claim: if the code was freed and
			 * its record killed meanwhile, the claim fails and the
			 * bytes are dropped — freed code is never reported. */
			if (!letw_copy_code(buf->arena + *used, s->start, n)) {
				it->code_off = *used;
				it->code_len = n;
				*used += (n + 7) & ~7u;
			}
		}
		break;
	}
	case LETW_SLOT_STUB:
		letw_rec_tp_stub(t, s, pc->sink->instance_id, &it->p.s);
		it->str_off[0] = arena_str(used, it->p.s.name);
		break;
	case LETW_SLOT_MODULE:
		letw_rec_tp_module(t, s, pc->sink->instance_id, &it->p.md);
		it->str_off[0] = arena_str(used, it->p.md.name);
		break;
	default:
		return 0;
	}
	if (letw_slot_cas(s, &st, letw_st_with_mark(st, pc->mark)))
		return 1;
	*used = start;
	return 0;
}

static void emit_lines(struct pass_ctx *pc, enum letw_flavour f,
		       const struct letw_tp_method *m, struct letw_lines *l)
{
	uint32_t first = 0;

	do {
		struct letw_tp_lines c;

		letw_rec_tp_lines(m, l, first, &c);
		pc->sink->lines(pc->sink->ctx, f, &c);
		first += c.nr;
	} while (first < l->nr);
}

static void emit_code(struct pass_ctx *pc, enum letw_flavour f,
		      const struct letw_tp_method *m, const uint8_t *bytes, uint32_t len)
{
	for (uint32_t off = 0; off < len; off += LETW_TP_CODE_CHUNK) {
		struct letw_tp_code c;

		letw_rec_tp_code(m, bytes, len, off, &c);
		pc->sink->code(pc->sink->ctx, f, &c);
	}
}

static void emit(struct pass_ctx *pc, struct item *it, struct letw_walk_stats *st)
{
	const struct letw_walk_sink *k = pc->sink;
	char *a = buf->arena;
	struct letw_lines *l = NULL;

	if (it->kind == LETW_SLOT_METHOD) {
		it->p.m.method_namespace = a + it->str_off[0];
		it->p.m.name = a + it->str_off[1];
		it->p.m.signature = a + it->str_off[2];
		if (it->lines_off) {
			l = (struct letw_lines *)(a + it->lines_off);
			l->native_offsets = (const uint32_t *)(a + (uintptr_t)l->native_offsets);
			l->lines = (const uint32_t *)(a + (uintptr_t)l->lines);
			l->files_idx = (const uint32_t *)(a + (uintptr_t)l->files_idx);
			l->inline_depths = (const uint32_t *)(a + (uintptr_t)l->inline_depths);
			l->files = a + (uintptr_t)l->files;
		}
	} else if (it->kind == LETW_SLOT_STUB) {
		it->p.s.name = a + it->str_off[0];
	} else {
		it->p.md.name = a + it->str_off[0];
	}
	for (int f = 0; f < LETW_NR_FLAVOURS; f++) {
		enum letw_flavour fl = (enum letw_flavour)f;

		if (!(pc->passes & (1u << f)))
			continue;
		switch (it->kind) {
		case LETW_SLOT_METHOD:
			st->emitted[f] += (uint64_t)k->method(k->ctx, fl, &it->p.m);
			if (l && (pc->want[f] & LETW_WANT_LINES))
				emit_lines(pc, fl, &it->p.m, l);
			if (it->code_len && (pc->want[f] & LETW_WANT_CODE))
				emit_code(pc, fl, &it->p.m, (const uint8_t *)a + it->code_off,
					  it->code_len);
			break;
		case LETW_SLOT_STUB:
			st->emitted[f] += (uint64_t)k->stub(k->ctx, fl, &it->p.s);
			break;
		default:
			st->emitted[f] += (uint64_t)k->module(k->ctx, fl, &it->p.md);
			break;
		}
	}
}

/* Pass ids whose low 16 bits are 0 are skipped: mark 0 means "none". */
static uint32_t next_mark(void)
{
	static uint64_t pass_counter;
	uint64_t id;

	do
		id = ++pass_counter;
	while (!(id & LETW_ST_MARK_MASK));
	return (uint32_t)(id & LETW_ST_MARK_MASK);
}

static int buf_get(void)
{
	void *p;

	if (buf)
		return 0;
	p = mmap(NULL, sizeof(*buf), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	buf = p;
	return 0;
}

int letw_walk(struct letw_table *t, unsigned int passes,
	      const struct letw_walk_sink *sink, struct letw_walk_stats *out)
{
	struct pass_ctx pc = { .t = t, .sink = sink, .passes = passes };
	uint32_t bound, i = 0;
	uint64_t accounted_from;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (__atomic_exchange_n(&walking, 1, __ATOMIC_ACQUIRE))
		return -EBUSY;
	if (buf_get()) {
		__atomic_store_n(&walking, 0, __ATOMIC_RELEASE);
		return -ENOMEM;
	}
	for (int f = 0; f < LETW_NR_FLAVOURS; f++) {
		if (!(passes & (1u << f)) || !sink->wants)
			continue;
		pc.want[f] = (sink->lines ? sink->wants(sink->ctx, (enum letw_flavour)f,
							LETW_WANT_LINES) : 0) |
			     (sink->code ? sink->wants(sink->ctx, (enum letw_flavour)f,
						       LETW_WANT_CODE) : 0);
		pc.any_lines |= pc.want[f] & LETW_WANT_LINES;
		pc.any_code |= pc.want[f] & LETW_WANT_CODE;
	}
	pc.mark = next_mark();
	/* No-op unless built as the global-lock baseline, where it blocks
	 * every publisher for the whole pass. */
	letw_table_walk_lock(t);
	uatomic_set(&t->skipped, 0);
	accounted_from = now_ns();
	__atomic_store_n(&t->mark_unpub, pc.mark, __ATOMIC_SEQ_CST);
	if (sink->begin)
		sink->begin(sink->ctx, accounted_from);
	__atomic_store_n(&t->mark_pub, pc.mark, __ATOMIC_SEQ_CST);

	bound = letw_store_slot_bound(&t->store);
	while (i < bound) {
		uint32_t n = 0, used = 8, visited = 0; /* offset 0 means "none" */
		uint64_t t0, section_start;

		if (!letw_store_slot_chunk_ready(&t->store, i / LETW_STORE_SLOT_CHUNK)) {
			i = (i / LETW_STORE_SLOT_CHUNK + 1) * LETW_STORE_SLOT_CHUNK;
			continue;
		}
		t0 = section_start = now_ns();
		urcu_bp_read_lock();
		for (; i < bound && visited < LETW_WALK_SECTION_SLOTS &&
		       ARENA_BYTES - used >= ITEM_MAX_BYTES; i++, visited++) {
			struct letw_slot *s = letw_store_slot(&t->store, i);
			uint32_t st = letw_slot_state(s);

			if (i % LETW_STORE_SLOT_CHUNK == 0 && visited &&
			    !letw_store_slot_chunk_ready(&t->store, i / LETW_STORE_SLOT_CHUNK))
				break;
			if (letw_st_life(st) != LETW_LIFE_LIVE ||
			    (st & LETW_ST_MARK_MASK) == pc.mark)
				continue;
			n += (uint32_t)take(&pc, s, st, &buf->items[n], &used);
		}
		urcu_bp_read_unlock();
		t0 = now_ns() - t0;
		out->sections++;
		out->read_side_ns += t0;
		if (t0 > out->max_section_ns) {
			out->max_section_ns = t0;
			out->max_section_start_ns = section_start;
		}
		out->claimed += n;
		for (uint32_t j = 0; j < n; j++)
			emit(&pc, &buf->items[j], out);
		/* Keep freeing and keep the store stocked while a pass runs:
		 * the control thread's own maintenance (letw_table_maintain)
		 * waits for the pass to end, and a publisher that drains a
		 * free list meanwhile takes the store's slow path (mprotect,
		 * page faults on the runtime's thread). Both are bounded and
		 * outside any read-side section. */
		if (out->sections % 4 == 0)
			letw_table_tick(t);
		if (sink->cancel && __atomic_load_n(sink->cancel, __ATOMIC_ACQUIRE)) {
			ret = -ECANCELED;
			break;
		}
	}
	__atomic_store_n(&t->mark_pub, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->mark_unpub, 0, __ATOMIC_SEQ_CST);
	letw_table_walk_unlock(t);
	/* Every unpublish that read this pass's mark has counted by now.
	 * (After the unlock: in the baseline, publishers wait for the lock
	 * inside their read-side section.) */
	urcu_bp_synchronize_rcu();
	out->skipped_raced = (uint64_t)uatomic_read(&t->skipped);
	__atomic_store_n(&walking, 0, __ATOMIC_RELEASE);
	return ret;
}
