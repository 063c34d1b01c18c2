#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn the rows bench/run.sh collected (results.csv) into results.md, the
plot data files and plots.gp. Standard library only; called by run.sh."""
import argparse
import os

from report_fmt import count, div, load, meta_of, mib, rate, ratio, t, verdict, write_gnuplot

LF, GL, RAW = "lockfree", "globallock", "raw"
# Stall session layouts, by the channel tag run.sh gives their rows.
CONFIGS = (("blocking", "rundown-only"), ("split", "split"), ("shared", "shared"))
CONFIG_TEXT = {
    "rundown-only": "rundown events only (blocking channel); runtime events not recorded",
    "split": "rundown events in a blocking channel, runtime events in a discard channel of their own",
    "shared": "rundown and runtime events in one blocking channel",
}


class Report:
    def __init__(self, rows, meta):
        self.rows, self.meta = rows, meta
        self.sizes = sorted({k[3] for k in rows if k[1] in ("stall", "rate", "pubcost", "memory")})

    def get(self, channel, measure, variant, n, metric):
        return self.rows.get((channel, measure, variant, n, metric))

    def st(self, ch, v, n, m):
        return self.get(ch, "stall", v, n, m)

    # --- the issue #10 targets --------------------------------------------
    def targets(self):
        sizes = self.sizes
        head = "| measure | target | " + " | ".join(f"{n:,} methods" for n in sizes) + " |"
        out = [head, "|---|---|" + "---|" * len(sizes)]

        def line(name, target, cells):
            out.append(f"| {name} | {target} | " + " | ".join(cells) + " |")

        for ch, cfg in CONFIGS:
            cells = []
            for n in sizes:
                v = self.st(ch, LF, n, "jit_vol_cs")
                idle = self.st(ch, LF, n, "jit_vol_cs_idle")
                if v is None:
                    cells.append("—")
                    continue
                status = verdict(v, lambda x: x == 0) if cfg != "shared" else "session config"
                cells.append(f"{count(v)} ({count(idle)} idle) — {status}")
            line(f"JIT thread voluntary context switches during rundowns, `{cfg}`", "0", cells)
        for ch, cfg in CONFIGS[:2]:
            cells = []
            for n in sizes:
                a, b = self.st(ch, LF, n, "publish_max_ns"), self.st(ch, LF, n, "publish_max_ns_idle")
                r = div(a, b)
                cells.append("—" if r is None else
                             f"{t(a)} / {t(b)} = {ratio(a, b)} — {verdict(r, lambda x: x <= 2)}")
            line(f"publish max during rundowns / without (same run, interleaved windows), `{cfg}`",
                 "≤ 2×", cells)
        for chan in ("blocking", "discard"):
            cells = []
            for n in sizes:
                a = self.get(chan, "rate", LF, n, "records_per_s_best")
                b = self.get(chan, "rate", RAW, n, "records_per_s_best")
                r = div(a, b)
                cells.append("—" if r is None else
                             f"{rate(a)} / {rate(b)} = {ratio(a, b)} — {verdict(r, lambda x: x >= 0.8)}")
            line(f"rundown rate / raw tracepoint loop, {chan} channel", "≥ 0.8×", cells)
        cells = []
        for n in sizes:
            a = self.get("blocking", "rate", LF, n, "section_max_ns")
            b = self.st("blocking", LF, n, "section_max_ns")
            worst = max((x for x in (a, b) if x is not None), default=None)
            cells.append("—" if worst is None else
                         f"{t(a)} no churn / {t(b)} churn — {verdict(worst, lambda x: x <= 1e6)}")
        line("longest read-side section of a pass (letw_get_store_stats)", "≤ 1 ms", cells)
        cells = []
        for n in sizes:
            a = self.get("blocking", "pubcost", LF, n, "publish_off_median_ns")
            b = self.get("none", "pubcost", "cds_lfht", n, "insert_median_ns")
            c = self.get("none", "pubcost", "cds_lfht", n, "insert_prealloc_median_ns")
            r = div(a, b)
            cells.append("—" if r is None else
                         f"{t(a)} / {t(b)} = {ratio(a, b)} — {verdict(r, lambda x: x <= 1.5)} "
                         f"(node preallocated: {t(c)}, {ratio(a, c)})")
        line("publish median, tracing off / `cds_lfht_add_unique` of the same key (malloc'd node)",
             "≤ 1.5×", cells)
        # bytes_in_use counts the store (a 64-byte slot each, strings,
        # contexts); liburcu's cds_lfht bucket arrays are malloc'd beside
        # it and grow with the table: judged with them too, so that a
        # store that holds 64 B a slot by construction is not the whole
        # verdict.
        def index(n, s):
            return self.get("none", "memory", LF, n, f"heap_per_method{s}")
        cells = []
        for n in sizes:
            a = self.get("none", "memory", LF, n, "bytes_per_method_no_names")
            h = index(n, "_no_names")
            cells.append("—" if a is None else
                         f"store {a:.1f} B — {verdict(a, lambda x: x <= 64)}" +
                         ("" if h is None else
                          f"; with the hash-table index {a + h:.1f} B — "
                          f"{verdict(a + h, lambda x: x <= 64)}"))
        line("bytes per method, 1-byte name (bytes_in_use / live methods; + malloc'd index)",
             "≤ 64 B", cells)
        cells = []
        for n in sizes:
            a = self.get("none", "memory", LF, n, "bytes_per_method_with_names")
            u = self.get("none", "memory", LF, n, "unique_string_bytes_per_method")
            h = index(n, "_with_names")
            cells.append("—" if a is None or u is None else
                         f"store {a:.1f} B vs 64 + {u:.1f} = {64 + u:.1f} B — "
                         f"{verdict(a, lambda x: x <= 64 + u)}" +
                         ("" if h is None else
                          f"; with the index {a + h:.1f} B — "
                          f"{verdict(a + h, lambda x: x <= 64 + u)}"))
        line("bytes per method, with names", "≤ 64 B + unique string bytes", cells)
        for ch, cfg in CONFIGS[:1]:
            cells = []
            for n in sizes:
                a, b = self.st(ch, LF, n, "bytes_in_use_peak"), self.st(ch, LF, n, "bytes_in_use_peak_idle")
                c, d = self.st(ch, LF, n, "rss_peak"), self.st(ch, LF, n, "rss_peak_idle")
                r = div(a, b)
                cells.append("—" if r is None else
                             f"in use {mib(a)} / {mib(b)} = {ratio(a, b)} — "
                             f"{verdict(r, lambda x: x <= 1.25)}; RSS {mib(c)} / {mib(d)} = {ratio(c, d)}")
            # The RSS ratio is shown, not judged: the store unmaps nothing
            # before shutdown and each idle window follows a rundown
            # window, so its idle peak is never below the rundown peak.
            line("memory held during passes under churn / the same churn without passes "
                 "(peaks: bytes_in_use, judged; RSS, which never falls, not judged)",
                 "≤ 1.25× (at 10^6)", cells)
        cells = []
        for n in sizes:
            a = self.get("none", "bigrange", LF, n, "publish_big_median_ns")
            m = self.get("none", "bigrange", LF, n, "publish_big_max_ns")
            cells.append("—" if a is None else f"{t(a)} (max {t(m)}) — {verdict(a, lambda x: x < 1e7)}")
        line("publish one 4 GiB − 1 range (median of 7)", "< 10 ms", cells)
        return "\n".join(out)

    def slow_grows(self):
        out = ["| run | " + " | ".join(f"{n:,}" for n in self.sizes) + " |",
               "|---|" + "---:|" * len(self.sizes)]
        spec = [("stall rundown-only, fill / churn", "blocking", "stall", ("slow_grows_fill", "slow_grows_churn")),
                ("stall split, fill / churn", "split", "stall", ("slow_grows_fill", "slow_grows_churn")),
                ("stall shared, fill / churn", "shared", "stall", ("slow_grows_fill", "slow_grows_churn")),
                ("rate (blocking), fill", "blocking", "rate", ("slow_grows_fill",)),
                ("pubcost, fill / timed publishes", "blocking", "pubcost", ("slow_grows_fill", "slow_grows_timed")),
                ("memory, 1-byte names / with names (fill)", "none", "memory",
                 ("slow_grows_no_names", "slow_grows_with_names")),
                ("bigrange, fill / timed", "none", "bigrange", ("slow_grows_fill", "slow_grows_timed"))]
        for label, ch, meas, metrics in spec:
            cells = []
            for n in self.sizes:
                vals = [self.get(ch, meas, LF, n, m) for m in metrics]
                cells.append(" / ".join(count(v) for v in vals))
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        return "\n".join(out)

    # --- detail tables ------------------------------------------------------
    def stall_runs(self, configs=CONFIGS):
        """(n, config name, variant, getter) for every stall run there is."""
        for n in self.sizes:
            for ch, cfg in configs:
                for v in (LF, GL):
                    g = (lambda c, vv, nn: lambda m: self.st(c, vv, nn, m))(ch, v, n)
                    if g("passes") is not None:
                        yield n, cfg, v, g

    def stall_table(self):
        out = ["| methods | session | variant | publish max (rundown / idle) | p99.9 (rundown / idle) "
               "| p99 | p50 | calls > 1 ms (rundown / idle) | publishes/s during rundowns "
               "| passes (in idle windows) / windows | pass mean / max |",
               "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n, cfg, v, g in self.stall_runs(CONFIGS + (("perf-rundown-only", "rundown-only, under perf"),
                                                ("perf-shared", "shared, under perf"))):
            calls = [None if g(f"publish_over_1ms{s}") is None else
                     g(f"publish_over_1ms{s}") + (g(f"unpublish_over_1ms{s}") or 0)
                     for s in ("", "_idle")]
            thr = div(g("publish_count"), g("rundown_phase_ns"))
            out.append(f"| {n:,} | {cfg} | {v} | {t(g('publish_max_ns'))} / {t(g('publish_max_ns_idle'))} "
                       f"| {t(g('publish_p999_ns'))} / {t(g('publish_p999_ns_idle'))} "
                       f"| {t(g('publish_p99_ns'))} | {t(g('publish_p50_ns'))} "
                       f"| {count(calls[0])} / {count(calls[1])} "
                       f"| {'—' if thr is None else f'{thr * 1e9:,.0f}'} "
                       f"| {count(g('passes'))} ({count(g('passes_idle'))}) / {count(g('windows'))} "
                       f"| {t(g('pass_mean_ns'))} / {t(g('pass_max_ns'))} |")
        return "\n".join(out)

    def kernel_table(self):
        out = ["| methods | session | variant | voluntary switches (rundown / idle) "
               "| involuntary (rundown / idle) | page faults (rundown / idle) "
               "| JIT thread running / waiting for a CPU / asleep, rundown windows "
               "| same, idle windows |",
               "|---:|---|---|---:|---:|---:|---|---|"]

        def split(g, s):
            wall, cpu, wait = (g(f"jit_{k}_ns{s}") for k in ("wall", "cpu", "runqueue_wait"))
            if not wall or cpu is None or wait is None:
                return "—"
            return (f"{100 * cpu / wall:.0f} % / {100 * wait / wall:.0f} % / "
                    f"{100 * max(0.0, wall - cpu - wait) / wall:.0f} %")

        for n, cfg, v, g in self.stall_runs():
            out.append(f"| {n:,} | {cfg} | {v} | {count(g('jit_vol_cs'))} / {count(g('jit_vol_cs_idle'))} "
                       f"| {count(g('jit_invol_cs'))} / {count(g('jit_invol_cs_idle'))} "
                       f"| {count(g('jit_minflt'))} / {count(g('jit_minflt_idle'))} "
                       f"| {split(g, '')} | {split(g, '_idle')} |")
        return "\n".join(out)

    def walker_table(self):
        out = ["| methods | session | variant | records emitted | skipped (raced) | longest read-side "
               "section (these passes / any pass) | passes with a section > 1 ms "
               "| discarded events (rundown channel / runtime channel) |",
               "|---:|---|---|---:|---:|---:|---:|---:|"]
        for n, cfg, v, g in self.stall_runs():
            out.append(f"| {n:,} | {cfg} | {v} | {count(g('emitted'))} | {count(g('skipped_raced'))} "
                       f"| {t(g('section_max_ns'))} / {t(g('section_max_any_pass_ns'))} "
                       f"| {count(g('passes_section_over_1ms'))} of {count(g('passes'))} "
                       f"| {count(g('discarded_events'))} / {count(g('runtime_discarded_events'))} |")
        return "\n".join(out)

    def store_memory_table(self):
        out = ["| methods | session | variant | bytes_in_use after fill | peak in rundown windows "
               "| peak in idle windows | ratio | RSS after fill | RSS peak rundown / idle | ratio "
               "| pending frees, peak rundown / idle | committed at the end |",
               "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n, cfg, v, g in self.stall_runs():
            out.append(f"| {n:,} | {cfg} | {v} | {mib(g('bytes_in_use_filled'))} "
                       f"| {mib(g('bytes_in_use_peak'))} | {mib(g('bytes_in_use_peak_idle'))} "
                       f"| {ratio(g('bytes_in_use_peak'), g('bytes_in_use_peak_idle'))} "
                       f"| {mib(g('rss_filled'))} | {mib(g('rss_peak'))} / {mib(g('rss_peak_idle'))} "
                       f"| {ratio(g('rss_peak'), g('rss_peak_idle'))} "
                       f"| {count(g('pending_free_peak'))} / {count(g('pending_free_peak_idle'))} "
                       f"| {mib(g('bytes_committed_end'))} |")
        return "\n".join(out)

    def rate_table(self):
        out = ["| methods | channel | lock-free | global-lock | raw loop (limit) | lock-free / raw "
               "| global-lock / raw | longest read-side section (lf / gl) | sections per pass "
               "| walker (lf): CPU per section, preempted / slept per pass, run-queue wait "
               "| discarded (lf / gl / raw) |",
               "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        for n in self.sizes:
            for ch in ("blocking", "discard"):
                r = {v: self.get(ch, "rate", v, n, "records_per_s_best") for v in (LF, GL, RAW)}
                d = {v: self.get(ch, "rate", v, n, "discarded_events") for v in (LF, GL, RAW)}
                if all(x is None for x in d.values()):
                    continue
                rs = [self.get(ch, "rate", v, n, "section_max_ns") for v in (LF, GL)]
                g = lambda m: self.get(ch, "rate", LF, n, m)
                npass = int(self.meta.get("passes") or 0)
                secs = g("sections_per_pass")
                walker = "—"
                if g("walker_cpu_ns") is not None and secs and npass:
                    walker = (f"{t(g('walker_cpu_ns') / (secs * npass))}, "
                              f"{g('walker_invol_cs') / npass:,.0f} / {g('walker_vol_cs') / npass:,.0f}, "
                              f"{100 * g('walker_runqueue_wait_ns') / g('walker_wall_ns'):.0f} % of the passes")
                out.append(f"| {n:,} | {ch} | {rate(r[LF])} | {rate(r[GL])} | {rate(r[RAW])} "
                           f"| {ratio(r[LF], r[RAW])} | {ratio(r[GL], r[RAW])} "
                           f"| {t(rs[0])} / {t(rs[1])} "
                           f"| {count(secs)} | {walker} "
                           f"| {count(d[LF])} / {count(d[GL])} / {count(d[RAW])} |")
        return "\n".join(out)

    def pubcost_table(self):
        g = lambda v, n, m: self.get("blocking", "pubcost", v, n, m)
        lfht = lambda n, m: self.get("none", "pubcost", "cds_lfht", n, m)
        out = ["| methods | lock-free off | lock-free on | global-lock off | global-lock on "
               "| cds_lfht, malloc'd node | cds_lfht, preallocated node "
               "| lock-free off / malloc'd | / preallocated | populate, mean per method (lf / gl) |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n in self.sizes:
            cells = []
            for v in (LF, GL):
                for m in ("off", "on"):
                    med, mean = g(v, n, f"publish_{m}_median_ns"), g(v, n, f"publish_{m}_mean_ns")
                    cells.append("—" if med is None else f"{t(med)} / {t(mean)}")
            for m in ("insert", "insert_prealloc"):
                med, mean = lfht(n, f"{m}_median_ns"), lfht(n, f"{m}_mean_ns")
                cells.append("—" if med is None else f"{t(med)} / {t(mean)}")
            off = g(LF, n, "publish_off_median_ns")
            pop = [self.st("blocking", v, n, "populate_ns_per_method") for v in (LF, GL)]
            out.append(f"| {n:,} | " + " | ".join(cells) +
                       f" | {ratio(off, lfht(n, 'insert_median_ns'))}"
                       f" | {ratio(off, lfht(n, 'insert_prealloc_median_ns'))}"
                       f" | {t(pop[0])} / {t(pop[1])} |")
        return "\n".join(out)

    def memory_table(self):
        g = lambda v, n, m: self.get("none", "memory", v, n, m)
        out = ["| methods | variant | names | bytes_in_use / method | committed / method "
               "| malloc'd / method (not in bytes_in_use) | RSS delta / method | unique string bytes |",
               "|---:|---|---|---:|---:|---:|---:|---:|"]
        fmt = lambda x: "—" if x is None else f"{x:.1f}"
        for n in self.sizes:
            for v in (LF, GL):
                for s, label in (("_no_names", "1-byte name"), ("_with_names", "realistic")):
                    if g(v, n, f"bytes_per_method{s}") is None:
                        continue
                    uniq = "0 (inline)" if s == "_no_names" else fmt(g(v, n, "unique_string_bytes_per_method"))
                    out.append(f"| {n:,} | {v} | {label} | {fmt(g(v, n, f'bytes_per_method{s}'))} "
                               f"| {fmt(g(v, n, f'committed_per_method{s}'))} "
                               f"| {fmt(g(v, n, f'heap_per_method{s}'))} "
                               f"| {fmt(g(v, n, f'rss_per_method{s}'))} | {uniq} |")
        return "\n".join(out)

    def bigrange_table(self):
        g = lambda n, m: self.get("none", "bigrange", LF, n, m)
        out = ["| methods | publish 4 GiB − 1, median / max | unpublish it, median / max "
               "| small publish, median / max | small publish while it is live, median / max "
               "| slots scanned (committed) |",
               "|---:|---:|---:|---:|---:|---:|"]
        for n in self.sizes:
            if g(n, "publish_big_median_ns") is None:
                continue
            out.append(f"| {n:,} | {t(g(n, 'publish_big_median_ns'))} / {t(g(n, 'publish_big_max_ns'))} "
                       f"| {t(g(n, 'unpublish_big_median_ns'))} / {t(g(n, 'unpublish_big_max_ns'))} "
                       f"| {t(g(n, 'publish_small_median_ns'))} / {t(g(n, 'publish_small_max_ns'))} "
                       f"| {t(g(n, 'publish_small_with_big_median_ns'))} / "
                       f"{t(g(n, 'publish_small_with_big_max_ns'))} | {count(g(n, 'slots_committed'))} |")
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

    def ctxsw_table(self):
        out = ["| profile | slept (rundown / idle) | preempted (rundown / idle) | page faults (rundown / idle) "
               "| slowest publish, JIT thread switched out inside it (rundown / idle) "
               "| read-side sections > 1 ms: walker switched out inside / all |",
               "|---|---:|---:|---:|---:|---:|"]
        seen = False
        for (ch, meas, var, n, met) in sorted(self.rows):
            if meas != "ctxsw" or met != "slept_rundown":
                continue
            seen = True
            g = lambda m: self.get(ch, "ctxsw", var, n, m)
            out.append(f"| {var}, {n:,} methods, `{ch[5:]}` | {count(g('slept_rundown'))} / {count(g('slept_idle'))} "
                       f"| {count(g('preempted_rundown'))} / {count(g('preempted_idle'))} "
                       f"| {count(g('faults_rundown'))} / {count(g('faults_idle'))} "
                       f"| {count(g('pubmax_rundown_switched_out'))} / {count(g('pubmax_idle_switched_out'))} "
                       f"| {count(g('sections_over_1ms_switched_out'))} / {count(g('sections_over_1ms'))} |")
        return "\n".join(out) if seen else "No profile was recorded (see the notes)."

    def write_plot_data(self, outdir):
        nan = lambda x: "NaN" if x is None else f"{x:.6g}"
        with open(os.path.join(outdir, "stall.dat"), "w") as f:
            f.write("# methods lf_max lf_p999 lf_p99 gl_max gl_p999 gl_p99 lf_idle_max\n")
            for n in self.sizes:
                g = lambda v, m: self.st("blocking", v, n, m)
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
                out.append(f"- {meas} ({ch}) / {var} / {n:,} methods: {seen:.0f} ENABLE requests seen, "
                           f"{want:.0f} explained by its own session")
        if not out:
            return ("Every measure saw exactly the ENABLE requests its own sessions explain: no other "
                    "session flipped the letw tracepoints during the run.")
        return ("**Perturbed measures.** LTTng's enabled state is per tracepoint and machine-wide: "
                "another session enabling letw events — even filtered on another vpid, as the "
                "project's e2e tests do — flips them in our process too: publishes then fire the "
                "runtime events (and copy code bytes with `process_vm_readv` when "
                "`method_code_bytes` is on) with \"tracing off\", and passes emit what that session "
                "asked for. These measures saw such requests even after one retry; read their "
                "figures with care:\n\n" + "\n".join(out))

    def markdown(self, notes, ctxsw_md):
        m = self.meta
        return f"""# lttng-etw benchmark results

