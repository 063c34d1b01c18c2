/* SPDX-License-Identifier: MIT */
/*
 * Caller mistakes the embedding API must survive with an error code, not a
 * crash, a hang or a silent change (found by a hostile run of the API):
 * a smaller store-stats struct reused, shutdown from the control callback,
 * size-prefixed structs from a newer header, the log callback set before
 * init, counters across init cycles, and the fork hooks out of order or
 * skipped. White-box (letw_internal) only to give the counters a value
 * without tracing.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <urcu/uatomic.h>

#include <lttng-etw/lttng-etw.h>

#include "internal.h"

/* A control thread (no socket), tracing off. */
static void setup(void)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.flags = LETW_CONFIG_NO_CONTROL_SOCKET,
	};

	setenv("LETW_DISABLE", "1", 1);
	cr_assert_eq(letw_init(&cfg), 0);
}

static void teardown(void)
{
	letw_shutdown();
}

TestSuite(misuse, .init = setup, .fini = teardown, .timeout = 30);

/* An older caller's struct (size and one field), polled twice: the second
 * call used to copy the whole struct, the first having set size to it. */
Test(misuse, small_store_stats_struct_reused)
{
	union {
		struct letw_store_stats st;
		unsigned char b[sizeof(struct letw_store_stats) + 64];
	} u;
	const size_t small = offsetof(struct letw_store_stats, bytes_in_use);

	memset(&u, 0xab, sizeof(u));
	u.st.size = small;
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(letw_get_store_stats(&u.st), 0);
		cr_assert_eq(u.st.size, small, "call %d: size became %zu", i, u.st.size);
	}
	for (size_t i = small; i < sizeof(u.b); i++)
		cr_assert_eq(u.b[i], 0xab, "byte %zu past the caller's size written", i);
}

static int shutdown_ret = 1;

static void shutting_down_callback(int code, int level, uint64_t mask, int provider, void *ctx)
{
	(void)code, (void)level, (void)mask, (void)provider, (void)ctx;
	if (shutdown_ret == 1)
		shutdown_ret = letw_shutdown();
}

/* It used to destroy the table under the control thread, which then
 * crashed on it. */
Test(misuse, shutdown_from_the_control_callback_is_refused)
{
	struct letw_method m = {
		.method_id = 1, .code_start = 0x1000, .code_size = 16, .name = "f",
	};

	cr_assert_eq(letw_set_control_fn(shutting_down_callback, NULL), 0);
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_assert_eq(shutdown_ret, -EDEADLK);
	/* Nothing changed: the control thread still answers, the table is
	 * there. */
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_assert_eq(letw_method_publish(&m), 0);
	cr_assert_eq(letw_set_control_fn(NULL, NULL), 0);
}

static int init_ret = 1;

static void initialising_callback(int code, int level, uint64_t mask, int provider, void *ctx)
{
	(void)code, (void)level, (void)mask, (void)provider, (void)ctx;
	if (init_ret == 1)
		init_ret = letw_init(NULL);
}

/* letw_init from the control callback: with a letw_shutdown running on
 * another thread (it holds the lifecycle lock while it joins the control
 * thread) both hung; refused whatever else runs. */
Test(misuse, init_from_the_control_callback_is_refused)
{
	cr_assert_eq(letw_set_control_fn(initialising_callback, NULL), 0);
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_expect_eq(init_ret, -EDEADLK);
	cr_assert_eq(letw_set_control_fn(NULL, NULL), 0);
}

static int reentry_ret[3] = { 1, 1, 1 };

static void reentering_log(enum letw_log_level level, const char *msg, void *ctx)
{
	(void)level, (void)msg, (void)ctx;
	if (reentry_ret[0] != 1)
		return;
	reentry_ret[0] = letw_init(NULL);
	reentry_ret[1] = letw_shutdown();
	reentry_ret[2] = letw_capture_state(LETW_KW_RUNDOWN_START, 1);
}

