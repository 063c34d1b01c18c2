/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include <urcu/uatomic.h>

#include "hash.h"
#include "table.h"

static int match_code(struct cds_lfht_node *node, const void *key)
{
	const struct letw_rec *rec = caa_container_of(node, struct letw_rec, node);

	return rec->start == *(const uint64_t *)key;
}

static int match_page(struct cds_lfht_node *node, const void *key)
{
	const struct letw_page_node *pn =
		caa_container_of(node, struct letw_page_node, node);

	return pn->page == *(const uint64_t *)key;
}

static int match_module(struct cds_lfht_node *node, const void *key)
{
	const struct letw_module_rec *mod =
		caa_container_of(node, struct letw_module_rec, node);

	return mod->p.module_id == *(const uint64_t *)key;
}

#ifdef LETW_GLOBAL_LOCK
#define BIG_LOCK(t) pthread_mutex_lock(&(t)->big_lock)
#define BIG_UNLOCK(t) pthread_mutex_unlock(&(t)->big_lock)
#else
#define BIG_LOCK(t) ((void)(t))
#define BIG_UNLOCK(t) ((void)(t))
#endif

static struct cds_lfht *new_ht(void)
{
	/* Resizes run on liburcu's call_rcu worker, never on the thread
	 * that inserts. */
	return cds_lfht_new_flavor(1024, 1024, 0,
				   CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				   &urcu_bp_flavor, NULL);
}

struct letw_table *letw_table_new(void)
{
	struct letw_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->code = new_ht();
	t->pages = new_ht();
	t->modules = new_ht();
	if (!t->code || !t->pages || !t->modules) {
		if (t->code)
			cds_lfht_destroy(t->code, NULL);
		if (t->pages)
			cds_lfht_destroy(t->pages, NULL);
		if (t->modules)
			cds_lfht_destroy(t->modules, NULL);
		free(t);
		return NULL;
	}
#ifdef LETW_GLOBAL_LOCK
	pthread_mutex_init(&t->big_lock, NULL);
#endif
	return t;
}

static int ranges_overlap(const struct letw_rec *a, const struct letw_rec *b)
{
	return a->start < b->end && b->start < a->end;
}

/* Is any other not-dead record registered on rec's pages overlapping it? */
static int find_overlap(struct letw_table *t, struct letw_rec *rec)
{
	for (uint32_t i = 0; i < rec->npages; i++) {
		uint64_t page = rec->pages[i].page;
		struct cds_lfht_iter iter;
		struct cds_lfht_node *node;

		cds_lfht_lookup(t->pages, letw_hash_u64(page), match_page, &page, &iter);
		for (node = cds_lfht_iter_get_node(&iter); node;
		     cds_lfht_next_duplicate(t->pages, match_page, &page, &iter),
		     node = cds_lfht_iter_get_node(&iter)) {
			struct letw_page_node *pn =
				caa_container_of(node, struct letw_page_node, node);

			if (pn->rec == rec || uatomic_read(&pn->rec->dead))
				continue;
			if (ranges_overlap(pn->rec, rec))
				return 1;
		}
	}
	return 0;
}

static void unlink_pages(struct letw_table *t, struct letw_rec *rec)
{
	for (uint32_t i = 0; i < rec->npages; i++)
		(void)cds_lfht_del(t->pages, &rec->pages[i].node);
}

static void count(struct letw_table *t, int kind, long delta)
{
	uatomic_add(kind == LETW_REC_METHOD ? &t->live_methods : &t->live_stubs,
		    delta);
}

/*
 * Lock-free overlap refusal, Dekker style: a publisher first registers its
 * record on every page it covers, then looks for an overlapping live record
 * on those pages. cds_lfht_add links with a cmpxchg, and the explicit
 * cmm_smp_mb below orders our adds before our lookups; so of two racing
 * overlapping publishers at least one sees the other's page node. Either
 * backs out on conflict: both may fail, both can never succeed. Records
 * being unpublished (dead) do not conflict: their owner already gave the
 * range back.
 */
int letw_table_insert(struct letw_table *t, struct letw_rec *rec)
{
	struct cds_lfht_node *dup;
	int ret = 0;

	BIG_LOCK(t);
	for (uint32_t i = 0; i < rec->npages; i++) {
		cds_lfht_node_init(&rec->pages[i].node);
		cds_lfht_add(t->pages, letw_hash_u64(rec->pages[i].page),
			     &rec->pages[i].node);
	}
	cmm_smp_mb();
	if (find_overlap(t, rec)) {
		ret = -EEXIST;
		goto backout;
	}
	cds_lfht_node_init(&rec->node);
	dup = cds_lfht_add_unique(t->code, letw_hash_u64(rec->start), match_code,
				  &rec->start, &rec->node);
	if (dup != &rec->node) {
		/* Same start as a record being unpublished right now: its
		 * owner freed the range but has not unlinked it yet. */
		ret = -EEXIST;
		goto backout;
	}
	count(t, rec->kind, 1);
	BIG_UNLOCK(t);
	return 0;

backout:
	/* Mark dead first so concurrent checkers stop counting us as a
	 * conflict, then unlink; others may still hold our page nodes in
	 * their read-side section, hence the deferred release. */
	uatomic_set(&rec->dead, 1);
	unlink_pages(t, rec);
	BIG_UNLOCK(t);
	letw_rec_put_deferred(rec);
	return ret;
}

