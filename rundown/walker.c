/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>
#include "table.h"
#include "walker.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct pins {
	struct letw_rec **recs;
	size_t nr, cap;
	struct letw_module_rec **mods;
	size_t nr_mods, cap_mods;
};

static int grow(void **arr, size_t *cap, size_t want)
{
	size_t ncap = *cap ? *cap : 256;
	void *n;

	while (ncap < want)
		ncap *= 2;
	if (ncap == *cap)
		return 0;
	n = realloc(*arr, ncap * sizeof(void *));
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/*
 * Phase 1, inside one read-side section: collect every live record. Its
 * length depends on the table size only, not on how fast the trace consumer
 * drains emission, so a stalled blocking channel cannot hold a grace period
 * (and every deferred free behind it) open. cds_lfht iteration sees each
 * node present for the whole traversal exactly once, resizes included.
 * Records released after this section are parked, not freed, until
 * letw_walk_end (record.c), so phase 2 may read them.
 */
static int collect_all(struct letw_table *t, struct pins *p,
		   struct letw_walk_stats *st)
{
	struct cds_lfht_iter iter;
	struct letw_rec *rec;
	struct letw_module_rec *mod;
	int ret = 0;

	/* Size the arrays before entering the read side: realloc inside is
	 * fine but rarely needed. */
	if (grow((void **)&p->recs, &p->cap,
		 (size_t)(uatomic_read(&t->live_methods) +
			  uatomic_read(&t->live_stubs)) + 64) ||
	    grow((void **)&p->mods, &p->cap_mods,
		 (size_t)uatomic_read(&t->live_modules) + 16))
		return -ENOMEM;

	urcu_bp_read_lock();
	cds_lfht_for_each_entry(t->modules, &iter, mod, node) {
		if (uatomic_read(&mod->dead)) {
			st->skipped_raced++;
			continue;
		}
		if (p->nr_mods == p->cap_mods &&
		    grow((void **)&p->mods, &p->cap_mods, p->nr_mods + 1)) {
			ret = -ENOMEM;
			break;
		}
		p->mods[p->nr_mods++] = mod;
	}
	/* No `dead` test here: iteration already skips unlinked nodes, the
	 * window between marking and unlinking is tiny, and phase 2 tests
	 * again — so this loop touches nothing but the nodes. */
	cds_lfht_for_each_entry(t->code, &iter, rec, node) {
		if (ret)
			break;
		if (p->nr == p->cap && grow((void **)&p->recs, &p->cap, p->nr + 1)) {
			ret = -ENOMEM;
			break;
		}
		p->recs[p->nr++] = rec;
	}
	urcu_bp_read_unlock();
	return ret;
}

/*
 * Phase 2, outside any read-side section: emit from the collected records.
 * The array is known in advance, so the next records are prefetched:
 * emission, not memory latency, sets the pace. Nothing is written to the
 * records, so the walk dirties no cache line of the table.
 *
 * A record unpublished since phase 1 was not live for the whole pass: it is
 * skipped and counted. (An unpublish may still land between this check and
 * the emission; the trace then shows its unload inside the pass window,
 * which consumers treat as a race, as ETW consumers do.)
 */
#define PREFETCH_AHEAD 8

static int emit_all(const struct pins *p, unsigned int passes,
		    const struct letw_walk_sink *sink,
		    struct letw_walk_stats *st)
{
	for (size_t i = 0; i < p->nr_mods; i++) {
		const struct letw_module_rec *mod = p->mods[i];

		if (uatomic_read(&mod->dead)) {
			st->skipped_raced++;
		} else {
			for (int f = 0; f < LETW_NR_FLAVOURS; f++)
				if (passes & (1u << f))
					st->emitted[f] += (uint64_t)sink->module(
						sink->ctx, (enum letw_flavour)f, &mod->p);
		}
	}
	for (size_t i = 0; i < p->nr; i++) {
		const struct letw_rec *rec = p->recs[i];

		if (sink->cancel && (i & 255) == 0 &&
		    __atomic_load_n(sink->cancel, __ATOMIC_ACQUIRE))
			return -ECANCELED;

		/* Two stages: the record's header and payload lines first
		 * (malloc aligns to 16, not 64, so name both), then, once
		 * those are cached, the strings they point to. */
		if (i + 2 * PREFETCH_AHEAD < p->nr) {
			const struct letw_rec *far = p->recs[i + 2 * PREFETCH_AHEAD];

			__builtin_prefetch(&far->dead);
			__builtin_prefetch(&far->p.method.name);
		}
		if (i + PREFETCH_AHEAD < p->nr) {
			const struct letw_rec *near = p->recs[i + PREFETCH_AHEAD];

			__builtin_prefetch(near->kind == LETW_REC_METHOD ?
						   near->p.method.method_namespace :
						   near->p.stub.name);
		}
		if (uatomic_read(&rec->dead)) {
			st->skipped_raced++;
			continue;
		}
		for (int f = 0; f < LETW_NR_FLAVOURS; f++) {
			if (!(passes & (1u << f)))
				continue;
			if (rec->kind == LETW_REC_METHOD)
				st->emitted[f] += (uint64_t)sink->method(
					sink->ctx, (enum letw_flavour)f,
					&rec->p.method);
			else
				st->emitted[f] += (uint64_t)sink->stub(
					sink->ctx, (enum letw_flavour)f,
					&rec->p.stub);
		}
	}
	return 0;
}

int letw_walk(struct letw_table *t, unsigned int passes,
	      const struct letw_walk_sink *sink, struct letw_walk_stats *out)
{
	struct pins p = { 0 };
	uint64_t t0;
	int ret;

	memset(out, 0, sizeof(*out));
	/* No-op unless built as the global-lock baseline, where it blocks
	 * every publisher for the whole pass. */
	letw_table_walk_lock(t);
	letw_walk_begin();
	t0 = now_ns();
	ret = collect_all(t, &p, out);
	out->read_side_ns = now_ns() - t0;
	out->pinned = p.nr + p.nr_mods;
	if (!ret)
		ret = emit_all(&p, passes, sink, out);
	letw_walk_end();
	letw_table_walk_unlock(t);
	free(p.recs);
	free(p.mods);
	return ret;
}
