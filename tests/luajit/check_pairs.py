# SPDX-License-Identifier: MIT
"""Check that every method_unload of one process pairs with a method_load.

usage: check_pairs.py TRACE_DIR PID PUBLISHED

Reads the trace with babeltrace2's Python bindings (bt2) and follows the
process's letw_runtime method_load / method_unload events in time order:
  - an unload must name a live record (same code_start, same method_id,
    same size) loaded before it: never an address loaded by nobody, never
    twice;
  - no two live records overlap (a flush must have unloaded the old code
    before new code was loaded at the same address);
  - at the end nothing is left live (the host unloads everything before
    the lua_State closes), and the number of loads equals PUBLISHED, the
    host's own count of published traces.
Also counts loads whose range overlaps a range used by an earlier, already
unloaded trace of different code (address reuse), for the log.
"""
import sys

import bt2


def field(ev, name):
    return ev.payload_field[name]


def main():
    trace, pid, published = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    live = {}       # code_start -> (end, method_id, name)
    used = []       # (start, end, name) of unloaded records
    loads = unloads = 0
    errors = []
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if ev.name not in ("letw_runtime:method_load", "letw_runtime:method_unload"):
            continue
        if int(ev.common_context_field["vpid"]) != pid:
            continue
        start = int(field(ev, "code_start"))
        end = start + int(field(ev, "code_size"))
        mid = int(field(ev, "method_id"))
        name = str(field(ev, "name")) + str(field(ev, "signature"))
        if ev.name.endswith("method_load"):
            loads += 1
            for s, (e, m, n) in live.items():
                if s < end and start < e:
                    errors.append("load of %s at 0x%x overlaps live %s at 0x%x" % (name, start, n, s))
            live[start] = (end, mid, name)
        else:
            unloads += 1
            rec = live.pop(start, None)
            if rec is None:
                errors.append("unload of %s at 0x%x: nothing loaded there" % (name, start))
            elif rec[0] != end or rec[1] != mid:
                errors.append("unload at 0x%x does not match its load (%s vs %s)" % (start, name, rec[2]))
            else:
                used.append((start, end, name))
    reused = 0
    by_start = sorted(used)
    # Overlapping ranges of different code, each counted once per pair of
    # neighbours in address order: a lower bound, for the log only.
    for (s1, e1, n1), (s2, e2, n2) in zip(by_start, by_start[1:]):
        if s2 < e1 and (s1, e1, n1) != (s2, e2, n2):
            reused += 1
    print("# process %d: %d loads, %d unloads, %d left live, %d overlaps of different code over time"
          % (pid, loads, unloads, len(live), reused))
    for e in errors[:10]:
        print("FAIL: " + e)
    if errors:
        return 1
    if live:
        print("FAIL: %d record(s) never unloaded, e.g. %s" % (len(live), next(iter(live.values()))[2]))
        return 1
    if loads != published:
        print("FAIL: %d method_load events, the host published %d traces" % (loads, published))
        return 1
    if loads == 0:
        print("FAIL: no method_load for process %d" % pid)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
