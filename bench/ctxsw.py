#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarise a JIT-thread profile recorded by `letw-bench stall --perf-out`
(perf record -e sched:sched_switch -e page-faults -c 1 --call-graph dwarf
-k mono -t TID): every time the JIT thread left the CPU or faulted, in
which kind of window (rundown / idle, FILE.windows) and through which call
chain. A switch-out with prev_state R is a preemption (the thread was still
runnable); any other state means it went to sleep — on a lock, a futex, a
blocking call: what the publish path must never do. Prints CSV rows
(channel,measure,variant,methods,metric,value,unit) on stdout and writes a
markdown section. Also checks, from the spans stall.c writes, whether each
JIT thread's slowest publish (per kind of window) and each read-side
section over 1 ms had its thread (the JIT thread, or the library's
control thread running the walker) switched out inside it: the reason
issue #10's "publish max" and "longest read-side section" figures give
("preemption") measured, not inferred. Standard library only; called by
run.sh."""
import argparse
import collections
import re
import subprocess
import sys

HEAD = re.compile(r"^\s*(\d+)\s+(\d+\.\d+):\s+(?:\d+\s+)?([\w:-]+):\s*(.*)$")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
# Scheduler plumbing every switch goes through: not informative.
SKIP_KERNEL = {"__schedule", "schedule", "preempt_schedule_common", "__cond_resched",
               "preempt_schedule_irq", "preempt_schedule", "preempt_schedule_thunk"}


def windows_of(path):
    """JIT tids, windows, and what stall.c wrote to check against the
    scheduler: the walker's tid, slowest publishes, long sections."""
    tids, wins, spans = set(), [], {"walker": None, "pubmax": [], "section": []}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "tid":
                tids.add(int(parts[1]))
            elif parts[0] == "walker":
                spans["walker"] = int(parts[1])
            elif parts[0] == "pubmax":   # KIND T0 T1 TID
                spans["pubmax"].append((parts[1], int(parts[2]), int(parts[3]), int(parts[4])))
            elif parts[0] == "section":  # T0 T1
                spans["section"].append((int(parts[1]), int(parts[2])))
            elif len(parts) == 3:
                wins.append((int(parts[1]), int(parts[2]), parts[0]))
    return tids, wins, spans


def switched_inside(outs, t0, t1):
    """(preempted, slept) switch-outs of one thread within [t0, t1]."""
    pre = sum(1 for t, k in outs if t0 <= t <= t1 and k == "preempted")
    slept = sum(1 for t, k in outs if t0 <= t <= t1 and k == "slept")
    return pre, slept


def window_at(wins, t_ns):
    for t0, t1, kind in wins:
        if t0 <= t_ns < t1:
            return kind
    return None


def events(data):
    out = subprocess.run(["perf", "script", "--ns", "-i", data,
                          "-F", "tid,time,event,trace,ip,sym,dso"],
                         capture_output=True, text=True, check=True).stdout
    cur = None
    for line in out.splitlines():
        m = HEAD.match(line)
        if m:
            if cur:
                yield cur
            tid, t, ev, trace = m.groups()
            sec, _, frac = t.partition(".")
            cur = {"tid": int(tid), "t": int(sec) * 10**9 + int(frac.ljust(9, "0")[:9]),
                   "event": ev, "trace": trace, "frames": []}
            continue
        f = FRAME.match(line)
        if f and cur is not None:
            cur["frames"].append((f.group(2), f.group(3)))
    if cur:
        yield cur


def chain(frames, nkernel=3, nuser=5):
    """Innermost frames first: the kernel path that switched or faulted,
    then the user code that got there."""
    kern = [s for s, d in frames if "kernel" in d and s not in SKIP_KERNEL][:nkernel]
    user = [s for s, d in frames if "kernel" not in d and s != "[unknown]"][:nuser]
    return " | ".join(x for x in (" ← ".join(kern), " ← ".join(user)) if x) or "(no call chain)"