Generated by `bench/run.sh` ({m.get('mode')} mode, {m.get('elapsed')}) on {m.get('date')}, commit {m.get('commit')}.

**Machine:** {m.get('cpu')}, {m.get('cores')} cores, {m.get('memory')} RAM, Linux {m.get('kernel')};
{m.get('lttng')}, lttng-ust {m.get('lttng_ust')}, liburcu {m.get('liburcu')}.
**Load average** (1, 5, 15 min) at the start: {m.get('load_start')}, at the end: {m.get('load_end')}.
Shared and noisy: compare variants through the ratios measured in this same run, not across runs.

**Channels** (per-UID buffers, events filtered on the process's vpid, vpid tracked):
- blocking: {m.get('blocking')}
- discard: {m.get('discard')}
- split sessions' runtime channel: {m.get('split_runtime')}

{self.perturbed()}

`lockfree` is liblttng-etw; `globallock` is the same sources built with one mutex taken by every
publish/unpublish and held for a whole rundown walk (the design lttng-etw replaces); `raw` fires the
same `letw_rundown:method_dcstart` payloads from a flat array through the same probe object.

## Targets (issue #10)

Each figure is measured in this run, every ratio against a baseline of this run. Stall sessions
(`--config`): `rundown-only` = {CONFIG_TEXT['rundown-only']} (the library alone); `split` =
{CONFIG_TEXT['split']}; `shared` = {CONFIG_TEXT['shared']} — there the JIT thread's own load/unload
events wait in lttng-ust when the walker fills the channel: a property of that session
configuration, not of the library, reported but not judged against the target.

{self.targets()}

How often publishers hit the record store's slow path (`letw_store_stats.slow_grows`: the free list
was empty, so the publisher committed memory itself — an `mprotect` call), per run:

