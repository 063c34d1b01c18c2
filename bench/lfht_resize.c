/* SPDX-License-Identifier: MIT */
/*
 * letw-bench-lfht-resize — a stand-alone reproducer for what the benchmarks
 * saw at 10^6 methods: a liburcu cds_lfht created like the code table
 * (urcu-bp flavour, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, 1024 initial
 * buckets) sometimes stops growing for good, and every insert then walks
 * a long bucket chain. No lttng-etw code is involved.
 *
 * Each run fills a fresh table with --methods keys from one thread, waits
 * for the lazy resize worker, times 20000 more inserts, and, when they are
 * slow, times 20000 more after an explicit cds_lfht_resize() (which runs
 * the resize in the caller and does recover the table).
 *
 * Why we think it happens (liburcu 0.13, src/rculfhash.c): the lazy launch
 * queues the resize work and only then stores resize_initiated = 1. If the
 * worker runs the work before that store lands, it clears the flag first
 * and the late store leaves it set with no work queued; every later launch
 * sees it set and queues nothing.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>

#include "common.h"
#include "hash.h"

#define PROBE_INSERTS 20000ul

struct node {
	struct cds_lfht_node node;
	uint64_t key;
};

/* Keyed exactly as the library's table. */
#define hash_key letw_hash_u64

static int match_key(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct node, node)->key == *(const uint64_t *)key;
}

static unsigned long pow2_at_least(unsigned long n)
{
	unsigned long p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int insert_range(struct cds_lfht *ht, unsigned long first, unsigned long n)
{
	for (unsigned long i = first; i < first + n; i++) {
		struct node *e = malloc(sizeof(*e));

		if (!e)
			return -1;
		e->key = bench_code_start(0x100000000000ull, i);
		cds_lfht_node_init(&e->node);
		urcu_bp_read_lock();
		cds_lfht_add_unique(ht, hash_key(e->key), match_key, &e->key, &e->node);
		urcu_bp_read_unlock();
	}
	return 0;
}

static double per_insert_us(struct cds_lfht *ht, unsigned long first)
{
	uint64_t t0 = bench_now_ns();

	if (insert_range(ht, first, PROBE_INSERTS))
		return -1;
	return (double)(bench_now_ns() - t0) / 1e3 / (double)PROBE_INSERTS;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "methods", required_argument, NULL, 'n' },
		{ "runs", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long n = 1000000, runs = 10, stuck = 0;
	int c;

	while ((c = getopt_long(argc, argv, "n:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'r': runs = strtoul(optarg, NULL, 10); break;
		case 'h':
			printf("Usage: %s [-n METHODS] [-r RUNS]\n"
			       "Fills fresh cds_lfht tables (urcu-bp, auto-resize, accounting)\n"
			       "and reports the runs whose lazy resize never caught up.\n",
			       argv[0]);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", argv[0]);
			return 2;
		}
	}
	if (!n || !runs) {
		fprintf(stderr, "%s: --methods and --runs must be positive\n", argv[0]);
		return 2;
	}
	for (unsigned long r = 0; r < runs; r++) {
		struct cds_lfht *ht = cds_lfht_new_flavor(1024, 1024, 0,
			CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, &urcu_bp_flavor, NULL);
		uint64_t t0 = bench_now_ns();
		double us, fixed;

		if (!ht || insert_range(ht, 0, n))
			return 1;
		printf("run %lu: fill %.2f s", r, (double)(bench_now_ns() - t0) / 1e9);
		sleep(1); /* give the resize worker every chance */
		us = per_insert_us(ht, n);
		printf(", then %.2f us/insert", us);
		if (us > 5.0) {
			stuck++;
			cds_lfht_resize(ht, pow2_at_least(n));
			fixed = per_insert_us(ht, n + PROBE_INSERTS);
			printf(" -> %.2f us/insert after cds_lfht_resize()", fixed);
		}
		printf("\n");
		/* Tables are left to the process exit: this is a reproducer. */
	}
	printf("%lu of %lu runs stuck\n", stuck, runs);
	return 0;
}
