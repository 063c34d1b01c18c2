/* SPDX-License-Identifier: MIT */
/*
 * Churn stress runtime: N "JIT" threads publish, re-version (a new tier at
 * a new address, then the old version is freed) and unpublish methods and
 * stubs as fast as they can, while the main thread runs rundown passes back
 * to back through letw_capture_state: DCStart only, DCEnd only, both in one
 * walk, and a plain capture-state with the live mask. What the passes must
 * contain is checked afterwards from the LTTng trace (check_churn.py); this
 * program only checks what the API itself promises (every call succeeds,
 * every capture ran the passes asked for, nothing leaks at shutdown).
 *
 * Identity of a record in the trace: (kind, start, uid), uid being a
 * process-unique counter stored as version_id (methods) or owner (stubs),
 * because addresses are reused: slot addresses cycle through 8 windows.
 *
 * Usage: letw-churn [--threads N] [--slots N] [--passes N] [--go-file F]
 *        [--max-ops N] [--seed N]
 * With --go-file, the table is pre-filled, "ready PID" is printed, and the
 * churn starts once F exists (the test creates it after `lttng start`).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>
#include "churn_tp.h"

#define KIND_METHOD 1u
#define KIND_STUB 2u
#define WINDOWS 8u /* address windows a slot cycles through */

struct slot {
	int live;
	uint32_t kind;
	uint32_t gen;
	uint64_t start;
	uint64_t uid;
};

struct worker {
	pthread_t tid;
	unsigned int idx;
	uint64_t rng;
	struct slot *slots;
	uint64_t ops, errors;
};

static unsigned int opt_threads = 4, opt_slots = 256, opt_passes = 40;
static uint64_t opt_max_ops = 0; /* per thread; 0: until the passes end */
static const char *opt_go_file;
static uint64_t opt_seed = 1;
static atomic_uint_fast64_t next_uid = 1;
static atomic_int stop_workers;

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: deterministic per thread from --seed */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Thread t, slot s, generation g: disjoint ranges for every live pair, so a
 * new version published before the old one is freed never overlaps it. */
static uint64_t slot_addr(unsigned int t, unsigned int s, uint32_t g)
{
	return 0x100000000000ull * (t + 1) + 0x10000ull * s +
	       0x800ull * (g % WINDOWS);
}

static int publish_slot(struct worker *w, struct slot *sl, uint32_t kind)
{
	char name[64];
	uint64_t uid = atomic_fetch_add(&next_uid, 1);
	uint64_t start = slot_addr(w->idx, (unsigned int)(sl - w->slots), sl->gen);
	uint32_t size = 0x40 + (uint32_t)(rnd(&w->rng) % 0x7c0);
	int ret;

	snprintf(name, sizeof(name), "m_%u_%u", w->idx, (unsigned int)(sl - w->slots));
	if (kind == KIND_METHOD) {
		struct letw_method m = {
			.method_id = ((uint64_t)w->idx << 32) | (uint64_t)(sl - w->slots),
			.code_start = start,
			.code_size = size,
			.method_flags = LETW_METHOD_JITTED |
					LETW_METHOD_TIER(sl->gen % 8),
			.version_id = uid,
			.method_namespace = "Churn",
			.name = name,
			.signature = "void ()",
		};
		ret = letw_method_publish(&m);
	} else {
		struct letw_stub st = {
			.start = start,
			.size = size,
			.kind = LETW_STUB_RESOLVE,
			.owner = uid,
			.name = "VSD_ResolveStub",
		};
		ret = letw_stub_publish(&st);
	}
	if (ret) {
		fprintf(stderr, "churn: publish %#llx: %s\n",
			(unsigned long long)start, strerror(-ret));
		w->errors++;
		return ret;
	}
	*sl = (struct slot){ .live = 1, .kind = kind, .gen = sl->gen,
			     .start = start, .uid = uid };
	return 0;
}

static void unpublish_rec(struct worker *w, uint32_t kind, uint64_t start,
			  uint64_t uid)
{
	int ret;

	lttng_ust_tracepoint(letw_churn, unpublish_begin, kind, start, uid);
	ret = kind == KIND_METHOD ? letw_method_unpublish(start) :
				    letw_stub_unpublish(start);
	if (ret) {
		fprintf(stderr, "churn: unpublish %#llx: %s\n",
			(unsigned long long)start, strerror(-ret));
		w->errors++;
	}
}

