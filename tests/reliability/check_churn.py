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
import array
import bisect
import contextlib
import io
import sys

import bt2

# Timestamps and record ids live in array('q') columns, not in Python
# objects: churn_long's 64 M-event trace (8 threads, 600 passes) held a
# tuple key, a Rec and boxed ints per record and per rundown event, and the
# checker peaked at 12.6 GB for a 3.8 GB trace (5.1 GB for a 4.3 GB one
# since, most of it the key dict while reading). A column costs 8 bytes an
# entry.
NONE = -(1 << 63)   # no such event in the trace


class Records:
    """One row per record (a method version or a stub), found by its key.
    load/ubeg/unload: the event times, NONE where the trace has none."""

    def __init__(self):
        self.ids = {}
        self.kind = bytearray()
        self.start = array.array("Q")
        self.other = array.array("Q")   # a method's version_id, a stub's owner
        self.load = array.array("q")
        self.ubeg = array.array("q")
        self.unload = array.array("q")

    def id(self, kind, start, other):
        # One int per key (kind in bit 0) keeps the dict at one boxed int a
        # record instead of a tuple of three.
        k = (start << 65) | (other << 1) | (kind == "s")
        i = self.ids.get(k)
        if i is None:
            i = self.ids[k] = len(self.load)
            self.kind.append(ord(kind))
            self.start.append(start)
            self.other.append(other)
            self.load.append(NONE)
            self.ubeg.append(NONE)
            self.unload.append(NONE)
        return i

    def key(self, i):
        return (chr(self.kind[i]), self.start[i], self.other[i])

    def __len__(self):
        return len(self.load)


def rec_id(recs, kind, p):
    """p: the event's payload."""
    if kind == "m":
        return recs.id("m", int(p["code_start"]), int(p["version_id"]))
    return recs.id("s", int(p["start"]), int(p["owner"]))


def column():
    return (array.array("q"), array.array("q"))   # (times, record ids)


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


def read_trace(path, vpid):
    recs = Records()
    inits = {}      # (flavour, pass_id) -> (ts, vtid, accounted_from)
    completes = {}  # (flavour, pass_id) -> (ts, emitted, skipped)
    dc = {"dcstart": column(), "dcend": column()}      # rundown records
    extras = {"dcstart": column(), "dcend": column()}  # lines / code bytes
    # Loads and unloads as they happen. The muxer delivers messages in time
    # order (checked below), so these and every column above come sorted:
    # check() bisects them and merges loads with unloads without a sort.
    loads, unloads = column(), column()
    discarded = []
    nevents = 0
    last = NONE

    # Each access through the Python bindings builds a wrapper object and
    # costs microseconds: the payload is fetched once per event and the
    # vpid context is read on the pass events only (churn.sh's session
    # records nothing but this process: its filter is on $ctx.vpid). The
    # CI churn's 2.5 M events took 65 s to read with ev["field"] lookups
    # and the vpid of every event.
    for msg in bt2.TraceCollectionMessageIterator(path):
        if type(msg) is not bt2._EventMessageConst:
            if isinstance(msg, (bt2._DiscardedEventsMessageConst,
                                bt2._DiscardedPacketsMessageConst)):
                discarded.append((type(msg).__name__, msg.count))
            continue
        ev = msg.event
        nevents += 1
        ts = msg.default_clock_snapshot.ns_from_origin
        if ts < last:
            raise SystemExit("FAIL: events out of time order (%d after %d)"
                             % (ts, last))
        last = ts
        prov, _, name = ev.name.partition(":")
        p = ev.payload_field
        if prov == "letw_churn":
            i = recs.id("m" if int(p["kind"]) == 1 else "s",
                        int(p["start"]), int(p["uid"]))
            recs.ubeg[i] = ts
        elif prov == "letw_runtime":
            what = RUNTIME_RECORDS.get(name)
            if what is None:
                continue
            i = rec_id(recs, what[1], p)
            if what[0] == "load":
                recs.load[i] = ts
                col = loads
            else:
                recs.unload[i] = ts
                col = unloads
            col[0].append(ts)
            col[1].append(i)
        elif prov == "letw_rundown":
            if name in ("dcstart_init", "dcend_init",
                        "dcstart_complete", "dcend_complete"):
                ev_vpid = int(ev.common_context_field["vpid"])
                if ev_vpid != vpid:
                    raise SystemExit("FAIL: a pass of process %d in the trace "
                                     "(checking %d): the session must record "
                                     "one process" % (ev_vpid, vpid))
            if name in ("dcstart_init", "dcend_init"):
                # accounted_from_ns is the raw trace clock (LTTng-UST's
                # CLOCK_MONOTONIC, 1 GHz): put it on this message's
                # ns-from-origin scale.
                snap = msg.default_clock_snapshot
                if snap.clock_class.frequency != 1000000000:
                    raise SystemExit("FAIL: trace clock is not 1 GHz")
                acc = int(p["accounted_from_ns"]) + ts - snap.value
                inits[(name[:-5], int(p["pass_id"]))] = (
                    ts, int(ev.common_context_field["vtid"]), acc)
            elif name in ("dcstart_complete", "dcend_complete"):
                completes[(name[:-9], int(p["pass_id"]))] = (
                    ts, int(p["emitted"]), int(p["skipped_raced"]))
            elif name in RUNDOWN_RECORDS:
                flav, kind = RUNDOWN_RECORDS[name]
                dc[flav][0].append(ts)
                dc[flav][1].append(rec_id(recs, kind, p))
            elif name in RUNDOWN_EXTRAS:
                flav = RUNDOWN_EXTRAS[name]
                extras[flav][0].append(ts)
                extras[flav][1].append(rec_id(recs, "m", p))
    # The key -> id map is only needed while reading; ids are the rows.
    recs.ids = None
    return recs, loads, unloads, inits, completes, dc, extras, discarded, nevents


