/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codemap.h"

/* addrindex.h reads a region's start at its beginning. */
G_STATIC_ASSERT(offsetof(struct letw_region, start) == 0);

void letw_codemap_init(struct letw_codemap *m, int64_t vpid)
{
	memset(m, 0, sizeof(*m));
	m->vpid = vpid;
}

void letw_codemap_fini(struct letw_codemap *m)
{
	if (m->names)
		g_string_chunk_free(m->names);
	letw_grow_free(&m->rg, sizeof(*m->r));
	letw_addrindex_free(&m->at_start);
	memset(m, 0, sizeof(*m));
}

void letw_codemap_drop_index(struct letw_codemap *m)
{
	letw_addrindex_free(&m->at_start);
	m->indexing = 0;
	m->indexed = 0;
}

/* old: the newest region at start before this one, or NULL. */
static int add_region(struct letw_codemap *m, struct letw_region *old, int64_t ts,
		      int obj, uint64_t start, uint32_t size, const char *name_in,
		      unsigned flags, size_t *idx)
{
	struct letw_region *r;
	char *name;

	/* Region names live as long as the map: one glib string chunk
	 * (no malloc and free per region). */
	if (!m->names)
		m->names = g_string_chunk_new(256 * 1024);
	name = g_string_chunk_insert(m->names, name_in);
	/* Before the array moves. On failure below the flag only costs
	 * newest_at() its shortcut. */
	if (old)
		old->flags |= LETW_REG_SUPERSEDED;
	if (m->n == m->rg.cap) {
		if (letw_grow(&m->rg, sizeof(*m->r), m->n + 1))
			goto nomem;
		m->r = m->rg.p;
	}
	if (m->n >= UINT32_MAX - 1)
		goto nomem;
	r = &m->r[m->n];
	r->start = start;
	r->size = size;
	r->obj = (uint8_t)obj;
	r->flags = (uint8_t)flags;
	r->name = name;
	r->birth_ns = ts;
	r->death_ns = 0;
	r->last_ns = ts;
	if (idx)
		*idx = m->n;
	m->n++;
	m->hint = m->n;
	if (start > m->max_start)
		m->max_start = start;
	/* Once lookups need the index, a new region goes in at once (its
	 * insert is made a few puts later, its line prefetched: addrindex.h)
	 * rather than in a batch at the next lookup that misses, whose
	 * inserts were a cache miss each (index_pending). Without memory to
	 * grow the index, the region waits for index_pending, which fails
	 * the next lookup. */
	if (m->indexing && m->indexed == m->n - 1 &&
	    letw_addrindex_put(&m->at_start, m->n - 1, m->r, sizeof(*m->r)) == 0)
		m->indexed = m->n;
	return 0;
nomem:
	return -ENOMEM;
}

/* Regions enter the index once a lookup needs it (add_region() keeps it
 * current from then on): a trace whose records all follow store order
 * (or climb past every address seen) never builds it. In index order, so
 * the newest region at an address wins. Returns 0 or -ENOMEM. */
static int index_pending(struct letw_codemap *m)
{
	m->indexing = 1;
	for (; m->indexed < m->n; m->indexed++) {
		int ret = letw_addrindex_put(&m->at_start, m->indexed, m->r, sizeof(*m->r));

		if (ret)
			return ret;
	}
	return 0;
}

/* *out: the newest region at start, or NULL. Returns 0 or -ENOMEM.
 * Rundown passes list code in the runtime's store order, the order an
 * earlier pass (or the loads) added it here: the region after the last one
 * found is tried before the index, which turns a pass over known code into
 * a sequential scan instead of a probe per record. */
static int newest_at(struct letw_codemap *m, uint64_t start, struct letw_region **out)
{
	size_t i;

	*out = NULL;
	if (m->hint < m->n && m->r[m->hint].start == start &&
	    !(m->r[m->hint].flags & LETW_REG_SUPERSEDED)) {
		i = m->hint;
	} else if (!m->n || start > m->max_start) {
		/* Past every address seen (a first pass over code allocated
		 * upwards): not in the table, no need to look. */
		return 0;
	} else {
		size_t v;

		if (m->indexed < m->n && index_pending(m))
			return -ENOMEM;
		v = letw_addrindex_find(&m->at_start, start, m->r, sizeof(*m->r));
		if (!v)
			return 0;
		i = v - 1;
	}
	m->hint = i + 1;
	*out = &m->r[i];
	return 0;
}

