/* SPDX-License-Identifier: MIT */
/* Embedding API: argument checking, error codes, table unchanged on error. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>

#include "table_fixture.h"
#include "task_names.h"


static struct letw_method method_at(uint64_t start, uint32_t size, const char *name)
{
	return (struct letw_method){
		.method_id = start,
		.code_start = start,
		.code_size = size,
		.name = name,
		.method_namespace = "ns",
		.signature = "()",
	};
}

static uint64_t live_methods(void)
{
	struct letw_stats st;

	cr_assert_eq(letw_get_stats(&st), 0);
	return st.live_methods;
}

TestSuite(api, .init = letw_test_table_setup, .fini = letw_test_table_teardown);

Test(api, publish_and_unpublish)
{
	struct letw_method m = method_at(0x1000, 0x100, "f");

	cr_assert_eq(letw_method_publish(&m), 0);
	cr_assert_eq(live_methods(), 1);
	cr_assert_eq(letw_method_unpublish(0x1000), 0);
	cr_assert_eq(live_methods(), 0);
	/* The range is free again. */
	cr_assert_eq(letw_method_publish(&m), 0);
}

Test(api, invalid_records)
{
	struct letw_method m = method_at(0x1000, 0x100, "f");
	struct letw_stub s = { .start = 0x9000, .size = 0, .kind = LETW_STUB_JUMP };

	cr_assert_eq(letw_method_publish(NULL), -EINVAL);
	cr_assert_eq(letw_stub_publish(NULL), -EINVAL);
	cr_assert_eq(letw_module_publish(NULL), -EINVAL);
	m.code_size = 0;
	cr_assert_eq(letw_method_publish(&m), -EINVAL);
	m = method_at(UINT64_MAX - 0x10, 0x100, "wraps");
	cr_assert_eq(letw_method_publish(&m), -EINVAL);
	m = method_at(0x1000, 0x100, NULL);
	cr_assert_eq(letw_method_publish(&m), -EINVAL);
	m = method_at(0x1000, 0x100, "");
	cr_assert_eq(letw_method_publish(&m), -EINVAL);
	cr_assert_eq(letw_stub_publish(&s), -EINVAL);
	cr_assert_eq(live_methods(), 0);
}

