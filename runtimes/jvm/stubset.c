/* SPDX-License-Identifier: MIT */
/*
 * The agent's published stubs (stubset.h), a sorted array of disjoint
 * ranges: lttng-etw refuses overlapping records, so the ranges it accepted
 * never overlap and sorting by start sorts by end too; the stubs a range
 * overlaps are one run of the array.
 *
 * Why a mutex and an array, not a lock-free structure: the set changes
 * only when HotSpot reports dynamic code (a few thousand blobs, nearly all
 * at startup) and is searched only when a method's publish was refused —
 * never on the common path of a compiled method. Nothing here is
 * lttng-etw's no-lock publish path: this is the runtime's side, and the
 * lock is taken by DynamicCodeGenerated callbacks and by CompiledMethodLoad
 * callbacks whose publish was refused, on whatever JVMTI thread runs them.
 * Nothing else is called while it is held (no JVMTI, no lttng-etw call,
 * only realloc), so it cannot be part of a cycle.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stubset.h"

struct range {
	uint64_t start, end; /* [start, end) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct range *set;
static size_t nr, cap;

/* First index whose range ends after addr. */
static size_t first_ending_after(uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void remember(uint64_t start, uint64_t end)
{
	size_t at;

	pthread_mutex_lock(&lock);
	if (nr == cap) {
		size_t ncap = cap ? 2 * cap : 1024;
		struct range *n = realloc(set, ncap * sizeof(*n));

		/* Out of memory: the stub stays published, only unknown to
		 * the stale check (a method over it is then refused, as
		 * before this set existed). */
		if (!n)
			goto out;
		set = n;
		cap = ncap;
	}
	at = first_ending_after(start);
	memmove(set + at + 1, set + at, (nr - at) * sizeof(*set));
	set[at] = (struct range){ start, end };
	nr++;
out:
	pthread_mutex_unlock(&lock);
}

/* Takes the remembered stubs overlapping [start, end) out of the set, into
 * out (at most max); returns how many. */
static size_t take_overlapping(uint64_t start, uint64_t end, uint64_t *out, size_t max)
{
	size_t lo, hi, n;

	pthread_mutex_lock(&lock);
	lo = first_ending_after(start);
	for (hi = lo; hi < nr && set[hi].start < end && hi - lo < max; hi++)
		out[hi - lo] = set[hi].start;
	n = hi - lo;
	memmove(set + lo, set + hi, (nr - hi) * sizeof(*set));
	nr -= n;
	pthread_mutex_unlock(&lock);
	return n;
}

int jvm_stubset_publish(const struct letw_stub *st)
{
	int ret = letw_stub_publish(st);

	/* Remembered after it is live: a method refused in between, over a
	 * stub published this instant, is counted as an overlap. HotSpot
	 * reports a blob once it is made, long before a later nmethod could
	 * take its freed range. */
	if (ret == 0)
		remember(st->start, st->start + st->size);
	return ret;
}

int jvm_stubset_publish_method(const struct letw_method *m, const struct letw_method_opts *o,
			       unsigned *stale)
{
	uint64_t starts[16];
	unsigned gone = 0;
	size_t n;
	int ret;

	ret = letw_method_publish_opts(m, o);
	while (ret == -EEXIST &&
	       (n = take_overlapping(m->code_start, m->code_start + m->code_size, starts,
				     sizeof(starts) / sizeof(starts[0]))) > 0) {
		for (size_t i = 0; i < n; i++)
			if (letw_stub_unpublish(starts[i]) == 0)
				gone++;
		ret = letw_method_publish_opts(m, o);
	}
	if (stale)
		*stale = gone;
	return ret;
}

unsigned jvm_stubset_count(void)
{
	unsigned n;

	pthread_mutex_lock(&lock);
	n = (unsigned)nr;
	pthread_mutex_unlock(&lock);
	return n;
}

void jvm_stubset_reset(void)
{
	pthread_mutex_lock(&lock);
	free(set);
	set = NULL;
	nr = cap = 0;
	pthread_mutex_unlock(&lock);
}
