# SPDX-License-Identifier: MIT
"""Check that a perf map derived from an LTTng trace names LuaJIT's traces.

usage: check_samples.py SCRIPT.lua PERF_MAP SAMPLES_WITH_MAP SAMPLES_WITHOUT_MAP
                        MIN_SHARE

SCRIPT.lua marks each hot loop with "-- HOT name" on its first line and
"-- END name" on its last. PERF_MAP is the map the analysis wrote. The two
sample files are `perf script -F tid,ip,sym,dso -G` output of the same
perf.data, with /tmp/perf-PID.map in place and without it.

Checks:
  1. every hot loop has a root trace in the map whose source line lies in
     the loop (the map names the traces, with the right lines);
  2. of the samples outside libluajit and the kernel, at least MIN_SHARE
     resolve to a trace symbol of this script whose line lies in a hot
     loop, and every hot loop gets some;
  3. without the map the same samples name no trace (so the names do come
     from the map, not from something perf found elsewhere).
"""
import os
import re
import sys

TRACE_SYM = re.compile(r"trace#(\d+) @(.+):(\d+)\((root|side of #\d+ exit \d+)\)")


def hot_ranges(script):
    begin, ranges = {}, {}
    with open(script) as f:
        for lineno, line in enumerate(f, 1):
            m = re.search(r"-- HOT (\w+)", line)
            if m:
                begin[m.group(1)] = lineno
            m = re.search(r"-- END (\w+)", line)
            if m:
                ranges[m.group(1)] = (begin[m.group(1)], lineno)
    if not ranges or set(ranges) != set(begin):
        raise SystemExit("FAIL: %s has unbalanced HOT/END markers" % script)
    return ranges


def in_hot(line, ranges):
    return any(lo <= line <= hi for lo, hi in ranges.values())


def read_map(path):
    entries = []
    with open(path) as f:
        for raw in f:
            start, size, name = raw.rstrip("\n").split(" ", 2)
            entries.append((int(start, 16), int(size, 16), name))
    return entries


def read_samples(path):
    """Yield (sym, dso, ip) per sample line of perf script -F tid,ip,sym,dso."""
    pat = re.compile(r"^\s*\d+\s+([0-9a-f]+)\s+(.*)\s+\(([^()]*)\)\s*$")
    with open(path) as f:
        for raw in f:
            m = pat.match(raw)
            if m:
                yield m.group(2).strip(), m.group(3), int(m.group(1), 16)


def outside_vm_and_kernel(dso, ip):
    if "libluajit" in dso or dso.startswith("[kernel") or "vmlinux" in dso:
        return False
    return ip < 0xffff800000000000  # an unresolved kernel address


def main():
    script, perf_map, with_map, without_map, min_share = sys.argv[1:6]
    min_share = float(min_share)
    chunk = os.path.basename(script)
    ranges = hot_ranges(script)

    # 1. Names in the map.
    named = {}
    for start, size, name in read_map(perf_map):
        m = TRACE_SYM.search(name)
        if m and m.group(2) == chunk and m.group(4) == "root":
            for loop, (lo, hi) in ranges.items():
                if lo <= int(m.group(3)) <= hi:
                    named.setdefault(loop, []).append(name)
    for loop, (lo, hi) in sorted(ranges.items()):
        if loop not in named:
            raise SystemExit("FAIL: no root trace named for hot loop %s (lines %d-%d) in %s"
                             % (loop, lo, hi, perf_map))
        print("# %s (lines %d-%d): %s" % (loop, lo, hi, "; ".join(sorted(named[loop]))))

    # 2. Samples outside libluajit and the kernel.
    considered = resolved = wrong_line = 0
    per_loop = {loop: 0 for loop in ranges}
    for sym, dso, ip in read_samples(with_map):
        if not outside_vm_and_kernel(dso, ip):
            continue
        considered += 1
        m = TRACE_SYM.search(sym)
        if not m or m.group(2) != chunk:
            continue
        line = int(m.group(3))
        if not in_hot(line, ranges):
            wrong_line += 1
            continue
        resolved += 1
        for loop, (lo, hi) in ranges.items():
            if lo <= line <= hi:
                per_loop[loop] += 1
    if considered == 0:
        raise SystemExit("FAIL: no sample outside libluajit and the kernel")
    share = resolved / considered
    print("# samples outside libluajit/kernel: %d, in hot-loop traces: %d (%.1f%%), "
          "in traces at other lines: %d; per loop: %s"
          % (considered, resolved, 100.0 * share, wrong_line,
             ", ".join("%s=%d" % kv for kv in sorted(per_loop.items()))))
    idle = [loop for loop, n in per_loop.items() if n == 0]
    if idle:
        raise SystemExit("FAIL: no sample resolved to a trace of hot loop(s) %s" % ", ".join(idle))
    if share < min_share:
        raise SystemExit("FAIL: only %.1f%% of the samples resolve to hot-loop traces (want >= %.0f%%)"
                         % (100.0 * share, 100.0 * min_share))

    # 3. Control: the same samples without the map.
    named_without = sum(1 for sym, dso, ip in read_samples(without_map)
                        if TRACE_SYM.search(sym))
    if named_without:
        raise SystemExit("FAIL: %d samples name a trace without the perf map" % named_without)
    print("# without the map: no sample names a trace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
