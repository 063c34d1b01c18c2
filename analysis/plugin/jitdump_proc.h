/* SPDX-License-Identifier: MIT */
/*
 * One traced process as the jitdump sink sees it: every code region the
 * trace shows (from a load, a rundown record of code not already loaded,
 * or an unload of code never seen loaded), with the time perf must map it
 * at, and the line table and code bytes the trace carried for it.
 *
 * No babeltrace2 types beyond the decoded chunks (jitdump_extra.h), so the
 * dating rules are readable in one place:
 *  - a load is mapped at its event's time;
 *  - code the trace only knows from a rundown record or an unload was
 *    loaded before the trace saw it: it is mapped from the start of time
 *    (LETW_JD_BEFORE_TRACE_NS: samples perf took before the session began
 *    resolve, as the perf map names them), or, when other code held any
 *    of its addresses earlier in the trace, no earlier than the end of
 *    that code (its unload; the record itself when the trace never saw it
 *    go).
 * Times are raw CLOCK_MONOTONIC ns (perf's clock under `perf record -k
 * mono`), not babeltrace2's ns from origin.
 */
#ifndef LETW_BT_JITDUMP_PROC_H
#define LETW_BT_JITDUMP_PROC_H

/* The LOAD time of code loaded before the trace saw it, when the
 * process's start is not known (jitdump.c, process_since). Dated at the
 * process's first event, it left unnamed every sample of a perf run
 * started before the session (the perf audit: 12,322 samples). 1, not 0:
 * a time perf takes for a real one. */
#define LETW_JD_BEFORE_TRACE_NS 1u

#include <stdint.h>

#include <glib.h>

#include "addrindex.h"
#include "grow.h"
#include "jitdump_extra.h"
#include "jitdump_write.h"
#include "names.h"

/* The provider's limits (LETW_LINES_MAX, LETW_CODE_BYTES_MAX): beyond
 * them a chunk is damage. */
#define LETW_JD_ROWS_MAX 65535u
#define LETW_JD_CODE_MAX (256u * 1024u)
/* A LOAD carries its code size in bytes: larger regions (damage, or a
 * runtime publishing a whole heap as one method) are left out. */
#define LETW_JD_LOAD_MAX (64u * 1024u * 1024u)

enum letw_jd_origin {
	LETW_JD_FROM_LOAD = 0,
	LETW_JD_FROM_RUNDOWN,
	LETW_JD_FROM_UNLOAD,
};

struct letw_jd_code;
struct letw_jd_rows;

/* What few regions own: their code bytes and line table, as far as the
 * trace carried them (most have neither: one pointer in the region). */
struct letw_jd_extra {
	struct letw_jd_code *code;
	struct letw_jd_rows *rows;
};

/* 64 bytes: 10^5 and more of them, and every page of the array is one
 * the kernel clears first (jitdump.c's speed is mostly memory). */
struct letw_jd_region {
	uint64_t start;
	uint32_t size;
	uint8_t obj;      /* enum letw_ev_object: METHOD or STUB */
	uint8_t origin;   /* enum letw_jd_origin */
	uint8_t dead;     /* unloaded or replaced at death_ns */
	uint8_t superseded; /* a newer region starts at the same address */
	char *name;       /* in the process's string chunk */
	uint64_t method_id, version_id;
	union {
		uint64_t rec_ns;  /* the event that made the region... */
		uint64_t load_ns; /* ...until letw_jd_proc_finish makes it the
				   * time perf maps it */
	};
	uint64_t death_ns;
	struct letw_jd_extra *extra; /* NULL: neither */
};

G_STATIC_ASSERT(sizeof(struct letw_jd_region) == 64);

struct letw_jd_stats {
	uint64_t loads, rundown_new, rundown_known, unload_only;
	uint64_t rundown_superseded; /* records of code replaced during their pass */
	uint64_t implicit_replacements; /* new code over live code, no unload */
	uint64_t orphan_chunks;   /* line/code chunks of code the trace lacks */
	uint64_t bad_chunks;      /* chunks that contradict their region */
};