int letw_table_remove(struct letw_table *t, uint64_t start, int kind,
		      struct letw_rec **out)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct letw_rec *rec;

	BIG_LOCK(t);
	cds_lfht_lookup(t->code, letw_hash_u64(start), match_code, &start, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (!node)
		goto noent;
	rec = caa_container_of(node, struct letw_rec, node);
	if (rec->kind != kind)
		goto noent;
	/* Exactly one of several racing unpublishes wins the record. The
	 * walker reads this flag to count records removed under it. */
	if (uatomic_cmpxchg(&rec->dead, 0, 1) != 0)
		goto noent;
	(void)cds_lfht_del(t->code, &rec->node);
	unlink_pages(t, rec);
	count(t, kind, -1);
	BIG_UNLOCK(t);
	*out = rec;
	return 0;
noent:
	BIG_UNLOCK(t);
	return -ENOENT;
}

int letw_table_module_insert(struct letw_table *t, struct letw_module_rec *mod)
{
	struct cds_lfht_node *dup;

	BIG_LOCK(t);
	cds_lfht_node_init(&mod->node);
	dup = cds_lfht_add_unique(t->modules, letw_hash_u64(mod->p.module_id),
				  match_module, &mod->p.module_id, &mod->node);
	if (dup == &mod->node)
		uatomic_inc(&t->live_modules);
	BIG_UNLOCK(t);
	if (dup != &mod->node) {
		/* Never linked: nobody else can hold it. */
		letw_module_rec_put(mod);
		return -EEXIST;
	}
	return 0;
}

int letw_table_module_remove(struct letw_table *t, uint64_t module_id,
			     struct letw_module_rec **out)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct letw_module_rec *mod;

	BIG_LOCK(t);
	cds_lfht_lookup(t->modules, letw_hash_u64(module_id), match_module,
			&module_id, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (!node)
		goto noent;
	mod = caa_container_of(node, struct letw_module_rec, node);
	if (uatomic_cmpxchg(&mod->dead, 0, 1) != 0)
		goto noent;
	(void)cds_lfht_del(t->modules, &mod->node);
	uatomic_dec(&t->live_modules);
	BIG_UNLOCK(t);
	*out = mod;
	return 0;
noent:
	BIG_UNLOCK(t);
	return -ENOENT;
}

/*
 * liburcu 0.13's lazy auto-resize can stop growing a table that fills fast
 * (measured by the benchmarks at 10^6 records, with a plain cds_lfht too:
 * chains grow and every insert costs 30-85 µs instead of ~2 µs). An
 * explicit cds_lfht_resize each time the population doubles recovers it.
 * It runs here, on the control thread — it may wait for grace periods —
 * never on a publishing thread.
 */
#define MAINTAIN_MIN 4096ul

void letw_table_maintain(struct letw_table *t)
{
	unsigned long n = (unsigned long)(uatomic_read(&t->live_methods) +
					  uatomic_read(&t->live_stubs));
	unsigned long target = MAINTAIN_MIN;

	if (n < MAINTAIN_MIN || n < 2 * t->resize_hint)
		return;
	while (target < n)
		target <<= 1;
	cds_lfht_resize(t->code, target);
	cds_lfht_resize(t->pages, target);
	t->resize_hint = n;
}

void letw_table_walk_lock(struct letw_table *t)
{
	BIG_LOCK(t);
}

void letw_table_walk_unlock(struct letw_table *t)
{
	BIG_UNLOCK(t);
}

void letw_table_destroy(struct letw_table *t)
{
	struct cds_lfht_iter iter;
	struct letw_rec *rec;
	struct letw_module_rec *mod;

	if (!t)
		return;
	urcu_bp_read_lock();
	cds_lfht_for_each_entry(t->code, &iter, rec, node) {
		if (uatomic_cmpxchg(&rec->dead, 0, 1) != 0)
			continue;
		(void)cds_lfht_del(t->code, &rec->node);
		unlink_pages(t, rec);
		letw_rec_put_deferred(rec);
	}
	cds_lfht_for_each_entry(t->modules, &iter, mod, node) {
		if (uatomic_cmpxchg(&mod->dead, 0, 1) != 0)
			continue;
		(void)cds_lfht_del(t->modules, &mod->node);
		letw_module_rec_put_deferred(mod);
	}
	urcu_bp_read_unlock();
	/* Wait for the releases queued above (and their grace periods)
	 * before tearing the tables down. Off every runtime hot path. */
	urcu_bp_barrier();
	cds_lfht_destroy(t->code, NULL);
	cds_lfht_destroy(t->pages, NULL);
	cds_lfht_destroy(t->modules, NULL);
#ifdef LETW_GLOBAL_LOCK
	pthread_mutex_destroy(&t->big_lock);
#endif
	free(t);
}