Test(api, strings_length_and_utf8)
{
	static const char *const bad_utf8[] = {
		"\xc3\x28",         /* truncated sequence */
		"\xc0\xaf",         /* overlong '/' */
		"\xed\xa0\x80",     /* UTF-16 surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"ok\xff",
	};
	size_t big = 1u << 20;
	char *name = malloc(big + 1);
	struct letw_method m;

	cr_assert_not_null(name);
	memset(name, 'a', big);
	name[big] = '\0';
	m = method_at(0x1000, 0x10, name);
	cr_assert_eq(letw_method_publish(&m), -ENAMETOOLONG);
	name[LETW_STRING_MAX + 1] = '\0';
	cr_assert_eq(letw_method_publish(&m), -ENAMETOOLONG);
	name[LETW_STRING_MAX] = '\0';
	cr_assert_eq(letw_method_publish(&m), 0, "exactly LETW_STRING_MAX is fine");
	cr_assert_eq(letw_method_unpublish(0x1000), 0);
	for (size_t i = 0; i < sizeof(bad_utf8) / sizeof(bad_utf8[0]); i++) {
		m = method_at(0x1000, 0x10, bad_utf8[i]);
		cr_assert_eq(letw_method_publish(&m), -EILSEQ, "case %zu", i);
		m = method_at(0x1000, 0x10, "f");
		m.signature = bad_utf8[i];
		cr_assert_eq(letw_method_publish(&m), -EILSEQ, "sig case %zu", i);
	}
	m = method_at(0x1000, 0x10, "Grüße::λ→😀");
	cr_assert_eq(letw_method_publish(&m), 0);
	cr_assert_eq(live_methods(), 1);
	free(name);
}

/* The ASCII fast path reads eight bytes at a time: a bad byte or a valid
 * multi-byte character at every position of names around the word sizes
 * and at the limit is refused or accepted like anywhere else. */
static void check_name(const char *name, int want, const char *what, size_t len,
		       size_t pos)
{
	struct letw_method m = method_at(0x2000, 0x10, name);

	cr_assert_eq(letw_method_publish(&m), want, "%s: len %zu pos %zu", what, len, pos);
	if (!want)
		cr_assert_eq(letw_method_unpublish(0x2000), 0);
}

Test(api, strings_at_the_limit_and_word_boundaries)
{
	static const size_t lens[] = { 1, 2, 7, 8, 9, 15, 16, 17, 24, 25,
				       LETW_STRING_MAX - 1, LETW_STRING_MAX };
	char *name = malloc(LETW_STRING_MAX + 2);

	cr_assert_not_null(name);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t len = lens[k];

		memset(name, 'a', len);
		name[len] = '\0';
		check_name(name, 0, "ascii", len, len);
		for (size_t pos = 0; pos < len; pos++) {
			name[pos] = (char)0xff; /* never valid */
			check_name(name, -EILSEQ, "0xff", len, pos);
			name[pos] = (char)0x80; /* a continuation with no lead */
			check_name(name, -EILSEQ, "0x80", len, pos);
			name[pos] = (char)0xc3; /* a lead cut short by 'a' or the NUL */
			check_name(name, -EILSEQ, "lead", len, pos);
			if (pos + 1 < len) {
				name[pos + 1] = (char)0xa9; /* U+00E9 */
				check_name(name, 0, "2-byte", len, pos);
				name[pos + 1] = 'a';
			}
			if (pos + 3 < len) {
				memcpy(name + pos, "\xf0\x9f\x98\x80", 4); /* U+1F600 */
				check_name(name, 0, "4-byte", len, pos);
				memset(name + pos + 1, 'a', 3);
			}
			name[pos] = 'a';
		}
	}
	memset(name, 'a', LETW_STRING_MAX + 1);
	name[LETW_STRING_MAX + 1] = '\0';
	check_name(name, -ENAMETOOLONG, "one past the limit", LETW_STRING_MAX + 1, 0);
	cr_assert_eq(live_methods(), 0);
	free(name);
}

Test(api, overlaps_are_refused_across_kinds)
{
	struct letw_method a = method_at(0x10000, 0x100, "a");
	struct letw_method b = method_at(0x100f0, 0x20, "b");
	struct letw_method inside = method_at(0x10010, 0x10, "inside");
	struct letw_method around = method_at(0xff00, 0x1000, "around");
	struct letw_method adjacent = method_at(0x10100, 0x10, "adjacent");
	struct letw_stub s = { .start = 0x10080, .size = 8, .kind = LETW_STUB_JUMP };

	cr_assert_eq(letw_method_publish(&a), 0);
	cr_assert_eq(letw_method_publish(&a), -EEXIST);
	cr_assert_eq(letw_method_publish(&b), -EEXIST);
	cr_assert_eq(letw_method_publish(&inside), -EEXIST);
	cr_assert_eq(letw_method_publish(&around), -EEXIST);
	cr_assert_eq(letw_stub_publish(&s), -EEXIST);
	cr_assert_eq(letw_method_publish(&adjacent), 0);
	cr_assert_eq(live_methods(), 2);
}

Test(api, large_ranges_overlap_at_the_far_end)
{
	struct letw_stub block = { .start = 0x400000, .size = 1u << 20,
				   .kind = LETW_STUB_BLOCK, .name = "block" };
	struct letw_method tail = method_at(0x400000 + (1u << 20) - 8, 8, "tail");
	struct letw_method after = method_at(0x400000 + (1u << 20), 0x100, "after");

	cr_assert_eq(letw_stub_publish(&block), 0);
	cr_assert_eq(letw_method_publish(&tail), -EEXIST);
	cr_assert_eq(letw_method_publish(&after), 0);
	cr_assert_eq(letw_stub_unpublish(0x400000), 0);
	cr_assert_eq(letw_method_publish(&tail), 0);
}

Test(api, unknown_and_double_unpublish)
{
	struct letw_method m = method_at(0x2000, 0x40, "f");
	struct letw_stub s = { .start = 0x3000, .size = 0x10, .kind = LETW_STUB_JUMP };

	cr_assert_eq(letw_method_unpublish(0x2000), -ENOENT);
	cr_assert_eq(letw_method_publish(&m), 0);
	cr_assert_eq(letw_method_unpublish(0x2001), -ENOENT, "inside is not the start");
	cr_assert_eq(letw_stub_unpublish(0x2000), -ENOENT, "a method is not a stub");
	cr_assert_eq(letw_method_unpublish(0x2000), 0);
	cr_assert_eq(letw_method_unpublish(0x2000), -ENOENT);
	cr_assert_eq(letw_stub_publish(&s), 0);
	cr_assert_eq(letw_method_unpublish(0x3000), -ENOENT, "a stub is not a method");
	cr_assert_eq(letw_stub_unpublish(0x3000), 0);
	cr_assert_eq(letw_stub_unpublish(0x3000), -ENOENT);
}

Test(api, modules)
{
	struct letw_module md = { .module_id = 7, .name = "chunk.lua" };
	struct letw_module zero = { .module_id = 0, .name = "zero" };
	struct letw_module noname = { .module_id = 8, .name = NULL };
	struct letw_stats st;

	cr_assert_eq(letw_module_publish(&zero), -EINVAL);
	cr_assert_eq(letw_module_publish(&noname), -EINVAL);
	cr_assert_eq(letw_module_publish(&md), 0);
	cr_assert_eq(letw_module_publish(&md), -EEXIST);
	cr_assert_eq(letw_get_stats(&st), 0);
	cr_assert_eq(st.live_modules, 1);
	cr_assert_eq(letw_module_unpublish(9), -ENOENT);
	cr_assert_eq(letw_module_unpublish(7), 0);
	cr_assert_eq(letw_module_unpublish(7), -ENOENT);
}

Test(api, lifecycle_errors)
{
	struct letw_config bad = { .size = 3 };
	struct letw_method m = method_at(0x2000, 0x40, "f");

	cr_assert_eq(letw_init(NULL), -EALREADY);
	cr_assert_eq(letw_init(&bad), -EINVAL);
	cr_assert_eq(letw_capture_state(0, 1), -ENOTSUP, "no control thread configured");
	cr_assert_eq(letw_tracing_available(), 0, "LETW_DISABLE=1");
	cr_assert_eq(letw_shutdown(), 0);
	cr_assert_eq(letw_shutdown(), -ESHUTDOWN);
	cr_assert_eq(letw_method_publish(&m), -ESHUTDOWN);
	cr_assert_eq(letw_method_unpublish(0x2000), -ESHUTDOWN);
	cr_assert_eq(letw_capture_state(0, 0), -ESHUTDOWN);
	/* And the library can be initialised again. */
	cr_assert_eq(letw_init(NULL), 0);
	cr_assert_eq(letw_method_publish(&m), 0);
}

static char logged[512];

static void keep_log(enum letw_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 1);
}