/* The log callback runs on the caller's thread, and letw_init logs while
 * it holds the lifecycle lock (here: LETW_DISABLE): init, shutdown and
 * capture-state from it hung for good (an API audit). */
Test(misuse, lifecycle_calls_from_the_log_callback_are_refused)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.flags = LETW_CONFIG_NO_CONTROL_SOCKET,
		.log_fn = reentering_log,
	};
	struct letw_method m = {
		.method_id = 1, .code_start = 0x1000, .code_size = 16, .name = "f",
	};

	cr_assert_eq(letw_shutdown(), 0);
	cr_assert_eq(letw_init(&cfg), 0);
	cr_expect_eq(reentry_ret[0], -EDEADLK);
	cr_expect_eq(reentry_ret[1], -EDEADLK);
	cr_expect_eq(reentry_ret[2], -EDEADLK);
	/* Nothing changed: the library is up and answers. */
	cr_assert_eq(letw_set_log_fn(NULL, NULL), 0);
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_assert_eq(letw_method_publish(&m), 0);
}

static int forked_in_callback;

static void forking_callback(int code, int level, uint64_t mask, int provider, void *ctx)
{
	(void)code, (void)level, (void)mask, (void)provider, (void)ctx;
	if (forked_in_callback)
		return;
	forked_in_callback = 1;
	letw_fork_prepare();
	letw_fork_parent();
}

/* Forbidden, but it hung the control thread for good (it holds the pass
 * lock for the dispatch, which the prepare hook takes): the hooks now do
 * nothing there, as out of order. */
Test(misuse, fork_hooks_from_the_control_callback_do_not_hang)
{
	struct letw_method m = {
		.method_id = 1, .code_start = 0x1000, .code_size = 16, .name = "f",
	};

	cr_assert_eq(letw_set_control_fn(forking_callback, NULL), 0);
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_assert_eq(forked_in_callback, 1);
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_assert_eq(letw_set_control_fn(NULL, NULL), 0);
	cr_assert_eq(letw_method_publish(&m), 0);
}

/* A struct from a newer header: larger, its new fields zero (fine) or set
 * (refused: they would be ignored); an absurd size is refused unread. */
Test(misuse, size_prefixed_structs_from_a_newer_header)
{
	union {
		struct letw_config cfg;
		unsigned char b[sizeof(struct letw_config) + 16];
	} u;
	union {
		struct letw_method_opts o;
		unsigned char b[sizeof(struct letw_method_opts) + 16];
	} v;
	struct letw_method m = {
		.method_id = 1, .code_start = 0x1000, .code_size = 16, .name = "f",
	};
	struct letw_stats st;

	cr_assert_eq(letw_shutdown(), 0);
	memset(&u, 0, sizeof(u));
	u.cfg.size = sizeof(u);
	u.b[sizeof(u.cfg) + 3] = 1;
	cr_expect_eq(letw_init(&u.cfg), -E2BIG);
	u.cfg.size = SIZE_MAX;
	cr_expect_eq(letw_init(&u.cfg), -E2BIG);
	u.b[sizeof(u.cfg) + 3] = 0;
	u.cfg.size = sizeof(u);
	cr_assert_eq(letw_init(&u.cfg), 0, "a zero tail is fine");

	memset(&v, 0, sizeof(v));
	v.o.size = sizeof(v);
	v.b[sizeof(v.o) + 15] = 0x80;
	cr_expect_eq(letw_method_publish_opts(&m, &v.o), -E2BIG);
	cr_assert_eq(letw_get_stats(&st), 0);
	cr_expect_eq(st.live_methods, 0, "table changed by a refused publish");
	v.b[sizeof(v.o) + 15] = 0;
	cr_expect_eq(letw_method_publish_opts(&m, &v.o), 0);
}

static char logged[512];

static void keep_log(enum letw_log_level level, const char *msg, void *ctx)
{
	(void)level, (void)ctx;
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 1);
}

