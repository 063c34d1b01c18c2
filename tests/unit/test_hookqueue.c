/* SPDX-License-Identifier: MIT */
/*
 * The statedump hook's request queue (provider/statedump.c), driven the way
 * lttng-ust's listener drives it but without a control thread serving it:
 * one request per session (later statedumps of a queued session merge into
 * its request), at most 64 sessions waiting, the 65th and later folded into
 * one all-sessions request (counted) taken after the 64, and a forked child
 * starting with the queue and the counts empty.
 */
#include <criterion/criterion.h>

#include "statedump.h"

#define S(n) ((struct lttng_ust_session *)(uintptr_t)(0x1000 * (n)))
#define QUEUE 64

static void counts(uint64_t *c, uint64_t *d)
{
	letw_hook_counts(c, d);
}

static uint64_t seq_of(struct letw_hook_ticket t)
{
	cr_assert_eq(t.overflow, 0, "a request folded into the overflow");
	return t.seq;
}

Test(hookqueue, sessions_queue_merge_and_the_65th_is_served_by_all_sessions)
{
	struct letw_hook_req r;
	struct letw_hook_ticket t;
	uint64_t c, d;

	for (int i = 1; i <= QUEUE; i++)
		cr_assert_eq(seq_of(letw_hook_request(S(i), 1)), (uint64_t)i);
	t = letw_hook_request(S(QUEUE + 1), 1);
	cr_assert(t.overflow, "a 65th session's statedump was neither queued nor folded");
	/* A 66th joins the same overflow request, with its event set. */
	cr_assert_eq(letw_hook_request(S(QUEUE + 2), 2).seq, t.seq);
	/* A regenerate of a queued session joins its request. */
	cr_assert_eq(seq_of(letw_hook_request(S(1), 3)), 1);
	counts(&c, &d);
	cr_assert_eq(c, 1);
	cr_assert_eq(d, 2);
	cr_assert_eq(letw_hook_pending(), QUEUE + 1, "the overflow counts once");

	cr_assert_eq(letw_hook_take(&r), 1);
	cr_assert_eq(r.target.session, S(1));
	cr_assert_eq(r.target.events, 3, "the merged request has the latest event set");
	cr_assert(r.merged);
	cr_assert(!r.all_sessions);
	/* Taken: its pass may have begun, so a new statedump of S(1) is a new
	 * request (the room the take made), not a merge. */
	cr_assert_eq(seq_of(letw_hook_request(S(1), 1)), QUEUE + 1);
	letw_hook_done(&r);
	cr_assert_eq(letw_hook_pending(), QUEUE + 1);

	/* The overflow comes after the 63 requests queued before it, before
	 * the one queued after it. */
	for (int i = 2; i <= QUEUE; i++) {
		cr_assert_eq(letw_hook_take(&r), 1);
		cr_assert_eq(r.target.session, S(i));
		letw_hook_done(&r);
	}
	cr_assert_eq(letw_hook_take(&r), 1);
	cr_assert(r.all_sessions, "the overflow request was not taken next");
	cr_assert_null(r.target.session, "the overflow names a session");
	cr_assert_eq(r.target.events, 3, "not the union of the folded event sets");
	cr_assert_eq(r.seq, t.seq);
	/* Taken: a later overflow would be a new request; none is now. */
	cr_assert_eq(letw_hook_pending(), 2);
	letw_hook_done(&r);
	cr_assert_eq(letw_hook_pending(), 1);
	cr_assert_eq(letw_hook_take(&r), 1);
	cr_assert_eq(r.target.session, S(1));
	cr_assert(!r.all_sessions);
	letw_hook_done(&r);
	cr_assert_eq(letw_hook_take(&r), 0);
	cr_assert_eq(letw_hook_pending(), 0);
}

Test(hookqueue, a_forked_child_starts_with_nothing_queued_or_counted)
{
	uint64_t c, d;

	for (int i = 1; i <= QUEUE + 1; i++)
		letw_hook_request(S(i), 1);
	letw_hook_request(S(2), 1);
	counts(&c, &d);
	cr_assert_eq(c, 1);
	cr_assert_eq(d, 1);

	letw_hook_fork_child();
	counts(&c, &d);
	cr_assert_eq(c, 0, "the child reports the parent's %llu merged statedumps",
		     (unsigned long long)c);
	cr_assert_eq(d, 0, "the child reports the parent's %llu overflowed statedumps",
		     (unsigned long long)d);
	cr_assert_eq(letw_hook_pending(), 0);
	cr_assert_eq(seq_of(letw_hook_request(S(7), 1)), 1, "the child's first request");
}
