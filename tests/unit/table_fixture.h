/* SPDX-License-Identifier: MIT */
/* The fixture of the unit tests that exercise the record table only: no
 * control thread and no tracing (LETW_DISABLE=1; e2e covers tracing), so
 * a test sees nothing but the embedding API and its table. */
#ifndef LETW_TESTS_TABLE_FIXTURE_H
#define LETW_TESTS_TABLE_FIXTURE_H

#include <stdlib.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>

static inline void letw_test_table_setup(void)
{
	struct letw_config cfg = {
		.size = sizeof(cfg),
		.flags = LETW_CONFIG_NO_CONTROL_THREAD,
	};

	setenv("LETW_DISABLE", "1", 1);
	cr_assert_eq(letw_init(&cfg), 0);
}

static inline void letw_test_table_teardown(void)
{
	letw_shutdown();
}

#endif
