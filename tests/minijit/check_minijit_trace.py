# SPDX-License-Identifier: MIT
"""Replay one letw-minijit process's letw_runtime events (read with the
babeltrace2 Python bindings) and check them against the runtime's list file.

usage: check_minijit_trace.py TRACE_DIR VPID LIST_FILE {exact|churn}

Both modes: every load lands on a free range (no overlap with a live method
or stub), every unload names a live record with the same fields, method
flags say JITTED with a quick or tier-1 tier, each method id keeps one name
and namespace (its module's name) and its versions only grow, a re-tiered
method's new version is loaded before the old one is unloaded, and every
record of the list was loaded.
exact: the live set at the end of the trace is exactly the list (the
process ran without --churn, and letw_shutdown emits no unloads), and a
freed method never comes back.
churn: the trace holds more loads than the list (the churn thread ran).
"""
import bisect
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from letw_trace import DiscardedEvents, vpid_events  # noqa: E402

JITTED = 0x8
TIER_SHIFT, TIER_MASK = 7, 0x7 << 7
TIER_QUICK, TIER_OPT1 = 3, 4


def fail(msg):
    raise SystemExit("FAIL: " + msg)


def load_list(path):
    methods, stubs, hot = {}, {}, []
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[0] == "method":
                methods[int(p[1], 16)] = (int(p[2]), p[3], p[4], int(p[5]))
            elif p[0] == "stub":
                stubs[int(p[1], 16)] = (int(p[2]), int(p[3]), int(p[4], 16))
            elif p[0] == "hot":
                hot.append(p[1])
            else:
                fail("unknown list line: " + line.strip())
    return methods, stubs, hot


def events(trace, vpid):
    try:
        yield from vpid_events(trace, vpid)
    except DiscardedEvents:
        fail("the trace has discarded events (channel too small)")


class Live:
    """Live ranges, kept sorted by start for the overlap check."""

    def __init__(self):
        self.starts, self.recs = [], {}

    def add(self, start, size, rec):
        i = bisect.bisect_left(self.starts, start)
        if i < len(self.starts) and self.starts[i] < start + size:
            fail("load at 0x%x+%d overlaps live 0x%x" % (start, size, self.starts[i]))
        if i > 0:
            prev = self.starts[i - 1]
            if prev + self.recs[prev][0] > start:
                fail("load at 0x%x overlaps live 0x%x+%d" % (start, prev, self.recs[prev][0]))
        self.starts.insert(i, start)
        self.recs[start] = (size,) + rec

    def remove(self, start):
        i = bisect.bisect_left(self.starts, start)
        if i == len(self.starts) or self.starts[i] != start:
            fail("unload of 0x%x, which is not live" % start)
        del self.starts[i]
        return self.recs.pop(start)


