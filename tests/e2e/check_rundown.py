# SPDX-License-Identifier: MIT
"""Read an LTTng trace with libbabeltrace2 (bt2 bindings) and check the
rundown passes of one process against the runtime's own live list.

usage: check_rundown.py TRACE_DIR VPID LIVE_LIST EXPECT...
  EXPECT is FLAVOUR:CONTROL_CODE[:PASS_ID], e.g. dcstart:1  dcend:1  dcstart:2:7
Each EXPECT must match exactly one pass of that flavour and control code
(and pass id if given); no other pass of that flavour may exist. For each
pass: init/complete paired by pass_id, the records between them are
exactly the live list (methods: start, size, namespace, name, version;
stubs: start, size, kind, owner), no duplicates, and the complete's
`emitted` equals the records seen (methods + stubs + modules).

usage: check_rundown.py --list TRACE_DIR VPID
  prints FLAVOUR:CONTROL_CODE:PASS_ID of each pass begun, in trace order.
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from letw_trace import DiscardedEvents, vpid_events  # noqa: E402


def load_live(path):
    methods, stubs = set(), set()
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "method":
                methods.add((int(p[1], 16), int(p[2]), p[3], p[4], int(p[5])))
            elif p[0] == "stub":
                stubs.add((int(p[1], 16), int(p[2]), int(p[3]), int(p[4], 16)))
    return methods, stubs


def events(trace, vpid):
    try:
        yield from vpid_events(trace, vpid)
    except DiscardedEvents:
        raise SystemExit("FAIL: the trace has discarded events")


def list_passes(trace, vpid):
    for name, p in events(trace, vpid):
        prov, ev = name.split(":")
        if prov == "letw_rundown" and ev.endswith("_init"):
            print("%s:%d:%d" % ("dcstart" if "dcstart" in ev else "dcend",
                                int(p["control_code"]), int(p["pass_id"])))
    return 0


def main():
    if sys.argv[1] == "--list":
        return list_passes(sys.argv[2], int(sys.argv[3]))
    trace, vpid, live = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    expects = [e.split(":") for e in sys.argv[4:]]
    methods, stubs = load_live(live)
    passes = {}            # (flavour, pass_id) -> dict
    open_pass = {}         # flavour -> pass dict being filled
    for name, p in events(trace, vpid):
        prov, ev = name.split(":")
        if prov != "letw_rundown":
            continue
        flav = "dcstart" if "dcstart" in ev else "dcend"
        if ev.endswith("_init"):
            if flav in open_pass:
                raise SystemExit("FAIL: %s init inside an open pass" % flav)
            d = {"id": int(p["pass_id"]), "code": int(p["control_code"]),
                 "methods": [], "stubs": [], "modules": 0, "complete": None}
            open_pass[flav] = d
            passes[(flav, d["id"])] = d
        elif ev.endswith("_complete"):
            d = open_pass.pop(flav, None)
            if d is None or d["id"] != int(p["pass_id"]):
                raise SystemExit("FAIL: %s complete without matching init" % flav)
            d["complete"] = {"emitted": int(p["emitted"]),
                             "skipped_raced": int(p["skipped_raced"])}
        else:
            d = open_pass.get(flav)
            if d is None:
                raise SystemExit("FAIL: %s record outside a pass" % ev)
            if ev.startswith("method_"):
                d["methods"].append((int(p["code_start"]), int(p["code_size"]),
                                     str(p["namespace"]), str(p["name"]),
                                     int(p["version_id"])))
            elif ev.startswith("stub_"):
                d["stubs"].append((int(p["start"]), int(p["size"]),
                                   int(p["kind"]), int(p["owner"])))
            else:
                d["modules"] += 1
    if open_pass:
        raise SystemExit("FAIL: truncated pass(es): %s" % list(open_pass))
    by_flavour = defaultdict(list)
    for (flav, _), d in passes.items():
        by_flavour[flav].append(d)
    failures = 0
    for flav in ("dcstart", "dcend"):
        wanted = [e for e in expects if e[0] == flav]
        got = by_flavour.get(flav, [])
        if len(got) != len(wanted):
            print("FAIL: %d %s passes, expected %d: %s" %
                  (len(got), flav, len(wanted), [(d["id"], d["code"]) for d in got]))
            failures += 1
            continue
        for e in wanted:
            cands = [d for d in got if d["code"] == int(e[1]) and
                     (len(e) < 3 or d["id"] == int(e[2]))]
            if len(cands) != 1:
                print("FAIL: no unique %s pass for %s" % (flav, ":".join(e)))
                failures += 1
                continue
            d = cands[0]
            seen_m, seen_s = set(d["methods"]), set(d["stubs"])
            if len(seen_m) != len(d["methods"]) or len(seen_s) != len(d["stubs"]):
                print("FAIL: %s pass %d has duplicate records" % (flav, d["id"]))
                failures += 1
            if seen_m != methods:
                print("FAIL: %s pass %d: %d methods missing, %d unexpected" %
                      (flav, d["id"], len(methods - seen_m), len(seen_m - methods)))
                failures += 1
            if seen_s != stubs:
                print("FAIL: %s pass %d: %d stubs missing, %d unexpected" %
                      (flav, d["id"], len(stubs - seen_s), len(seen_s - stubs)))
                failures += 1
            total = len(d["methods"]) + len(d["stubs"]) + d["modules"]
            if d["complete"]["emitted"] != total:
                print("FAIL: %s pass %d: complete says %d emitted, trace has %d" %
                      (flav, d["id"], d["complete"]["emitted"], total))
                failures += 1
            print("%s pass %d (control code %d): %d methods, %d stubs, "
                  "%d modules, %d raced" %
                  (flav, d["id"], d["code"], len(d["methods"]), len(d["stubs"]),
                   d["modules"], d["complete"]["skipped_raced"]))
    if not methods:
        print("FAIL: the runtime's live list is empty")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