def classify(ev):
    if ev["event"].endswith("sched_switch"):
        m = re.search(r"prev_state=(\S+)", ev["trace"])
        state = m.group(1) if m else "?"
        return "preempted" if state.startswith("R") else "slept"
    if "fault" in ev["event"]:
        return "faults"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True)
    ap.add_argument("--windows", required=True)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--methods", type=int, required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--md-out", required=True)
    ap.add_argument("--top", type=int, default=5)
    a = ap.parse_args()

    tids, wins, spans = windows_of(a.windows)
    counts = collections.Counter()
    chains = collections.defaultdict(collections.Counter)
    outs = collections.defaultdict(list)  # tid -> [(t, preempted|slept|faults)]
    watched = tids | ({spans["walker"]} if spans["walker"] else set())
    for ev in events(a.data):
        kind = classify(ev)
        if kind is None or ev["tid"] not in watched:
            continue
        if kind != "faults" and f"prev_pid={ev['tid']} " not in ev["trace"] + " ":
            continue
        outs[ev["tid"]].append((ev["t"], kind))
        if ev["tid"] not in tids:
            continue  # the walker: only its switch times are used
        w = window_at(wins, ev["t"])
        if w is None:
            continue  # warm-up or shutdown
        counts[(kind, w)] += 1
        chains[(kind, w)][chain(ev["frames"])] += 1

    chan = f"perf-{a.config}"
    for kind in ("slept", "preempted", "faults"):
        for w in ("rundown", "idle"):
            unit = "faults" if kind == "faults" else "switches"
            print(f"{chan},ctxsw,{a.variant},{a.methods},{kind}_{w},{counts[(kind, w)]},{unit}")

    n = a.methods
    label = {"slept": "went to sleep (voluntary switch: prev_state ≠ R)",
             "preempted": "preempted (prev_state R)",
             "faults": "page faults"}
    md = [f"#### {a.variant}, {n:,} methods, `{a.config}` session",
          "",
          "| JIT thread | rundown windows | idle windows |",
          "|---|---:|---:|"]
    for kind in ("slept", "preempted", "faults"):
        md.append(f"| {label[kind]} | {counts[(kind, 'rundown')]:,} | {counts[(kind, 'idle')]:,} |")
    md.append("")
    # Preemptions in idle windows are the machine's own; sleeps and faults
    # are shown for both kinds of window.
    for kind, w in (("slept", "rundown"), ("slept", "idle"), ("preempted", "rundown"),
                    ("faults", "rundown"), ("faults", "idle")):
        top = chains[(kind, w)].most_common(a.top)
        if not top:
            continue
        total = counts[(kind, w)]
        md.append(f"Top call chains, {label[kind]}, {w} windows "
                  f"(innermost first; kernel frames, then `|`, then user frames):")
        md.append("")
        md.append("| count | share | chain |")
        md.append("|---:|---:|---|")
        for c, k in top:
            md.append(f"| {k:,} | {100 * k / total:.0f} % | `{c}` |")
        md.append("")
    md += spans_md(a, chan, spans, outs)
    with open(a.md_out, "w") as f:
        f.write("\n".join(md) + "\n")
    return 0


def spans_md(a, chan, spans, outs):
    """The slowest publishes and the long sections against the switches
    of their thread; CSV rows on stdout, markdown lines returned."""
    md = []
    rows = []
    per_kind = collections.Counter()  # summed over the JIT threads
    for kind, t0, t1, tid in sorted(spans["pubmax"], key=lambda x: (x[3], x[0] != "rundown")):
        pre, slept = switched_inside(outs[tid], t0, t1)
        rows.append(f"| JIT thread {tid}, {kind} windows | {(t1 - t0) / 1000:,.1f} µs | {pre} | {slept} |")
        per_kind[kind] += pre + slept
    for kind in ("rundown", "idle"):
        if any(p[0] == kind for p in spans["pubmax"]):
            print(f"{chan},ctxsw,{a.variant},{a.methods},pubmax_{kind}_switched_out,{per_kind[kind]},switches")
    if rows:
        md += ["Slowest publish of each JIT thread against its own switches "
               "(sched_switch with the thread as prev inside the call):", "",
               "| call | duration | preempted inside | slept inside |", "|---|---:|---:|---:|"]
        md += rows + [""]
    secs = spans["section"]
    if spans["walker"] is None:
        md += ["The walker's thread was not found: long sections not checked.", ""]
        return md
    explained = 0
    longest_alone = 0
    faulted = 0
    for t0, t1 in secs:
        pre, slept = switched_inside(outs[spans["walker"]], t0, t1)
        if pre or slept:
            explained += 1
        else:
            longest_alone = max(longest_alone, t1 - t0)
            faulted += any(t0 <= t <= t1 and k == "faults" for t, k in outs[spans["walker"]])
    print(f"{chan},ctxsw,{a.variant},{a.methods},sections_over_1ms,{len(secs)},sections")
    print(f"{chan},ctxsw,{a.variant},{a.methods},sections_over_1ms_switched_out,{explained},sections")
    md += [f"Read-side sections over 1 ms (each pass's longest): {len(secs)}; "
           f"the walker (thread {spans['walker']}) was switched out inside {explained} of them"
           + (f"; the longest without a switch: {longest_alone / 1000:,.1f} µs "
              f"({faulted} of those {len(secs) - explained} with a page fault of the walker inside; "
              "time the hypervisor takes the vCPU away is invisible to the guest here: "
              "/proc/stat reports no steal time)."
              if len(secs) > explained else "."), ""]
    return md


if __name__ == "__main__":
    sys.exit(main())
