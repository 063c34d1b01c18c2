/* SPDX-License-Identifier: MIT */
/*
 * letw-nomalloc: publishing threads that may not touch libc's allocator,
 * take a lock or wait.
 * Run under LD_PRELOAD=liblttng-etw-nomalloc.so (nomalloc_shim.c), inside a
 * started session that records every letw event (the test script makes
 * it), while the main thread asks for rundown passes back to back.
 *
 * Each of N threads warms up (its first publishes register it with liburcu
 * and lttng-ust, which may allocate once per thread), then arms the shim
 * and for S seconds publishes and unpublishes methods (with and without
 * line tables, re-versioned), stubs and modules, with strings both new and
 * repeated. Any malloc/free, lock (mutex, rwlock, spinlock, semaphore,
 * C11 mtx, their try forms), condition wait or waiting futex syscall on
 * those threads aborts the process. Passes run on the library's control
 * thread, which may allocate and lock.
 *
 *   letw-nomalloc [--threads N] [--seconds S] [--first-call-before-init]
 *                 [--armed-file PATH] [--started-file PATH]
 *                 [--self-test[=malloc|mutex|futex]]
 * --armed-file: created once every thread is armed (the test script
 * starts its session then).
 * --started-file: the S seconds count from when PATH exists (the test
 * script creates it once its session started), not from the arming: a
 * session that took longer than S seconds to start saw no armed event.
 * --first-call-before-init: the threads start before letw_init and make
 * their first call (answered -ESHUTDOWN) then, as a runtime's threads may.
 * --self-test arms the shim and calls malloc (the default), locks an
 * uncontended mutex, or makes a FUTEX_WAIT syscall that would return at
 * once (EAGAIN): the process must abort each time (the test shows the
 * shim can fail, on calls that would not even have blocked).
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include <lttng-etw/lttng-etw.h>

static void (*nomalloc)(int);
static atomic_int stop;
static atomic_ulong ops;
static int seconds = 3;
static int pre_init;
static atomic_int ready, inited, armed;
static const char *armed_file, *started_file;

#define SLOTS 256

static void churn_once(unsigned long t, unsigned long i, uint64_t *live)
{
	static const char *const files[] = { "a.c", "b/inl.h" };
	uint64_t base = 0x200000000000ull + (t << 32);
	unsigned int s = (unsigned int)(i % SLOTS);
	uint64_t start = base + (uint64_t)s * 0x1000 + (i & 1) * 0x800;
	char name[48], ns[32];
	struct letw_line rows[3] = {
		{ 0, 10, 0, 0 }, { 0x10, 20, 1, 1 }, { 0x40, 11, 0, 0 },
	};
	struct letw_method_opts o = { .size = sizeof(o), .lines = rows, .nr_lines = 3,
				      .nr_files = 2, .files = files };
	int ret;

	if (live[s]) {
		ret = (s % 7 == 0) ? letw_stub_unpublish(live[s]) : letw_method_unpublish(live[s]);
		if (ret) {
			fprintf(stderr, "unpublish: %s\n", strerror(-ret));
			abort();
		}
		live[s] = 0;
	}
	/* New names every time, namespaces from a small set: both the
	 * chunk allocator and the interning paths run. */
	snprintf(name, sizeof(name), "method_%lu_%lu", t, i);
	snprintf(ns, sizeof(ns), "ns.mod%lu", i % 13);
	if (s % 7 == 0) {
		struct letw_stub st = { .start = start, .size = 0x40, .kind = LETW_STUB_JUMP,
					.owner = i, .name = (i & 2) ? "JumpStub" : name };

		ret = letw_stub_publish(&st);
	} else {
		struct letw_method m = {
			.method_id = i, .module_id = t + 1, .code_start = start, .code_size = 0x100,
			.method_flags = LETW_METHOD_JITTED, .version_id = i, .method_namespace = ns,
			.name = (i & 4) ? "f" : name, .signature = (i & 8) ? "()" : "(int,int)->int",
		};

		ret = (i & 1) ? letw_method_publish_opts(&m, &o) : letw_method_publish(&m);
	}
	if (ret) {
		fprintf(stderr, "publish: %s\n", strerror(-ret));
		abort();
	}
	live[s] = start;
	if (i % 1000 == 0) {
		struct letw_module md = { .module_id = 1000 + t, .name = ns };

		if (letw_module_publish(&md) || letw_module_unpublish(1000 + t))
			abort();
	}
}

