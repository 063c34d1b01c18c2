/* SPDX-License-Identifier: MIT */
/*
 * Reading a tracepoint's probes the way lttng-ust's generated caller does
 * (lttng/tracepoint.h): under lttng-ust's tracepoint RCU read lock, the
 * NULL-terminated array in `struct lttng_ust_tracepoint.probes`. lttng-ust
 * connects one probe per enabled event — an event recorder of a started
 * session, or an event notifier (trigger) — and registers it with the
 * event as its data (lttng-events.c, register_event), so the data leads to
 * the event's type and, for a recorder, to its channel's session. lttng-ust
 * unregisters an event's probe and waits for a grace period before it frees
 * the event, its channel or its session: what the read side finds stays
 * valid until the read lock is released.
 *
 * For call sites that see the tracepoint definitions (provider/emit.c,
 * provider/sessions.c, bench/raw.c); never includes anything that links lttng-ust.
 */
#ifndef LETW_FANOUT_H
#define LETW_FANOUT_H

#include <stddef.h>

#include <lttng/tracepoint.h>
#include <lttng/ust-events.h>

#define LETW_FIELD_IN(ptr, type, field)                                        \
	((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/*
 * The channel (with its session) of an event recorder probe's event, NULL
 * for an event notifier or a structure too old to carry them. Caller holds
 * the tracepoint RCU read lock.
 */
static inline const struct lttng_ust_channel_common *
letw_probe_channel(const void *data)
{
	const struct lttng_ust_event_common *ev = (const struct lttng_ust_event_common *)data;
	const struct lttng_ust_event_recorder *rec;
	const struct lttng_ust_channel_buffer *chan;
	const struct lttng_ust_channel_common *cc;

	if (!ev || !LETW_FIELD_IN(ev, struct lttng_ust_event_common, child) ||
	    ev->type != LTTNG_UST_EVENT_TYPE_RECORDER)
		return NULL;
	rec = (const struct lttng_ust_event_recorder *)ev->child;
	if (!rec || !LETW_FIELD_IN(rec, struct lttng_ust_event_recorder, chan) ||
	    !(chan = rec->chan) ||
	    !LETW_FIELD_IN(chan, struct lttng_ust_channel_buffer, parent) ||
	    !(cc = chan->parent) ||
	    !LETW_FIELD_IN(cc, struct lttng_ust_channel_common, session))
		return NULL;
	return cc;
}

/* Its session, NULL for an event notifier. */
static inline struct lttng_ust_session *letw_probe_session(const void *data)
{
	const struct lttng_ust_channel_common *cc = letw_probe_channel(data);

	return cc ? cc->session : NULL;
}

/*
 * Fire provider:name, whose first argument is the target session, into
 * every session that enables it: each recorder probe is called with its own
 * event's session (so each writes once, as an untargeted event would), each
 * notifier once. The polling fallback and capture-state requests have no
 * session of their own; this is their only way into the rundown events.
 */
#define LETW_TP_FANOUT(_provider, _name, _argtype, _arg)                       \
	do {                                                                   \
		struct lttng_ust_tracepoint_probe *__p;                        \
                                                                               \
		if (!lttng_ust_tracepoint_enabled(_provider, _name) ||         \
		    !LTTNG_UST_TP_RCU_LINK_TEST())                             \
			break;                                                 \
		lttng_ust_tp_rcu_read_lock();                                  \
		__p = lttng_ust_tp_rcu_dereference(                            \
			lttng_ust_tracepoint_##_provider##___##_name.probes);  \
		for (; __p && __p->func; __p++)                                \
			((void (*)(void *, struct lttng_ust_session *, _argtype))\
				 __p->func)(__p->data,                         \
					    letw_probe_session(__p->data),     \
					    _arg);                             \
		lttng_ust_tp_rcu_read_unlock();                                \
	} while (0)

#endif /* LETW_FANOUT_H */
