/* SPDX-License-Identifier: MIT */
/*
 * The #128401 deadlock model (seed 002): PerfMap stub logging under a
 * no-toggle allocator lock deadlocks with GC suspension.
 *
 * The simulated runtime (this file) has
 *  - a "code heap" lock L, taken WITHOUT switching to a GC-safe mode (like
 *    CodeFragmentHeap::m_Lock, CRST_UNSAFE_ANYMODE): a thread blocked on it,
 *    or blocked anywhere while cooperative, is not at a safe point;
 *  - two cooperative runtime threads: A allocates a stub under L and logs it
 *    with letw_stub_publish before releasing L (GenerateResolveStub ->
 *    ReportStubBlock); B keeps needing L (another resolve worker);
 *  - a GC thread that suspends the world: it raises a request and waits
 *    until every runtime thread has reached a safe point;
 *  - a point where the rundown thread waits for the runtime while a GC is
 *    in progress — the role CLR's RareDisablePreemptiveGC plays for T60 in
 *    the seed. Real ways to get there: a blocking channel whose consumer
 *    the GC suspended, an app context callback into the runtime, a
 *    collector that owns the heap (Boehm's REDIRECT_MALLOC) if the walker
 *    allocates. lttng-etw's walker no longer allocates, so the model puts
 *    the wait where both libraries' walkers are, in the middle of a pass:
 *    the executable interposes urcu_bp_read_lock, and the library's control
 *    thread (identified from the control callback) waits in its first
 *    read-side section after a dispatch until the GC is over. In the
 *    global-lock baseline that is with the table mutex held.
 *
 * The rundown is a real pass of the real library (letw_capture_state from
 * the main thread), loaded with dlopen: liblttng-etw or the global-lock
 * baseline liblttng-etw-globallock, same API.
 *
 * The cycle with the global lock (each arrow: "waits for"):
 *   walker   -> GC     : it holds the table mutex for the whole pass and,
 *                        entering its first read-side section, waits for
 *                        the GC in progress to end;
 *   GC       -> A, B   : they must reach a safe point;
 *   A        -> walker : A is in letw_stub_publish, blocked on the table
 *                        mutex, still holding L;
 *   B        -> A      : when B asks for L before the GC request reaches
 *                        it, it is blocked (cooperative) on L too, as T61
 *                        was; if it reached its safe point first, the
 *                        cycle closes through A alone. The watchdog's
 *                        state dump says which one happened.
 * With lttng-etw, A's publish takes no lock (RCU table), so A returns,
 * drops L, reaches its safe point, B follows, the GC completes and the
 * walker proceeds: no cycle, whatever the walker waits on.
 *
 * What this shows, honestly: it is a deterministic model, not a stress
 * test. The walker's first read-side section of an armed pass waits until the GC
 * has been requested — standing for a pass long enough that a GC starts
 * while it runs (large table, slow consumer) — so the interleaving that
 * CLR hit rarely happens every iteration. It shows that the global-lock
 * design admits this cycle as soon as the rundown thread can wait for the
 * runtime at all while holding the table lock, and that lttng-etw cannot
 * close it because its logging path takes no lock. Deadlock is detected by
 * a watchdog (no iteration completed for --timeout seconds, where one
 * normally takes well under a millisecond); the model runs in a child that
 * the parent kills when the watchdog fires, so the test always exits.
 *
 * Usage: letw-gcmodel --lib PATH [--iterations N] [--timeout S] [--runs N]
 *                     [--expect deadlock|complete]
 * Exit without --expect: 0 every iteration completed; 10 deadlock detected
 * (child killed); other: setup failure. With --expect: 0 iff every run
 * ended as expected.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>

#define EXIT_DEADLOCK 10

/* ---- where the walker waits for the runtime --------------------------- */

static pthread_mutex_t gc_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gc_cv = PTHREAD_COND_INITIALIZER;
static int gc_requested;    /* a stop-the-world is in progress */
static int at_safepoint;    /* runtime threads parked at a safe point */
static uint64_t gc_epoch;   /* completed collections */
static int walker_armed;    /* next pass: pause in its first section */
static int walker_in_pass;  /* the armed pass reached it */
static int walker_waiting;  /* for the model's state dump */
static __thread int foreign_walker; /* set on the control thread */
static __thread int dispatched;     /* a pass follows the control callback */