Test(api, bad_environment_values_are_said)
{
	struct letw_config cfg = { .size = sizeof(cfg), .log_fn = keep_log };

	cr_assert_eq(letw_shutdown(), 0);
	logged[0] = '\0';
	setenv("LETW_POLL_MS", "abc", 1);
	cr_assert_eq(letw_init(&cfg), 0, "a bad LETW_POLL_MS is no reason to fail");
	unsetenv("LETW_POLL_MS");
	cr_assert(strstr(logged, "LETW_POLL_MS=abc ignored"), "logged: '%s'", logged);
}

Test(api, deferred_frees_drain)
{
	struct letw_stats st;

	for (uint64_t i = 0; i < 1000; i++) {
		struct letw_method m = method_at(0x100000 + i * 0x100, 0x80, "f");

		cr_assert_eq(letw_method_publish(&m), 0);
		cr_assert_eq(letw_method_unpublish(m.code_start), 0);
	}
	/* Frees happen on liburcu's call_rcu thread; wait for them without
	 * asserting any timing. */
	for (int i = 0; i < 2000; i++) {
		cr_assert_eq(letw_get_stats(&st), 0);
		if (st.deferred_frees_pending == 0)
			break;
		usleep(5000);
	}
	cr_assert_eq(st.deferred_frees_pending, 0);
	cr_assert_eq(st.live_methods, 0);
	/* One thread runs the passes, and the call_rcu worker that did
	 * those frees is told apart from it (perf, top, the benchmarks). */
	cr_assert_eq(tasks_named("letw-control", NULL), 1);
	cr_assert_eq(tasks_named("letw-reclaim", NULL), 1);
}

