/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codemap.h"

void letw_codemap_init(struct letw_codemap *m, int64_t vpid)
{
	memset(m, 0, sizeof(*m));
	m->vpid = vpid;
}

void letw_codemap_fini(struct letw_codemap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->r[i].name);
	free(m->r);
	letw_u64map_fini(&m->at_start);
	memset(m, 0, sizeof(*m));
}

static int add_region(struct letw_codemap *m, int64_t ts, int obj,
		      uint64_t start, uint32_t size, char *name, unsigned flags,
		      size_t *idx)
{
	struct letw_region *r;

	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		struct letw_region *nr = realloc(m->r, ncap * sizeof(*nr));

		if (!nr)
			goto nomem;
		m->r = nr;
		m->cap = ncap;
	}
	if (m->n >= UINT32_MAX || letw_u64map_put(&m->at_start, start, (uint32_t)m->n))
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
	return 0;
nomem:
	free(name);
	return -ENOMEM;
}

/* The newest region at start, or NULL. */
static struct letw_region *newest_at(struct letw_codemap *m, uint64_t start)
{
	uint32_t i;

	return letw_u64map_get(&m->at_start, start, &i) ? &m->r[i] : NULL;
}

static int same_code(const struct letw_region *r, int obj, uint32_t size,
		     const char *name)
{
	return r->obj == obj && r->size == size && strcmp(r->name, name) == 0;
}

static void end_region(struct letw_region *r, int64_t ts, unsigned how)
{
	r->flags |= LETW_REG_DEAD | how;
	r->death_ns = ts;
	r->last_ns = ts;
}

int letw_codemap_load(struct letw_codemap *m, int64_t ts, int obj,
		      uint64_t start, uint32_t size, char *name)
{
	struct letw_region *old = newest_at(m, start);

	m->stats.loads++;
	if (old && !(old->flags & LETW_REG_DEAD)) {
		/* Its unload is not in the trace (lost, or a runtime bug):
		 * the new load still proves the old code is gone. */
		end_region(old, ts, LETW_REG_IMPLICIT_END);
		m->stats.implicit_replacements++;
	}
	return add_region(m, ts, obj, start, size, name, LETW_REG_BIRTH, NULL);
}

int letw_codemap_unload(struct letw_codemap *m, int64_t ts, int obj,
			uint64_t start, uint32_t size, char *name)
{
	struct letw_region *old = newest_at(m, start);
	size_t idx;
	int ret;

	m->stats.unloads++;
	/* The table is keyed by start, so an unload ends whatever is live
	 * there even if its payload differs. */
	if (old && !(old->flags & LETW_REG_DEAD)) {
		end_region(old, ts, 0);
		free(name);
		return 0;
	}
	/* Loaded before the trace began and never listed by a rundown: the
	 * unload alone still names code that ran. */
	m->stats.unmatched_unloads++;
	ret = add_region(m, ts, obj, start, size, name, 0, &idx);
	if (!ret)
		end_region(&m->r[idx], ts, 0);
	return ret;
}

int letw_codemap_rundown(struct letw_codemap *m, int64_t ts, int obj,
			 uint64_t start, uint32_t size, char *name,
			 size_t *region)
{
	struct letw_region *old = newest_at(m, start);
	int ret;

	m->stats.rundown_records++;
	if (old && same_code(old, obj, size, name)) {
		*region = (size_t)(old - m->r);
		free(name);
		if (old->flags & LETW_REG_DEAD) {
			m->stats.rundown_after_unload++;
			return LETW_RD_AFTER_UNLOAD;
		}
		old->flags |= LETW_REG_RUNDOWN;
		old->last_ns = ts;
		return LETW_RD_LIVE;
	}
	if (old && !(old->flags & LETW_REG_DEAD)) {
		end_region(old, ts, LETW_REG_IMPLICIT_END);
		m->stats.implicit_replacements++;
	}
	ret = add_region(m, ts, obj, start, size, name, LETW_REG_RUNDOWN, region);
	return ret ? ret : LETW_RD_NEW;
}
