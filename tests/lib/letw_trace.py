# SPDX-License-Identifier: MIT
"""Shared trace reading for the Python test checkers (libbabeltrace2's
bt2 bindings: Debian's /usr/bin/python3)."""
import bt2


class DiscardedEvents(Exception):
    """The trace lost events: nothing about completeness can be concluded."""


def vpid_events(trace, vpid):
    """Yield (event name, payload) of one process, in time order. Raises
    DiscardedEvents on a discarded-events message."""
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is bt2._DiscardedEventsMessageConst:
            raise DiscardedEvents()
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        ctx = ev.common_context_field
        if ctx is None or "vpid" not in ctx or int(ctx["vpid"]) != vpid:
            continue
        yield ev.name, ev.payload_field
