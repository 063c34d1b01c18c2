/* SPDX-License-Identifier: MIT */
/*
 * Sessions, as lttng-ust's probe arrays show them (letw_fanout.h), and the
 * control thread's memory of the sessions it served.
 *
 * Why the probe arrays: lttng-ust connects a probe to one of our rundown
 * tracepoints exactly when an event recorder of a started session (or an
 * event notifier) enables it, with the event as the probe's data. So
 * walking the arrays tells, per session, which rundown events it records —
 * the per-session keyword mask LTTng's global enabled state cannot give —
 * and tells triggers apart from sessions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "letw_rundown_tp.h"
#include "letw_fanout.h"
#include "sessions.h"

#include <lttng-etw/lttng-etw.h>

static struct lttng_ust_tracepoint *const rd_tp[LETW_RD_NR] = {
	[LETW_RD_DCSTART_INIT] = &lttng_ust_tracepoint_letw_rundown___dcstart_init,
	[LETW_RD_DCSTART_COMPLETE] = &lttng_ust_tracepoint_letw_rundown___dcstart_complete,
	[LETW_RD_DCEND_INIT] = &lttng_ust_tracepoint_letw_rundown___dcend_init,
	[LETW_RD_DCEND_COMPLETE] = &lttng_ust_tracepoint_letw_rundown___dcend_complete,
	[LETW_RD_METHOD_DCSTART] = &lttng_ust_tracepoint_letw_rundown___method_dcstart,
	[LETW_RD_METHOD_DCEND] = &lttng_ust_tracepoint_letw_rundown___method_dcend,
	[LETW_RD_STUB_DCSTART] = &lttng_ust_tracepoint_letw_rundown___stub_dcstart,
	[LETW_RD_STUB_DCEND] = &lttng_ust_tracepoint_letw_rundown___stub_dcend,
	[LETW_RD_MODULE_DCSTART] = &lttng_ust_tracepoint_letw_rundown___module_dcstart,
	[LETW_RD_MODULE_DCEND] = &lttng_ust_tracepoint_letw_rundown___module_dcend,
	[LETW_RD_LINES_START] = &lttng_ust_tracepoint_letw_rundown___method_lines_start,
	[LETW_RD_LINES_END] = &lttng_ust_tracepoint_letw_rundown___method_lines_end,
	[LETW_RD_CODE_START] = &lttng_ust_tracepoint_letw_rundown___method_code_bytes_start,
	[LETW_RD_CODE_END] = &lttng_ust_tracepoint_letw_rundown___method_code_bytes_end,
};

#define B(e) LETW_RD_BIT(LETW_RD_##e)
#define START_EVENTS (B(DCSTART_INIT) | B(DCSTART_COMPLETE) | B(METHOD_DCSTART) | \
		      B(STUB_DCSTART) | B(MODULE_DCSTART))
#define END_EVENTS (B(DCEND_INIT) | B(DCEND_COMPLETE) | B(METHOD_DCEND) | \
		    B(STUB_DCEND) | B(MODULE_DCEND))

/* DESIGN §3's rundown keywords; letw_live_mask's rundown answer is this
 * applied to the union of the sessions' event sets. */
uint64_t letw_rd_events_mask(uint32_t ev)
{
	uint64_t mask = 0;

	if (ev & START_EVENTS)
		mask |= LETW_KW_RUNDOWN_START;
	if (ev & END_EVENTS)
		mask |= LETW_KW_RUNDOWN_END;
	if (ev & (B(METHOD_DCSTART) | B(METHOD_DCEND)))
		mask |= LETW_KW_JIT_RUNDOWN;
	if (ev & (B(MODULE_DCSTART) | B(MODULE_DCEND)))
		mask |= LETW_KW_LOADER_RUNDOWN;
	if (ev & (B(STUB_DCSTART) | B(STUB_DCEND)))
		mask |= LETW_KW_STUB_RUNDOWN;
	if (ev & (B(LINES_START) | B(LINES_END)))
		mask |= LETW_KW_LINES_RUNDOWN;
	if (ev & (B(CODE_START) | B(CODE_END)))
		mask |= LETW_KW_CODE_BYTES_RUNDOWN;
	return mask;
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/*
 * The session an enabled event recorder writes into right now, else NULL
 * (notifier, disabled event or channel, inactive session): the same tests
 * the generated probe makes before it writes. Under the tracepoint RCU
 * read lock.
 */
static struct lttng_ust_session *recording_session(const void *data)
{
	const struct lttng_ust_event_common *ev = data;
	const struct lttng_ust_channel_common *cc = letw_probe_channel(data);
	struct lttng_ust_session *s;

	if (!cc || !(s = cc->session) || !LOAD(ev->enabled) || !LOAD(cc->enabled))
		return NULL;
	if (LETW_FIELD_IN(s, struct lttng_ust_session, active) && !LOAD(s->active))
		return NULL;
	return s;
}

/* Calls fn for every recording probe of every rundown tracepoint. */
static void for_each_recorder(void (*fn)(void *arg, int ev, struct lttng_ust_session *s),
			      void *arg)
{
	if (!LTTNG_UST_TP_RCU_LINK_TEST())
		return; /* lttng-ust not loaded: nothing can be enabled */
	lttng_ust_tp_rcu_read_lock();
	for (int i = 0; i < LETW_RD_NR; i++) {
		struct lttng_ust_tracepoint_probe *p;

		if (!LOAD(rd_tp[i]->state))
			continue;
		p = lttng_ust_tp_rcu_dereference(rd_tp[i]->probes);
		for (; p && p->func; p++) {
			struct lttng_ust_session *s = recording_session(p->data);

			if (s)
				fn(arg, i, s);
		}
	}
	lttng_ust_tp_rcu_read_unlock();
}

/*
 * One walk records one (session, event) pair per recording probe, in the
 * room the set has; the pairs are sorted and merged afterwards. Deduping
 * in the walk instead cost a scan of the sessions found per probe, every
 * control-thread wake-up (5 ms): quadratic in the sessions.
 */
struct collect_ctx {
	struct letw_sess *out;
	int room, pairs;
	uint32_t any;
};

static void collect_one(void *arg, int ev, struct lttng_ust_session *s)
{
	struct collect_ctx *c = arg;

	c->any |= LETW_RD_BIT(ev);
	if (c->pairs < c->room)
		c->out[c->pairs] = (struct letw_sess){ .session = s,
						       .events = LETW_RD_BIT(ev) };
	c->pairs++;
}

static int by_session(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct letw_sess *)a)->session;
	uintptr_t y = (uintptr_t)((const struct letw_sess *)b)->session;

	return (x > y) - (x < y);
}

