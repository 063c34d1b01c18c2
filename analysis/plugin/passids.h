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

/* What the sinks say of a vpid with repeats (its text after "process N: "). */
#define LETW_PASS_IDS_WHY \
	"more than one process had this vpid in the trace (a pid reused, separate pid " \
	"namespaces) or the same passes were read twice (a copy of the trace in the directory)"

#endif /* LETW_PASSIDS_H */
