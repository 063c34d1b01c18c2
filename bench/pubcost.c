/* SPDX-License-Identifier: MIT */
/*
 * Measure 3 — the cost of letw_method_publish with tracing off (no session)
 * and on (a started session recording letw_runtime:*load), against a plain
 * cds_lfht_add_unique of the same key (urcu-bp flavour, same hash, same
 * table sizing), with a malloc'd node and with a preallocated one: what a
 * bare RCU hash table costs before validation, the string copy and
 * interning, the overlap check and the tracepoint.
 *
 * Each timed operation publishes into a table of N methods; an untimed
 * unpublish of an older record keeps the size at N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "hash.h"
#include "session.h"

#define CHURN_RING 1024u

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void report(const struct bench_opts *o, const char *variant,
		   const char *what, uint64_t *ns, unsigned n, uint64_t overhead)
{
	char metric[64];
	double sum = 0;

	for (unsigned i = 0; i < n; i++) {
		ns[i] = ns[i] > overhead ? ns[i] - overhead : 0;
		sum += (double)ns[i];
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	snprintf(metric, sizeof(metric), "%s_median_ns", what);
	bench_row("pubcost", variant, o->methods, metric, (double)ns[n / 2], "ns");
	snprintf(metric, sizeof(metric), "%s_mean_ns", what);
	bench_row("pubcost", variant, o->methods, metric, sum / n, "ns");
	snprintf(metric, sizeof(metric), "%s_p99_ns", what);
	bench_row("pubcost", variant, o->methods, metric,
		  (double)ns[(size_t)((double)n * 0.99)], "ns");
}

/* Publishes method N + k (timed) after unpublishing N + k - RING. */
static int timed_publishes(const struct bench_opts *o, unsigned long first,
			   uint64_t *ns)
{
	char nsp[BENCH_NAME_MAX], name[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];

	for (unsigned k = 0; k < o->ops; k++) {
		unsigned long i = first + k;
		struct letw_method m = {
			.method_id = i + 1,
			.code_start = bench_code_start(BENCH_TABLE_BASE, i),
			.code_size = bench_code_size(i),
			.method_flags = LETW_METHOD_JITTED,
			.version_id = 1,
			.method_namespace = nsp,
			.name = name,
			.signature = sig,
		};
		uint64_t t0;
		int ret;

		if (k >= CHURN_RING &&
		    letw_method_unpublish(bench_code_start(BENCH_TABLE_BASE,
							   i - CHURN_RING)))
			return -1;
		bench_method_strings(i, nsp, name, sig);
		t0 = bench_now_ns();
		ret = letw_method_publish(&m);
		ns[k] = bench_now_ns() - t0;
		if (ret) {
			fprintf(stderr, "bench: publish: %s\n", strerror(-ret));
			return -1;
		}
	}
	/* Back to N live methods for the next batch. */
	for (unsigned long i = first + (o->ops > CHURN_RING ? o->ops - CHURN_RING : 0);
	     i < first + o->ops; i++)
		if (letw_method_unpublish(bench_code_start(BENCH_TABLE_BASE, i)))
			return -1;
	return 0;
}

static const char *const runtime_events[] = { BENCH_RUNTIME_EVENTS, NULL };

int bench_pubcost(const struct bench_opts *o)
{
	struct bench_session s = { 0 };
	struct letw_store_stats ss = { .size = sizeof(ss) };
	uint64_t *ns, overhead, discarded = 0, lost = 0, slow_fill = 0;
	char chan[160];
	int ret = -1;

	ns = calloc(o->ops, sizeof(*ns));
	if (!ns || bench_letw_init()) {
		free(ns);
		return -1;
	}
	overhead = bench_clock_overhead_ns();
	if (bench_fill(o, "pubcost"))
		goto out;
	if (!letw_get_store_stats(&ss))
		slow_fill = ss.slow_grows;
	if (timed_publishes(o, o->methods, ns))
		goto out;
	report(o, o->variant, "publish_off", ns, o->ops, overhead);

	if (bench_session_create(&s, o, "pubcost", runtime_events) ||
	    bench_session_start(&s, NULL, NULL))
		goto out;
	/* Runtime events only: no rundown runs. Wait for the app to see the
	 * session (the tracepoints flip at start, see DESIGN §4). */
	bench_sleep_ns(100000000);
	if (timed_publishes(o, o->methods + o->ops, ns))
		goto out;
	if (bench_session_stop(&s) || bench_session_discarded(&s, &discarded, &lost))
		goto out;
	report(o, o->variant, "publish_on", ns, o->ops, overhead);
	if (!letw_get_store_stats(&ss)) {
		bench_row("pubcost", o->variant, o->methods, "slow_grows_fill", (double)slow_fill,
			  "grows");
		bench_row("pubcost", o->variant, o->methods, "slow_grows_timed",
			  (double)(ss.slow_grows - slow_fill), "grows");
	}
	bench_row("pubcost", o->variant, o->methods, "discarded_events",
		  (double)discarded, "events");
	ret = bench_report_control(o, "pubcost", 0, 1) ? BENCH_PERTURBED : 0;
	bench_channel_desc(o, chan, sizeof(chan));
	bench_note("pubcost %s N=%lu: %u timed publishes per case, clock overhead %llu ns subtracted; channel: %s",
		   o->variant, o->methods, o->ops, (unsigned long long)overhead, chan);
out:
	bench_session_destroy(&s, o->keep_trace);
	letw_shutdown();
	free(ns);
	return ret;
}

