/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/uatomic.h>
#include <urcu/wfstack.h>

#include "record.h"

/* Records allocated and not yet freed: live ones plus deferred frees. */
static long allocated_recs;

/*
 * Validate and measure in one scan (this runs on the publish path):
 * UTF-8 well-formedness per RFC 3629 (no overlongs, no surrogates, at most
 * U+10FFFF), bounded at LETW_STRING_MAX bytes so a megabyte name costs no
 * more than a 4 KiB one. Written out rather than pulled from a library: it
 * is 30 lines and must not allocate or touch locale state. A truncated
 * sequence stops at the NUL, whose top bits are not 10.
 * Returns the length, or -ENAMETOOLONG / -EILSEQ.
 */
static long utf8_len(const unsigned char *s)
{
	const unsigned char *p = s;

	while (*p) {
		unsigned char c = *p;
		int n;
		uint32_t cp;

		if ((size_t)(p - s) >= LETW_STRING_MAX)
			return -ENAMETOOLONG;
		if (c < 0x80) {
			p++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07;
		} else {
			return -EILSEQ;
		}
		for (int i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return -EILSEQ;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return -EILSEQ;
		p += n + 1;
	}
	if ((size_t)(p - s) > LETW_STRING_MAX)
		return -ENAMETOOLONG;
	return (long)(p - s);
}

long letw_validate_string(const char *s, int required)
{
	long len;

	if (!s)
		return required ? -EINVAL : 0;
	len = utf8_len((const unsigned char *)s);
	if (len == 0 && required)
		return -EINVAL;
	return len;
}

/* Copy a validated string of length len (NULL: "") and advance. */
static const char *str_put(char **cursor, const char *s, long len)
{
	char *dst = *cursor;

	if (s)
		memcpy(dst, s, (size_t)len);
	dst[len] = '\0';
	*cursor += len + 1;
	return dst;
}

/*
 * One allocation per record: header, page nodes, strings. The range
 * [start, end) must not wrap and must be non-empty.
 */
static struct letw_rec *rec_alloc(uint64_t start, uint32_t size,
				  size_t strings, size_t extra, char **cursor)
{
	uint64_t end = start + size;
	uint64_t first = start >> LETW_PAGE_SHIFT;
	uint64_t last = (end - 1) >> LETW_PAGE_SHIFT;
	uint64_t npages = last - first + 1;
	struct letw_rec *rec;

	/* `extra` (8-aligned) goes first after the page nodes, the strings
	 * (no alignment) last. */
	rec = calloc(1, sizeof(*rec) + npages * sizeof(rec->pages[0]) + extra + strings);
	if (!rec)
		return NULL;
	rec->start = start;
	rec->end = end;
	rec->npages = (uint32_t)npages;
	rec->pages = (struct letw_page_node *)(rec + 1);
	for (uint64_t i = 0; i < npages; i++) {
		rec->pages[i].page = first + i;
		rec->pages[i].rec = rec;
	}
	*cursor = (char *)(rec->pages + npages) + extra;
	uatomic_inc(&allocated_recs);
	return rec;
}

static int check_range(uint64_t start, uint32_t size)
{
	if (size == 0 || start + size < start)
		return -EINVAL;
	return 0;
}

int letw_rec_new_method(const struct letw_method *m,
			const struct letw_method_opts *opts, uint16_t instance_id,
			struct letw_rec **out)
{
	struct letw_rec *rec;
	long ln, lns, lsig, llines;
	char *cur;
	int ret;

	if (!m || !out)
		return -EINVAL;
	if ((ret = check_range(m->code_start, m->code_size)))
		return ret;
	if ((ln = letw_validate_string(m->name, 1)) < 0)
		return (int)ln;
	if ((lns = letw_validate_string(m->method_namespace, 0)) < 0)
		return (int)lns;
	if ((lsig = letw_validate_string(m->signature, 0)) < 0)
		return (int)lsig;
	if ((llines = letw_lines_size(m, opts)) < 0)
		return (int)llines;
	rec = rec_alloc(m->code_start, m->code_size,
			(size_t)(lns + ln + lsig + 3), (size_t)llines, &cur);
	if (!rec)
		return -ENOMEM;
	if (llines)
		rec->lines = letw_lines_build(cur - llines, opts);
	rec->kind = LETW_REC_METHOD;
	rec->p.method = (struct letw_tp_method){
		.method_id = m->method_id,
		.module_id = m->module_id,
		.code_start = m->code_start,
		.version_id = m->version_id,
		.code_size = m->code_size,
		.method_token = m->method_token,
		.method_flags = m->method_flags,
		.instance_id = instance_id,
	};
	rec->p.method.method_namespace = str_put(&cur, m->method_namespace, lns);
	rec->p.method.name = str_put(&cur, m->name, ln);
	rec->p.method.signature = str_put(&cur, m->signature, lsig);
	*out = rec;
	return 0;
}

int letw_rec_new_stub(const struct letw_stub *s, uint16_t instance_id,
		      struct letw_rec **out)
{
	struct letw_rec *rec;
	long len;
	char *cur;
	int ret;

	if (!s || !out)
		return -EINVAL;
	if ((ret = check_range(s->start, s->size)))
		return ret;
	if ((len = letw_validate_string(s->name, 0)) < 0)
		return (int)len;
	rec = rec_alloc(s->start, s->size, (size_t)len + 1, 0, &cur);
	if (!rec)
		return -ENOMEM;
	rec->kind = LETW_REC_STUB;
	rec->p.stub = (struct letw_tp_stub){
		.start = s->start,
		.owner = s->owner,
		.size = s->size,
		.kind = s->kind,
		.instance_id = instance_id,
	};
	rec->p.stub.name = str_put(&cur, s->name, len);
	*out = rec;
	return 0;
}

int letw_module_rec_new(const struct letw_module *m, uint16_t instance_id,
			struct letw_module_rec **out)
{
	struct letw_module_rec *mod;
	long len;
	char *cur;

	if (!m || !out || m->module_id == 0)
		return -EINVAL;
	if ((len = letw_validate_string(m->name, 1)) < 0)
		return (int)len;
	mod = calloc(1, sizeof(*mod) + (size_t)len + 1);
	if (!mod)
		return -ENOMEM;
	cur = (char *)(mod + 1);
	uatomic_inc(&allocated_recs);
	mod->p = (struct letw_tp_module){
		.module_id = m->module_id,
		.module_flags = m->module_flags,
		.instance_id = instance_id,
	};
	mod->p.name = str_put(&cur, m->name, len);
	*out = mod;
	return 0;
}

void letw_rec_put(struct letw_rec *rec)
{
	free(rec);
	uatomic_dec(&allocated_recs);
}

void letw_module_rec_put(struct letw_module_rec *mod)
{
	free(mod);
	uatomic_dec(&allocated_recs);
}

/*
 * The parking lot. walks_active counts walks in progress; a release that
 * finds it non-zero pushes the record on a wait-free stack instead of
 * freeing it.
 *
 * Why a record a walker collected is never freed under it: the walker
 * increments walks_active (a full barrier) before its read-side section.
 * If that section found the record, the section began before the
 * record's removal, so the removal's grace period waited for it, and the
 * release callback — which runs after that grace period, itself ordered by
 * full barriers — sees walks_active != 0 and parks. A callback that saw 0
 * belongs to a record removed before the walk's section began, which that
 * walk cannot have found. A release parked just after the last walk
 * drained the lot waits for the next walk (or letw_walk_drain).
 */
static long walks_active;
static struct cds_wfs_stack parked_recs, parked_mods;

/* Before any thread can publish or walk: a library constructor. */
__attribute__((constructor)) static void parking_init(void)
{
	cds_wfs_init(&parked_recs);
	cds_wfs_init(&parked_mods);
}

/*
 * The rcu_head is dead once its callback runs: its storage becomes the
 * parking node (one pointer, within the rcu_head's two), so parking
 * allocates nothing and writes nothing beyond the rcu_head — the walker
 * may still be reading the record's other fields.
 */
_Static_assert(sizeof(struct cds_wfs_node) <= sizeof(struct rcu_head),
	       "the parking node must fit in the rcu_head");

static int park(struct rcu_head *head, struct cds_wfs_stack *lot)
{
	struct cds_wfs_node *node = (struct cds_wfs_node *)head;

	if (!uatomic_read(&walks_active))
		return 0;
	cds_wfs_node_init(node);
	cds_wfs_push(lot, node);
	return 1;
}

static void rec_release_rcu(struct rcu_head *head)
{
	if (!park(head, &parked_recs))
		letw_rec_put(caa_container_of(head, struct letw_rec, rcu));
}

static void module_release_rcu(struct rcu_head *head)
{
	if (!park(head, &parked_mods))
		letw_module_rec_put(caa_container_of(head, struct letw_module_rec, rcu));
}

void letw_rec_put_deferred(struct letw_rec *rec)
{
	/* call_rcu enqueues on a wait-free queue and wakes the worker:
	 * the calling runtime thread never waits for a grace period. */
	urcu_bp_call_rcu(&rec->rcu, rec_release_rcu);
}

void letw_module_rec_put_deferred(struct letw_module_rec *mod)
{
	urcu_bp_call_rcu(&mod->rcu, module_release_rcu);
}

void letw_walk_begin(void)
{
	(void)uatomic_add_return(&walks_active, 1); /* full barrier */
}

static void drain(void)
{
	struct cds_wfs_head *head;
	struct cds_wfs_node *node, *next;

	if ((head = __cds_wfs_pop_all(&parked_recs)))
		cds_wfs_for_each_blocking_safe(head, node, next)
			letw_rec_put(caa_container_of((struct rcu_head *)node,
						      struct letw_rec, rcu));
	if ((head = __cds_wfs_pop_all(&parked_mods)))
		cds_wfs_for_each_blocking_safe(head, node, next)
			letw_module_rec_put(caa_container_of(
				(struct rcu_head *)node, struct letw_module_rec, rcu));
}

void letw_walk_end(void)
{
	if (uatomic_sub_return(&walks_active, 1) == 0)
		drain();
}

uint64_t letw_rec_allocated(void)
{
	return (uint64_t)uatomic_read(&allocated_recs);
}
