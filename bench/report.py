#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn the rows bench/run.sh collected (results.csv) into results.md, the
plot data files and plots.gp. Standard library only; called by run.sh."""
import argparse
import csv
import os

LF, GL, RAW = "lockfree", "globallock", "raw"


def load(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["channel"], r["measure"], r["variant"], int(r["methods"]), r["metric"])
            rows[key] = float(r["value"])
    return rows


def meta_of(path):
    meta = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    return meta


def t(ns):
    """A duration in ns, humanised."""
    if ns is None:
        return "—"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.2f} s"


def rate(v):
    return "—" if v is None else f"{v / 1e6:.2f} M/s"


def ratio(a, b, digits=0):
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    if digits or r < 10:
        return f"{r:.{digits or 2}f}×"
    return f"{r:,.0f}×"


def count(v):
    return "—" if v is None else f"{v:,.0f}"


class Report:
    def __init__(self, rows, meta):
        self.rows, self.meta = rows, meta
        self.sizes = sorted({k[3] for k in rows if k[1] in ("stall", "rate")} |
                            {k[3] for k in rows if k[1] == "pubcost"})

    def get(self, channel, measure, variant, n, metric):
        return self.rows.get((channel, measure, variant, n, metric))

    def stall_table(self):
        g = lambda v, n, m: self.get("blocking", "stall", v, n, m)
        out = ["| methods | lock-free max | p99.9 | p99 | global-lock max | p99.9 | p99 "
               "| ratio max | ratio p99.9 | ratio p99 | lock-free max, no rundown "
               "| publishes/s during rundowns (lf / gl) | passes (lf / gl) |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n in self.sizes:
            lf = [g(LF, n, f"publish_{q}_ns") for q in ("max", "p999", "p99")]
            gl = [g(GL, n, f"publish_{q}_ns") for q in ("max", "p999", "p99")]
            if all(x is None for x in lf + gl):
                continue
            out.append(f"| {n:,} | " + " | ".join(t(x) for x in lf) + " | " +
                       " | ".join(t(x) for x in gl) + " | " +
                       " | ".join(ratio(b, a) for a, b in zip(lf, gl)) +
                       f" | {t(g(LF, n, 'publish_max_ns_idle'))}"
                       f" | {self.throughput(LF, n)} / {self.throughput(GL, n)}"
                       f" | {count(g(LF, n, 'passes'))} / {count(g(GL, n, 'passes'))} |")
        return "\n".join(out)

    def throughput(self, v, n):
        ops = self.get("blocking", "stall", v, n, "publish_count")
        phase = self.get("blocking", "stall", v, n, "rundown_phase_ns")
        return "—" if ops is None or not phase else f"{ops * 1e9 / phase:,.0f}"

    def stall_detail(self):
        g = lambda v, n, m: self.get("blocking", "stall", v, n, m)
        out = ["| methods | variant | publishes timed | p50 | calls > 1 ms (publish + unpublish) "
               "| time in them | share of rundown phase | JIT thread running / waiting for a CPU / asleep "
               "| unpublish max | pass mean | pass max "
               "| records emitted | skipped (raced) | discarded events |",
               "|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
        for n in self.sizes:
            for v in (LF, GL):
                if g(v, n, "passes") is None:
                    continue
                parts = [g(v, n, f"{w}_over_1ms_ns") for w in ("publish", "unpublish")]
                calls = [g(v, n, f"{w}_over_1ms") for w in ("publish", "unpublish")]
                stalled = None if None in parts else sum(parts)
                ncalls = None if None in calls else sum(calls)
                phase = g(v, n, "rundown_phase_ns")
                share = "—" if stalled is None or not phase else f"{100 * stalled / phase:.1f} %"
                wall, cpu, wait = (g(v, n, f"jit_{k}_ns") for k in ("wall", "cpu", "runqueue_wait"))
                split = "—"
                if wall and cpu is not None and wait is not None:
                    split = (f"{100 * cpu / wall:.0f} % / {100 * wait / wall:.0f} % / "
                             f"{100 * max(0.0, wall - cpu - wait) / wall:.0f} %")
                out.append(f"| {n:,} | {v} | {count(g(v, n, 'publish_count'))} "
                           f"| {t(g(v, n, 'publish_p50_ns'))} | {count(ncalls)} "
                           f"| {t(stalled)} | {share} | {split} | {t(g(v, n, 'unpublish_max_ns'))} "
                           f"| {t(g(v, n, 'pass_mean_ns'))} | {t(g(v, n, 'pass_max_ns'))} "
                           f"| {count(g(v, n, 'emitted'))} | {count(g(v, n, 'skipped_raced'))} "
                           f"| {count(g(v, n, 'discarded_events'))} |")
        return "\n".join(out)

    def rate_table(self):
        out = ["| methods | channel | lock-free | global-lock | raw loop (limit) | lock-free / raw "
               "| global-lock / raw | walker phase 1 (pinning, inside rcu_read_lock), longest (lf / gl) "
               "| discarded (lf / gl / raw) |",
               "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
        for n in self.sizes:
            for ch in ("blocking", "discard"):
                r = {v: self.get(ch, "rate", v, n, "records_per_s_best") for v in (LF, GL, RAW)}
                d = {v: self.get(ch, "rate", v, n, "discarded_events") for v in (LF, GL, RAW)}
                if all(x is None for x in d.values()):
                    continue
                rs = [self.get(ch, "rate", v, n, "read_side_max_ns") for v in (LF, GL)]
                out.append(f"| {n:,} | {ch} | {rate(r[LF])} | {rate(r[GL])} | {rate(r[RAW])} "
                           f"| {ratio(r[LF], r[RAW], 2)} | {ratio(r[GL], r[RAW], 2)} "
                           f"| {t(rs[0])} / {t(rs[1])} "
                           f"| {count(d[LF])} / {count(d[GL])} / {count(d[RAW])} |")
        return "\n".join(out)

    def pubcost_table(self):
        g = lambda v, n, m: self.get("blocking", "pubcost", v, n, m)
        lfht = lambda n, m: self.get("none", "pubcost", "cds_lfht", n, m)
        out = ["| methods | lock-free off | lock-free on | global-lock off | global-lock on "
               "| plain cds_lfht insert | lock-free off / cds_lfht | populate, mean per method (lf / gl) |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n in self.sizes:
            cells = []
            for v in (LF, GL):
                for m in ("off", "on"):
                    med, mean = g(v, n, f"publish_{m}_median_ns"), g(v, n, f"publish_{m}_mean_ns")
                    cells.append("—" if med is None else f"{t(med)} / {t(mean)}")
            lm, lmean = lfht(n, "insert_median_ns"), lfht(n, "insert_mean_ns")
            pop = [self.get("blocking", "stall", v, n, "populate_ns_per_method") for v in (LF, GL)]
            out.append(f"| {n:,} | " + " | ".join(cells) +
                       f" | {'—' if lm is None else t(lm) + ' / ' + t(lmean)}"
                       f" | {ratio(g(LF, n, 'publish_off_median_ns'), lm, 1)}"
                       f" | {t(pop[0])} / {t(pop[1])} |")
        return "\n".join(out)

    def populate_table(self):
        out = ["| methods | variant | runs | fastest fill | slowest fill | runs slower than 10 µs/method |",
               "|---:|---|---:|---:|---:|---:|"]
        for n in self.sizes:
            for v in (LF, GL):
                vals = [val for (ch, meas, var, nn, met), val in self.rows.items()
                        if var == v and nn == n and met == "populate_ns_per_method"]
                if not vals:
                    continue
                out.append(f"| {n:,} | {v} | {len(vals)} | {t(min(vals))} | {t(max(vals))} "
                           f"| {sum(1 for x in vals if x > 10000)} |")
        return "\n".join(out)

    def memory_table(self):
        g = lambda v, n, m: self.get("none", "memory", v, n, m)
        out = ["| methods | bytes/method, names excluded (lf / gl) | bytes/method with names (lf / gl) "
               "| of which strings | peak deferred frees in rundown under churn (lf / gl) "
               "| ≈ memory held (lf / gl) |",
               "|---:|---:|---:|---:|---:|---:|"]
        for n in self.sizes:
            bare = [g(v, n, "bytes_per_method_no_names") for v in (LF, GL)]
            full = [g(v, n, "bytes_per_method_with_names") for v in (LF, GL)]
            if all(x is None for x in bare + full):
                continue
            peak = [self.get("blocking", "stall", v, n, "deferred_frees_peak") for v in (LF, GL)]
            held = ["—" if p is None or f is None else f"{p * f / 2**20:.1f} MiB"
                    for p, f in zip(peak, full)]
            fmt = lambda x: "—" if x is None else f"{x:.0f}"
            out.append(f"| {n:,} | {fmt(bare[0])} / {fmt(bare[1])} | {fmt(full[0])} / {fmt(full[1])} "
                       f"| {fmt(g(LF, n, 'string_bytes_per_method'))} "
                       f"| {count(peak[0])} / {count(peak[1])} | {held[0]} / {held[1]} |")
        return "\n".join(out)

    def latency_table(self):
        out = ["| variant | methods | median | min | max | `lttng start` command alone (median) "
               "| cycles measured / perturbed |",
               "|---|---:|---:|---:|---:|---:|---|"]
        for v in (LF, GL):
            for n in sorted({k[3] for k in self.rows if k[1] == "latency" and k[2] == v}):
                g = lambda m: self.get("blocking", "latency", v, n, m)
                out.append(f"| {v} | {n:,} | {t(g('start_to_init_median_ns'))} "
                           f"| {t(g('start_to_init_min_ns'))} | {t(g('start_to_init_max_ns'))} "
                           f"| {t(g('lttng_start_cli_median_ns'))} "
                           f"| {count(g('cycles_measured'))} / {count(g('cycles_perturbed'))} |")
        return "\n".join(out)

    def write_plot_data(self, outdir):
        nan = lambda x: "NaN" if x is None else f"{x:.6g}"
        with open(os.path.join(outdir, "stall.dat"), "w") as f:
            f.write("# methods lf_max lf_p999 lf_p99 gl_max gl_p999 gl_p99 lf_idle_max\n")
            for n in self.sizes:
                g = lambda v, m: self.get("blocking", "stall", v, n, m)
                f.write(" ".join([str(n)] + [nan(g(v, f"publish_{q}_ns")) for v in (LF, GL)
                                             for q in ("max", "p999", "p99")] +
                                 [nan(g(LF, "publish_max_ns_idle"))]) + "\n")
        with open(os.path.join(outdir, "rate.dat"), "w") as f:
            f.write("# methods lf_blocking gl_blocking raw_blocking lf_discard gl_discard raw_discard\n")
            for n in self.sizes:
                f.write(" ".join([str(n)] + [nan(self.get(ch, "rate", v, n, "records_per_s_best"))
                                             for ch in ("blocking", "discard")
                                             for v in (LF, GL, RAW)]) + "\n")

    def perturbed(self):
        out = []
        for (ch, meas, var, n, met), seen in sorted(self.rows.items()):
            if met != "enables_seen":
                continue
            want = self.rows.get((ch, meas, var, n, "enables_expected"))
            if want is not None and seen != want:
                out.append(f"- {meas} / {var} / {n:,} methods: {seen:.0f} ENABLE requests seen, "
                           f"{want:.0f} explained by its own session")
        if not out:
            return ("Every measure saw exactly the ENABLE requests its own sessions explain: no other "
                    "session flipped the letw tracepoints during the run.")
        return ("**Perturbed measures.** LTTng's enabled state is per tracepoint and machine-wide: "
                "another session enabling letw events — even filtered on another vpid, as the "
                "project's e2e tests do — flips them in our process too, runs passes we did not ask "
                "for and can hide our own start. These measures saw such requests; read their "
                "figures with care:\n\n" + "\n".join(out))

    def markdown(self, notes):
        m = self.meta
        return f"""# lttng-etw benchmark results