/* letw_method_publish_opts: each malformed line table is refused with its
 * errno and leaves nothing behind; a valid one publishes. */
Test(api, publish_opts_errors)
{
	static const char *const files[] = { "a.c", "b.h" };
	static const char *const nl[] = { "a\nb" };
	struct letw_line rows[3] = {
		{ .native_offset = 0, .line = 1, .file = 0 },
		{ .native_offset = 0x10, .line = 2, .file = 1, .inline_depth = 1 },
		{ .native_offset = 0x20, .line = 3, .file = 0 },
	};
	struct letw_method m = method_at(0x9000, 0x100, "withlines");
	struct letw_method_opts o = {
		.size = sizeof(o), .lines = rows, .nr_lines = 3,
		.nr_files = 2, .files = files,
	};
	struct letw_method_opts bad;

	bad = o, bad.size = 8;
	cr_assert_eq(letw_method_publish_opts(&m, &bad), -EINVAL);
	bad = o, bad.lines = NULL;
	cr_assert_eq(letw_method_publish_opts(&m, &bad), -EINVAL);
	bad = o, bad.files = NULL;
	cr_assert_eq(letw_method_publish_opts(&m, &bad), -EINVAL);
	bad = o, bad.nr_files = 1; /* row 1 names file 1 */
	cr_assert_eq(letw_method_publish_opts(&m, &bad), -EINVAL);
	bad = o, bad.nr_lines = LETW_LINES_MAX + 1;
	cr_assert_eq(letw_method_publish_opts(&m, &bad), -E2BIG);
	bad = o, bad.files = nl, bad.nr_files = 1, bad.nr_lines = 1;
	cr_assert_eq(letw_method_publish_opts(&m, &bad), -EINVAL);
	bad = o, bad.flags = 1u << 31; /* unknown flag */
	cr_assert_eq(letw_method_publish_opts(&m, &bad), -EINVAL);
	rows[2].native_offset = 0x100; /* == code_size */
	cr_assert_eq(letw_method_publish_opts(&m, &o), -EINVAL);
	rows[2].native_offset = 0x8; /* before row 1 */
	cr_assert_eq(letw_method_publish_opts(&m, &o), -EINVAL);
	cr_assert_eq(live_methods(), 0);
	rows[2].native_offset = 0x20;
	cr_assert_eq(letw_method_publish_opts(&m, &o), 0);
	cr_assert_eq(letw_method_publish_opts(&m, NULL), -EEXIST);
	cr_assert_eq(live_methods(), 1);
	cr_assert_eq(letw_method_unpublish(0x9000), 0);
}

/* A runtime built before `flags` existed passes a shorter struct: what
 * lies past its size is not read (here: a bit no version defines). */
Test(api, publish_opts_before_flags)
{
	struct letw_method m = method_at(0xb000, 0x10, "old");
	struct letw_method_opts o = {
		.size = offsetof(struct letw_method_opts, flags),
		.flags = 1u << 31,
	};

	cr_assert_eq(letw_method_publish_opts(&m, &o), 0);
	cr_assert_eq(letw_method_unpublish(0xb000), 0);
	o.size = sizeof(o);
	cr_assert_eq(letw_method_publish_opts(&m, &o), -EINVAL);
	o.flags = LETW_METHOD_OPT_CODE_READABLE;
	cr_assert_eq(letw_method_publish_opts(&m, &o), 0);
	cr_assert_eq(letw_method_unpublish(0xb000), 0);
}

