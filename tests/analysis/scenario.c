/* SPDX-License-Identifier: MIT */
/*
 * letw-scenario: publishes and unpublishes code records through the real
 * lttng-etw library following a script on the command line, so the
 * analysis tests can produce small traces whose exact contents they know.
 * The addresses are never executed: map reconstruction only needs the
 * records. Steps (run in order):
 *
 *   load ADDR SIZE NAME [NAMESPACE [SIGNATURE [TIER]]]   method publish
 *   unload ADDR                                          method unpublish
 *   stub ADDR SIZE KIND OWNER [NAME]                     stub publish
 *   unstub ADDR                                          stub unpublish
 *   touch FILE        create FILE (tell the test script a point was reached)
 *   wait FILE         wait until FILE exists (the script's go-ahead)
 *   capture           letw_capture_state(0, wait=1)
 *   sleep MS
 *
 * Exit status: 0, or 1 when a step fails (the failing step is printed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lttng-etw/lttng-etw.h>

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int step(char **a, int n)
{
	const char *op = a[0];

	if (!strcmp(op, "load") && n >= 4) {
		struct letw_method m = {
			.method_id = num(a[1]), .code_start = num(a[1]),
			.code_size = (uint32_t)num(a[2]), .name = a[3],
			.method_flags = LETW_METHOD_JITTED,
		};
		int k = 4;

		if (n > k && strcmp(a[k], "-") != 0)
			m.method_namespace = a[k];
		if (n > ++k && strcmp(a[k], "-") != 0)
			m.signature = a[k];
		if (n > ++k)
			m.method_flags |= LETW_METHOD_TIER(num(a[k]));
		return letw_method_publish(&m);
	}
	if (!strcmp(op, "unload") && n >= 2) {
		return letw_method_unpublish(num(a[1]));
	}
	if (!strcmp(op, "stub") && n >= 5) {
		struct letw_stub s = {
			.start = num(a[1]), .size = (uint32_t)num(a[2]),
			.kind = (uint32_t)num(a[3]), .owner = num(a[4]),
		};

		if (n > 5)
			s.name = a[5];
		return letw_stub_publish(&s);
	}
	if (!strcmp(op, "unstub") && n >= 2) {
		return letw_stub_unpublish(num(a[1]));
	}
	if (!strcmp(op, "touch") && n >= 2) {
		FILE *f = fopen(a[1], "w");

		if (!f)
			return -errno;
		fclose(f);
		return 0;
	}
	if (!strcmp(op, "wait") && n >= 2) {
		int i;

		for (i = 0; i < 1200 && access(a[1], F_OK) != 0; i++)
			sleep_ms(50);
		return access(a[1], F_OK) == 0 ? 0 : -ETIMEDOUT;
	}
	if (!strcmp(op, "capture")) {
		int ret = letw_capture_state(0, 1);

		return ret < 0 ? ret : 0;
	}
	if (!strcmp(op, "sleep") && n >= 2) {
		sleep_ms((long)num(a[1]));
		return 0;
	}
	return -EINVAL;
}

static int is_keyword(const char *s)
{
	static const char *const kw[] = { "load", "unload", "stub", "unstub",
					  "touch", "wait", "capture", "sleep", NULL };
	const char *const *k;

	for (k = kw; *k; k++)
		if (!strcmp(*k, s))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: letw-scenario STEP...  (see the source header for steps)\n");
		return 0;
	}
	ret = letw_init(NULL);
	if (ret) {
		fprintf(stderr, "letw-scenario: letw_init: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 1; i < argc;) {
		int n = 1;

		/* A step spans up to the next step keyword. */
		while (i + n < argc && !is_keyword(argv[i + n]))
			n++;
		ret = step(&argv[i], n);
		if (ret) {
			fprintf(stderr, "letw-scenario: step %d `%s`: %s\n", i,
				argv[i], strerror(-ret));
			letw_shutdown();
			return 1;
		}
		i += n;
	}
	letw_shutdown();
	return 0;
}