/* init with no log_fn in the config used to drop the callback set before:
 * its own "LETW_DISABLE" message was lost. */
Test(misuse, log_callback_set_before_init_is_kept)
{
	cr_assert_eq(letw_shutdown(), 0);
	logged[0] = '\0';
	cr_assert_eq(letw_set_log_fn(keep_log, NULL), 0);
	cr_assert_eq(letw_init(NULL), 0);
	cr_expect(strstr(logged, "LETW_DISABLE") != NULL, "logged: '%s'", logged);
}

/* "Counters since letw_init". */
Test(misuse, counters_start_again_at_init)
{
	struct letw_stats st;

	uatomic_set(&letw_g.passes, 5);
	uatomic_set(&letw_g.rundown_emitted, 7);
	uatomic_set(&letw_g.max_section_ns, 9);
	cr_assert_eq(letw_shutdown(), 0);
	setup();
	cr_assert_eq(letw_get_stats(&st), 0);
	cr_expect_eq(st.passes, 0);
	cr_expect_eq(st.rundown_emitted, 0);
	cr_expect_eq(uatomic_read(&letw_g.max_section_ns), 0);
}

/* A second prepare used to wait on the lock the first took, with every
 * signal blocked (only SIGKILL ended it): the suite's timeout would. */
Test(misuse, fork_prepare_twice)
{
	letw_fork_prepare();
	letw_fork_prepare();
	letw_fork_parent();
	/* Back to normal: a full cycle still works. */
	letw_fork_prepare();
	letw_fork_parent();
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
}

/* parent without prepare restored a signal mask never saved. */
Test(misuse, fork_parent_without_prepare)
{
	sigset_t set, now;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	letw_fork_parent();
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	cr_expect(sigismember(&now, SIGUSR1), "SIGUSR1 unblocked by letw_fork_parent");
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
}

/* In a forked child: a hang fails the test instead of stalling it (and
 * outliving it, orphaned, as one did for half an hour): SIGALRM kills the
 * child after `seconds`. The forking thread's mask is inherited, and
 * Criterion's worker blocks nearly every signal: unblocked and defaulted
 * here, or the alarm never fired. */
static void child_watchdog(unsigned seconds)
{
	sigset_t alrm;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	signal(SIGALRM, SIG_DFL);
	alarm(seconds);
}

/* A child forked without the hooks (or with letw_fork_child alone)
 * inherits control_running but no control thread: capture-state with
 * wait used to wait forever, and letw_shutdown waited for the parent's
 * liburcu call_rcu state (9 in 10 children hung). Exit status 0: -ESRCH
 * came back from both. (Publishing there is not promised: a liburcu lock
 * a parent thread held at the fork stays held in the child, and this
 * thread's first read-side section registers under it: 1 child in ~40
 * hung so.) */
static void child_capture(int call_child_hook)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int capture, shut;

		child_watchdog(10);
		if (call_child_hook)
			letw_fork_child();
		capture = letw_capture_state(LETW_KW_RUNDOWN_START, 1);
		shut = letw_shutdown();
		_exit(capture == -ESRCH ? shut == -ESRCH ? 0 : 2 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child: %s %d", WIFEXITED(status) ? "exit" : "signal",
		  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

Test(misuse, child_without_fork_hooks)
{
	child_capture(0);
}

Test(misuse, fork_child_without_prepare)
{
	child_capture(1);
}

/*
 * letw_capture_state on one thread while another runs letw_init and
 * letw_shutdown: every call is queued (0) or finds the library shut down
 * (-ESHUTDOWN), never -ENOTSUP ("no control thread configured") from the
 * moments init has published the table but not yet started the thread, or
 * shutdown has joined the thread but not yet withdrawn the table; and no
 * call writes its wake-up into a descriptor shutdown closed.
 */
static int lc_stop, lc_calls, lc_bad, lc_bad_ret;

static void *capture_loop(void *arg)
{
	(void)arg;
	while (!uatomic_read(&lc_stop)) {
		int r = letw_capture_state(0, 0);

		lc_calls++;
		if (r != 0 && r != -ESHUTDOWN && !lc_bad++)
			lc_bad_ret = r;
	}
	return NULL;
}

Test(lifecycle, capture_state_while_init_and_shutdown_run, .timeout = 120)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.flags = LETW_CONFIG_NO_CONTROL_SOCKET,
	};
	pthread_t th;

	setenv("LETW_DISABLE", "1", 1);
	cr_assert_eq(pthread_create(&th, NULL, capture_loop, NULL), 0);
	for (int i = 0; i < 300; i++) {
		cr_assert_eq(letw_init(&cfg), 0);
		cr_assert_eq(letw_shutdown(), 0);
	}
	uatomic_set(&lc_stop, 1);
	pthread_join(th, NULL);
	cr_assert_gt(lc_calls, 0);
	cr_assert_eq(lc_bad, 0, "%d of %d calls returned %d (%s)", lc_bad, lc_calls,
		     lc_bad_ret, strerror(-lc_bad_ret));
}

