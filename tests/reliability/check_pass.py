#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Per-process pass check for the fault tests (libbabeltrace2 via bt2).

For the events of one process (--vpid) in a trace: every Init has its
Complete (unless --allow-truncated), each Complete's `emitted` equals the
rundown records between them, and optionally every complete pass emitted
exactly --live records (a runtime at rest) or at least --min-emitted.
--no-events asserts the process left no event at all (LETW_DISABLE=1).
Discarded events fail the check unless --allow-discarded.
"""
import argparse
import sys

import bt2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--vpid", type=int, required=True)
    ap.add_argument("--live", type=int, help="every complete pass emits exactly this")
    ap.add_argument("--min-emitted", type=int, default=0)
    ap.add_argument("--min-passes", type=int, default=0)
    ap.add_argument("--no-events", action="store_true")
    ap.add_argument("--allow-truncated", action="store_true")
    ap.add_argument("--allow-discarded", action="store_true")
    a = ap.parse_args()

    open_pass = {}   # flavour -> (pass_id, records so far)
    done = []        # (flavour, pass_id, emitted, seen)
    errors = []
    nevents = 0
    discarded = 0
    for msg in bt2.TraceCollectionMessageIterator(a.trace):
        if isinstance(msg, (bt2._DiscardedEventsMessageConst,
                            bt2._DiscardedPacketsMessageConst)):
            discarded += 1
            continue
        if not isinstance(msg, bt2._EventMessageConst):
            continue
        ev = msg.event
        try:
            if int(ev["vpid"]) != a.vpid:
                continue
        except KeyError:
            errors.append("events carry no vpid context")
            break
        nevents += 1
        prov, _, name = ev.name.partition(":")
        if prov != "letw_rundown":
            continue
        flav = "dcstart" if "dcstart" in name else "dcend"
        if name.endswith("_init"):
            if flav in open_pass and not a.allow_truncated:
                errors.append("%s pass %d never completed" % (flav, open_pass[flav][0]))
            open_pass[flav] = [int(ev["pass_id"]), 0]
        elif name.endswith("_complete"):
            pid = int(ev["pass_id"])
            cur = open_pass.pop(flav, None)
            if cur is None or cur[0] != pid:
                errors.append("%s Complete %d without its Init" % (flav, pid))
                continue
            done.append((flav, pid, int(ev["emitted"]), cur[1]))
        elif flav in open_pass:
            open_pass[flav][1] += 1
    if open_pass and not a.allow_truncated:
        errors.append("passes never completed: %s" % open_pass)
    if discarded and not a.allow_discarded:
        errors.append("%d discarded-events/packets messages" % discarded)
    if a.no_events:
        if nevents:
            errors.append("%d events from a process that must emit none" % nevents)
    else:
        for flav, pid, emitted, seen in done:
            if emitted != seen:
                errors.append("%s pass %d: emitted=%d, trace holds %d"
                              % (flav, pid, emitted, seen))
            if a.live is not None and emitted != a.live:
                errors.append("%s pass %d: emitted %d, %d records were live"
                              % (flav, pid, emitted, a.live))
            if emitted < a.min_emitted:
                errors.append("%s pass %d: emitted %d < %d"
                              % (flav, pid, emitted, a.min_emitted))
        if len(done) < a.min_passes:
            errors.append("%d complete passes, expected at least %d"
                          % (len(done), a.min_passes))
    print("vpid %d: %d events, complete passes %s" % (
        a.vpid, nevents, [(f, p, e) for f, p, e, _ in done]))
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