struct plain_node {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	uint64_t key;
};

/*
 * Keyed and hashed exactly as the library's code table: the key is the
 * code start, the hash is that of its 4 KiB page (records on one page
 * share a chain, as they do in the library), and the table is sized once
 * to one bucket per node without auto-resize (the library's control thread
 * keeps it so; liburcu's lazy auto-resize would malloc on the inserter).
 */
static unsigned long hash_key(uint64_t key)
{
	return letw_hash_u64(key >> 12);
}

static int match_key(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct plain_node, node)->key ==
	       *(const uint64_t *)key;
}

static void free_node(struct rcu_head *h)
{
	free(caa_container_of(h, struct plain_node, rcu));
}

/* pool: NULL to malloc the node (freed after a grace period on removal),
 * else the node to use (never reused during the run). */
static int plain_insert(struct cds_lfht *ht, uint64_t key, struct plain_node *pool)
{
	struct plain_node *n = pool ? pool : malloc(sizeof(*n));
	struct cds_lfht_node *got;

	if (!n)
		return -1;
	n->key = key;
	cds_lfht_node_init(&n->node);
	urcu_bp_read_lock();
	got = cds_lfht_add_unique(ht, hash_key(key), match_key, &n->key, &n->node);
	urcu_bp_read_unlock();
	if (got != &n->node) {
		if (!pool)
			free(n);
		return -1;
	}
	return 0;
}

static int plain_remove(struct cds_lfht *ht, uint64_t key, int pooled)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;

	urcu_bp_read_lock();
	cds_lfht_lookup(ht, hash_key(key), match_key, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (!node || cds_lfht_del(ht, node)) {
		urcu_bp_read_unlock();
		return -1;
	}
	urcu_bp_read_unlock();
	if (!pooled)
		urcu_bp_call_rcu(&caa_container_of(node, struct plain_node, node)->rcu,
				 free_node);
	return 0;
}

/* One baseline: fill N keys, then ops timed inserts (an untimed removal of
 * an older key keeps N), as timed_publishes does. */
static int lfht_case(const struct bench_opts *o, int pooled, const char *what,
		     uint64_t *ns, uint64_t overhead)
{
	unsigned long size = 1024, total = o->methods + o->ops;
	struct plain_node *pool = NULL;
	struct cds_lfht *ht;
	int ret = -1;

	while (size < o->methods)
		size <<= 1;
	ht = cds_lfht_new_flavor(size, 1024, 0, 0, &urcu_bp_flavor, NULL);
	if (pooled) {
		pool = calloc(total, sizeof(*pool)); /* touched now, not while timed */
		if (pool)
			memset(pool, 0, total * sizeof(*pool));
	}
	if (!ht || (pooled && !pool))
		goto out;
	for (unsigned long i = 0; i < o->methods; i++)
		if (plain_insert(ht, bench_code_start(BENCH_TABLE_BASE, i),
				 pooled ? &pool[i] : NULL))
			goto out;
	for (unsigned k = 0; k < o->ops; k++) {
		unsigned long i = o->methods + k;
		uint64_t t0;
		int r;

		if (k >= CHURN_RING &&
		    plain_remove(ht, bench_code_start(BENCH_TABLE_BASE, i - CHURN_RING), pooled))
			goto out;
		t0 = bench_now_ns();
		r = plain_insert(ht, bench_code_start(BENCH_TABLE_BASE, i),
				 pooled ? &pool[i] : NULL);
		ns[k] = bench_now_ns() - t0;
		if (r)
			goto out;
	}
	report(o, "cds_lfht", what, ns, o->ops, overhead);
	ret = 0;
out:
	/* The process exits next: the table and its nodes are left to it
	 * (a pooled node may still be read by a late reader). */
	return ret;
}

/*
 * Two baselines: "insert", cds_lfht_add_unique of a malloc'd node — what a
 * runtime keeping its own RCU hash table pays per record (the baseline of
 * issue #10's figure) — and "insert_prealloc", the table operation alone
 * with nodes from a pre-touched array.
 */
int bench_lfht(const struct bench_opts *o)
{
	uint64_t *ns = calloc(o->ops, sizeof(*ns)), overhead;
	int ret = -1;

	if (!ns)
		return -1;
	overhead = bench_clock_overhead_ns();
	if (!lfht_case(o, 0, "insert", ns, overhead) &&
	    !lfht_case(o, 1, "insert_prealloc", ns, overhead))
		ret = 0;
	free(ns);
	return ret;
}
