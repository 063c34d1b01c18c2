/* SPDX-License-Identifier: MIT */
/*
 * Telling one process from several that shared its vpid. A process numbers
 * its rundown passes upwards, one id per walk shared by the walk's
 * flavours (provider/control.c), so in one flavour of one vpid the ids
 * rise. One seen again, or going back, means the vpid stood for more than
 * one process in the trace (a pid reused, separate pid namespaces) or the
 * same passes were read twice (a copy of the trace under the directory).
 * Each sink keeps one per process and says so; none can split them.
 */
#ifndef LETW_PASSIDS_H
#define LETW_PASSIDS_H

#include <stdint.h>

#include "event.h"

struct letw_pass_ids {
	uint64_t max[2];
	uint8_t any[2];
	uint64_t repeats;     /* passes whose id did not rise */
	uint64_t first_id;    /* the first of them */
	int64_t first_ns;
};

/* A pass of flavour fl (LETW_FL_DCSTART or LETW_FL_DCEND) with this id
 * begins (or, its Init lost, completes) at ts_ns. */
static inline void letw_pass_ids_see(struct letw_pass_ids *p, enum letw_flavour fl,
				     uint64_t id, int64_t ts_ns)
{
	int f = fl == LETW_FL_DCEND;

	if (p->any[f] && id <= p->max[f]) {
		if (!p->repeats++) {
			p->first_id = id;
			p->first_ns = ts_ns;
		}
		return;
	}
	p->max[f] = id;
	p->any[f] = 1;
}

/*
 * Whether a pass is whole, for the sinks that do not judge passes as the
 * report does (report_check.c, whose "truncated" and "lossy" these are):
 * per process and flavour the pass whose Init was seen last, and how many
 * records came while it was open. A Complete that closes it with more
 * records emitted than seen: lossy (records lost, overwritten, or left out
 * by a filter); an Init without its Complete, or a Complete without its
 * Init: truncated. Runtime events never come here.
 */
struct letw_pass_open {
	uint64_t id, seen;
	uint64_t orphans; /* records while no pass was open */
	uint8_t open;
};

#define LETW_PASS_ACCT_EX 5

struct letw_pass_acct {
	int truncated, lossy;
	unsigned nex;
	struct letw_pass_bad {
		int64_t proc;
		uint64_t id, seen, emitted;
		uint8_t fl, lossy, no_init, orphans;
		const char *damaged; /* its Complete's counter that is no count */
	} ex[LETW_PASS_ACCT_EX];
};

/* Returns its example, or NULL past the first few. */
static inline struct letw_pass_bad *
letw_pass_acct_bad(struct letw_pass_acct *a, int64_t proc, enum letw_flavour fl,
		   uint64_t id, uint64_t seen, uint64_t emitted, int lossy, int no_init)
{
	if (lossy)
		a->lossy++;
	else
		a->truncated++;
	if (a->nex >= LETW_PASS_ACCT_EX)
		return NULL;
	a->ex[a->nex] = (struct letw_pass_bad){ proc, id, seen, emitted, (uint8_t)fl,
						(uint8_t)lossy, (uint8_t)no_init, 0, NULL };
	return &a->ex[a->nex++];
}

/* Rundown records of flavour fl seen outside any pass of proc: neither
 * Init nor Complete around them, so nothing says how many there should
 * be. An event rule's --filter on fields only records have (`name ==
 * ...`) drops Init and Complete, which lack them: the map was partial
 * and said nothing. Counted as one truncated pass. */
static inline void letw_pass_acct_orphans(struct letw_pass_acct *a, int64_t proc,
					  enum letw_flavour fl, uint64_t n)
{
	a->truncated++;
	if (a->nex < LETW_PASS_ACCT_EX)
		a->ex[a->nex++] = (struct letw_pass_bad){ proc, 0, n, 0, (uint8_t)fl, 0, 0, 1, NULL };
}

/* An Init, then a Complete, of flavour fl of process proc, whose open
 * pass of that flavour is o (records: o->seen++ while o->open). */
static inline void letw_pass_acct_init(struct letw_pass_acct *a, struct letw_pass_open *o,
				       int64_t proc, enum letw_flavour fl, uint64_t id)
{
	/* The previous pass never completed (its Complete was lost). */
	if (o->open)
		letw_pass_acct_bad(a, proc, fl, o->id, o->seen, 0, 0, 0);
	o->open = 1;
	o->id = id;
	o->seen = 0;
}

static inline void letw_pass_acct_complete(struct letw_pass_acct *a, struct letw_pass_open *o,
					   int64_t proc, enum letw_flavour fl, uint64_t id,
					   uint64_t emitted)
{
	if (o->open && o->id == id) {
		if (o->seen < emitted)
			letw_pass_acct_bad(a, proc, fl, id, o->seen, emitted, 1, 0);
	} else {
		if (o->open) /* another pass, never completed */
			letw_pass_acct_bad(a, proc, fl, o->id, o->seen, 0, 0, 0);
		/* Its Init is not in the trace: the records outside any pass
		 * before it are its own, said with it, not a pass apart. */
		letw_pass_acct_bad(a, proc, fl, id, o->orphans, emitted, 0, 1);
		o->orphans = 0;
	}
	o->open = 0;
}

/* A Complete of pass id whose counter `bad` is no count (letw_ev_bad_counter):
 * it closes the pass, which is truncated, not judged on a number the
 * trace's damage made up. */
static inline void letw_pass_acct_damaged(struct letw_pass_acct *a, struct letw_pass_open *o,
					  int64_t proc, enum letw_flavour fl, uint64_t id,
					  const char *bad)
{
	uint64_t seen = o->open && o->id == id ? o->seen : 0;
	struct letw_pass_bad *b;

	if (o->open && o->id != id) /* another pass, never completed */
		letw_pass_acct_bad(a, proc, fl, o->id, o->seen, 0, 0, 0);
	b = letw_pass_acct_bad(a, proc, fl, id, seen, 0, 0, 0);
	if (b)
		b->damaged = bad;
	o->open = 0;
}

/* What the sinks say of a vpid with repeats (its text after "process N: "). */
#define LETW_PASS_IDS_WHY \
	"more than one process had this vpid in the trace (a pid reused, separate pid " \
	"namespaces) or the same passes were read twice (a copy of the trace in the directory)"

#endif /* LETW_PASSIDS_H */
