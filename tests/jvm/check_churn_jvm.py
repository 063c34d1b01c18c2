# SPDX-License-Identifier: MIT
"""JVM test 3: method loads and unloads of a churning JVM pair up.

usage: check_churn_jvm.py TRACE PID ROUNDS CHURN_JAVA

Follows the process's letw_runtime and letw_rundown events in time order.
The live set starts from the first DCStart pass (code compiled before the
session: the churn only begins after it) and follows method_load and
method_unload:
  - a load never overlaps a live record;
  - an unload names a live record: same code_start, code_size, method_id;
  - the payload classes (letw.test.Churn$P*) had at least ROUNDS/2 code
    versions loaded and ROUNDS/4 unloaded, each load's module_id names a
    module loaded earlier, named after Churn's class loader, and at least
    ROUNDS/4 of those modules were unloaded (their loader was collected);
  - some load reused the range of unloaded code of another method_id;
  - line tables (letw_runtime:method_lines): every Churn$P0.applyAsLong
    version has one, in file letw/test/Churn.java, with rows where
    Churn$P0.step (inlined) is at depth 1 on its "LINE:step" line and the
    depth-0 row at the same offset is applyAsLong's "LINE:call" line.
Later passes are left to `lttng-etw report` (an unload racing a pass makes
its record legal there and meaningless here).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import letw_trace  # noqa: E402

PAYLOAD = "letw.test.Churn$P"


def markers(java):
    out = {}
    with open(java) as f:
        for n, line in enumerate(f, 1):
            if "// LINE:" in line:
                out[line.split("// LINE:")[1].strip()] = n
    return out


def check_lines(chunks, lines, expected):
    """chunks: (code_start, version) -> list of method_lines payloads of
    one applyAsLong version. Returns an error or None."""
    step, call = lines["step"], lines["call"]
    for key, parts in chunks.items():
        rows, files = [], None
        for p in sorted(parts, key=lambda p: int(p["row_first"])):
            files = str(p["files"]).split("\n")
            rows += zip([int(v) for v in p["native_offsets"]], [int(v) for v in p["lines"]],
                        [int(v) for v in p["files_idx"]], [int(v) for v in p["inline_depths"]])
        if len(rows) != int(parts[0]["rows_total"]):
            return "0x%x: %d rows of %d" % (key[0], len(rows), int(parts[0]["rows_total"]))
        if [r[0] for r in rows] != sorted(r[0] for r in rows):
            return "0x%x: rows out of order" % key[0]
        if files[rows[0][2]] != "letw/test/Churn.java":
            return "0x%x: file %r, want letw/test/Churn.java" % (key[0], files[rows[0][2]])
        at = {}
        for off, line, f, depth in rows:
            at.setdefault(off, {})[depth] = (line, files[f])
        if not any(d.get(1, (0,))[0] == step and d.get(0, (0,))[0] == call for d in at.values()):
            return "0x%x: no row of step (line %d) inlined at the call (line %d): %s" % (
                key[0], step, call, rows)
    if len(chunks) < expected:
        return "only %d applyAsLong versions of Churn$P0 have a line table, want >= %d" % (
            len(chunks), expected)
    return None


def main():
    trace, pid, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lines = markers(sys.argv[4])
    p0 = {}        # code_start -> version_id of Churn$P0.applyAsLong loads
    chunks = {}    # (code_start, version_id) -> method_lines payloads
    live = {}      # code_start -> (end, method_id, name)
    freed = []     # (start, end, method_id) of unloaded code
    modules = {}   # module_id -> name, for loaded modules
    errors = []
    first_pass = 0  # 0 before, 1 inside, 2 after the first DCStart pass
    loads = unloads = payload_loads = payload_unloads = reused = 0
    modules_unloaded = 0
    for name, p in letw_trace.vpid_events(trace, pid):
        ev = name.split(":")[1]
        if ev == "dcstart_init" and first_pass == 0:
            first_pass = 1
        elif ev == "dcstart_complete" and first_pass == 1:
            first_pass = 2
        elif ev in ("module_load", "module_dcstart"):
            modules[int(p["module_id"])] = str(p["name"])
        elif ev == "module_unload":
            if modules.pop(int(p["module_id"]), None) is not None:
                modules_unloaded += 1
        if ev == "method_lines":
            key = (int(p["code_start"]), int(p["version_id"]))
            if p0.get(key[0]) == key[1]:
                chunks.setdefault(key, []).append(p)
            continue
        if ev not in ("method_load", "method_unload", "method_dcstart"):
            continue
        if ev == "method_dcstart" and first_pass != 1:
            continue
        start = int(p["code_start"])
        end = start + int(p["code_size"])
        mid = int(p["method_id"])
        full = "%s::%s%s" % (p["namespace"], p["name"], p["signature"])
        if ev in ("method_load", "method_dcstart"):
            if ev == "method_dcstart" and start in live and live[start][1] == mid:
                continue  # loaded while the pass ran: both saw it
            for s, (e, _, n) in live.items():
                if s < end and start < e:
                    errors.append("%s of %s at 0x%x overlaps live %s at 0x%x" % (ev, full, start, n, s))
            live[start] = (end, mid, full)
            if ev == "method_load":
                loads += 1
                if any(s < end and start < e and m != mid for s, e, m in freed):
                    reused += 1
                if str(p["namespace"]) == PAYLOAD + "0" and str(p["name"]) == "applyAsLong":
                    p0[start] = int(p["version_id"])
                if str(p["namespace"]).startswith(PAYLOAD):
                    payload_loads += 1
                    mod = modules.get(int(p["module_id"]))
                    if mod is None or "letw.test.Churn$Loader@" not in mod:
                        errors.append("%s at 0x%x: module %d is %r, not a live Churn loader"
                                      % (full, start, int(p["module_id"]), mod))
        else:
            unloads += 1
            rec = live.pop(start, None)
            if rec is None:
                errors.append("unload of %s at 0x%x: nothing live there" % (full, start))
            elif rec[0] != end or rec[1] != mid:
                errors.append("unload at 0x%x does not match its load (%s vs %s)" % (start, full, rec[2]))
            else:
                freed.append((start, end, mid))
                payload_unloads += str(p["namespace"]).startswith(PAYLOAD)
    print("# process %d: %d loads (%d of payload classes), %d unloads (%d), %d left live, "
          "%d loads reusing freed code of another method, %d loader modules unloaded"
          % (pid, loads, payload_loads, unloads, payload_unloads, len(live), reused, modules_unloaded))
    for e in errors[:10]:
        print("FAIL: " + e)
    if errors:
        return 1
    if first_pass != 2:
        print("FAIL: no complete first DCStart pass")
        return 1
    if payload_loads < rounds // 2 or payload_unloads < rounds // 4:
        print("FAIL: too little churn for %d rounds" % rounds)
        return 1
    if modules_unloaded < rounds // 4:
        print("FAIL: only %d loader modules unloaded" % modules_unloaded)
        return 1
    if reused == 0:
        print("FAIL: no load reused the memory of unloaded code")
        return 1
    err = check_lines(chunks, lines, rounds // 8)
    if err:
        print("FAIL: line table: " + err)
        return 1
    print("# %d line tables of Churn$P0.applyAsLong show step() inlined at line %d, from line %d"
          % (len(chunks), lines["call"], lines["step"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