def inject(recs, dc, extras, completes, how):
    """--inject: corrupt the parsed trace the way a broken walker would, to
    show each check can fail (the self-test runs every mode)."""
    tss, ids = dc["dcstart"]
    mid = len(ids) // 2
    if how == "drop":
        del tss[mid], ids[mid]
    elif how == "dup":
        tss.insert(mid, tss[mid])
        ids.insert(mid, ids[mid])
    elif how == "orphan":
        # Code bytes of a record no pass emitted (no row: no pass has it),
        # inside a pass.
        xts, xids = extras["dcstart"]
        at = bisect.bisect_right(xts, tss[mid])
        xts.insert(at, tss[mid])
        xids.insert(at, len(recs))
    elif how == "overcount":
        # skipped_raced above every record of the trace: more than could
        # have raced any pass.
        for key, (ts, emitted, _) in list(completes.items()):
            completes[key] = (ts, emitted, 1 << 40)


def alive_at(recs, loads, unloads):
    """Yields, for each time t asked with send(t), the set of records
    loaded and not yet unloaded before t (t non-decreasing). Records first
    seen by a rundown or an unload were loaded before the trace began."""
    alive = {i for i in range(len(recs)) if recs.load[i] == NONE}
    lts, lids = loads
    uts, uids = unloads
    li = ui = 0
    t = yield
    while True:
        # Loads and unloads are each in time order: merge them, a load
        # first at equal times (a sort of both by (time, is_unload) did).
        while True:
            lt = lts[li] if li < len(lts) else None
            ut = uts[ui] if ui < len(uts) else None
            if lt is not None and lt < t and (ut is None or lt <= ut):
                alive.add(lids[li])
                li += 1
            elif ut is not None and ut < t:
                alive.discard(uids[ui])
                ui += 1
            else:
                break
        t = yield alive