struct letw_jd_proc {
	int64_t vpid;   /* the process key: vpid and pid namespace (sink_common.h) */
	struct letw_jd_region *regions; /* in trace order: rg.p */
	guint nregions;
	struct letw_grow rg;   /* regions' storage (grow.h: no copy when it doubles) */
	struct letw_addrindex at_start; /* start → newest region (addrindex.h) */
	GStringChunk *names;   /* every region's name: no malloc per record */
	GArray *with_extra;    /* guint: the regions that own code or rows */
	guint hint;            /* the region the next record probably names */
	uint64_t first_ns, last_ns;
	uint64_t pass_begin_ns; /* the Init of the latest pass (0: none); set
				 * by the sink before each rundown record */
	int has_ts;
	uint32_t max_size;
	uint64_t max_start; /* the highest start of any region */
	struct letw_jd_stats stats;
};

struct letw_jd_proc *letw_jd_proc_new(int64_t vpid);
void letw_jd_proc_free(struct letw_jd_proc *p);

/* Every event of the process, to know its first and last time. */
void letw_jd_proc_touch(struct letw_jd_proc *p, uint64_t ns);

/* A record's method_id and version_id, read only when it adds a region
 * (most rundown records name code already known). */
struct letw_jd_ids {
	void (*get)(void *arg, uint64_t *method_id, uint64_t *version_id);
	void *arg;
};

/* name is borrowed (copied when kept); for unloads and rundown records,
 * most of which name code already known, src builds it and ids reads the
 * identifiers only when a region is added. Return 0 or -ENOMEM. */
int letw_jd_proc_load(struct letw_jd_proc *p, uint64_t ns, int obj,
		      uint64_t start, uint32_t size, const char *name,
		      uint64_t method_id, uint64_t version_id);
int letw_jd_proc_unload(struct letw_jd_proc *p, uint64_t ns, int obj,
			uint64_t start, uint32_t size, const struct letw_name_src *src,
			const struct letw_jd_ids *ids);
int letw_jd_proc_rundown(struct letw_jd_proc *p, uint64_t ns, int obj,
			 uint64_t start, uint32_t size, const struct letw_name_src *src,
			 const struct letw_jd_ids *ids);

/* A line-table or code-bytes chunk: attached to the newest region at its
 * code_start when method id and version agree, else counted. */
void letw_jd_proc_extra(struct letw_jd_proc *p, const struct letw_jdx *x);

/* Date the regions the trace saw no load for (at before_ns, see
 * jitdump.c's process_since; LETW_JD_BEFORE_TRACE_NS when unknown), and
 * return the indexes of every region in the order their LOADs go in the
 * file (by load time, then trace order): a GArray of guint, caller frees. */
GArray *letw_jd_proc_finish(struct letw_jd_proc *p, uint64_t before_ns);

/* The region's code bytes when the trace held all of them, else NULL. */
const uint8_t *letw_jd_region_code(const struct letw_jd_region *r);
/* Whether the trace held the region's whole line table. */
int letw_jd_region_has_lines(const struct letw_jd_region *r);
/* Whether it held any of them (whole or not). */
static inline int letw_jd_region_some_code(const struct letw_jd_region *r)
{
	return r->extra && r->extra->code;
}

static inline int letw_jd_region_some_lines(const struct letw_jd_region *r)
{
	return r->extra && r->extra->rows;
}
/*
 * The DEBUG_INFO entries of a region with a whole line table: one per
 * native offset, the innermost inline frame there (the deepest
 * inline_depth: the source the instructions came from), consecutive
 * repeats merged, plus one at the code's end (addr = start + size) so the
 * last line reaches it. File names are borrowed from the region. GArray
 * of struct letw_jd_line, caller frees.
 */
GArray *letw_jd_region_debug_lines(const struct letw_jd_region *r);

#endif /* LETW_BT_JITDUMP_PROC_H */