static void *worker(void *arg)
{
	unsigned long t = (unsigned long)arg, i = 0;
	uint64_t live[SLOTS] = { 0 };

	if (pre_init) {
		struct letw_stats st;

		/* The thread's first call, answered -ESHUTDOWN: its per-thread
		 * setup ran with tracing off and must be completed later. */
		if (letw_get_stats(&st) != -ESHUTDOWN)
			abort();
		atomic_fetch_add(&ready, 1);
		while (!atomic_load(&inited))
			sched_yield();
	}
	for (; i < 4 * SLOTS; i++) /* warm-up */
		churn_once(t, i, live);
	nomalloc(1);
	atomic_fetch_add(&armed, 1);
	while (!atomic_load(&stop)) {
		churn_once(t, i++, live);
		atomic_fetch_add(&ops, 1);
	}
	nomalloc(0);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ "self-test", optional_argument, NULL, 'S' },
		{ "first-call-before-init", no_argument, NULL, 'P' },
		{ "armed-file", required_argument, NULL, 'A' },
		{ "started-file", required_argument, NULL, 'G' },
		{ 0 },
	};
	int nthreads = 3, c, passes = 0;
	const char *self_test = NULL;
	pthread_t th[16];
	struct timespec end;
	struct letw_store_stats st = { .size = sizeof(st) };

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 't')
			nthreads = atoi(optarg);
		else if (c == 's')
			seconds = atoi(optarg);
		else if (c == 'S')
			self_test = optarg ? optarg : "malloc";
		else if (c == 'P')
			pre_init = 1;
		else if (c == 'A')
			armed_file = optarg;
		else if (c == 'G')
			started_file = optarg;
		else
			return 2;
	}
	if (nthreads < 1 || nthreads > 16)
		return 2;
	*(void **)&nomalloc = dlsym(RTLD_DEFAULT, "letw_test_nomalloc");
	if (!nomalloc) {
		fprintf(stderr, "letw-nomalloc: run me with LD_PRELOAD=liblttng-etw-nomalloc.so\n");
		return 2;
	}
	if (self_test) {
		static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
		int word = 1;
		void *volatile p = NULL;
		long r = 0;

		if (strcmp(self_test, "malloc") && strcmp(self_test, "mutex") &&
		    strcmp(self_test, "futex"))
			return 2;
		nomalloc(1);
		if (!strcmp(self_test, "malloc"))
			p = malloc(16);
		else if (!strcmp(self_test, "mutex"))
			r = pthread_mutex_lock(&mu);
		else /* *uaddr != 0: EAGAIN at once */
			r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		nomalloc(0);
		fprintf(stderr, "letw-nomalloc: the shim did not trip on %s (%p, %ld)\n", self_test,
			p, r);
		return 1;
	}
	if (pre_init) {
		for (long t = 0; t < nthreads; t++)
			pthread_create(&th[t], NULL, worker, (void *)t);
		while (atomic_load(&ready) < nthreads)
			sched_yield();
	}
	if (letw_init(NULL))
		return 1;
	atomic_store(&inited, 1);
	for (long t = 0; !pre_init && t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	/* Tell the script every thread is armed: it starts the session
	 * then, so the first events of each thread come while armed. */
	while (atomic_load(&armed) < nthreads)
		sched_yield();
	if (armed_file) {
		FILE *f = fopen(armed_file, "w");

		if (!f || fclose(f))
			return 1;
	}
	/* The main thread only: the armed threads publish on meanwhile. */
	for (int i = 0; started_file && access(started_file, F_OK); i++) {
		struct timespec tick = { 0, 10 * 1000 * 1000 };

		if (i == 12000) {
			fprintf(stderr, "letw-nomalloc: no %s after 120 s\n", started_file);
			atomic_store(&stop, 1);
			for (int t = 0; t < nthreads; t++)
				pthread_join(th[t], NULL);
			return 1;
		}
		nanosleep(&tick, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	for (;;) {
		struct timespec now;
		int r = letw_capture_state(0, 1);

		if (r > 0)
			passes++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
	}
	atomic_store(&stop, 1);
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	letw_get_store_stats(&st);
	printf("ops=%lu passes=%d slow_grows=%llu\n", atomic_load(&ops), passes,
	       (unsigned long long)st.slow_grows);
	letw_shutdown();
	return passes > 0 && atomic_load(&ops) > 0 ? 0 : 3;
}