/* One random operation on one random slot. */
static void churn_op(struct worker *w)
{
	struct slot *sl = &w->slots[rnd(&w->rng) % opt_slots];
	uint64_t r = rnd(&w->rng) % 100;

	if (!sl->live) {
		publish_slot(w, sl, r < 70 ? KIND_METHOD : KIND_STUB);
		return;
	}
	if (sl->kind == KIND_METHOD && r < 50) {
		/* Re-version: the new tier goes live before the old code is
		 * freed, as a tiering JIT does. */
		struct slot old = *sl;

		sl->gen++;
		if (publish_slot(w, sl, KIND_METHOD)) {
			*sl = old;
			return;
		}
		unpublish_rec(w, old.kind, old.start, old.uid);
		return;
	}
	unpublish_rec(w, sl->kind, sl->start, sl->uid);
	sl->live = 0;
	sl->gen++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop_workers) &&
	       (!opt_max_ops || w->ops < opt_max_ops)) {
		churn_op(w);
		w->ops++;
	}
	return NULL;
}

/*
 * Thread 0's first READABLE_SLOTS slots get real (zero) memory behind
 * their addresses, so the walker's code copy succeeds for them and every
 * build's trace carries code-bytes events, which the checker must tell
 * from records (check_churn.py). The rest stay unmapped: their copies fail
 * and are dropped, as for a runtime that published a range it never
 * mapped. Kept small: code bytes are the bulk of a trace. Under ASan the
 * range is already mapped (thread 0's windows lie in its HighShadow, which
 * is how the checker's confusion first showed) and the mmap fails with
 * EEXIST; the region reads as zeros either way. Returns 1 if readable.
 */
#define READABLE_SLOTS 16u

#if defined(__SANITIZE_THREAD__)
#define CHURN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHURN_TSAN 1
#endif
#endif

#ifdef CHURN_TSAN
/* TSan owns this part of the address space (it dies with "mmap at bad
 * address" on a mapping outside its application ranges): no code bytes
 * under TSan; the plain and ASan builds cover them. */
static int map_readable_code(void)
{
	return 0;
}
#else
static int map_readable_code(void)
{
	size_t len = (size_t)READABLE_SLOTS * 0x10000u;
	void *want = (void *)(uintptr_t)slot_addr(0, 0, 0);
	void *p = mmap(want, len, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
		       -1, 0);
	char probe;

	if (p == want)
		return 1;
	if (p != MAP_FAILED)
		munmap(p, len); /* an old kernel ignored the hint */
	/* Already mapped (ASan's shadow)? Then it reads, and so will the
	 * walker, which copies the same way. */
	{
		struct iovec l = { .iov_base = &probe, .iov_len = 1 };
		struct iovec r = { .iov_base = want, .iov_len = 1 };

		return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == 1;
	}
}
#endif

static void prefill(struct worker *w)
{
	for (unsigned int s = 0; s < opt_slots; s += 2)
		publish_slot(w, &w->slots[s], s % 4 ? KIND_STUB : KIND_METHOD);
}

static void drain(struct worker *w)
{
	for (unsigned int s = 0; s < opt_slots; s++)
		if (w->slots[s].live)
			unpublish_rec(w, w->slots[s].kind, w->slots[s].start,
				      w->slots[s].uid);
}

static void wait_for_go(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (access(opt_go_file, F_OK) != 0)
		nanosleep(&ts, NULL);
	/* Start churning once the session reached us: our own marker event
	 * is enabled and the pass `lttng start` caused has run, so every
	 * unpublish is bracketed in the trace and the first pass saw the
	 * pre-filled table at rest. */
	for (;;) {
		struct letw_stats st;

		if (lttng_ust_tracepoint_enabled(letw_churn, unpublish_begin) &&
		    letw_get_stats(&st) == 0 && st.passes >= 1)
			break;
		nanosleep(&ts, NULL);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: letw-churn [options]\n"
		"  --threads N   runtime threads (default 4)\n"
		"  --slots N     code slots per thread (default 256)\n"
		"  --passes N    capture-state passes to run (default 40)\n"
		"  --max-ops N   stop each thread after N operations (default: none)\n"
		"  --go-file F   print 'ready PID', start once F exists\n"
		"  --seed N      random seed (default 1)\n"
		"  --help\n");
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "slots", required_argument, NULL, 's' },
		{ "passes", required_argument, NULL, 'p' },
		{ "max-ops", required_argument, NULL, 'm' },
		{ "go-file", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': opt_threads = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': opt_slots = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': opt_passes = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm': opt_max_ops = strtoull(optarg, NULL, 0); break;
		case 'g': opt_go_file = optarg; break;
		case 'S': opt_seed = strtoull(optarg, NULL, 0); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (opt_threads < 1 || opt_threads > 64 || opt_slots < 2 ||
	    opt_slots > 4096 || optind != argc) {
		fprintf(stderr, "letw-churn: bad arguments (threads 1..64, slots 2..4096)\n");
		return -1;
	}
	return 0;
}