static void end_region(struct letw_region *r, int64_t ts, unsigned how)
{
	r->flags |= LETW_REG_DEAD | how;
	r->death_ns = ts;
	r->last_ns = ts;
}

int letw_codemap_load_copy(struct letw_codemap *m, int64_t ts, int obj,
			   uint64_t start, uint32_t size, const char *name)
{
	struct letw_region *old;

	if (newest_at(m, start, &old))
		return -ENOMEM;
	m->stats.loads++;
	if (old && !(old->flags & LETW_REG_DEAD)) {
		/* Its unload is not in the trace (lost, or a runtime bug):
		 * the new load still proves the old code is gone. */
		end_region(old, ts, LETW_REG_IMPLICIT_END);
		m->stats.implicit_replacements++;
	}
	return add_region(m, old, ts, obj, start, size, name, LETW_REG_BIRTH, NULL);
}

int letw_codemap_unload_copy(struct letw_codemap *m, int64_t ts, int obj,
			     uint64_t start, uint32_t size, const char *name)
{
	struct letw_region *old;
	size_t idx;
	int ret;

	if (newest_at(m, start, &old))
		return -ENOMEM;
	m->stats.unloads++;
	/* The table is keyed by start, so an unload ends whatever is live
	 * there even if its payload differs. */
	if (old && !(old->flags & LETW_REG_DEAD)) {
		end_region(old, ts, 0);
		return 0;
	}
	/* Loaded before the trace began and never listed by a rundown: the
	 * unload alone still names code that ran. */
	m->stats.unmatched_unloads++;
	ret = add_region(m, old, ts, obj, start, size, name, 0, &idx);
	if (!ret)
		end_region(&m->r[idx], ts, 0);
	return ret;
}

void letw_codemap_pass_begin(struct letw_codemap *m, int64_t ts)
{
	m->pass_begin_ns = ts;
}

int letw_codemap_rundown_by(struct letw_codemap *m, int64_t ts, int obj,
			    uint64_t start, uint32_t size,
			    const struct letw_name_src *src, size_t *region)
{
	struct letw_region *old;
	const char *name;
	int ret, same = 0;

	if (newest_at(m, start, &old))
		return -ENOMEM;
	m->stats.rundown_records++;
	if (old && old->obj == obj && old->size == size) {
		same = src->is(old->name, src->arg);
		if (same < 0)
			return same;
	}
	if (same) {
		*region = (size_t)(old - m->r);
		if (old->flags & LETW_REG_DEAD) {
			m->stats.rundown_after_unload++;
			return LETW_RD_AFTER_UNLOAD;
		}
		old->flags |= LETW_REG_RUNDOWN;
		old->last_ns = ts;
		return LETW_RD_LIVE;
	}
	/* The walker copies records inside a read-side section and emits
	 * the copies after it (rundown/walker.c): meanwhile a record may be
	 * unloaded and other code loaded at its start — the region here,
	 * loaded during this pass. A pass lists only records published
	 * before it began, so this record is older than that region: code
	 * since replaced (its unload is in the trace), not new code. Taken
	 * for new, it ended the live region and named its addresses after
	 * freed code. */
	if (old && (old->flags & LETW_REG_BIRTH) && m->pass_begin_ns &&
	    old->birth_ns >= m->pass_begin_ns) {
		m->stats.rundown_superseded++;
		*region = (size_t)(old - m->r);
		return LETW_RD_SUPERSEDED;
	}
	name = src->get(src->arg);
	if (!name)
		return -ENOMEM;
	if (old && !(old->flags & LETW_REG_DEAD)) {
		end_region(old, ts, LETW_REG_IMPLICIT_END);
		m->stats.implicit_replacements++;
	}
	ret = add_region(m, old, ts, obj, start, size, name, LETW_REG_RUNDOWN, region);
	return ret ? ret : LETW_RD_NEW;
}

static int str_is(const char *stored, void *name)
{
	return strcmp(stored, name) == 0;
}

static const char *str_get(void *name)
{
	return name;
}

int letw_codemap_rundown_copy(struct letw_codemap *m, int64_t ts, int obj,
			      uint64_t start, uint32_t size, const char *name,
			      size_t *region)
{
	const struct letw_name_src src = { str_is, str_get, (void *)name };

	return letw_codemap_rundown_by(m, ts, obj, start, size, &src, region);
}
