/* SPDX-License-Identifier: MIT */
/*
 * The control thread's per-session memory (provider/sessions.c): which
 * control code and mask a session's statedump gets (DESIGN §4, ETW's
 * semantics per session), and its pruning.
 */
#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>
#include "sessions.h"

#define S(n) ((struct lttng_ust_session *)(uintptr_t)(0x1000 * (n)))
#define START LETW_KW_RUNDOWN_START
#define END LETW_KW_RUNDOWN_END
#define KINDS (LETW_KW_JIT_RUNDOWN | LETW_KW_STUB_RUNDOWN | LETW_KW_LOADER_RUNDOWN)

Test(sessmem, first_statedump_enables_with_the_session_mask)
{
	static struct letw_sessmem m;
	uint64_t run;

	cr_assert_eq(letw_sessmem_statedump(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, START | KINDS);
	cr_assert(letw_sessmem_known(&m, S(1)));
	cr_assert(!letw_sessmem_known(&m, S(2)));
}

Test(sessmem, unchanged_mask_is_capture_state_with_the_whole_mask)
{
	static struct letw_sessmem m;
	uint64_t run;

	letw_sessmem_statedump(&m, S(1), START | END | KINDS, &run);
	cr_assert_eq(letw_sessmem_statedump(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, START | END | KINDS);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_CAPTURE_STATE, run,
				       LETW_PROVIDER_RUNDOWN),
		     LETW_PASS_DCSTART | LETW_PASS_DCEND);
}

/* `lttng-etw stop`: *dcend* enabled in a session that recorded *dcstart*,
 * then its statedump regenerated -> a DCEnd pass only. */
Test(sessmem, gained_trigger_runs_only_the_new_flavour)
{
	static struct letw_sessmem m;
	uint64_t run;

	letw_sessmem_statedump(&m, S(1), START | KINDS, &run);
	cr_assert_eq(letw_sessmem_statedump(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, END | KINDS);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER, run,
				       LETW_PROVIDER_RUNDOWN), LETW_PASS_DCEND);
	/* Remembered whole: the next regenerate captures both. */
	cr_assert_eq(letw_sessmem_statedump(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, START | END | KINDS);
}

Test(sessmem, lost_keyword_is_no_gain)
{
	static struct letw_sessmem m;
	uint64_t run;

	letw_sessmem_statedump(&m, S(1), START | END | KINDS, &run);
	cr_assert_eq(letw_sessmem_statedump(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, START | KINDS);
}

Test(sessmem, sessions_are_independent)
{
	static struct letw_sessmem m;
	uint64_t run;

	letw_sessmem_statedump(&m, S(1), START | KINDS, &run);
	cr_assert_eq(letw_sessmem_statedump(&m, S(2), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, START | KINDS);
}

Test(sessmem, prune_forgets_vanished_sessions_so_a_restart_is_new)
{
	static struct letw_sessmem m;
	struct letw_sess live[] = { { .session = S(2), .events = 1 } };
	uint64_t run;

	letw_sessmem_statedump(&m, S(1), START, &run);
	letw_sessmem_statedump(&m, S(2), START, &run);
	letw_sessmem_statedump(&m, S(3), START, &run);
	letw_sessmem_prune(&m, live, 1);
	cr_assert_eq(m.n, 1);
	cr_assert(letw_sessmem_known(&m, S(2)));
	cr_assert_eq(letw_sessmem_statedump(&m, S(1), START, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	letw_sessmem_prune(&m, NULL, 0);
	cr_assert_eq(m.n, 0);
}

Test(sessmem, stays_bounded_evicting_the_least_recently_served)
{
	static struct letw_sessmem m;
	uint64_t run;

	for (int i = 1; i <= LETW_SESSMEM_MAX; i++)
		letw_sessmem_statedump(&m, S(i), START, &run);
	letw_sessmem_statedump(&m, S(1), START, &run); /* S(1) used again */
	letw_sessmem_statedump(&m, S(LETW_SESSMEM_MAX + 1), START, &run);
	cr_assert_eq(m.n, LETW_SESSMEM_MAX);
	cr_assert(letw_sessmem_known(&m, S(1)));
	cr_assert(!letw_sessmem_known(&m, S(2)));
	cr_assert(letw_sessmem_known(&m, S(LETW_SESSMEM_MAX + 1)));
}

Test(sessmem, event_sets_map_to_keywords)
{
	cr_assert_eq(letw_rd_events_mask(0), 0);
	cr_assert_eq(letw_rd_events_mask(LETW_RD_BIT(LETW_RD_METHOD_DCSTART)),
		     START | LETW_KW_JIT_RUNDOWN);
	cr_assert_eq(letw_rd_events_mask(LETW_RD_BIT(LETW_RD_DCEND_INIT) |
					 LETW_RD_BIT(LETW_RD_STUB_DCEND)),
		     END | LETW_KW_STUB_RUNDOWN);
	/* The optional events are kinds, never triggers. */
	cr_assert_eq(letw_rd_events_mask(LETW_RD_BIT(LETW_RD_LINES_START)),
		     LETW_KW_LINES_RUNDOWN);
	cr_assert_eq(letw_rd_events_mask(LETW_RD_BIT(LETW_RD_CODE_END)),
		     LETW_KW_CODE_BYTES_RUNDOWN);
}