def main():
    trace, vpid, listfile, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    lmethods, lstubs, hot = load_list(listfile)
    live = Live()
    kinds = {}             # start -> "method" | "stub"
    modules = {}           # module_id -> name
    ident = {}             # method_id -> (namespace, name)
    last_version = {}      # method_id -> highest version loaded
    loaded_methods, loaded_stubs = set(), set()
    gone = set()           # method ids whose only live version was unloaded
    live_by_mid = {}       # method_id -> start of its newest live version
    pending_retire = {}    # method_id -> start of the live version it replaces
    nloads = nunloads = 0

    for name, p in events(trace, vpid):
        ev = name.split(":", 1)[1]
        if ev == "module_load":
            modules[int(p["module_id"])] = str(p["name"])
        elif ev == "method_load":
            nloads += 1
            start, size = int(p["code_start"]), int(p["code_size"])
            mid, ver, flags = int(p["method_id"]), int(p["version_id"]), int(p["method_flags"])
            ns, nm = str(p["namespace"]), str(p["name"])
            tier = (flags & TIER_MASK) >> TIER_SHIFT
            if not flags & JITTED or tier not in (TIER_QUICK, TIER_OPT1):
                fail("%s v%d: method_flags 0x%x" % (nm, ver, flags))
            if mode == "exact" and tier != (TIER_QUICK if ver == 1 else TIER_OPT1):
                fail("%s v%d loaded at tier %d" % (nm, ver, tier))
            mod = int(p["module_id"])
            if modules.get(mod) != ns:
                fail("%s: module %d is %r, namespace %r" % (nm, mod, modules.get(mod), ns))
            if ident.setdefault(mid, (ns, nm)) != (ns, nm):
                fail("method id %d changed name to %s.%s" % (mid, ns, nm))
            if not re.fullmatch(r"fn_\d+", nm) or str(p["signature"]) != "(i64)->i64":
                fail("unexpected name/signature %s %s" % (nm, p["signature"]))
            if ver <= last_version.get(mid, 0):
                fail("%s: version %d after %d" % (nm, ver, last_version[mid]))
            last_version[mid] = ver
            # A method with a live older version is being re-tiered: the
            # old version must be unloaded after this load, not before.
            if mode == "exact" and mid in gone:
                fail("%s v%d loaded after its previous version was unloaded: re-tiering "
                     "must load the new version first" % (nm, ver))
            if mid in live_by_mid:
                if mid in pending_retire:
                    fail("%s has three live versions" % nm)
                pending_retire[mid] = live_by_mid[mid]
            live_by_mid[mid] = start
            live.add(start, size, (ns, nm, ver, mid))
            kinds[start] = "method"
            loaded_methods.add((start, size, ns, nm, ver))
        elif ev == "method_unload":
            nunloads += 1
            start = int(p["code_start"])
            if kinds.get(start) != "method":
                fail("method_unload of 0x%x, not a live method" % start)
            size, ns, nm, ver, mid = live.remove(start)
            del kinds[start]
            if (size, nm, ver) != (int(p["code_size"]), str(p["name"]), int(p["version_id"])):
                fail("unload of 0x%x does not match its load" % start)
            if pending_retire.get(mid) == start:
                del pending_retire[mid]
            elif live_by_mid.get(mid) == start:
                if mid in pending_retire:
                    fail("%s: the new version was unloaded before the old one" % nm)
                del live_by_mid[mid]
                gone.add(mid)
            else:
                fail("%s: unloaded version is not the live one" % nm)
        elif ev == "stub_load":
            start, size = int(p["start"]), int(p["size"])
            live.add(start, size, (int(p["kind"]), int(p["owner"])))
            kinds[start] = "stub"
            loaded_stubs.add((start, size, int(p["kind"]), int(p["owner"])))
        elif ev == "stub_unload":
            start = int(p["start"])
            if kinds.get(start) != "stub":
                fail("stub_unload of 0x%x, not a live stub" % start)
            live.remove(start)
            del kinds[start]

    if nloads == 0:
        fail("no method_load from vpid %d" % vpid)
    if nunloads == 0:
        fail("no method_unload: nothing was re-tiered or freed")
    if pending_retire:
        fail("%d replaced versions were never unloaded" % len(pending_retire))
    for s, (size, ns, nm, ver) in lmethods.items():
        if (s, size, ns, nm, ver) not in loaded_methods:
            fail("listed %s v%d at 0x%x was never loaded" % (nm, ver, s))
    for s, (size, kind, owner) in lstubs.items():
        if (s, size, kind, owner) not in loaded_stubs:
            fail("listed stub at 0x%x was never loaded" % s)
        if kind == 2 and owner not in ident:
            fail("jump stub 0x%x owned by unknown method id %d" % (s, owner))

    if mode == "exact":
        tmethods = {s: r[1:4] for s, r in live.recs.items() if kinds[s] == "method"}
        want = {s: r[:4] for s, r in lmethods.items()}
        got = {s: (live.recs[s][0],) + tmethods[s] for s in tmethods}
        if got != want:
            fail("live methods at trace end differ from the list: %d missing, %d extra" %
                 (len(set(want) - set(got)), len(set(got) - set(want))))
        tstubs = {s: r for s, r in live.recs.items() if kinds[s] == "stub"}
        if tstubs != lstubs:
            fail("live stubs at trace end differ from the list")
        names = {r[2] for r in lmethods.values()}
        if not hot or any(h not in names for h in hot):
            fail("hot functions %s are not all live" % hot)
    elif nloads <= len(lmethods):
        fail("churn mode but only %d loads for %d listed methods" % (nloads, len(lmethods)))
    print("ok: vpid %d, %d loads, %d unloads, %d live at end, %d listed" %
          (vpid, nloads, nunloads, len(live.starts), len(lmethods) + len(lstubs)))


main()
