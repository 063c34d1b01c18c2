/* SPDX-License-Identifier: MIT */
/*
 * The rundown walker: enumerates every live record of a code table for one
 * or both rundown flavours, visiting the record store's slots in index
 * order in bounded read-side sections. Runs on the library's control
 * thread only, one pass at a time.
 *
 * Invariants (DESIGN §5), relied on by tests and the report sink:
 *  - a record live for the whole pass is emitted exactly once per flavour;
 *  - a record unpublished before the pass began is never emitted, nor is
 *    any slot content read after the slot was freed or reused (each
 *    record is claimed with a cmpxchg of its state word, which fails if
 *    the slot changed since its fields were copied);
 *  - skipped_raced counts exactly the records present when the pass
 *    began that were unpublished before the walker claimed them
 *    (walker.c says what "present" means, and where the window is);
 *  - read-side sections are bounded (LETW_WALK_SECTION_SLOTS slots and a
 *    byte budget each), whatever the trace consumer does: records are
 *    copied inside the section and emitted outside it;
 *  - the walker takes no lock a publisher takes (except in the
 *    LETW_GLOBAL_LOCK baseline) and never calls back into the runtime:
 *    the sink is the library's own emitter.
 */
#ifndef LETW_WALKER_H
#define LETW_WALKER_H

#include <stdint.h>

#include "letw_payload.h"

struct letw_table;

enum letw_flavour {
	LETW_FLAVOUR_DCSTART = 0,
	LETW_FLAVOUR_DCEND = 1,
	LETW_NR_FLAVOURS = 2,
};

enum letw_walk_want {
	LETW_WANT_LINES = 1,
	LETW_WANT_CODE = 2,
};

#define LETW_WALK_SECTION_SLOTS 1024u

/* Each record callback returns 1 when it emitted the record, 0 when the
 * event is disabled (so `emitted` counts only records that reached a
 * session). */
struct letw_walk_sink {
	int (*module)(void *ctx, enum letw_flavour f, const struct letw_tp_module *md);
	int (*method)(void *ctx, enum letw_flavour f, const struct letw_tp_method *m);
	int (*stub)(void *ctx, enum letw_flavour f, const struct letw_tp_stub *s);
	/* Optional (NULL: never): the line-table and code-bytes events, and
	 * whether any session wants them in this flavour (LETW_WANT_*), so
	 * the walker copies code only when it will be emitted. */
	void (*lines)(void *ctx, enum letw_flavour f, const struct letw_tp_lines *l);
	void (*code)(void *ctx, enum letw_flavour f, const struct letw_tp_code *c);
	int (*wants)(void *ctx, enum letw_flavour f, int what);
	/* Optional: called once at the pass's start instant, between the two
	 * accounting marks (walker.c): the Init events go out here.
	 * accounted_from_ns: CLOCK_MONOTONIC read just before the first mark,
	 * a lower bound on the unload time of every record the pass will
	 * count in skipped_raced. */
	void (*begin)(void *ctx, uint64_t accounted_from_ns);
	void *ctx;
	/* Optional: when it reads non-zero the walk stops early and returns
	 * -ECANCELED (process exit or shutdown while a pass runs). */
	const int *cancel;
	uint16_t instance_id;
};

struct letw_walk_stats {
	uint64_t emitted[LETW_NR_FLAVOURS];
	uint64_t skipped_raced;
	uint64_t claimed;          /* records copied and claimed */
	uint64_t sections;         /* read-side sections */
	uint64_t read_side_ns;     /* total time inside them */
	uint64_t max_section_ns;   /* the longest one */
	uint64_t max_section_start_ns; /* its start, CLOCK_MONOTONIC */
};

/* passes: LETW_PASS_* bits. Returns 0, -ENOMEM, -EBUSY (a walk is already
 * running) or -ECANCELED. */
int letw_walk(struct letw_table *t, unsigned int passes,
	      const struct letw_walk_sink *sink, struct letw_walk_stats *out);

/* Copy [addr, addr + len) of our own address space without trusting it
 * to be mapped (process_vm_readv on our own pid): 0, or -EFAULT. */
int letw_copy_code(void *dst, uint64_t addr, size_t len);
/* Refresh the pid letw_copy_code uses (letw_init, the fork child hook). */
void letw_copy_code_set_pid(void);

#endif