Test(api, publish_opts_file_bytes_limit)
{
	static char name[LETW_STRING_MAX + 1];
	const char *files[8];
	struct letw_method m = method_at(0xa000, 0x10, "f");
	struct letw_method_opts o = { .size = sizeof(o), .nr_files = 8, .files = files };

	memset(name, 'x', LETW_STRING_MAX - 1);
	for (int i = 0; i < 8; i++)
		files[i] = name; /* 8 x 4096 bytes > LETW_FILES_BYTES_MAX */
	cr_assert_eq(letw_method_publish_opts(&m, &o), -E2BIG);
	o.nr_files = 3; /* 12288 bytes: fits */
	cr_assert_eq(letw_method_publish_opts(&m, &o), 0);
	cr_assert_eq(letw_method_unpublish(0xa000), 0);
}

/* Big ranges (more than 64 pages) take the registry path: overlaps are
 * still refused both ways, and a 4 GiB - 1 range is accepted. */
Test(api, big_ranges)
{
	struct letw_stub big = { .start = 0x100000000000ull, .size = UINT32_MAX,
				 .kind = LETW_STUB_BLOCK, .name = "heap" };
	struct letw_method in = method_at(0x100000000000ull + 0x12345000ull, 0x100, "in");
	struct letw_method out = method_at(0x100000000000ull + UINT32_MAX, 0x100, "out");
	struct letw_stub big2 = { .start = 0x100000000000ull - 0x10000, .size = 0x100000,
				  .kind = LETW_STUB_BLOCK };

	cr_assert_eq(letw_method_publish(&in), 0);
	cr_assert_eq(letw_stub_publish(&big), -EEXIST, "a small record lies inside");
	cr_assert_eq(letw_method_unpublish(in.code_start), 0);
	cr_assert_eq(letw_stub_publish(&big), 0);
	cr_assert_eq(letw_method_publish(&in), -EEXIST, "inside the big range");
	cr_assert_eq(letw_method_publish(&out), 0, "just past its end");
	cr_assert_eq(letw_stub_publish(&big2), -EEXIST, "big against big");
	cr_assert_eq(letw_stub_unpublish(big.start), 0);
	cr_assert_eq(letw_method_publish(&in), 0);
	cr_assert_eq(letw_method_unpublish(in.code_start), 0);
	cr_assert_eq(letw_method_unpublish(out.code_start), 0);
	cr_assert_eq(live_methods(), 0);
}

/* Strings of every length up to 200 bytes: the store's small classes are
 * stocked at init, so no first use of a class takes the publisher's slow
 * path (an mprotect on the runtime's thread). */
Test(api, small_strings_never_take_the_slow_path)
{
	struct letw_store_stats ss = { .size = sizeof(ss) };
	char name[201];

	for (int len = 1; len <= 200; len++) {
		struct letw_method m;

		memset(name, 'a' + len % 26, (size_t)len);
		name[len] = 0;
		m = method_at(0x100000 + (uint64_t)len * 0x100, 0x80, name);
		cr_assert_eq(letw_method_publish(&m), 0, "len %d", len);
	}
	cr_assert_eq(letw_get_store_stats(&ss), 0);
	cr_assert_eq(ss.slow_grows, 0, "%llu slow grows", (unsigned long long)ss.slow_grows);
}

/* A control callback that tries to replace itself: on the control thread,
 * which holds the dispatch's lock, letw_set_control_fn must refuse, not
 * hang, and leave the callback in place. */
static int callback_calls, callback_set_ret = 1;

static void other_callback(int code, int level, uint64_t mask, int provider, void *ctx)
{
	(void)code; (void)level; (void)mask; (void)provider; (void)ctx;
}

static void replacing_callback(int code, int level, uint64_t mask, int provider, void *ctx)
{
	(void)code; (void)level; (void)mask; (void)provider; (void)ctx;
	callback_calls++;
	callback_set_ret = letw_set_control_fn(other_callback, NULL);
}

static void setup_control(void)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.flags = LETW_CONFIG_NO_CONTROL_SOCKET,
	};

	setenv("LETW_DISABLE", "1", 1);
	cr_assert_eq(letw_init(&cfg), 0);
}

TestSuite(control, .init = setup_control, .fini = letw_test_table_teardown);

