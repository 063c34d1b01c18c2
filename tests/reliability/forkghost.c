/* SPDX-License-Identifier: MIT */
/*
 * Fork children inherit whole records only (provider/table_fork.c).
 *
 * Churn threads publish and unpublish, at fixed addresses of their own,
 * every kind of record a fork can cut in half: one-page methods, stubs,
 * three-page methods with a line table and a name kept in a chunk, big
 * (100-page) stubs in the big-record registry, and modules. The main thread
 * forks with the hooks, again and again, while they do. Each child, on its
 * own thread only:
 *   1. reads the live counts;
 *   2. unpublishes every churn address as a method and as a stub and every
 *      churn module: each must answer 0 or -ENOENT, and the records found
 *      must be exactly the live counts of step 1;
 *   3. finds the counts at zero then;
 *   4. publishes a one-page method, a big stub and a module at every churn
 *      key: none may be refused (a record the parent was publishing at the
 *      fork, left PENDING, answered -EEXIST here after the -ENOENT of
 *      step 2), and unpublishes them again.
 * Before the fix nearly every child failed (200 of 200: with four threads
 * publishing flat out, one is almost always mid-call), so the default 200
 * forks cannot pass on old code; they take ~10 s. Tracing is off
 * (LETW_DISABLE): the table is the subject.
 *
 * usage: letw-forkghost [forks]   exit 0: every child whole
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>

#define THREADS 4
#define PER 8           /* keys per thread */
#define PAGE 4096u
#define BIG (100u * PAGE)

static atomic_int stop;

/* Key k of thread t: addresses 1 MiB apart (a big record fits), module ids. */
static uint64_t addr(int t, int k)
{
	return 0x7e0000000000ull + ((uint64_t)t << 32) + (uint64_t)k * (1u << 20);
}

static uint64_t module_id(int t, int k)
{
	return 0x1000u + (uint64_t)t * PER + (uint64_t)k;
}

/* Over LETW_NAMES_MAX (128): kept in a chunk, sized by strlen at release. */
static char long_name[200];
static const struct letw_line lines[2] = { { 0, 10, 0, 0 }, { PAGE, 11, 0, 0 } };
static const char *const files[1] = { "churn.js" };

static int publish_one(int op, uint64_t a, uint64_t mid, uint64_t i)
{
	struct letw_method m = { .method_id = i, .code_start = a, .code_size = 64,
				 .name = "m" };
	struct letw_stub s = { .start = a, .size = 64, .name = "stub" };
	struct letw_module md = { .module_id = mid, .name = "mod" };
	struct letw_method_opts o = { .size = sizeof(o), .lines = lines, .nr_lines = 2,
				      .nr_files = 1, .files = files };

	switch (op) {
	case 0:
		return letw_method_publish(&m);
	case 1:
		return letw_stub_publish(&s);
	case 2:
		m.code_size = 3 * PAGE;
		m.name = long_name;
		return letw_method_publish_opts(&m, &o);
	case 3:
		s.size = BIG;
		return letw_stub_publish(&s);
	default:
		return letw_module_publish(&md);
	}
}

static void unpublish_one(int op, uint64_t a, uint64_t mid)
{
	if (op == 0 || op == 2)
		(void)letw_method_unpublish(a);
	else if (op == 1 || op == 3)
		(void)letw_stub_unpublish(a);
	else
		(void)letw_module_unpublish(mid);
}

static void *churn(void *arg)
{
	int t = (int)(long)arg;

	for (uint64_t i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		int k = (int)(i % PER), op = (int)((i / PER) % 5);

		if (!publish_one(op, addr(t, k), module_id(t, k), i))
			unpublish_one(op, addr(t, k), module_id(t, k));
	}
	return NULL;
}

static int fail(const char *what, uint64_t key, int ret)
{
	fprintf(stderr, "child %d: %s %#llx: %d\n", (int)getpid(), what,
		(unsigned long long)key, ret);
	return 1;
}

/* 0 found, 1 not there, -1 neither (an error to report). */
static int found(int ret)
{
	return ret == 0 ? 0 : ret == -ENOENT ? 1 : -1;
}

static int child(void)
{
	struct letw_stats st = { 0 }, end = { 0 };
	uint64_t methods = 0, stubs = 0, modules = 0;

	letw_fork_child();
	if (letw_get_stats(&st))
		return fail("stats", 0, -1);
	for (int t = 0; t < THREADS; t++)
		for (int k = 0; k < PER; k++) {
			int m = letw_method_unpublish(addr(t, k));
			int s = letw_stub_unpublish(addr(t, k));
			int d = letw_module_unpublish(module_id(t, k));

			if (found(m) < 0 || found(s) < 0 || found(d) < 0)
				return fail("unpublish", addr(t, k), m ? m : s ? s : d);
			methods += !m;
			stubs += !s;
			modules += !d;
		}
	if (methods != st.live_methods || stubs != st.live_stubs ||
	    modules != st.live_modules) {
		fprintf(stderr, "child %d: live %llu/%llu/%llu, found %llu/%llu/%llu "
			"(methods/stubs/modules)\n", (int)getpid(),
			(unsigned long long)st.live_methods, (unsigned long long)st.live_stubs,
			(unsigned long long)st.live_modules, (unsigned long long)methods,
			(unsigned long long)stubs, (unsigned long long)modules);
		return 1;
	}
	if (letw_get_stats(&end) || end.live_methods || end.live_stubs || end.live_modules)
		return fail("live after unpublishing all", 0,
			    (int)(end.live_methods + end.live_stubs + end.live_modules));
	for (int t = 0; t < THREADS; t++)
		for (int k = 0; k < PER; k++) {
			uint64_t a = addr(t, k), mid = module_id(t, k);
			int r;

			if ((r = publish_one(0, a, mid, 1)) || (r = letw_method_unpublish(a)))
				return fail("method", a, r);
			if ((r = publish_one(3, a, mid, 1)) || (r = letw_stub_unpublish(a)))
				return fail("big stub", a, r);
			if ((r = publish_one(4, a, mid, 1)) || (r = letw_module_unpublish(mid)))
				return fail("module", mid, r);
		}
	return letw_shutdown() ? fail("shutdown", 0, -1) : 0;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 200, bad = 0;
	pthread_t th[THREADS];

	memset(long_name, 'n', sizeof(long_name) - 1);
	setenv("LETW_DISABLE", "1", 1);
	if (letw_init(NULL))
		return 2;
	for (long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, churn, (void *)t))
			return 2;
	for (int f = 0; f < forks; f++) {
		pid_t c;
		int status;

		usleep(1000); /* let the churn run between forks */
		letw_fork_prepare();
		c = fork();
		if (c == 0) {
			/* A hang is a failure too, not the test's timeout. */
			alarm(10);
			_exit(child());
		}
		letw_fork_parent();
		if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	}
	atomic_store(&stop, 1);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	printf("forks=%d bad_children=%d\n", forks, bad);
	return letw_shutdown() || bad ? 1 : 0;
}