static atomic_uint_fast64_t progress; /* iterations completed */

static void walker_wait_hook(void)
{
	pthread_mutex_lock(&gc_mu);
	if (walker_armed) {
		/* A long pass: a GC begins while it is still running. Wait on
		 * the epoch too: the GC may start and finish (lttng-etw) before
		 * this thread gets the mutex back. */
		uint64_t e = gc_epoch;

		walker_armed = 0;
		walker_in_pass = 1;
		pthread_cond_broadcast(&gc_cv);
		while (!gc_requested && gc_epoch == e)
			pthread_cond_wait(&gc_cv, &gc_mu);
	}
	/* A foreign thread waiting for the runtime: it cannot go on while
	 * the world is stopped. */
	walker_waiting = 1;
	while (gc_requested)
		pthread_cond_wait(&gc_cv, &gc_mu);
	walker_waiting = 0;
	pthread_mutex_unlock(&gc_mu);
}

/*
 * Exported from the executable (CMake: --export-dynamic-symbol), so the
 * dlopen()ed library's calls bind here first; the real one comes from the
 * liburcu-bp the library pulled in (RTLD_LOCAL: not in the global scope,
 * hence the NOLOAD handle rather than RTLD_NEXT).
 */
void urcu_bp_read_lock(void)
{
	static void (*real)(void);

	if (!real) {
		void *h = dlopen("liburcu-bp.so.8", RTLD_NOW | RTLD_NOLOAD);

		*(void **)&real = h ? dlsym(h, "urcu_bp_read_lock") : NULL;
		if (!real)
			abort(); /* the model cannot run: setup failure */
	}
	if (foreign_walker && dispatched) {
		dispatched = 0;
		walker_wait_hook();
	}
	real();
}

/* ---- the runtime ----------------------------------------------------- */

static struct {
	int (*init)(const struct letw_config *);
	int (*shutdown)(void);
	int (*stub_publish)(const struct letw_stub *);
	int (*stub_unpublish)(uint64_t);
	int (*capture_state)(uint64_t, int);
	int (*set_control_fn)(letw_control_fn, void *);
} api;

static pthread_mutex_t code_heap_lock = PTHREAD_MUTEX_INITIALIZER; /* L */
static atomic_int a_state;  /* 0 idle, 1 holds L, 2 in letw_stub_(un)publish */
static atomic_uint_fast64_t a_logging; /* times A entered its logging section */
static atomic_int b_state;  /* 0 running, 1 waiting for L */
static atomic_int stop_runtime;


/* A runtime thread polls this at safe points (loop back-edges, calls). */
static void safepoint(void)
{
	pthread_mutex_lock(&gc_mu);
	if (gc_requested) {
		uint64_t e = gc_epoch;

		at_safepoint++;
		pthread_cond_broadcast(&gc_cv);
		while (gc_epoch == e)
			pthread_cond_wait(&gc_cv, &gc_mu);
		at_safepoint--;
	}
	pthread_mutex_unlock(&gc_mu);
}

static void on_control(int code, int level, uint64_t mask, int provider, void *ctx)
{
	foreign_walker = 1; /* the library's control thread: foreign to us */
	dispatched = 1;
}

/* A: the resolve worker that allocates a stub and logs it under L. */
static void *thread_a(void *arg)
{
	uint64_t n = 0, prev = 0;

	while (!atomic_load(&stop_runtime)) {
		int go;

		safepoint();
		pthread_mutex_lock(&gc_mu);
		go = walker_in_pass;
		walker_in_pass = 0;
		pthread_mutex_unlock(&gc_mu);
		if (!go) {
			usleep(100);
			continue;
		}
		pthread_mutex_lock(&code_heap_lock);
		atomic_store(&a_state, 1);
		atomic_fetch_add(&a_logging, 1);
		{
			struct letw_stub st = {
				.start = 0x7f0000000000ull + 0x1000ull * (n % 64),
				.size = 0x400,
				.kind = LETW_STUB_BLOCK,
				.owner = n,
				.name = "VSD_ResolveStub",
			};

			atomic_store(&a_state, 2);
			if (prev)
				api.stub_unpublish(prev);
			if (api.stub_publish(&st) == 0)
				prev = st.start;
			else
				prev = 0;
			n++;
		}
		atomic_store(&a_state, 0);
		pthread_mutex_unlock(&code_heap_lock);
	}
	return NULL;
}

