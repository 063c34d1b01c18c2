# SPDX-License-Identifier: MIT
"""JVM test 1: how well a perf map derived from the trace names the samples
of a JVM, against the JDK's own `jcmd PID Compiler.perfmap`.

usage: check_perf.py --trace DIR --pid PID --codecache FILE --ours S --jdk S
                     --jdk-map MAP --none S [--min-share F]

FILE is `jcmd PID Compiler.codecache` output (its CodeHeap bounds say which
addresses are the code cache). Each S is `perf script -F ip,sym -G` of the
same perf.data, with our map, with the JDK's map, and with no map in /tmp.
MAP is the JDK's map itself (`jcmd PID Compiler.perfmap`).

Checks:
  1. the DCStart pass listed the six hot methods of letw.test.Workload;
  2. of the samples in the code cache, ours names >= MIN_SHARE (the
     JDK's figure printed beside it); of the samples inside compiled
     methods (the nmethod entries of the JDK's map), ours names at least
     as many as the JDK's map. Not over the whole code cache: the agent
     leaves out on purpose some stub blobs the JDK's map lists, so how
     many samples land in those would decide that comparison;
  3. each hot method gets >= 1 % of the code-cache samples under its Java
     name (letw.test.Workload::hotX(descriptor)), and those samples fall in
     the code ranges the DCStart pass gave for that method (the names come
     from the rundown, not from later load events);
  4. with no map, no sample is named after a Java method (the names come
     from the map).
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import letw_trace  # noqa: E402

HOT = ("hotMix", "hotSieve", "hotMatmul", "hotCrc", "hotSort", "hotCollatz")
NS = "letw.test.Workload"
SAMPLE = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s*$")


def codecache_ranges(path):
    ranges = []
    with open(path) as f:
        for line in f:
            m = re.search(r"bounds \[(0x[0-9a-f]+), (0x[0-9a-f]+), (0x[0-9a-f]+)\]", line)
            if m:
                ranges.append((int(m.group(1), 16), int(m.group(3), 16)))
    if not ranges:
        raise SystemExit("FAIL: no CodeHeap bounds in %s" % path)
    return ranges


def samples(path):
    out = []
    with open(path) as f:
        for line in f:
            m = SAMPLE.match(line)
            if m:
                out.append((int(m.group(1), 16), m.group(2)))
    return out


# Compiler.perfmap names a compiled method by Method::external_name,
# "RET KLASS.NAME(PARAMS)"; other blobs (stubs, adapters, the interpreter)
# by the blob's name, which has no "KLASS.NAME(" in it.
NMETHOD = re.compile(r"^\S+ [\w$.]+\.[\w$<>]+\(.*\)$")


def jdk_nmethod_ranges(path):
    """[start, end) of every compiled method in the JDK's perf map."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3 and NMETHOD.match(parts[2]):
                start = int(parts[0], 16)
                out.append((start, start + int(parts[1], 16)))
    if not out:
        raise SystemExit("FAIL: no compiled method in the JDK's map %s" % path)
    return out


def dcstart_ranges(trace, pid):
    """(start, end, "ns::name") of every method_dcstart of the process."""
    out = []
    for name, p in letw_trace.vpid_events(trace, pid):
        if name == "letw_rundown:method_dcstart":
            start = int(p["code_start"])
            out.append((start, start + int(p["code_size"]),
                        "%s::%s" % (p["namespace"], p["name"])))
    return out


def main():
    ap = argparse.ArgumentParser()
    for a in ("--trace", "--codecache", "--ours", "--jdk", "--jdk-map", "--none"):
        ap.add_argument(a, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--min-share", type=float, default=0.95)
    args = ap.parse_args()

    cc = codecache_ranges(args.codecache)
    in_cc = lambda ip: any(lo <= ip < hi for lo, hi in cc)  # noqa: E731
    dc = dcstart_ranges(args.trace, args.pid)
    listed = {n for _, _, n in dc}
    missing = [h for h in HOT if "%s::%s" % (NS, h) not in listed]
    if missing:
        raise SystemExit("FAIL: the DCStart pass does not list %s" % ", ".join(missing))
    print("# DCStart listed %d methods, the six hot ones among them" % len(dc))

    nm = jdk_nmethod_ranges(args.jdk_map)
    in_nm = lambda ip: any(lo <= ip < hi for lo, hi in nm)  # noqa: E731

    def named(path, where):
        total = hits = 0
        for ip, sym in samples(path):
            if where(ip):
                total += 1
                hits += sym != "[unknown]"
        return total, hits

    total, ours = named(args.ours, in_cc)
    total_jdk, jdk = named(args.jdk, in_cc)
    if total == 0:
        raise SystemExit("FAIL: no sample in the code cache")
    assert total == total_jdk, "the two perf script runs saw different samples"
    print("# code-cache samples: %d; named by our map (DCStart): %d (%.1f%%); "
          "by jcmd Compiler.perfmap: %d (%.1f%%)"
          % (total, ours, 100.0 * ours / total, jdk, 100.0 * jdk / total))
    if ours < args.min_share * total:
        raise SystemExit("FAIL: our map names %.1f%% of the code-cache samples (want >= %.0f%%)"
                         % (100.0 * ours / total, 100.0 * args.min_share))
    nm_total, nm_ours = named(args.ours, in_nm)
    _, nm_jdk = named(args.jdk, in_nm)
    print("# samples in the %d compiled methods of Compiler.perfmap: %d; named by ours: %d, "
          "by Compiler.perfmap: %d" % (len(nm), nm_total, nm_ours, nm_jdk))
    if nm_total == 0:
        raise SystemExit("FAIL: no sample in a compiled method of the JDK's map")
    if nm_ours < nm_jdk:
        raise SystemExit("FAIL: in compiled methods, our map names fewer samples (%d) than "
                         "Compiler.perfmap's (%d)" % (nm_ours, nm_jdk))

    per = {h: 0 for h in HOT}
    from_dc = {h: 0 for h in HOT}
    for ip, sym in samples(args.ours):
        for h in HOT:
            full = "%s::%s" % (NS, h)
            if sym.startswith(full + "("):
                per[h] += 1
                from_dc[h] += any(s <= ip < e and n == full for s, e, n in dc)
    print("# hot-method samples (in DCStart ranges): %s"
          % ", ".join("%s=%d (%d)" % (h, per[h], from_dc[h]) for h in HOT))
    for h in HOT:
        if per[h] < 0.01 * total:
            raise SystemExit("FAIL: %s got %d samples, under 1%% of %d" % (h, per[h], total))
        if from_dc[h] < 0.9 * per[h]:
            raise SystemExit("FAIL: only %d of %s's %d samples fall in its DCStart ranges"
                             % (from_dc[h], h, per[h]))

    stray = [sym for ip, sym in samples(args.none) if "::" in sym and NS in sym]
    if stray:
        raise SystemExit("FAIL: %d samples named without any map, e.g. %s" % (len(stray), stray[0]))
    print("# without a map: no sample names a Java method")
    return 0


if __name__ == "__main__":
    sys.exit(main())