{self.slow_grows()}

## 1. The JIT thread while rundowns run back to back

{m.get('stall_threads')} JIT thread(s) unpublish/publish continuously (no pause). The driver alternates
windows: rundown windows of about {m.get('stall_seconds')}/3 s running
`letw_capture_state(RUNDOWN_START|JIT_RUNDOWN, wait=1)` back to back (at least one pass each, {m.get('stall_seconds')} s
in all), each followed by an idle window as long: the same churn with no pass, interleaved so both
see the same load from the rest of the machine. Each call is timed with CLOCK_MONOTONIC. At every
window boundary the main thread reads the JIT thread's `/proc/self/task/TID/status` (voluntary
context switches: it slept — a lock, a blocking call; involuntary: preempted), `stat` (page faults)
and `schedstat` (time on a CPU, time runnable but waiting for one; the rest of the wall time it was
asleep). The JIT thread itself makes no system call for the measurement.

{self.stall_table()}

![publish stall](stall.png)

{self.kernel_table()}

Passes, from the stall runs (`letw_get_store_stats`: longest read-side section of each pass;
`letw_get_stats`: emitted, skipped):

{self.walker_table()}

Memory held by the store while passes run under churn, against the idle windows of the same churn
(peaks sampled every 1 ms; `bytes_in_use` = slots and chunks held by live and not-yet-freed
records; RSS includes lttng-ust's ring buffers, mapped when the session starts):

{self.store_memory_table()}

## 2. Context-switch profile of the JIT thread

`perf record -e sched:sched_switch -e page-faults -c 1 --call-graph dwarf -k mono -t TID` on the JIT
thread for a whole stall run at {int(m.get('profile_methods') or 0):,} methods (profiling costs
CPU: these runs' latency figures are listed under "under perf" above and are not the targets'); every
switch-out and fault is attributed to its window by timestamp. A switch with `prev_state` R is a
preemption (still runnable); anything else means the thread went to sleep — which the publish
path must never do. The global-lock run is the check that the method sees lock waits when there
are some.

{self.ctxsw_table()}

{ctxsw_md}

## 3. Rundown rate (records/s) against the raw-loop limit

Best of {m.get('passes')} passes, no churn; lock-free and global-lock are timed from the capture request to
the pass's Complete event (Init, the slot-order walk, emission, Complete). Rates from runs that
discarded or lost events are not reported (—).

{self.rate_table()}

The walker column reads the library's control thread ("letw-control") in
`/proc/self/task/TID/{{status,schedstat}}` around the timed passes: its CPU time per section (copying
inside the section and emitting after it), how often it was preempted or slept per pass, and the
share of the passes it spent runnable but waiting for a CPU. A read-side section's length is wall
time: one preemption inside it (a CFS time slice is a few ms on this machine) makes it that long.

![rundown rate](rate.png)

## 4. Publish cost (median / mean)

{m.get('ops')} timed `letw_method_publish` calls into a table of N methods (an untimed unpublish keeps
the size at N), tracing off (no session) and on (started session recording `letw_runtime:*load`,
blocking channel), against `cds_lfht_add_unique` of the same key (code start, hashed by its 4 KiB
page like the library's table, table pre-sized to N, no auto-resize, urcu-bp) with a malloc'd node
— what a runtime keeping its own RCU table pays, the target's baseline — and with a preallocated
node (the table operation alone). The last column is the mean publish time while filling the table.

{self.pubcost_table()}

Mean publish time while filling the table from empty to N, over every run of this report that
filled a table:

{self.populate_table()}

## 5. Memory per method

`letw_get_store_stats().bytes_in_use / live methods` after filling a fresh table (no session): the
64-byte slots and the store chunks in use (out-of-line names, interned (namespace, signature)
contexts, continuation nodes of records crossing a page) at their size-class sizes. Not in it, and
shown next to it: what is malloc'd (liburcu's cds_lfht bucket arrays of the code and intern tables:
the `mallinfo2()` delta), and the RSS delta, which adds store memory committed ahead of demand but
still free. "1-byte name": the name `m` is stored inline in the slot, no namespace or signature.
Unique string bytes: each distinct string counted once (names are unique per method; the
namespaces and signatures repeat and are interned), NULs included.

{self.memory_table()}

## 6. Publishing one 4 GiB − 1 range

A record over 64 pages is "big": no per-page nodes, its overlap check is a scan of the store's
slots. Seven publishes (each unpublished before the next) into a table of N methods, tracing off;
then 2,000 small publishes (each unpublished at once) without and with a big record live, since
small publishes then look through the big-record registry.

{self.bigrange_table()}

## 7. Enable → DCStartInit latency

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


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--notes", required=True)
    ap.add_argument("--ctxsw", help="markdown written by ctxsw.py (concatenated)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rep = Report(load(a.csv), meta_of(a.meta))
    with open(a.notes) as f:
        notes = "".join(line[2:] if line.startswith("# ") else line for line in f).rstrip()
    ctxsw_md = ""
    if a.ctxsw and os.path.exists(a.ctxsw):
        with open(a.ctxsw) as f:
            ctxsw_md = f.read().rstrip()
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(rep.markdown(notes, ctxsw_md))
    rep.write_plot_data(a.out)
    write_gnuplot(a.out)


if __name__ == "__main__":
    main()