/* An atexit handler of the runtime's, registered before letw_init, runs
 * after the library's own (which stops the control thread, the table left
 * for late publishers): a capture-state asked there finds the library
 * shut down, not a library without a control thread. */
static void capture_after_exit_handler(void)
{
	int r = letw_capture_state(0, 0);

	_exit(r == -ESHUTDOWN ? 0 : 100 + (r < 0 ? -r : r) % 100);
}

Test(lifecycle, capture_state_after_the_exit_handler, .timeout = 30)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct letw_config cfg = {
			.size = sizeof(cfg),
			.flags = LETW_CONFIG_NO_CONTROL_SOCKET,
		};

		child_watchdog(10);
		setenv("LETW_DISABLE", "1", 1);
		atexit(capture_after_exit_handler);
		if (letw_init(&cfg))
			_exit(2);
		exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child: %s %d (100 + errno %d: not -ESHUTDOWN)",
		  WIFEXITED(status) ? "exit" : "signal",
		  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		  WIFEXITED(status) ? WEXITSTATUS(status) - 100 : 0);
}

/* The probe stays loaded after letw_shutdown, but nothing is emitted:
 * letw_tracing_available said 1 still. */
Test(lifecycle, tracing_available_ends_at_shutdown)
{
	unsetenv("LETW_DISABLE");
	cr_assert_eq(letw_init(NULL), 0);
	if (!letw_tracing_available()) {
		letw_shutdown();
		cr_skip_test("lttng-ust cannot be loaded here");
	}
	cr_assert_eq(letw_shutdown(), 0);
	cr_expect_eq(letw_tracing_available(), 0);
}

/* expected_records: room committed at init, never past max_records, and a
 * request for more than the machine's memory is refused (-ENOMEM) rather
 * than left to the OOM killer (committed slots are written). */
Test(lifecycle, expected_records_is_bounded)
{
	struct letw_config cfg = {
		.size = sizeof(cfg), .flags = LETW_CONFIG_NO_CONTROL_SOCKET,
		.expected_records = UINT64_MAX, .max_records = 100000,
	};
	struct letw_store_stats st = { .size = sizeof(st) };

	setenv("LETW_DISABLE", "1", 1);
	cr_assert_eq(letw_init(&cfg), 0);
	cr_assert_eq(letw_get_store_stats(&st), 0);
	cr_expect_leq(st.slots_committed, 2 * 100000, "%llu slots committed for a bound of 100000",
		      (unsigned long long)st.slots_committed);
	cr_assert_eq(letw_shutdown(), 0);
	cfg.max_records = 1ull << 30; /* 64 GiB of slots */
	cfg.expected_records = 1ull << 30;
	if ((uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) >= (64ull << 30))
		cr_skip_test("this machine holds 2^30 records");
	cr_expect_eq(letw_init(&cfg), -ENOMEM);
	letw_shutdown();
}