Generated by `bench/run.sh` ({m.get('mode')} mode, {m.get('elapsed')}) on {m.get('date')}, commit {m.get('commit')}.

**Machine:** {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory')} RAM, Linux {m.get('kernel')};
{m.get('lttng')}, lttng-ust {m.get('lttng_ust')}, liburcu {m.get('liburcu')}. Shared and noisy: compare
variants through the ratios measured in this same run, not across runs.

**Channels** (one `bench` user-space channel per session, events filtered on the process's vpid):
- blocking: {m.get('blocking')}
- discard: {m.get('discard')}

{self.perturbed()}

`lockfree` is liblttng-etw; `globallock` is the same sources built with one mutex taken by every
publish/unpublish and held for a whole rundown walk (the design lttng-etw replaces); `raw` fires the
same `letw_rundown:method_dcstart` payloads from a flat array through the same probe object.

## 1. Publish stall while rundowns run back to back

{m.get('stall_threads')} JIT thread(s) unpublish/publish continuously (no pause) while a driver thread runs
`letw_capture_state(RUNDOWN_START|JIT_RUNDOWN, wait=1)` back to back for {m.get('stall_seconds')} s (at least
two passes) inside a started session enabling `letw_rundown:*` on the blocking channel. Each call is
timed with CLOCK_MONOTONIC. "no rundown" is the same churn just before the passes: this machine's
scheduling noise floor. Ratio = global-lock / lock-free. A global lock stalls about one call per
pass, so its percentiles over all calls understate it: look at the publishes completed per second
while rundowns run, and at the second table, which counts the calls that took over 1 ms and the
share of the rundown phase the JIT thread spent in them, and split the JIT thread's wall time over
the rundown phase by the kernel's own accounting (`/proc/thread-self/schedstat`): running, runnable
but waiting for a CPU (preempted: two cores shared by the JIT thread, the walker, the call_rcu
worker and lttng-consumerd), and asleep — blocked on a lock.

{self.stall_table()}

![publish stall](stall.png)

{self.stall_detail()}

## 2. Rundown rate (records/s) against the raw-loop limit

Best of {m.get('passes')} passes, no churn; lock-free and global-lock are timed from the capture request to
the pass's Complete event (Init, pin phase, emission, Complete). Rates from runs that discarded
or lost events are not reported (—).

{self.rate_table()}

![rundown rate](rate.png)

## 3. Publish cost (median / mean)

{m.get('ops')} timed `letw_method_publish` calls into a table of N methods (an untimed unpublish keeps
the size at N), tracing off (no session) and on (started session recording `letw_runtime:*`,
blocking channel), against `cds_lfht_add_unique` of the same key with a malloc'd node (urcu-bp).
The last column is the mean publish time while filling the table to N (stall runs).

{self.pubcost_table()}

Mean publish time while filling the table from empty to N, over every run of this report that
filled a table (stall, rate, pubcost, latency):

{self.populate_table()}

## 4. Memory

From `mallinfo2()` deltas (all arenas, mmap'd blocks included) after filling the table; "names
excluded" uses a 1-byte name and no namespace/signature. Deferred frees: peak of
`letw_get_stats().deferred_frees_pending` sampled every 1 ms during the stall runs' passes
(records unpublished but not yet freed: waiting for a grace period or pinned by the walker).

{self.memory_table()}

## 5. Enable → DCStartInit latency

CLOCK_MONOTONIC read right before spawning `lttng start`, against the `dcstart_init` event's
timestamp (LTTng-UST's clock is CLOCK_MONOTONIC at 1 GHz: the raw cycle count printed by
`babeltrace2 --clock-cycles` is the timestamp without the clock class offset). Includes the
`lttng` CLI itself, sessiond pushing the enablement and the control thread's 5 ms poll.

{self.latency_table()}

## Notes from the run

```
{notes}
```
"""


def write_gnuplot(outdir):
    with open(os.path.join(outdir, "plots.gp"), "w") as f:
        f.write("""# Generated by bench/report.py; run in the results directory.
set datafile missing 'NaN'
set logscale xy
set grid
set key outside right top
set xlabel 'methods in the table'
set xtics ('10^4' 10000, '10^5' 100000, '10^6' 1000000)
set xrange [5000:2000000]
do for [fmt in 'png svg'] {
  if (fmt eq 'png') { set terminal pngcairo size 900,500 font ',10' } else { set terminal svg size 900,500 }
  set output 'stall.'.fmt
  set title 'Publish latency while rundowns run back to back'
  set ylabel 'publish latency (ns)'
  plot 'stall.dat' u 1:5 w lp lw 2 pt 7 t 'global lock: max', \\
       '' u 1:6 w lp lw 1 pt 6 t 'global lock: p99.9', \\
       '' u 1:2 w lp lw 2 pt 5 t 'lock-free: max', \\
       '' u 1:3 w lp lw 1 pt 4 t 'lock-free: p99.9', \\
       '' u 1:8 w lp lw 1 dt 2 pt 1 t 'lock-free: max, no rundown'
  set output 'rate.'.fmt
  set title 'Rundown rate'
  set ylabel 'records/s'
  unset logscale y
  set yrange [0:*]
  plot 'rate.dat' u 1:4 w lp lw 2 pt 7 t 'raw loop, blocking', \\
       '' u 1:2 w lp lw 2 pt 5 t 'lock-free, blocking', \\
       '' u 1:3 w lp lw 1 pt 9 t 'global lock, blocking', \\
       '' u 1:7 w lp lw 2 dt 2 pt 6 t 'raw loop, discard', \\
       '' u 1:5 w lp lw 2 dt 2 pt 4 t 'lock-free, discard', \\
       '' u 1:6 w lp lw 1 dt 2 pt 8 t 'global lock, discard'
  set logscale y
  set yrange [*:*]
}
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--notes", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rep = Report(load(a.csv), meta_of(a.meta))
    with open(a.notes) as f:
        notes = "".join(line[2:] if line.startswith("# ") else line for line in f).rstrip()
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(rep.markdown(notes))
    rep.write_plot_data(a.out)
    write_gnuplot(a.out)


if __name__ == "__main__":
    main()
