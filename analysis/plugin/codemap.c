/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codemap.h"

/* Keys are code addresses stored as pointers (g_direct_hash). */
G_STATIC_ASSERT(sizeof(gpointer) >= sizeof(uint64_t));

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
	if (m->at_start)
		g_hash_table_destroy(m->at_start);
	memset(m, 0, sizeof(*m));
}

void letw_codemap_drop_index(struct letw_codemap *m)
{
	if (m->at_start)
		g_hash_table_destroy(m->at_start);
	m->at_start = NULL;
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
	/* Once lookups need the table, a new region goes in at once: the
	 * lookup that proved its address new has just brought the bucket into
	 * the cache, so the insert is a hit, where a batch later was a miss
	 * each (index_pending). */
	if (m->at_start && m->indexed == m->n - 1) {
		g_hash_table_insert(m->at_start, GSIZE_TO_POINTER(start),
				    GSIZE_TO_POINTER(m->n));
		m->indexed = m->n;
	}
	return 0;
nomem:
	return -ENOMEM;
}

/* Regions enter the hash table once a lookup needs it (add_region()
 * keeps it current from then on): a trace whose records all follow store
 * order (or climb past every address seen) never builds it. In index
 * order, so the newest region at an address wins. glib aborts rather than
 * fail an allocation (its documented policy): nothing to check. */
static void index_pending(struct letw_codemap *m)
{
	if (!m->at_start)
		m->at_start = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (; m->indexed < m->n; m->indexed++)
		g_hash_table_insert(m->at_start, GSIZE_TO_POINTER(m->r[m->indexed].start),
				    GSIZE_TO_POINTER(m->indexed + 1));
}

/* The newest region at start, or NULL. Rundown passes list code in the
 * runtime's store order, the order an earlier pass (or the loads) added
 * it here: the region after the last one found is tried before the hash
 * table, which turns a pass over known code into a sequential scan
 * instead of a cache miss per record. */
static struct letw_region *newest_at(struct letw_codemap *m, uint64_t start)
{
	size_t i;

	if (m->hint < m->n && m->r[m->hint].start == start &&
	    !(m->r[m->hint].flags & LETW_REG_SUPERSEDED)) {
		i = m->hint;
	} else if (!m->n || start > m->max_start) {
		/* Past every address seen (a first pass over code allocated
		 * upwards): not in the table, no need to look. */
		return NULL;
	} else {
		gsize v;

		index_pending(m);
		v = GPOINTER_TO_SIZE(g_hash_table_lookup(m->at_start, GSIZE_TO_POINTER(start)));

		if (!v)
			return NULL;
		i = v - 1;
	}
	m->hint = i + 1;
	return &m->r[i];
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
	struct letw_region *old = newest_at(m, start);

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
	struct letw_region *old = newest_at(m, start);
	size_t idx;
	int ret;

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
	struct letw_region *old = newest_at(m, start);
	const char *name;
	int ret, same = 0;

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
