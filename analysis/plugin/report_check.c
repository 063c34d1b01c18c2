/* SPDX-License-Identifier: MIT */
/*
 * End-of-stream analysis of the report sink: needs the whole trace, since
 * whether an absent record is a miss or a legal race depends on unloads
 * that come after the pass, and discarded-events messages arrive with the
 * packet after the loss.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "radix.h"
#include "report.h"

#define KW_JIT_RUNDOWN  0x10ull
#define KW_STUB_RUNDOWN (1ull << 48)

const char *letw_pass_status_name(enum letw_pass_status st)
{
	switch (st) {
	case LETW_PASS_COMPLETE: return "complete";
	case LETW_PASS_LOSSY: return "lossy";
	case LETW_PASS_INCONSISTENT: return "inconsistent";
	case LETW_PASS_OVERWRITTEN: return "overwritten";
	default: return "truncated";
	}
}

/* Sorts k (for contains()) and adds its duplicates to *dups. */
static int sort_count_dups(uint64_t *k, size_t n, uint64_t *dups)
{
	size_t i;

	if (letw_radix_sort(k, n, sizeof(*k)))
		return -1;
	for (i = 1; i < n; i++)
		*dups += k[i] == k[i - 1];
	return 0;
}

/* k: sorted (radix.h). Written out rather than bsearch(): it runs once
 * per live record per pass, and bsearch's comparison call per step is what
 * the speed work took out of the sorts too (bench/README.md). */
static int contains(const uint64_t *k, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && k[lo] == key;
}

static struct letw_rproc *proc_of(struct letw_report *r, int64_t vpid)
{
	size_t i;

	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].vpid == vpid)
			return &r->procs[i];
	return NULL;
}

/* Does discard d overlap [b, e] and may it have cost process vpid events?
 * A per-process buffer's stream knows its vpid, not its pid namespace: a
 * loss there counts against every process with that vpid (it may be any
 * of them); a shared buffer's, against every process. The message spans
 * from the last event known kept to the next one. */
static int discard_hits(const struct letw_discard *d, int64_t vpid, int64_t b, int64_t e)
{
	return d->has_times && d->end_ns >= b && d->begin_ns <= e &&
	       !(d->has_vpid && d->vpid != letw_proc_vpid(vpid));
}

/* Did the tracer discard events that may be vpid's within [a, b]? */
static int discards_between(const struct letw_report *r, int64_t vpid, int64_t a, int64_t b)
{
	for (size_t i = 0; i < r->ndiscards; i++)
		if (!r->discards[i].packets && discard_hits(&r->discards[i], vpid, a, b))
			return 1;
	return 0;
}

/* Code live across the whole pass must be listed (DESIGN §5). Only code
 * whose load is in the trace is checked: anything else the trace cannot
 * vouch for. */
static void check_missing(const struct letw_report *r, struct letw_pass *ps,
			  const struct letw_rproc *p)
{
	uint64_t mask = ps->match_any_keyword;
	size_t i;

	for (i = 0; i < p->map.n; i++) {
		const struct letw_region *rg = &p->map.r[i];

		if (!(rg->flags & LETW_REG_BIRTH) || rg->birth_ns >= ps->init_ns)
			continue;
		if ((rg->flags & LETW_REG_DEAD) && rg->death_ns <= ps->complete_ns)
			continue;
		if (mask && !(mask & (rg->obj == LETW_OBJ_METHOD ? KW_JIT_RUNDOWN : KW_STUB_RUNDOWN)))
			continue;
		if (contains(ps->code_keys, ps->ncode, rg->start))
			continue;
		/* Its unload may sit in packets lost (or maybe lost)
		 * between its load and the pass: the trace cannot tell. */
		if (letw_report_gap_in(r, ps->vpid, rg->birth_ns, ps->init_ns)) {
			ps->missing_overwritten++;
			continue;
		}
		/* Likewise for events the tracer discarded (a live audit:
		 * an unload among 931 discarded events read as code the
		 * walker missed). The discards are reported in their own
		 * right. */
		if (discards_between(r, ps->vpid, rg->birth_ns, ps->init_ns)) {
			ps->missing_maybe_discarded++;
			continue;
		}
		/* Unloaded only after the complete: its removal may still
		 * have happened during the walk (the unload event is emitted
		 * after the removal), which skipped_raced then counts. */
		if ((rg->flags & LETW_REG_DEAD) && ps->skipped_raced) {
			ps->missing_maybe_raced++;
			continue;
		}
		if (ps->n_missing_ex < LETW_EXAMPLES)
			ps->missing_ex[ps->n_missing_ex++] = (struct letw_example){
				rg->start, rg->birth_ns, rg->name };
		ps->missing++;
	}
}

static void check_discards(struct letw_report *r, struct letw_pass *ps)
{
	int64_t b = ps->has_init ? ps->init_ns : ps->first_ns;
	int64_t e = ps->has_complete ? ps->complete_ns : ps->last_ns;
	size_t i;

	for (i = 0; i < r->ndiscards; i++) {
		const struct letw_discard *d = &r->discards[i];

		/* Any overlap with the pass window may have cost the pass
		 * records. */
		if (!discard_hits(d, ps->vpid, b, e))
			continue;
		ps->discarded_msgs++;
		if (d->has_count && !d->packets)
			ps->discarded_events = letw_count_add(ps->discarded_events, d->count);
		else
			ps->discarded_unknown_count = 1;
	}
}

int letw_report_check(struct letw_report *r)
{
	size_t i;
	int bad = 0;

	if (letw_report_gaps(r))
		return -ENOMEM;
	for (i = 0; i < r->ndiscards; i++)
		if (!r->discards[i].has_times && !r->discards[i].packets)
			r->discarded_unattributed += r->discards[i].count;
	for (i = 0; i < r->npasses; i++) {
		struct letw_pass *ps = &r->passes[i];
		const struct letw_rproc *p = proc_of(r, ps->vpid);
		uint64_t seen = ps->seen_methods + ps->seen_stubs + ps->seen_modules;
		const struct letw_pass_ids *ids;

		ps->duplicates = 0;
		if (sort_count_dups(ps->code_keys, ps->ncode, &ps->duplicates) ||
		    sort_count_dups(ps->module_keys, ps->nmod, &ps->duplicates))
			return -ENOMEM;
		check_discards(r, ps);
		if (ps->has_init && ps->has_complete && p)
			check_missing(r, ps, p);

		if (!ps->has_init || !ps->has_complete)
			ps->status = LETW_PASS_TRUNCATED;
		else if (seen < ps->emitted)
			/* Discards in the window alone do not make it lossy:
			 * with shared buffers they may have hit other events,
			 * and the counts say whether records went missing. */
			ps->status = LETW_PASS_LOSSY;
		else if (seen > ps->emitted || ps->duplicates || ps->stale ||
			 ps->missing)
			ps->status = LETW_PASS_INCONSISTENT;
		else if ((ids = letw_sink_pass_ids(&r->base, ps->vpid)) && ids->repeats)
			/* Its records may be another process's: not judged. */
			ps->status = LETW_PASS_INCONSISTENT;
		else
			ps->status = LETW_PASS_COMPLETE;
		letw_report_cause(r, ps, p);
		bad += ps->status != LETW_PASS_COMPLETE;
	}
	return bad;
}
