/* SPDX-License-Identifier: MIT */
/*
 * Measure 4 — bytes per method, from the record store's own accounting
 * (letw_get_store_stats().bytes_in_use / live methods): once with a 1-byte
 * name and no namespace or signature, once with the realistic strings.
 *
 * What bytes_in_use counts: every slot holding a record (64 bytes), every
 * method name of 4..128 bytes at exactly its length (stored without its
 * NUL, provider/names.h), and every store chunk in use — longer names,
 * interned contexts, continuation nodes of records crossing a page,
 * big-record entries — at its size-class size (rounding included). What
 * it does not count, and what is reported next to it:
 *  - malloc'd memory: liburcu's cds_lfht bucket arrays (code table and
 *    intern table), the library's bookkeeping — the mallinfo2() delta;
 *  - store memory committed ahead of demand but free (the names' pool of
 *    spare blocks, and their block headers and free bitmaps, included),
 *    the walker's copy buffer (mapped once, 8 MiB of address space,
 *    touched on first pass), page-table and allocator overheads — in
 *    bytes_committed and the VmRSS delta.
 * "Unique string bytes" is what the strings of the table weigh with each
 * distinct string counted once (NULs included): the method names (unique
 * per method) plus each distinct (namespace, signature) context once; the
 * target is 64 bytes + that. Each case runs in a fresh letw_init without a
 * session: the store costs the same traced or not.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-bp.h>

#include <lttng-etw/lttng-etw.h>

#include "harness.h"
#include "taskstat.h"

static uint64_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

/* Table resizes run on the library's thread: wait until the heap stops
 * moving before reading it. */
static uint64_t settled_heap_bytes(void)
{
	uint64_t prev = 0, cur = heap_bytes();

	for (int i = 0; i < 50 && cur != prev; i++) {
		urcu_bp_barrier();
		bench_sleep_ns(20000000);
		prev = cur;
		cur = heap_bytes();
	}
	return cur;
}

/* The store's figures once its thread is done topping it up after the
 * fill: while bytes_committed still moves, bytes_in_use read up to 1 MiB
 * high for a moment (1 run of 4 at 10^6: 65.05 bytes per method, 64.0
 * 50-100 ms later; which part of the store holds it was not traced).
 * Two reads 50 ms apart must agree. */
static int settled_store_stats(struct letw_store_stats *ss)
{
	struct letw_store_stats prev;

	if (letw_get_store_stats(ss))
		return -EIO;
	for (int i = 0; i < 40; i++) {
		prev = *ss;
		bench_sleep_ns(50000000);
		if (letw_get_store_stats(ss))
			return -EIO;
		if (ss->bytes_in_use == prev.bytes_in_use &&
		    ss->bytes_committed == prev.bytes_committed)
			return 0;
	}
	/* Still moving after 2 s: the last read is reported, and said so. */
	bench_note("memory: the store's figures still moved after 2 s; the last read is reported");
	return 0;
}

/* Distinct-string bytes per method of the realistic case (see above). */
static double unique_string_bytes(unsigned long n)
{
	char ns[BENCH_NAME_MAX], name[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];
	/* bench_method_strings draws the namespace and the signature from
	 * small fixed lists: remember the contexts seen. */
	struct ctx {
		char ns[BENCH_NAME_MAX], sig[BENCH_NAME_MAX];
	} *seen = NULL;
	size_t nseen = 0;
	double sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		size_t k;

		bench_method_strings(i, ns, name, sig);
		sum += (double)(strlen(name) + 1);
		for (k = 0; k < nseen; k++)
			if (!strcmp(seen[k].ns, ns) && !strcmp(seen[k].sig, sig))
				break;
		if (k == nseen) {
			struct ctx *grown = realloc(seen, (nseen + 1) * sizeof(*seen));

			if (!grown)
				break;
			seen = grown;
			memcpy(seen[nseen].ns, ns, sizeof(ns));
			memcpy(seen[nseen].sig, sig, sizeof(sig));
			nseen++;
			sum += (double)(strlen(ns) + 1 + strlen(sig) + 1);
		}
	}
	free(seen);
	return sum / (double)n;
}

struct usage {
	double in_use, committed, heap, rss;
	uint64_t slow_grows;
};

static int one_case(const struct bench_opts *o, int minimal, struct usage *u)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		/* No polling, socket or rundown: the library's thread only
		 * keeps the store stocked and the tables sized. */
		.flags = LETW_CONFIG_NO_CONTROL_THREAD,
	};
	struct letw_store_stats ss = { .size = sizeof(ss) };
	struct letw_stats st;
	uint64_t heap0, rss0;
	double n;
	int ret = letw_init(&cfg);

	if (ret)
		return ret;
	heap0 = settled_heap_bytes();
	rss0 = bench_rss_bytes();
	ret = bench_populate(BENCH_TABLE_BASE, 0, o->methods, minimal, o->fill_timeout);
	if (!ret) {
		u->heap = (double)settled_heap_bytes() - (double)heap0;
		bench_sleep_ns(100000000); /* the store's next top-up, if any */
		u->rss = (double)bench_rss_bytes() - (double)rss0;
		ret = settled_store_stats(&ss);
		if (ret || letw_get_stats(&st) || !st.live_methods) {
			ret = -EIO;
		} else {
			n = (double)st.live_methods;
			u->in_use = (double)ss.bytes_in_use / n;
			u->committed = (double)ss.bytes_committed / n;
			u->heap /= n;
			u->rss /= n;
			u->slow_grows = ss.slow_grows;
		}
	}
	letw_shutdown();
	return ret;
}

static void report(const struct bench_opts *o, const char *suffix, const struct usage *u)
{
	char m[64];

	snprintf(m, sizeof(m), "bytes_per_method%s", suffix);
	bench_row("memory", o->variant, o->methods, m, u->in_use, "bytes");
	snprintf(m, sizeof(m), "committed_per_method%s", suffix);
	bench_row("memory", o->variant, o->methods, m, u->committed, "bytes");
	snprintf(m, sizeof(m), "heap_per_method%s", suffix);
	bench_row("memory", o->variant, o->methods, m, u->heap, "bytes");
	snprintf(m, sizeof(m), "rss_per_method%s", suffix);
	bench_row("memory", o->variant, o->methods, m, u->rss, "bytes");
	snprintf(m, sizeof(m), "slow_grows%s", suffix);
	bench_row("memory", o->variant, o->methods, m, (double)u->slow_grows, "grows");
}

int bench_memory(const struct bench_opts *o)
{
	struct usage bare = { 0 }, full = { 0 };
	double uniq = unique_string_bytes(o->methods);
	int ret = one_case(o, 1, &bare);

	if (!ret)
		ret = one_case(o, 0, &full);
	if (ret == -ETIMEDOUT)
		bench_row("memory", o->variant, o->methods, "populate_timeout",
			  o->fill_timeout, "s");
	if (ret)
		return -1;
	bench_note("memory %s N=%lu: unique string bytes %.1f per method (names + each "
		   "distinct namespace/signature context once, NULs included)",
		   o->variant, o->methods, uniq);
	/* The 1-byte name is stored inline in the slot: no string bytes. */
	report(o, "_no_names", &bare);
	report(o, "_with_names", &full);
	bench_row("memory", o->variant, o->methods, "unique_string_bytes_per_method",
		  uniq, "bytes");
	return 0;
}
