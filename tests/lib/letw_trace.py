# SPDX-License-Identifier: MIT
"""Shared trace reading for the Python test checkers (libbabeltrace2's
bt2 bindings: Debian's /usr/bin/python3)."""
import bt2


class DiscardedEvents(Exception):
    """The trace lost events: nothing about completeness can be concluded."""


class _Payload:
    """An event's payload whose empty strings read as "". libbabeltrace2
    2.0.4 (Debian 12) clears a recycled string field without a NUL, so an
    empty CTF string reads as an earlier event's text; the length is right
    (analysis/plugin/event.c, letw_bt_string)."""
    __slots__ = ("_p",)

    def __init__(self, p):
        self._p = p

    def __getitem__(self, key):
        v = self._p[key]
        if type(v) is bt2._StringFieldConst and len(v) == 0:
            return ""
        return v

    def __contains__(self, key):
        return key in self._p


def payload(ev):
    """An event's payload, empty strings read as "" (see _Payload)."""
    return _Payload(ev.payload_field)


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
        yield ev.name, payload(ev)