/* B: another cooperative thread that needs L; while blocked on it, it is
 * not at a safe point (L does not toggle to preemptive mode). */
static void *thread_b(void *arg)
{
	while (!atomic_load(&stop_runtime)) {
		safepoint();
		atomic_store(&b_state, 1);
		pthread_mutex_lock(&code_heap_lock);
		atomic_store(&b_state, 0);
		pthread_mutex_unlock(&code_heap_lock);
		usleep(50);
	}
	return NULL;
}

/* The GC: once A is logging its stub, suspend the world (A and B). */
static void gc_collect(uint64_t a_seen)
{
	/* A may already be done logging (lttng-etw): the GC still runs. */
	while (atomic_load(&a_logging) == a_seen)
		usleep(50);
	pthread_mutex_lock(&gc_mu);
	gc_requested = 1;
	pthread_cond_broadcast(&gc_cv);
	while (at_safepoint < 2)
		pthread_cond_wait(&gc_cv, &gc_mu);
	/* ... the world is stopped: mark, sweep ... */
	gc_requested = 0;
	gc_epoch++;
	pthread_cond_broadcast(&gc_cv);
	pthread_mutex_unlock(&gc_mu);
}

static void *monitor(void *arg)
{
	unsigned int timeout = *(unsigned int *)arg;
	uint64_t last = atomic_load(&progress);
	unsigned int still = 0;

	/* Report a little before the parent's watchdog kills us. */
	for (;;) {
		uint64_t p;

		usleep(100 * 1000);
		p = atomic_load(&progress);
		if (p != last) {
			last = p;
			still = 0;
			continue;
		}
		if (++still < timeout * 10 - 5)
			continue;
		/* Racy snapshot for the human reading the log. */
		fprintf(stderr,
			"gcmodel: stuck after %llu iterations: GC requested=%d, "
			"at safe point %d/2, A %s, B %s, walker %s\n",
			(unsigned long long)p, gc_requested, at_safepoint,
			atomic_load(&a_state) == 2 ? "in letw_stub_(un)publish holding L" :
			atomic_load(&a_state) == 1 ? "holding L" : "not holding L",
			atomic_load(&b_state) ? "blocked on L" : "running",
			walker_waiting ? "waiting for the GC in the allocator" :
					 "not waiting for the GC");
		return NULL;
	}
}

static int load_api(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "gcmodel: %s\n", dlerror());
		return -1;
	}
#define SYM(field, name)                                                   \
	do {                                                               \
		*(void **)&api.field = dlsym(h, name);                     \
		if (!api.field) {                                          \
			fprintf(stderr, "gcmodel: %s: no %s\n", lib, name); \
			return -1;                                         \
		}                                                          \
	} while (0)
	SYM(init, "letw_init");
	SYM(shutdown, "letw_shutdown");
	SYM(stub_publish, "letw_stub_publish");
	SYM(stub_unpublish, "letw_stub_unpublish");
	SYM(capture_state, "letw_capture_state");
	SYM(set_control_fn, "letw_set_control_fn");
	return 0;
}