Test(control, set_control_fn_from_the_callback_is_refused)
{
	cr_assert_eq(letw_set_control_fn(replacing_callback, NULL), 0);
	/* Waits for the dispatch, which calls the callback on the control
	 * thread (with tracing disabled the pass itself runs nothing). */
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_assert_eq(callback_calls, 1);
	cr_assert_eq(callback_set_ret, -EDEADLK);
	/* Still the same callback. */
	cr_assert_geq(letw_capture_state(LETW_KW_RUNDOWN_START, 1), 0);
	cr_assert_eq(callback_calls, 2);
	cr_assert_eq(letw_set_control_fn(NULL, NULL), 0, "fine off the control thread");
}

/* max_records bounds live records, exactly, and nothing else: not the
 * slots that unpublished records and refused publishes hold until their
 * grace period (no control thread here, so none ever comes back). It used
 * to bound slots, rounded up to the 16384-slot commit chunk: 100 let 16384
 * in, and a table at its bound refused every publish, even after an
 * unpublish, with -ENOMEM. */
static void setup_bounded(uint64_t max)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.flags = LETW_CONFIG_NO_CONTROL_THREAD,
		.max_records = max,
	};

	setenv("LETW_DISABLE", "1", 1);
	cr_assert_eq(letw_init(&cfg), 0);
}

static void setup_bounded_100(void)
{
	setup_bounded(100);
}

static void setup_bounded_chunk(void)
{
	setup_bounded(16384);
}

Test(bounded, max_records_is_exact, .init = setup_bounded_100, .fini = letw_test_table_teardown)
{
	struct letw_stub stub = { .start = 0x900000, .size = 16, .kind = LETW_STUB_JUMP,
				  .name = "s" };
	struct letw_module mod = { .module_id = 7, .name = "m" };

	for (uint64_t i = 0; i < 99; i++) {
		struct letw_method m = method_at(0x10000 + i * 0x100, 0x80, "f");

		cr_assert_eq(letw_method_publish(&m), 0, "method %llu", (unsigned long long)i);
	}
	cr_assert_eq(letw_module_publish(&mod), 0);
	/* 100 live: methods, stubs and modules alike are refused. */
	{
		struct letw_method m = method_at(0x800000, 0x80, "g");

		cr_assert_eq(letw_method_publish(&m), -ENOMEM);
	}
	cr_assert_eq(letw_stub_publish(&stub), -ENOMEM);
	cr_assert_eq(live_methods(), 99);
	/* One out (its slot waits for a grace period): one in. */
	cr_assert_eq(letw_module_unpublish(7), 0);
	cr_assert_eq(letw_stub_publish(&stub), 0);
	cr_assert_eq(letw_module_publish(&mod), -ENOMEM);
}

Test(bounded, max_records_leaves_room_for_the_grace_period, .init = setup_bounded_chunk,
     .fini = letw_test_table_teardown)
{
	const uint64_t n = 16384;
	struct letw_method last = method_at(0x100000 + (n - 1) * 0x40, 0x40, "last");

	for (uint64_t i = 0; i < n - 1; i++) {
		struct letw_method m = method_at(0x100000 + i * 0x40, 0x40, "f");

		cr_assert_eq(letw_method_publish(&m), 0, "method %llu", (unsigned long long)i);
	}
	/* Refused publishes' slots go through a grace period too: they
	 * must not take the bound's last place. */
	for (int i = 0; i < 1000; i++) {
		struct letw_method over = method_at(0x100000 + 0x20, 0x40, "over");

		cr_assert_eq(letw_method_publish(&over), -EEXIST, "round %d", i);
	}
	cr_assert_eq(letw_method_publish(&last), 0);
	cr_assert_eq(live_methods(), n);
	/* Re-versioning at the bound: out, then in again. */
	for (int i = 0; i < 1000; i++) {
		struct letw_method same = method_at(0x100000, 0x40, "again");

		cr_assert_eq(letw_method_unpublish(0x100000), 0, "round %d", i);
		cr_assert_eq(letw_method_publish(&same), 0, "round %d", i);
	}
	cr_assert_eq(live_methods(), n);
}
