/* SPDX-License-Identifier: MIT */
/* The record-level half of merging a chunked trace's dumps
 * (jitdump_merge.c): see there for the rules. */
#ifndef LETW_CLI_JITDUMP_UNITS_H
#define LETW_CLI_JITDUMP_UNITS_H

#include <stdint.h>

#include <glib.h>

#include "jitdump_read.h"
#include "jitdump_write.h"

/* A LOAD with the DEBUG_INFO / UNWINDING_INFO records right before it
 * (perf gives those to the next LOAD it reads), a MOVE, or a record of
 * another type: what moves as one in the merged order. */
struct letw_jdm_unit {
	struct letw_jd_rec rec;
	const uint8_t *pre; /* the records before a LOAD, contiguous */
	size_t pre_len;
	uint64_t ts;        /* in the merged file */
	uint32_t chunk, seq;
	uint8_t before;     /* a LOAD dated before its chunk began */
	uint8_t filler;     /* a LOAD without the code's bytes (ours) */
	uint8_t dropped;    /* a LOAD written once already: see dup_of */
	guint dup_of;
	uint64_t new_index;
};

/* Appends the units of the dump in buf[0..len), chunk `chunk`, to units
 * (a GArray of struct letw_jdm_unit); its header into *h, its CLOSE's time
 * raised into *close_ts. 0, or -EINVAL (*why) when the dump is damaged. */
int letw_jdm_read_units(const uint8_t *buf, size_t len, uint32_t chunk, GArray *units,
			struct letw_jd_header *h, uint64_t *close_ts, const char **why);

/* One dump read into units: its chunk and its header's time (the
 * chunk's start). */
struct letw_jdm_part {
	uint32_t chunk;
	uint64_t start;
};

/* Every chunk's LOADs against what comes before them, the n parts in the
 * order their units were read: repeats marked dropped (counted in
 * *repeats), code there before the chunk dated after the earlier chunks'
 * code at its addresses. */
void letw_jdm_dedup(GArray *units, const struct letw_jdm_part *part, size_t n,
		    uint64_t *repeats);

/* The units to write, in time order (a GArray of indexes, caller frees):
 * times up to since (the process's start, 0: unknown) moved just after
 * it, new code_index given, *close_ts raised to the last time. */
GArray *letw_jdm_order(GArray *units, uint64_t since, uint64_t *close_ts);

/* Header (h's machine and pid, time ts), the ordered units, one CLOSE. */
int letw_jdm_write(struct letw_jd_out *o, GArray *units, GArray *order,
		   const struct letw_jd_header *h, uint64_t ts, uint64_t close_ts);

#endif /* LETW_CLI_JITDUMP_UNITS_H */
