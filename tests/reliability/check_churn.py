#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check the rundown invariants (DESIGN §5) from a churn stress trace.

Reads the trace with the babeltrace2 Python bindings (libbabeltrace2) and,
for every pass of the traced process (--vpid) and every flavour it ran:

  1. the pass is whole: Init and Complete with the same pass_id;
  2. no record appears twice in the pass;
  3. every record live for the whole pass appears: loaded before the Init
     (or before the trace began: its first sighting is a rundown or an
     unload) and whose unpublish did not begin before the Complete. The
     churn program's letw_churn:unpublish_begin event bounds the removal
     from below; the *_unload event bounds it from above;
  4. no record whose unload was traced before the Init appears;
  5. no phantom: every rundown record has a load or unload in the trace
     (the churn program frees everything before it exits);
  6. the Complete's `emitted` equals the records seen in the pass, and
     `skipped_raced` is at most the records whose removal overlapped the
     pass; and every record certainly present at the Init (loaded before
     it, its unpublish begun after it) that did not appear is counted in
     `skipped_raced` (exact accounting). --lenient-accounting turns that
     last check into a WARN line;
  7. every line-table or code-bytes event of the pass belongs to a record
     the pass emitted (those events are attachments, never records).

Any discarded-events or discarded-packets message fails the check: a lossy
trace proves nothing. Exit status 0 only if every check holds.
"""
import argparse
import bisect
import contextlib
import io
import sys

import bt2

INF = float("inf")


class Rec:
    __slots__ = ("load", "ubeg", "unload")

    def __init__(self):
        self.load = None
        self.ubeg = None
        self.unload = None


# The events that *are* a record, by exact name. A method's line-table and
# code-bytes events (method_lines*, method_code_bytes*) carry the same
# code_start/version_id but are attachments to a record event, not records:
# matching on the "method_" prefix counted them as rundown records (and,
# from letw_runtime, as unloads), and "dcstart" not being in
# method_code_bytes_start filed it under dcend. The ASan build tripped on
# it: thread 0's fake code addresses (0x1000_0000_0000 + ...) lie in ASan's
# HighShadow mapping, so the walker's process_vm_readv of them succeeds and
# every such method comes with code bytes ("emitted twice"); in the plain
# build those addresses are unmapped and no code bytes are ever emitted.
RUNDOWN_RECORDS = {
    "method_dcstart": ("dcstart", "m"), "method_dcend": ("dcend", "m"),
    "stub_dcstart": ("dcstart", "s"), "stub_dcend": ("dcend", "s"),
}
RUNDOWN_EXTRAS = {
    "method_lines_start": "dcstart", "method_lines_end": "dcend",
    "method_code_bytes_start": "dcstart", "method_code_bytes_end": "dcend",
}
RUNTIME_RECORDS = {
    "method_load": ("load", "m"), "method_unload": ("unload", "m"),
    "stub_load": ("load", "s"), "stub_unload": ("unload", "s"),
}


def rec_key(kind, ev):
    if kind == "m":
        return ("m", int(ev["code_start"]), int(ev["version_id"]))
    return ("s", int(ev["start"]), int(ev["owner"]))


def read_trace(path, vpid):
    recs = {}
    inits = {}      # (flavour, pass_id) -> (ts, vtid, accounted_from)
    completes = {}  # (flavour, pass_id) -> (ts, emitted, skipped)
    dc = {"dcstart": ([], []), "dcend": ([], [])}  # flavour -> (ts list, keys)
    extras = {"dcstart": ([], []), "dcend": ([], [])}  # lines / code bytes
    discarded = []
    nevents = 0

    def rec(k):
        r = recs.get(k)
        if r is None:
            r = recs[k] = Rec()
        return r

    for msg in bt2.TraceCollectionMessageIterator(path):
        if isinstance(msg, (bt2._DiscardedEventsMessageConst,
                            bt2._DiscardedPacketsMessageConst)):
            discarded.append((type(msg).__name__, msg.count))
            continue
        if not isinstance(msg, bt2._EventMessageConst):
            continue
        ev = msg.event
        if int(ev["vpid"]) != vpid:
            continue
        nevents += 1
        ts = msg.default_clock_snapshot.ns_from_origin
        prov, _, name = ev.name.partition(":")
        if prov == "letw_churn":
            k = ("m" if int(ev["kind"]) == 1 else "s", int(ev["start"]),
                 int(ev["uid"]))
            rec(k).ubeg = ts
        elif prov == "letw_runtime":
            what = RUNTIME_RECORDS.get(name)
            if what is None:
                continue
            k = rec_key(what[1], ev)
            if what[0] == "load":
                rec(k).load = ts
            else:
                rec(k).unload = ts
        elif prov == "letw_rundown":
            if name in ("dcstart_init", "dcend_init"):
                # accounted_from_ns is the raw trace clock (LTTng-UST's
                # CLOCK_MONOTONIC, 1 GHz): put it on this message's
                # ns-from-origin scale.
                snap = msg.default_clock_snapshot
                if snap.clock_class.frequency != 1000000000:
                    raise SystemExit("FAIL: trace clock is not 1 GHz")
                acc = int(ev["accounted_from_ns"]) + ts - snap.value
                inits[(name[:-5], int(ev["pass_id"]))] = (ts, int(ev["vtid"]), acc)
            elif name in ("dcstart_complete", "dcend_complete"):
                completes[(name[:-9], int(ev["pass_id"]))] = (
                    ts, int(ev["emitted"]), int(ev["skipped_raced"]))
            elif name in RUNDOWN_RECORDS:
                flav, kind = RUNDOWN_RECORDS[name]
                k = rec_key(kind, ev)
                dc[flav][0].append(ts)
                dc[flav][1].append(k)
                rec(k)
            elif name in RUNDOWN_EXTRAS:
                flav = RUNDOWN_EXTRAS[name]
                extras[flav][0].append(ts)
                extras[flav][1].append(rec_key("m", ev))
    return recs, inits, completes, dc, extras, discarded, nevents


def inject(dc, extras, completes, how):
    """--inject: corrupt the parsed trace the way a broken walker would, to
    show each check can fail (the self-test runs every mode)."""
    tss, keys = dc["dcstart"]
    mid = len(keys) // 2
    if how == "drop":
        del tss[mid], keys[mid]
    elif how == "dup":
        tss.insert(mid, tss[mid])
        keys.insert(mid, keys[mid])
    elif how == "orphan":
        # Code bytes of a record no pass emitted, inside a pass.
        xts, xkeys = extras["dcstart"]
        at = bisect.bisect_right(xts, tss[mid])
        xts.insert(at, tss[mid])
        xkeys.insert(at, ("m", 0, 0))
    elif how == "overcount":
        # skipped_raced above every record of the trace: more than could
        # have raced any pass.
        for key, (ts, emitted, _) in list(completes.items()):
            completes[key] = (ts, emitted, 1 << 40)


def check(data, min_passes, strict, how=None, min_extras=0):
    recs, inits, completes, dc, extras, discarded, nevents = data
    errors = []
    if how:
        dc = {f: (list(t), list(k)) for f, (t, k) in dc.items()}
        extras = {f: (list(t), list(k)) for f, (t, k) in extras.items()}
        completes = dict(completes)
        inject(dc, extras, completes, how)

    def err(msg):
        if len(errors) < 50:
            errors.append(msg)
        else:
            errors.append(None)

    if discarded:
        print("FAIL: the trace lost data (%s); nothing can be concluded"
              % ", ".join("%s x%s" % d for d in discarded))
        return 1
    # Load times for records first seen by a rundown or unload: before the
    # trace began (they were published before the session started).
    for k, r in recs.items():
        if r.load is None:
            if r.unload is None and r.ubeg is None:
                err("phantom record %s: rundown shows it, no load/unload" % (k,))
            r.load = -INF
        if r.ubeg is None and r.unload is not None:
            err("record %s unloaded without unpublish_begin" % (k,))
    for key in inits:
        if key not in completes:
            err("pass %s %d: Init without Complete" % key)
    for key in completes:
        if key not in inits:
            err("pass %s %d: Complete without Init" % key)

    # Sweep the passes in time order, keeping the set of records alive
    # (loaded, not yet unloaded) at each Init: per pass the work is the
    # live table, not every record of the trace.
    timeline = []
    loads = []
    for k, r in recs.items():
        timeline.append((r.load, 0, k))
        if r.unload is not None:
            timeline.append((r.unload, 1, k))
        if r.load != -INF:
            loads.append((r.load, k))
    timeline.sort(key=lambda e: (e[0], e[1]))
    loads.sort(key=lambda e: e[0])
    load_ts = [t for t, _ in loads]
    unload_ts = sorted(r.unload for r in recs.values() if r.unload is not None)
    alive = set()
    ti = 0

    npasses = 0
    total_extras = 0
    total_seen = 0
    total_skipped = 0
    unaccounted = 0
    for (flav, pass_id), (t0, _vtid, acc) in sorted(inits.items(),
                                               key=lambda kv: kv[1][0]):
        if (flav, pass_id) not in completes:
            continue
        while ti < len(timeline) and timeline[ti][0] < t0:
            _, is_unload, k = timeline[ti]
            if is_unload:
                alive.discard(k)
            else:
                alive.add(k)
            ti += 1
        t1, emitted, skipped = completes[(flav, pass_id)]
        tss, keys = dc[flav]
        lo = bisect.bisect_left(tss, t0)
        hi = bisect.bisect_right(tss, t1)
        window = keys[lo:hi]
        seen = set()
        tag = "pass %d %s" % (pass_id, flav)
        for k in window:
            if k in seen:
                err("%s: %s emitted twice" % (tag, (k,)))
            seen.add(k)
            r = recs[k]
            if r.unload is not None and r.unload < t0:
                err("%s: %s appears but was unloaded before the Init" % (tag, (k,)))
        # A line table or code bytes belong to a record this pass emitted.
        xts, xkeys = extras[flav]
        for k in xkeys[bisect.bisect_left(xts, t0):bisect.bisect_right(xts, t1)]:
            total_extras += 1
            if k not in seen:
                err("%s: lines/code bytes of %s, which the pass did not emit"
                    % (tag, (k,)))
        if emitted != len(window):
            err("%s: Complete says emitted=%d, trace holds %d"
                % (tag, emitted, len(window)))
        present_missing = 0
        raced = 0
        for k in alive:
            r = recs[k]
            if r.ubeg is None or r.ubeg > t1:
                if k not in seen:
                    err("%s: %s live for the whole pass but missing" % (tag, (k,)))
            else:
                raced += 1
                # Present for certain: its unpublish began after the Init.
                # One that began before it raced the pass's start and may
                # be counted or not (walker.c: the unpublish's linearisation
                # point is its read of the pass mark).
                if k not in seen and r.ubeg > t0:
                    present_missing += 1
        # Records unloaded between the start of accounting and the Init:
        # their unpublish may have read the pass's mark (walker.c: it can
        # run whole between step 1 and the Init event).
        if acc > t0:
            err("%s: accounting began after the Init" % tag)
        raced += (bisect.bisect_left(unload_ts, t0) -
                  bisect.bisect_left(unload_ts, acc))
        # Records published during the pass and unpublished before its end.
        for i in range(bisect.bisect_left(load_ts, t0),
                       bisect.bisect_right(load_ts, t1)):
            r = recs[loads[i][1]]
            if r.ubeg is not None and r.ubeg < t1:
                raced += 1
        if present_missing > skipped:
            unaccounted += present_missing - skipped
            if strict:
                err("%s: %d records present at Init missing, skipped_raced=%d"
                    % (tag, present_missing, skipped))
        if skipped > raced:
            err("%s: skipped_raced=%d but only %d records raced the pass"
                % (tag, skipped, raced))
        npasses += 1
        total_seen += len(window)
        total_skipped += skipped

    if npasses < min_passes:
        err("only %d passes in the trace, expected at least %d"
            % (npasses, min_passes))
    if total_extras < min_extras:
        err("only %d line-table/code-bytes events in the passes, expected at "
            "least %d" % (total_extras, min_extras))
    print("checked %d events, %d records, %d pass flavours, %d rundown "
          "records, %d raced skips, %d lines/code-bytes events"
          % (nevents, len(recs), npasses, total_seen, total_skipped,
             total_extras))
    if unaccounted:
        print("%s: %d records present at an Init were neither emitted nor "
              "counted in skipped_raced (removed before the walker reached "
              "them)" % ("FAIL" if strict else "WARN", unaccounted))
    if errors:
        for e in errors:
            print("FAIL: " + (e if e else "... more errors"))
        return 1
    print("OK: every pass whole and exact")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="CTF trace directory")
    ap.add_argument("--vpid", type=int, required=True,
                    help="only events of this process")
    ap.add_argument("--min-passes", type=int, default=1,
                    help="fail with fewer pass flavours than this")
    ap.add_argument("--min-extras", type=int, default=0,
                    help="fail with fewer line-table/code-bytes events "
                    "inside passes than this")
    ap.add_argument("--lenient-accounting", action="store_true",
                    help="only warn when skipped_raced falls short of the "
                    "records present at the Init (by default it fails: "
                    "DESIGN §5, exact accounting)")
    ap.add_argument("--inject", choices=["drop", "dup", "orphan", "overcount"],
                    help="drop or duplicate one rundown record, add "
                    "code bytes of a record not emitted, or overstate "
                    "skipped_raced, after reading (the check must then fail)")
    ap.add_argument("--self-test", action="store_true",
                    help="after the check, re-run it on the same data with "
                    "each --inject corruption: both must be caught")
    a = ap.parse_args()
    data = read_trace(a.trace, a.vpid)
    ret = check(data, a.min_passes, not a.lenient_accounting, a.inject,
                a.min_extras)
    if a.self_test:
        for how in ("drop", "dup", "orphan", "overcount"):
            with contextlib.redirect_stdout(io.StringIO()):
                caught = check(data, a.min_passes, not a.lenient_accounting,
                               how, a.min_extras)
            if not caught:
                print("FAIL: self-test: an injected '%s' went unnoticed" % how)
                ret = 1
        if ret == 0:
            print("self-test: a dropped and a duplicated record, orphan "
                  "code bytes and an overstated skipped_raced are all caught")
    return ret


if __name__ == "__main__":
    sys.exit(main())