static int run_model(const char *lib, unsigned long iterations,
		     unsigned int timeout, int progress_fd)
{
	pthread_t a, b, mon;
	struct letw_config cfg = { .size = sizeof(cfg),
				   .flags = LETW_CONFIG_NO_CONTROL_SOCKET };
	int ret;

	if (load_api(lib) || (ret = api.init(&cfg))) {
		fprintf(stderr, "gcmodel: cannot initialise %s\n", lib);
		return 2;
	}
	api.set_control_fn(on_control, NULL);
	/* Some code in the table, so the pass has records to walk. */
	for (unsigned int i = 0; i < 1000; i++) {
		struct letw_stub st = { .start = 0x600000000000ull + 0x100ull * i,
					.size = 0x80, .kind = LETW_STUB_PRECODE,
					.name = "FixupPrecode" };

		api.stub_publish(&st);
	}
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_create(&mon, NULL, monitor, &timeout);
	pthread_detach(mon);
	for (unsigned long it = 0; it < iterations; it++) {
		uint64_t a_seen = atomic_load(&a_logging);

		pthread_mutex_lock(&gc_mu);
		walker_armed = 1;
		pthread_mutex_unlock(&gc_mu);
		/* The rundown, asynchronously on the control thread. */
		ret = api.capture_state(LETW_KW_RUNDOWN_START | LETW_KW_STUB_RUNDOWN, 0);
		if (ret < 0) {
			fprintf(stderr, "gcmodel: capture_state: %s\n", strerror(-ret));
			return 2;
		}
		gc_collect(a_seen);
		/* Both the GC and the pass completed: one iteration. */
		ret = api.capture_state(LETW_KW_RUNDOWN_START | LETW_KW_STUB_RUNDOWN, 1);
		if (ret != LETW_PASS_DCSTART) {
			fprintf(stderr, "gcmodel: pass ran %d\n", ret);
			return 2;
		}
		atomic_fetch_add(&progress, 1);
		(void)!write(progress_fd, "i", 1);
	}
	atomic_store(&stop_runtime, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	api.shutdown();
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: letw-gcmodel --lib PATH [--iterations N] [--timeout S]\n"
		   "  --lib PATH       liblttng-etw.so or liblttng-etw-globallock.so\n"
		   "  --iterations N   GC + rundown rounds (default 200)\n"
		   "  --timeout S      watchdog: seconds without progress = deadlock (default 10)\n"
		   "  --runs N         run the model N times, each in a fresh child\n"
		   "  --expect E       deadlock|complete: exit 0 iff every run ends so\n"
		   "without --expect: exit 0 completed; 10 deadlock detected; else error\n");
}

/* One model run in a fresh child, under the watchdog. Returns 0 completed,
 * EXIT_DEADLOCK, or 3 for an abnormal end. */
static int watch_one(const char *lib, unsigned long iterations,
		     unsigned int timeout)
{
	unsigned long done = 0;
	int fds[2], status;
	pid_t child;

	if (pipe(fds))
		return 3;
	fflush(NULL);
	child = fork();
	if (child < 0)
		return 3;
	if (child == 0) {
		close(fds[0]);
		_exit(run_model(lib, iterations, timeout, fds[1]));
	}
	close(fds[1]);
	/* The watchdog: every iteration must finish within the timeout. */
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		char buf[256];
		int n = poll(&pfd, 1, (int)(timeout * 1000 + 1000));
		ssize_t r;

		if (n == 0) {
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
			close(fds[0]);
			printf("DEADLOCK: %s: no iteration completed for %us "
			       "after %lu of %lu; model killed\n",
			       lib, timeout, done, iterations);
			return EXIT_DEADLOCK;
		}
		r = read(fds[0], buf, sizeof(buf));
		if (r <= 0)
			break;
		done += (unsigned long)r;
	}
	close(fds[0]);
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || done != iterations) {
		printf("ERROR: %s: model ended abnormally (status %#x) after %lu "
		       "iterations\n", lib, status, done);
		return 3;
	}
	printf("COMPLETED: %s: %lu/%lu iterations, GC and rundown finished "
	       "every time\n", lib, done, iterations);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lib", required_argument, NULL, 'l' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "runs", required_argument, NULL, 'r' },
		{ "expect", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *lib = NULL, *expect = NULL;
	unsigned long iterations = 200, runs = 1;
	unsigned int timeout = 10;
	int c, want = -1, mismatches = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'n': iterations = strtoul(optarg, NULL, 0); break;
		case 't': timeout = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': runs = strtoul(optarg, NULL, 0); break;
		case 'e': expect = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (expect && !strcmp(expect, "deadlock"))
		want = EXIT_DEADLOCK;
	else if (expect && !strcmp(expect, "complete"))
		want = 0;
	else if (expect) {
		fprintf(stderr, "letw-gcmodel: --expect deadlock|complete\n");
		return 2;
	}
	if (!lib || timeout == 0 || iterations == 0 || runs == 0 || optind != argc) {
		usage(stderr);
		return 2;
	}
	for (unsigned long r = 0; r < runs; r++) {
		int got = watch_one(lib, iterations, timeout);

		if (want < 0)
			return got;
		if (got != want)
			mismatches++;
	}
	printf("%s: %lu run(s), %d not ending as expected (%s)\n",
	       mismatches ? "FAIL" : "PASS", runs, mismatches, expect);
	return mismatches ? 1 : 0;
}
