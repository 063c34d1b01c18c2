/* SPDX-License-Identifier: MIT */
/* `watch`'s hold-back rule (analysis/cli/watch_hold.c) on its own: which
 * rotations of a size-rotating session get no statedump because watch's
 * previous one may have filled the chunk. rotation_churn_e2e and
 * rotation_e2e run it against real sessions; here every branch. */
#include <string.h>

#include <criterion/criterion.h>

#include "watch_hold.h"

#define MIB (1024ull * 1024ull)

static char reason[256];

static const char *hold(double since, uint64_t size, const struct letw_proc *v, int n)
{
	reason[0] = 0;
	return letw_watch_held_back(since, size, v, n, reason, sizeof(reason));
}

/* A process that answered STATUS with its last pass's size. */
static struct letw_proc sized(uint64_t records, uint64_t bytes)
{
	return (struct letw_proc){ .pid = 1, .alive = 1, .hook = 1, .sized = 1,
				   .last_records = records, .last_bytes = bytes };
}

Test(watch_hold, small_pass_never_held)
{
	struct letw_proc v[] = { sized(10, 1000) };

	cr_assert_null(hold(0.5, 1 * MIB, v, 1));
	cr_assert_null(hold(4.9, 1 * MIB, v, 1));
}

Test(watch_hold, pass_of_half_the_chunk_held_within_5s)
{
	/* 4000 records: 4000 * 64 of overhead + 512 + 300000 payload >= 512 KiB */
	struct letw_proc v[] = { sized(4000, 300000) };
	const char *why = hold(1.0, 1 * MIB, v, 1);

	cr_assert_not_null(why);
	cr_assert(strstr(why, "within 5 s"), "%s", why);
	cr_assert(strstr(reason, "4000 records"), "%s", reason);
	cr_assert_null(hold(5.0, 1 * MIB, v, 1), "past 5 s the chunk is not the pass's");
}

Test(watch_hold, bound_sums_every_listed_process)
{
	/* Each below half alone, together above. */
	struct letw_proc v[] = { sized(2000, 150000), sized(2000, 150000) };

	cr_assert_null(hold(1.0, 1 * MIB, v, 1));
	cr_assert_not_null(hold(1.0, 1 * MIB, v, 2));
}

Test(watch_hold, busy_process_held_up_to_30s)
{
	struct letw_proc v[] = { sized(10, 1000), { .pid = 2, .alive = 1, .busy = 1 } };

	cr_assert_not_null(hold(10.0, 1 * MIB, v, 2));
	cr_assert(strstr(hold(29.0, 1 * MIB, v, 2), "busy"));
	cr_assert_null(hold(30.0, 1 * MIB, v, 2));
}

Test(watch_hold, unknown_size_held_within_5s)
{
	struct letw_proc old = { .pid = 3, .alive = 1, .hook = 1 }; /* no LETW_CTL_STATUS_EMITTED */

	cr_assert_not_null(hold(1.0, 1 * MIB, &old, 1));
	cr_assert(strstr(reason, "from before"), "%s", reason);
	cr_assert_null(hold(6.0, 1 * MIB, &old, 1));
	/* No list at all: nothing can be told. */
	cr_assert_not_null(hold(1.0, 1 * MIB, NULL, 0));
	cr_assert_null(strstr(reason, "from before"), "%s", reason);
	/* The session's rotation size unknown. */
	struct letw_proc v[] = { sized(10, 1000) };

	cr_assert_not_null(hold(1.0, 0, v, 1));
}

Test(watch_hold, exited_processes_ignored)
{
	struct letw_proc v[] = { sized(10, 1000),
				 { .pid = 4, .alive = 0, .busy = 1 },
				 { .pid = 5, .alive = 0, .last_records = 100000 } };

	cr_assert_null(hold(1.0, 1 * MIB, v, 3));
}