/* The mask each capture asks for, and the passes it must run. */
static const struct {
	uint64_t mask;
	int expect;
} captures[] = {
	{ LETW_KW_RUNDOWN_START | LETW_KW_JIT_RUNDOWN | LETW_KW_STUB_RUNDOWN,
	  LETW_PASS_DCSTART },
	{ LETW_KW_RUNDOWN_END | LETW_KW_JIT_RUNDOWN | LETW_KW_STUB_RUNDOWN,
	  LETW_PASS_DCEND },
	{ LETW_KW_RUNDOWN_START | LETW_KW_RUNDOWN_END | LETW_KW_JIT_RUNDOWN,
	  LETW_PASS_DCSTART | LETW_PASS_DCEND },
	{ 0, -1 }, /* live mask: whatever the session enabled */
};

int main(int argc, char **argv)
{
	struct worker *w;
	struct letw_stats st;
	uint64_t total_ops = 0, errors = 0;
	int ret, bad_pass = 0, code_readable;

	if (parse_args(argc, argv))
		return 2;
	code_readable = map_readable_code();
	ret = letw_init(NULL);
	if (ret) {
		fprintf(stderr, "letw-churn: letw_init: %s\n", strerror(-ret));
		return 1;
	}
	w = calloc(opt_threads, sizeof(*w));
	if (!w)
		return 1;
	for (unsigned int i = 0; i < opt_threads; i++) {
		w[i].idx = i;
		w[i].rng = opt_seed * 0x9e3779b97f4a7c15ull + i + 1;
		w[i].slots = calloc(opt_slots, sizeof(struct slot));
		if (!w[i].slots)
			return 1;
		prefill(&w[i]);
	}
	/* Before "ready": churn.sh reads it to know whether the trace must
	 * hold code-bytes events. */
	printf("code-readable %d\n", code_readable);
	if (opt_go_file)
		wait_for_go();
	for (unsigned int i = 0; i < opt_threads; i++)
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]))
			return 1;
	for (unsigned int p = 0; p < opt_passes; p++) {
		unsigned int c = p % (sizeof(captures) / sizeof(captures[0]));
		int got = letw_capture_state(captures[c].mask, 1);

		if (got < 0 || (captures[c].expect >= 0 && got != captures[c].expect)) {
			fprintf(stderr, "churn: capture %u (mask %#llx) ran %d\n", p,
				(unsigned long long)captures[c].mask, got);
			bad_pass++;
		}
	}
	atomic_store(&stop_workers, 1);
	for (unsigned int i = 0; i < opt_threads; i++) {
		pthread_join(w[i].tid, NULL);
		total_ops += w[i].ops;
	}
	/* One more pass with the table at rest, then free everything: the
	 * unloads close every record's lifetime in the trace. */
	if (letw_capture_state(0, 1) < 0)
		bad_pass++;
	for (unsigned int i = 0; i < opt_threads; i++) {
		drain(&w[i]);
		errors += w[i].errors;
		free(w[i].slots);
	}
	free(w);
	if (letw_get_stats(&st) == 0)
		printf("ops %llu passes %llu emitted %llu raced %llu live %llu\n",
		       (unsigned long long)total_ops, (unsigned long long)st.passes,
		       (unsigned long long)st.rundown_emitted,
		       (unsigned long long)st.rundown_skipped_raced,
		       (unsigned long long)(st.live_methods + st.live_stubs));
	ret = letw_shutdown();
	if (ret || errors || bad_pass) {
		fprintf(stderr, "letw-churn: %llu API errors, %d bad passes, shutdown %d\n",
			(unsigned long long)errors, bad_pass, ret);
		return 1;
	}
	return 0;
}
