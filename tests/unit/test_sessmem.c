/* SPDX-License-Identifier: MIT */
/*
 * The control thread's per-session memory (provider/sessions.c): which
 * control code and mask a session's statedump gets (DESIGN §4, ETW's
 * semantics per session), which sessions are owed a pass that could not
 * begin, and its pruning.
 */
#include <errno.h>
#include <stddef.h>

#include <criterion/criterion.h>

#include <lttng-etw/lttng-etw.h>
#include "sessions.h"

/* This executable's realloc, which sessions.c (linked in from the
 * internals archive) calls: refuses while `refuse_realloc` is set (the
 * out-of-memory test below), else glibc's. */
extern void *__libc_realloc(void *p, size_t n);
static int refuse_realloc;

void *realloc(void *p, size_t n)
{
	if (refuse_realloc) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

/* What the control thread does for a statedump whose pass ran
 * (serve.c, serve_session_locked): decide, then remember. */
static int ran_statedump(struct letw_sessmem *m, struct lttng_ust_session *session,
			 uint64_t mask, uint64_t *run_mask)
{
	int code = letw_sessmem_decide(m, session, mask, run_mask);

	letw_sessmem_served(m, session, mask);
	return code;
}

#define S(n) ((struct lttng_ust_session *)(uintptr_t)(0x1000 * (n)))

/* Remembered as served (and not pruned since): a statedump asking for no
 * new keyword is then a capture-state, for an unknown session (or one
 * held only for a failed pass's mark) a first ENABLE. */
static int known(const struct letw_sessmem *m, const struct lttng_ust_session *s)
{
	uint64_t run;

	return letw_sessmem_decide(m, s, 0, &run) == LETW_CONTROL_CAPTURE_STATE;
}
#define START LETW_KW_RUNDOWN_START
#define END LETW_KW_RUNDOWN_END
#define KINDS (LETW_KW_JIT_RUNDOWN | LETW_KW_STUB_RUNDOWN | LETW_KW_LOADER_RUNDOWN)

Test(sessmem, first_statedump_enables_with_the_session_mask)
{
	static struct letw_sessmem m;
	uint64_t run;

	cr_assert_eq(ran_statedump(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, START | KINDS);
	cr_assert(known(&m, S(1)));
	cr_assert(!known(&m, S(2)));
}

Test(sessmem, unchanged_mask_is_capture_state_with_the_whole_mask)
{
	static struct letw_sessmem m;
	uint64_t run;

	ran_statedump(&m, S(1), START | END | KINDS, &run);
	cr_assert_eq(ran_statedump(&m, S(1), START | END | KINDS, &run),
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

	ran_statedump(&m, S(1), START | KINDS, &run);
	cr_assert_eq(ran_statedump(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, END | KINDS);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER, run,
				       LETW_PROVIDER_RUNDOWN), LETW_PASS_DCEND);
	/* Remembered whole: the next regenerate captures both. */
	cr_assert_eq(ran_statedump(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, START | END | KINDS);
}

Test(sessmem, lost_keyword_is_no_gain)
{
	static struct letw_sessmem m;
	uint64_t run;

	ran_statedump(&m, S(1), START | END | KINDS, &run);
	cr_assert_eq(ran_statedump(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, START | KINDS);
}

Test(sessmem, sessions_are_independent)
{
	static struct letw_sessmem m;
	uint64_t run;

	ran_statedump(&m, S(1), START | KINDS, &run);
	cr_assert_eq(ran_statedump(&m, S(2), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, START | KINDS);
}

Test(sessmem, prune_forgets_vanished_sessions_so_a_restart_is_new)
{
	static struct letw_sessmem m;
	struct letw_sess live[] = { { .session = S(2), .events = 1 } };
	uint64_t run;

	ran_statedump(&m, S(1), START, &run);
	ran_statedump(&m, S(2), START, &run);
	ran_statedump(&m, S(3), START, &run);
	letw_sessmem_prune(&m, live, 1);
	cr_assert_eq(m.n, 1);
	cr_assert(known(&m, S(2)));
	cr_assert_eq(ran_statedump(&m, S(1), START, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	letw_sessmem_prune(&m, NULL, 0);
	cr_assert_eq(m.n, 0);
}

/* More sessions than the old fixed table's 64: each is remembered, so a
 * regenerate of any of them is a capture-state (the table used to evict
 * one, whose regenerate then ran as a first ENABLE). */
#define MANY 200

Test(sessmem, remembers_every_live_session_past_64)
{
	static struct letw_sessmem m;
	struct letw_sess live[MANY];
	uint64_t run;

	for (int i = 1; i <= MANY; i++) {
		cr_assert_eq(ran_statedump(&m, S(i), START, &run),
			     LETW_CONTROL_ENABLE_PROVIDER);
		live[i - 1] = (struct letw_sess){ .session = S(i), .events = 1 };
	}
	cr_assert_eq(m.n, MANY);
	letw_sessmem_prune(&m, live, MANY); /* all live: none forgotten */
	cr_assert_eq(m.n, MANY);
	for (int i = 1; i <= MANY; i++)
		cr_assert_eq(ran_statedump(&m, S(i), START, &run),
			     LETW_CONTROL_CAPTURE_STATE, "session %d of %d forgotten", i, MANY);
}

/* The prune's lookup needs the live list sorted (letw_sess_collect's
 * order): every other session of many gone. */
Test(sessmem, prune_keeps_exactly_the_live_ones_of_many)
{
	static struct letw_sessmem m;
	struct letw_sess live[MANY / 2];
	uint64_t run;

	for (int i = MANY; i >= 1; i--)
		ran_statedump(&m, S(i), START, &run);
	for (int i = 0; i < MANY / 2; i++)
		live[i] = (struct letw_sess){ .session = S(2 * i + 2), .events = 1 };
	letw_sessmem_prune(&m, live, MANY / 2);
	cr_assert_eq(m.n, MANY / 2);
	for (int i = 1; i <= MANY; i++)
		cr_assert_eq(known(&m, S(i)), i % 2 == 0, "session %d", i);
}

#define EV(e) LETW_RD_BIT(LETW_RD_##e)

/* The statedump overflow's all-sessions capture-state: each session it
 * reached counts as served (a regenerate of a folded session is then a
 * capture-state, not a first ENABLE), with the keywords it got. */
Test(sessmem, an_all_sessions_pass_serves_the_sessions_it_reached)
{
	static struct letw_sessmem m;
	uint32_t dcstart = EV(METHOD_DCSTART) | EV(DCSTART_INIT);
	uint32_t dcend = EV(METHOD_DCEND) | EV(DCEND_INIT);
	struct letw_sess live[] = {
		{ .session = S(1), .events = dcstart | dcend }, /* served before: dcend */
		{ .session = S(2), .events = dcstart },         /* folded */
		{ .session = S(3), .events = EV(LINES_START) }, /* none of the pass's */
	};
	uint64_t run;

	ran_statedump(&m, S(1), letw_rd_events_mask(dcend), &run);
	letw_sessmem_served_all(&m, live, 3, dcstart);
	cr_assert(known(&m, S(2)), "a folded session is not remembered as served");
	cr_assert(!known(&m, S(3)));
	cr_assert_eq(ran_statedump(&m, S(2), letw_rd_events_mask(dcstart), &run),
		     LETW_CONTROL_CAPTURE_STATE);
	/* S(1) keeps its DCEnd: the pass added DCStart, gained nothing. */
	cr_assert_eq(ran_statedump(&m, S(1), letw_rd_events_mask(dcstart | dcend),
					    &run), LETW_CONTROL_CAPTURE_STATE);
	/* S(2) got DCStart only: enabling DCEnd is a gain, a DCEnd ENABLE. */
	cr_assert_eq(ran_statedump(&m, S(2), letw_rd_events_mask(dcstart | dcend),
					    &run), LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, END | LETW_KW_JIT_RUNDOWN);
	letw_sessmem_free(&m);
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

/* Out of memory when the memory must grow for one more session: its
 * statedump still gets its pass, as a first ENABLE (the safe answer for
 * a session it cannot tell apart from a new one), counted in
 * `unremembered` (the control thread warns with it: control.c,
 * say_unremembered); the sessions already remembered keep their ETW
 * answers, and once memory is back the session is remembered. */
Test(sessmem, a_session_not_remembered_for_want_of_memory_still_gets_its_pass)
{
	static struct letw_sessmem m;
	struct letw_sess one = { .session = S(18), .events = 1 };
	uint64_t run[2] = { 0, 0 }, unremembered[2], other;
	int code[3];

	for (int i = 1; i <= 16; i++)
		cr_assert_eq(ran_statedump(&m, S(i), START, &other),
			     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(m.n, m.cap, "the memory is full: the next session must grow it");
	/* Refused, nothing is asserted (Criterion's messages allocate). */
	refuse_realloc = 1;
	for (int k = 0; k < 2; k++) {
		code[k] = ran_statedump(&m, S(17), START | KINDS, &run[k]);
		unremembered[k] = m.unremembered;
	}
	letw_sessmem_served_all(&m, &one, 1, ~0u);
	/* Remembered before: still a capture-state, nothing to allocate. */
	code[2] = ran_statedump(&m, S(5), START, &other);
	refuse_realloc = 0;
	for (int k = 0; k < 2; k++) {
		cr_expect_eq(code[k], LETW_CONTROL_ENABLE_PROVIDER, "try %d", k);
		cr_expect_eq(run[k], START | KINDS, "try %d", k);
		cr_expect_eq(unremembered[k], (uint64_t)k + 1, "try %d", k);
	}
	cr_expect_eq(m.unremembered, 3, "the all-sessions pass's session not counted");
	cr_expect_eq(m.n, 16);
	cr_expect_eq(code[2], LETW_CONTROL_CAPTURE_STATE);

	cr_expect_eq(ran_statedump(&m, S(17), START, &other),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_expect_eq(ran_statedump(&m, S(17), START, &other),
		     LETW_CONTROL_CAPTURE_STATE, "remembered once memory is back");
	cr_expect_eq(m.n, 17);
	cr_expect_eq(m.unremembered, 3);
	letw_sessmem_free(&m);
}

/* The decision alone changes nothing: asked twice, a first statedump is a
 * first ENABLE twice, and the session is not known until served. */
Test(sessmem, deciding_remembers_nothing)
{
	static struct letw_sessmem m;
	uint64_t run;

	for (int k = 0; k < 2; k++) {
		cr_assert_eq(letw_sessmem_decide(&m, S(1), START | KINDS, &run),
			     LETW_CONTROL_ENABLE_PROVIDER, "try %d", k);
		cr_assert_eq(run, START | KINDS);
	}
	cr_assert(!known(&m, S(1)));
	cr_assert_eq(m.n, 0);
	letw_sessmem_served(&m, S(1), START | KINDS);
	cr_assert(known(&m, S(1)));
	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_CAPTURE_STATE);
	letw_sessmem_free(&m);
}

/* A session's first pass could not begin (control.c: the walker's buffer
 * could not be mapped): it is owed its ENABLE, and the retry gets the
 * same answer its statedump got. It used to be remembered before its
 * pass, so the retry (and adoption) took it for served and its next
 * statedump ran as a capture-state: its DCStart was lost for good. */
Test(sessmem, a_first_pass_that_failed_is_still_owed_as_an_enable)
{
	static struct letw_sessmem m;
	uint64_t run;

	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_ENABLE_PROVIDER, run, START | KINDS);
	cr_assert(!known(&m, S(1)), "a failed pass served nothing");
	cr_assert(letw_sessmem_owes(&m, S(1), START | KINDS));
	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, START | KINDS);
	/* The retry ran. */
	letw_sessmem_served(&m, S(1), START | KINDS);
	cr_assert(!letw_sessmem_owes(&m, S(1), START | KINDS));
	letw_sessmem_free(&m);
}

/* `lttng-etw stop`'s DCEnd (END gained, regenerate) whose pass failed:
 * still a DCEnd ENABLE of the gained keyword, owed until one runs. */
Test(sessmem, a_gained_trigger_whose_pass_failed_is_still_owed)
{
	static struct letw_sessmem m;
	uint64_t run;

	letw_sessmem_served(&m, S(1), START | KINDS);
	cr_assert(!letw_sessmem_owes(&m, S(1), START | KINDS));
	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_ENABLE_PROVIDER, run, START | END | KINDS);
	cr_assert(letw_sessmem_owes(&m, S(1), START | END | KINDS));
	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, END | KINDS, "the retry must run the DCEnd only");
	letw_sessmem_served(&m, S(1), START | END | KINDS);
	cr_assert(!letw_sessmem_owes(&m, S(1), START | END | KINDS));
	letw_sessmem_free(&m);
}

/* A regenerate of a session served before (a capture-state) that could
 * not begin: owed, as a capture-state again, until a pass serves it. */
Test(sessmem, a_failed_capture_state_is_owed_until_served)
{
	static struct letw_sessmem m;
	struct letw_sess live[] = { { .session = S(1), .events = EV(METHOD_DCSTART) } };
	uint64_t run;

	letw_sessmem_served(&m, S(1), START | KINDS);
	letw_sessmem_served(&m, S(2), START | KINDS);
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_CAPTURE_STATE, START | KINDS, START | KINDS);
	cr_assert(letw_sessmem_owes(&m, S(1), START | KINDS));
	cr_assert(!letw_sessmem_owes(&m, S(2), START | KINDS), "the mark is per session");
	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, START | KINDS);
	/* Never served: held for the mark, still a first ENABLE. */
	cr_assert_eq(letw_sessmem_failed(&m, S(3), LETW_CONTROL_ENABLE_PROVIDER, START | KINDS,
					 START | KINDS), 0);
	cr_assert_eq(m.n, 3);
	cr_assert(letw_sessmem_owes(&m, S(3), START));
	cr_assert(!known(&m, S(3)), "a mark serves nothing");
	cr_assert_eq(letw_sessmem_decide(&m, S(3), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, START | KINDS);
	/* An all-sessions pass that reached it serves it too. */
	letw_sessmem_served_all(&m, live, 1, EV(METHOD_DCSTART));
	cr_assert(!letw_sessmem_owes(&m, S(1), START | KINDS));
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_CAPTURE_STATE, START | KINDS, START | KINDS);
	letw_sessmem_served(&m, S(1), START | KINDS);
	cr_assert(!letw_sessmem_owes(&m, S(1), START | KINDS));
	letw_sessmem_free(&m);
}

/* Not owed: a served session whose keywords did not gain a trigger, and a
 * session whose ENABLE runs no pass (kinds only: its statedump, passless,
 * remembered it, or it asked for nothing anyway). */
Test(sessmem, nothing_owed_without_a_pass_to_run)
{
	static struct letw_sessmem m;

	letw_sessmem_served(&m, S(1), START | END | KINDS);
	cr_assert(!letw_sessmem_owes(&m, S(1), START | KINDS), "a lost keyword is no gain");
	m.owe_unknown = 1; /* adoption */
	cr_assert(!letw_sessmem_owes(&m, S(2), LETW_KW_LINES_RUNDOWN));
	cr_assert(letw_sessmem_owes(&m, S(2), START | LETW_KW_LINES_RUNDOWN));
	letw_sessmem_free(&m);
}

/* Only a session whose pass could not begin is owed one: a live session
 * the memory does not hold, or one whose mask gained a trigger keyword,
 * may not have asked yet (events enabled in a started session without a
 * regenerate, or a statedump on its way while lttng-ust switches its
 * events on). The retry used to serve both: an ENABLE, maybe of a partial
 * event set, then the session's own statedump a capture-state (a second
 * DCStart, or DCEnd). */
Test(sessmem, a_session_that_asked_for_nothing_is_owed_nothing)
{
	static struct letw_sessmem m;

	letw_sessmem_served(&m, S(1), START | KINDS);
	cr_assert(!letw_sessmem_owes(&m, S(2), START | KINDS),
		  "a session not served yet, with no failed pass, is owed one");
	cr_assert(!letw_sessmem_owes(&m, S(1), START | END | KINDS),
		  "a session that gained DCEnd, with no failed pass, is owed one");
	letw_sessmem_free(&m);
}

/* Adoption (sessions started before the hook) owes an ENABLE to each
 * session never served, and to no other. */
Test(sessmem, adoption_owes_the_sessions_never_served)
{
	static struct letw_sessmem m;

	letw_sessmem_served(&m, S(1), START | KINDS);
	m.owe_unknown = 1;
	cr_assert(letw_sessmem_owes(&m, S(2), START | KINDS));
	cr_assert(!letw_sessmem_owes(&m, S(1), START | END | KINDS),
		  "a session served is no adoption's");
	letw_sessmem_free(&m);
}

/* A mark that finds no room loses no session: every session not held is
 * taken as owed until the control thread lists them all again. */
Test(sessmem, a_mark_without_room_owes_every_unknown_session)
{
	static struct letw_sessmem m;

	for (int i = 1; i <= 16; i++)
		letw_sessmem_served(&m, S(i), START | KINDS);
	cr_assert_eq(m.n, m.cap, "the test needs a full array");
	refuse_realloc = 1;
	cr_assert_eq(letw_sessmem_failed(&m, S(17), LETW_CONTROL_ENABLE_PROVIDER, START | KINDS,
					 START | KINDS), -ENOMEM);
	cr_assert_eq(letw_sessmem_failed(&m, S(3), LETW_CONTROL_CAPTURE_STATE, START | KINDS,
					 START | KINDS), 0, "a session held needs no room");
	refuse_realloc = 0;
	cr_assert_eq(m.unmarked, 1);
	cr_assert(letw_sessmem_owes(&m, S(17), START | KINDS));
	cr_assert(letw_sessmem_owes(&m, S(18), START | KINDS));
	cr_assert(letw_sessmem_owes(&m, S(3), START | KINDS));
	cr_assert(!letw_sessmem_owes(&m, S(4), START | KINDS));
	letw_sessmem_free(&m);
}

/* The retry runs the pass that could not begin, not a new decision:
 * S(1)'s first ENABLE (DCStart) failed, then S(1) enabled its DCEnd
 * events without a statedump. Asked again, the memory answered an ENABLE
 * of DCStart and DCEnd (a DCEnd pass nobody asked for), and DCEnd was
 * remembered, so the regenerate that asks for it ran a capture-state. */
Test(sessmem, the_retry_runs_the_failed_pass_not_a_new_decision)
{
	static struct letw_sessmem m;
	uint64_t run, keep;
	int marked;

	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER);
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_ENABLE_PROVIDER, run, START | KINDS);
	cr_assert_eq(letw_sessmem_owed_pass(&m, S(1), START | END | KINDS, &run, &keep, &marked),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert(marked);
	cr_assert_eq(run, START | KINDS, "the retry must run the DCStart it owes, only");
	cr_assert_eq(keep, START | KINDS, "DCEnd was never asked for: not to remember");
	letw_sessmem_served(&m, S(1), keep);
	cr_assert_eq(letw_sessmem_decide(&m, S(1), START | END | KINDS, &run),
		     LETW_CONTROL_ENABLE_PROVIDER, "the regenerate's DCEnd is a gain");
	cr_assert_eq(run, END | KINDS);
	letw_sessmem_free(&m);
}

/* A merged statedump (statedump.h: several coalesced) is a capture-state
 * whatever the session's state; failed, it is retried as one. Asked
 * again, a session never served came back as a first ENABLE: the wrong
 * control code in the pass's Init. */
Test(sessmem, an_owed_capture_state_is_retried_as_a_capture_state)
{
	static struct letw_sessmem m;
	uint64_t run, keep;
	int marked;

	letw_sessmem_failed(&m, S(1), LETW_CONTROL_CAPTURE_STATE, START | KINDS, START | KINDS);
	cr_assert_eq(letw_sessmem_owed_pass(&m, S(1), START | KINDS, &run, &keep, &marked),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, START | KINDS);
	/* Keywords dropped since are neither run nor remembered. */
	cr_assert_eq(letw_sessmem_owed_pass(&m, S(1), LETW_KW_JIT_RUNDOWN, &run, &keep, &marked),
		     LETW_CONTROL_CAPTURE_STATE);
	cr_assert_eq(run, LETW_KW_JIT_RUNDOWN);
	cr_assert_eq(keep, LETW_KW_JIT_RUNDOWN);
	cr_assert_eq(letw_rundown_pass(LETW_CONTROL_CAPTURE_STATE, run, LETW_PROVIDER_RUNDOWN), 0,
		     "no trigger left: no pass");
	/* A later statedump's failed pass replaces the mark. */
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_ENABLE_PROVIDER, START | END | KINDS,
			    START | END | KINDS);
	cr_assert_eq(letw_sessmem_owed_pass(&m, S(1), START | END | KINDS, &run, &keep, &marked),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, START | END | KINDS);
	/* Owed without a mark (adoption): the memory's answer. */
	m.owe_unknown = 1;
	cr_assert_eq(letw_sessmem_owed_pass(&m, S(2), START | KINDS, &run, &keep, &marked),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert(!marked);
	cr_assert_eq(run, START | KINDS);
	cr_assert_eq(keep, START | KINDS);
	letw_sessmem_free(&m);
}

/* The overflow's all-sessions capture-state (statedump.c), or its retry,
 * which serve_owed runs before the sessions owed: a session owed its own
 * ENABLE keeps it. It used to be taken as served by the capture-state:
 * its first pass was a capture-state, its DCStart ENABLE never came (and
 * a DCEnd ENABLE owed was lost the same way). An owed capture-state that
 * the pass covered is served by it. */
Test(sessmem, an_all_sessions_pass_leaves_an_owed_enable_owed)
{
	static struct letw_sessmem m;
	uint32_t dcstart = EV(METHOD_DCSTART) | EV(DCSTART_INIT);
	uint32_t dcend = EV(METHOD_DCEND) | EV(DCEND_INIT);
	struct letw_sess live[] = {
		{ .session = S(1), .events = dcstart },         /* owed its first ENABLE */
		{ .session = S(2), .events = dcstart | dcend }, /* owed a DCEnd ENABLE */
		{ .session = S(3), .events = dcstart },         /* owed a capture-state */
	};
	uint64_t start = letw_rd_events_mask(dcstart), both = letw_rd_events_mask(dcstart | dcend);
	uint64_t run, keep;
	int marked;

	letw_sessmem_failed(&m, S(1), LETW_CONTROL_ENABLE_PROVIDER, start, start);
	letw_sessmem_served(&m, S(2), start);
	letw_sessmem_failed(&m, S(2), LETW_CONTROL_ENABLE_PROVIDER,
			    END | LETW_KW_JIT_RUNDOWN, both);
	letw_sessmem_served(&m, S(3), start);
	letw_sessmem_failed(&m, S(3), LETW_CONTROL_CAPTURE_STATE, start, start);
	letw_sessmem_served_all(&m, live, 3, dcstart | dcend);
	cr_assert(letw_sessmem_owes(&m, S(1), start), "an owed first ENABLE taken as served");
	cr_assert_eq(letw_sessmem_owed_pass(&m, S(1), start, &run, &keep, &marked),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert(letw_sessmem_owes(&m, S(2), both), "an owed DCEnd ENABLE taken as served");
	cr_assert_eq(letw_sessmem_owed_pass(&m, S(2), both, &run, &keep, &marked),
		     LETW_CONTROL_ENABLE_PROVIDER);
	cr_assert_eq(run, END | LETW_KW_JIT_RUNDOWN);
	cr_assert(!letw_sessmem_owes(&m, S(3), start), "a covered capture-state is served");
	letw_sessmem_free(&m);
}

/* STATUS's count of owed passes (control.c, letw_control_owed) counts each
 * session marked once, however often its pass failed: a tally of failures
 * read 2 for one session whose regenerate failed too, until the next
 * retry recounted. */
Test(sessmem, a_session_owed_counts_once_however_often_it_failed)
{
	static struct letw_sessmem m;

	cr_assert_eq(letw_sessmem_marked(&m), 0);
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_ENABLE_PROVIDER, START | KINDS, START | KINDS);
	letw_sessmem_failed(&m, S(1), LETW_CONTROL_ENABLE_PROVIDER, START | KINDS, START | KINDS);
	cr_assert_eq(letw_sessmem_marked(&m), 1);
	letw_sessmem_served(&m, S(2), START | KINDS);
	letw_sessmem_failed(&m, S(2), LETW_CONTROL_CAPTURE_STATE, START | KINDS, START | KINDS);
	cr_assert_eq(letw_sessmem_marked(&m), 2);
	letw_sessmem_served(&m, S(1), START | KINDS);
	cr_assert_eq(letw_sessmem_marked(&m), 1, "a pass that ran ends its mark");
	letw_sessmem_prune(&m, NULL, 0);
	cr_assert_eq(letw_sessmem_marked(&m), 0, "a session gone is owed nothing");
	letw_sessmem_free(&m);
}