def check(data, min_passes, strict, how=None, min_extras=0):
    recs, loads, unloads, inits, completes, dc, extras, discarded, nevents = data
    errors = []
    if how:
        dc = {f: (t[:], k[:]) for f, (t, k) in dc.items()}
        extras = {f: (t[:], k[:]) for f, (t, k) in extras.items()}
        completes = dict(completes)
        inject(recs, dc, extras, completes, how)

    def err(msg):
        if len(errors) < 50:
            errors.append(msg)
        else:
            errors.append(None)

    def key(i):
        return (recs.key(i),) if i < len(recs) else (("unknown record", i),)

    if discarded:
        print("FAIL: the trace lost data (%s); nothing can be concluded"
              % ", ".join("%s x%s" % d for d in discarded))
        return 1
    for i in range(len(recs)):
        if recs.load[i] == NONE and recs.unload[i] == NONE and recs.ubeg[i] == NONE:
            err("phantom record %s: rundown shows it, no load/unload" % key(i))
        if recs.ubeg[i] == NONE and recs.unload[i] != NONE:
            err("record %s unloaded without unpublish_begin" % key(i))
    for k in inits:
        if k not in completes:
            err("pass %s %d: Init without Complete" % k)
    for k in completes:
        if k not in inits:
            err("pass %s %d: Complete without Init" % k)

    # Sweep the passes in time order, keeping the set of records alive
    # (loaded, not yet unloaded) at each Init: per pass the work is the
    # live table, not every record of the trace.
    sweep = alive_at(recs, loads, unloads)
    next(sweep)
    load_ts, load_ids = loads
    unload_ts = unloads[0]
    ubeg, unload = recs.ubeg, recs.unload

    npasses = 0
    total_extras = 0
    total_seen = 0
    total_skipped = 0
    unaccounted = 0
    for (flav, pass_id), (t0, _vtid, acc) in sorted(inits.items(),
                                               key=lambda kv: kv[1][0]):
        if (flav, pass_id) not in completes:
            continue
        alive = sweep.send(t0)
        t1, emitted, skipped = completes[(flav, pass_id)]
        tss, ids = dc[flav]
        lo = bisect.bisect_left(tss, t0)
        hi = bisect.bisect_right(tss, t1)
        window = ids[lo:hi]
        seen = set()
        tag = "pass %d %s" % (pass_id, flav)
        for i in window:
            if i in seen:
                err("%s: %s emitted twice" % (tag, key(i)))
            seen.add(i)
            if unload[i] != NONE and unload[i] < t0:
                err("%s: %s appears but was unloaded before the Init" % (tag, key(i)))
        # A line table or code bytes belong to a record this pass emitted.
        xts, xids = extras[flav]
        for i in xids[bisect.bisect_left(xts, t0):bisect.bisect_right(xts, t1)]:
            total_extras += 1
            if i not in seen:
                err("%s: lines/code bytes of %s, which the pass did not emit"
                    % (tag, key(i)))
        if emitted != len(window):
            err("%s: Complete says emitted=%d, trace holds %d"
                % (tag, emitted, len(window)))
        present_missing = 0
        raced = 0
        for i in alive:
            if ubeg[i] == NONE or ubeg[i] > t1:
                if i not in seen:
                    err("%s: %s live for the whole pass but missing" % (tag, key(i)))
            else:
                raced += 1
                # Present for certain: its unpublish began after the Init.
                # One that began before it raced the pass's start and may
                # be counted or not (walker.c: the unpublish's linearisation
                # point is its read of the pass mark).
                if i not in seen and ubeg[i] > t0:
                    present_missing += 1
        # Records unloaded between the start of accounting and the Init:
        # their unpublish may have read the pass's mark (walker.c: it can
        # run whole between step 1 and the Init event).
        if acc > t0:
            err("%s: accounting began after the Init" % tag)
        raced += (bisect.bisect_left(unload_ts, t0) -
                  bisect.bisect_left(unload_ts, acc))
        # Records published during the pass and unpublished before its end.
        for j in range(bisect.bisect_left(load_ts, t0),
                       bisect.bisect_right(load_ts, t1)):
            i = load_ids[j]
            if ubeg[i] != NONE and ubeg[i] < t1:
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
                    help="the traced process: the trace must hold only its "
                    "events (a pass of another process fails the check)")
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