/* Sort the pairs by session and merge each session's into one entry. */
static int merge_pairs(struct letw_sess *v, int n)
{
	int k = 0;

	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), by_session);
	for (int i = 0; i < n; i++) {
		if (k && v[k - 1].session == v[i].session)
			v[k - 1].events |= v[i].events;
		else
			v[k++] = v[i];
	}
	return k;
}

/* Room for n entries, with some to spare (sessions come in bursts). */
static int set_room(struct letw_sess_set *set, int n)
{
	int cap = n + n / 2 + 16;
	struct letw_sess *v = realloc(set->v, (size_t)cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	set->v = v;
	set->cap = cap;
	return 0;
}

int letw_sess_collect(struct letw_sess_set *set, uint32_t *any)
{
	struct collect_ctx c;
	int ret = 0;

	/* The probes can grow between a walk and the next: a walk that
	 * found more pairs than there was room for is made again, with room
	 * for them. Three tries; sessions created faster than that end it
	 * listed as far as room went (-EAGAIN). */
	for (int tries = 0;; tries++) {
		c = (struct collect_ctx){ .out = set->v, .room = set->cap };
		for_each_recorder(collect_one, &c);
		if (c.pairs <= set->cap)
			break;
		if (tries == 2) {
			ret = -EAGAIN;
			break;
		}
		ret = set_room(set, c.pairs);
		if (ret)
			break;
	}
	set->truncated = c.pairs > set->cap;
	set->n = merge_pairs(set->v, set->truncated ? set->cap : c.pairs);
	if (any)
		*any = c.any;
	return ret;
}

void letw_sess_set_free(struct letw_sess_set *set)
{
	free(set->v);
	*set = (struct letw_sess_set){ 0 };
}

static void any_one(void *arg, int ev, struct lttng_ust_session *s)
{
	(void)s;
	*(uint32_t *)arg |= LETW_RD_BIT(ev);
}

struct one_ctx {
	const struct lttng_ust_session *s;
	uint32_t events;
};

static void one_session(void *arg, int ev, struct lttng_ust_session *s)
{
	struct one_ctx *c = arg;

	if (s == c->s)
		c->events |= LETW_RD_BIT(ev);
}

uint32_t letw_sess_any(void)
{
	uint32_t any = 0;

	for_each_recorder(any_one, &any);
	return any;
}

uint32_t letw_sess_events(const struct lttng_ust_session *session)
{
	struct one_ctx c = { .s = session };

	for_each_recorder(one_session, &c);
	return c.events;
}

/* ---- the control thread's memory ---- */

/* The entry held for session, served or only marked; -1 when none. */
static int find(const struct letw_sessmem *m, const struct lttng_ust_session *s)
{
	for (int i = 0; i < m->n; i++)
		if (m->e[i].session == s)
			return i;
	return -1;
}

/* Room for one more entry; -ENOMEM when the array cannot grow. */
static int mem_room(struct letw_sessmem *m)
{
	struct letw_sessmem_ent *e;
	int cap;

	if (m->n < m->cap)
		return 0;
	cap = m->cap ? 2 * m->cap : 16;
	e = realloc(m->e, (size_t)cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	m->e = e;
	m->cap = cap;
	return 0;
}

/* Remember session with mask, owing nothing; counted when there is no
 * room for it. */
static void remember(struct letw_sessmem *m, int i,
		     struct lttng_ust_session *session, uint64_t mask)
{
	if (i < 0) {
		if (mem_room(m)) {
			m->unremembered++;
			return;
		}
		i = m->n++;
		m->e[i].session = session;
	}
	m->e[i].mask = mask;
	m->e[i].owed = 0;
	m->e[i].unserved = 0;
}

int letw_sessmem_decide(const struct letw_sessmem *m,
			const struct lttng_ust_session *session,
			uint64_t mask, uint64_t *run_mask)
{
	int i = find(m, session);
	uint64_t gained;

	if (i < 0 || m->e[i].unserved) {
		*run_mask = mask;
		return LETW_CONTROL_ENABLE_PROVIDER;
	}
	gained = mask & LETW_RD_TRIGGER_KEYWORDS & ~m->e[i].mask;
	if (gained) {
		*run_mask = (mask & ~LETW_RD_TRIGGER_KEYWORDS) | gained;
		return LETW_CONTROL_ENABLE_PROVIDER;
	}
	*run_mask = mask;
	return LETW_CONTROL_CAPTURE_STATE;
}

void letw_sessmem_served(struct letw_sessmem *m, struct lttng_ust_session *session,
			 uint64_t mask)
{
	remember(m, find(m, session), session, mask);
}

int letw_sessmem_failed(struct letw_sessmem *m, struct lttng_ust_session *session,
			int code, uint64_t run_mask, uint64_t mask)
{
	int i = find(m, session);

	if (i < 0) {
		if (mem_room(m)) {
			m->unmarked++;
			m->owe_unknown = 1;
			return -ENOMEM;
		}
		i = m->n++;
		m->e[i] = (struct letw_sessmem_ent){ .session = session, .unserved = 1 };
	}
	m->e[i].owed = 1;
	m->e[i].owed_code = code;
	m->e[i].owed_run = run_mask;
	m->e[i].owed_mask = mask;
	return 0;
}

int letw_sessmem_marked(const struct letw_sessmem *m)
{
	int n = 0;

	for (int i = 0; i < m->n; i++)
		n += m->e[i].owed != 0;
	return n;
}

int letw_sessmem_owed_pass(const struct letw_sessmem *m,
			   const struct lttng_ust_session *session, uint64_t mask,
			   uint64_t *run_mask, uint64_t *served_mask, int *marked)
{
	int i = find(m, session);

	*marked = i >= 0 && m->e[i].owed;
	if (!*marked) {
		*served_mask = mask;
		return letw_sessmem_decide(m, session, mask, run_mask);
	}
	/* Keywords the session dropped since are not written (LTTng would
	 * drop the records) nor remembered (gained again, they are new). */
	*run_mask = m->e[i].owed_run & mask;
	*served_mask = m->e[i].owed_mask & mask;
	return m->e[i].owed_code;
}

int letw_sessmem_owes(const struct letw_sessmem *m,
		      const struct lttng_ust_session *session, uint64_t mask)
{
	int i = find(m, session);
	uint64_t run;

	if (i >= 0)
		return m->e[i].owed;
	/* An ENABLE of kinds alone (no trigger keyword) runs no pass: the
	 * statedump that asked remembered the session without one. */
	return m->owe_unknown &&
	       letw_sessmem_decide(m, session, mask, &run) == LETW_CONTROL_ENABLE_PROVIDER &&
	       letw_rundown_pass(LETW_CONTROL_ENABLE_PROVIDER, run, LETW_PROVIDER_RUNDOWN) > 0;
}

void letw_sessmem_served_all(struct letw_sessmem *m, const struct letw_sess *live,
			     int n, uint32_t events)
{
	for (int k = 0; k < n; k++) {
		uint64_t got = letw_rd_events_mask(live[k].events & events);
		int i;

		if (!got)
			continue; /* records none of the pass's events */
		i = find(m, live[k].session);
		/* Owed a pass this one is not (an ENABLE, or keywords it
		 * still records that this one did not hold): its own runs. */
		if (i >= 0 && m->e[i].owed &&
		    (m->e[i].owed_code != LETW_CONTROL_CAPTURE_STATE ||
		     (m->e[i].owed_run & letw_rd_events_mask(live[k].events) & ~got)))
			continue;
		/* A session served before keeps its keywords: the pass may
		 * have held fewer of them than its last own pass. */
		remember(m, i, live[k].session,
			 got | (i < 0 || m->e[i].unserved ? 0 : m->e[i].mask));
	}
}

void letw_sessmem_prune(struct letw_sessmem *m, const struct letw_sess *live, int n)
{
	for (int i = 0; i < m->n;) {
		struct letw_sess key = { .session = m->e[i].session };

		/* live is sorted: a walk every wake-up stays n log n. */
		if (n && bsearch(&key, live, (size_t)n, sizeof(*live), by_session))
			i++;
		else
			m->e[i] = m->e[--m->n];
	}
}

void letw_sessmem_free(struct letw_sessmem *m)
{
	free(m->e);
	*m = (struct letw_sessmem){ 0 };
}
