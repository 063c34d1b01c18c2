/* SPDX-License-Identifier: MIT */
/*
 * Reconstruction of one process's code map over time from load / unload /
 * rundown records. Pure data structure (no babeltrace2 types) so it is unit
 * tested directly and shared by the perfmap and report sinks.
 *
 * A region is one (start, size, name) incarnation of code at an address,
 * with what the trace says about its lifetime. The map keeps every region
 * ever seen, not just the live set at the end: perf samples taken while
 * since-freed code ran still need a name.
 */
#ifndef LETW_BT_CODEMAP_H
#define LETW_BT_CODEMAP_H

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "addrindex.h"
#include "grow.h"
#include "names.h"

#define LETW_REG_BIRTH   0x1u /* its load event is in the trace */
#define LETW_REG_DEAD    0x2u /* unloaded (or replaced) at death_ns */
#define LETW_REG_RUNDOWN 0x4u /* listed by at least one rundown record */
#define LETW_REG_IMPLICIT_END 0x8u /* replaced at its address, no unload seen */
#define LETW_REG_SUPERSEDED 0x10u /* a newer region starts at the same address */

struct letw_region {
	uint64_t start;
	uint32_t size;
	uint8_t obj;   /* enum letw_ev_object: METHOD or STUB */
	uint8_t flags; /* LETW_REG_* */
	char *name;    /* in the map's string chunk */
	int64_t birth_ns, death_ns, last_ns;
};

struct letw_codemap_stats {
	uint64_t loads, unloads, rundown_records;
	uint64_t unmatched_unloads;     /* unload of code never seen loaded */
	uint64_t implicit_replacements; /* new code at a live address */
	uint64_t rundown_after_unload;  /* rundown record of unloaded code */
	uint64_t rundown_superseded;    /* ...of code replaced during its pass */
};

struct letw_codemap {
	int64_t vpid;   /* the process key: vpid and pid namespace (sink_common.h) */
	struct letw_region *r; /* rg.p: the regions, in trace order */
	size_t n;
	struct letw_grow rg;   /* r's storage (grow.h: no copy when it doubles) */
	/* start → the newest region there (addrindex.h), built at the first
	 * lookup that needs it, then kept current (codemap.c). */
	struct letw_addrindex at_start;
	int indexing;        /* at_start is built and kept current */
	size_t indexed;      /* regions [0, indexed) are in at_start */
	GStringChunk *names; /* every region's name */
	size_t hint; /* the region the next record probably names */
	uint64_t max_start; /* the highest start in the table */
	int64_t pass_begin_ns; /* letw_codemap_pass_begin */
	struct letw_codemap_stats stats;
};

enum letw_rundown_match {
	LETW_RD_LIVE = 0,         /* the live region at that address */
	LETW_RD_NEW = 1,          /* code the trace had not seen: region added */
	LETW_RD_AFTER_UNLOAD = 2, /* same code as a region already unloaded */
	LETW_RD_SUPERSEDED = 3,   /* older than the region at that start, which
				   * was loaded during this pass: code since
				   * replaced (*region names the newer one) */
};

void letw_codemap_init(struct letw_codemap *m, int64_t vpid);

/* The time of the Init of the pass the next rundown records belong to (0:
 * unknown, its Init lost): set by the sink before letw_codemap_rundown_by. */
void letw_codemap_pass_begin(struct letw_codemap *m, int64_t ts);
void letw_codemap_fini(struct letw_codemap *m);

/* name is borrowed: the map copies it when it keeps a new region (most
 * rundown records name code the map already holds: no allocation).
 * Return 0 or -ENOMEM. */
int letw_codemap_load_copy(struct letw_codemap *m, int64_t ts, int obj,
			   uint64_t start, uint32_t size, const char *name);
int letw_codemap_unload_copy(struct letw_codemap *m, int64_t ts, int obj,
			     uint64_t start, uint32_t size, const char *name);
/* Returns an enum letw_rundown_match (>= 0) or -ENOMEM; *region is the
 * index of the matched or added region, and for LETW_RD_AFTER_UNLOAD its
 * death_ns tells when it was unloaded. */
int letw_codemap_rundown_copy(struct letw_codemap *m, int64_t ts, int obj,
			      uint64_t start, uint32_t size, const char *name,
			      size_t *region);

/* letw_codemap_rundown_copy() with the name from src. */
int letw_codemap_rundown_by(struct letw_codemap *m, int64_t ts, int obj,
			    uint64_t start, uint32_t size,
			    const struct letw_name_src *src, size_t *region);

/* Frees the start index (newest_at()'s: 16-32 bytes a region, slots at
 * most half full, and 1-2 of bitmap);
 * the next lookup that needs it builds it again. For a map that is read
 * whole from now on: its memory is then free for the build below. */
void letw_codemap_drop_index(struct letw_codemap *m);

/* ---- building the perf map ---- */

struct letw_map_entry {
	uint64_t start;
	uint32_t size;
	const char *name; /* borrowed from the codemap */
};

struct letw_reuse {
	size_t ranges;        /* address ranges that held different code over time */
	size_t regions;       /* regions involved in those ranges */
	size_t omitted;       /* regions left out, newer code covering them
			       * whole (mode latest) */
	size_t trimmed;       /* regions newer code covers in part, written as
			       * the piece(s) it leaves free (mode latest) */
	size_t merged;        /* identical regions seen several times, written once */
	uint64_t example[4];  /* start of a few reused ranges */
};

enum letw_map_mode { LETW_MAP_LATEST = 0, LETW_MAP_ALL = 1 };

/* Entries sorted by start. LATEST names each address, in a range reused
 * by different code, after the most recently live region there: lines that
 * do not overlap, an older region cut to the piece(s) no more recent one
 * covers (possibly more lines than regions); ALL keeps every distinct
 * region (overlapping lines, as perf reads them, resolve to whichever perf
 * picks). Returns 0 or -ENOMEM; *out is malloc()ed (NULL when empty). */
int letw_codemap_build(const struct letw_codemap *m, enum letw_map_mode mode,
		       struct letw_map_entry **out, size_t *n_out,
		       struct letw_reuse *reuse);

#endif /* LETW_BT_CODEMAP_H */
