#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""perf's source lines of LuaJIT traces, through a jitdump from the trace.

usage: check_lua_lines.py TRACE SCRIPT.lua SRCLINE_OUT

SRCLINE_OUT is `perf script -F ip,sym,srcline` after `perf inject --jit`.
For samples in a trace the host published with a line table:
  - >= 95% show exactly the innermost row of that table at the sample's
    offset (what the jitdump carried; perf read it back);
  - every sample in a root trace that starts inside a "HOT name" ... "END
    name" loop of SCRIPT shows a line of SCRIPT inside that loop (the
    table's lines are the bytecodes the trace recorded);
  - some loop shows two or more lines (finer than one name per trace).
"""
import bisect
import collections
import os
import re
import sys

import bt2


def loops(script):
    hot, out = {}, {}
    for n, line in enumerate(open(script), 1):
        m = re.search(r'-- (HOT|END) (\w+)', line)
        if m and m.group(1) == 'HOT':
            hot[m.group(2)] = n
        elif m:
            out[m.group(2)] = (hot[m.group(2)], n)
    return out


def tables(trace):
    loads, rows = {}, {}
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if not ev.name.startswith('letw_runtime:method_'):
            continue
        key = (int(ev['code_start']), int(ev['method_id']), int(ev['version_id']))
        if ev.name == 'letw_runtime:method_load':
            loads[key] = (int(ev['code_size']), str(ev['name']), str(ev['signature']))
        elif ev.name == 'letw_runtime:method_lines':
            files = str(ev['files']).split('\n')
            t = rows.setdefault(key, {})
            first = int(ev['row_first'])
            for j, (o, l, f, d) in enumerate(zip(ev['native_offsets'], ev['lines'],
                                                 ev['files_idx'], ev['inline_depths'])):
                t[first + j] = (int(o), int(d), int(l), files[int(f)])
    out = {}
    for key, t in rows.items():
        if key not in loads:
            continue
        best = {}
        for i in sorted(t):
            o, d, l, f = t[i]
            if o not in best or d >= best[o][0]:
                best[o] = (d, l, f)
        out[key] = loads[key] + (sorted((o, best[o][1], best[o][2]) for o in best),)
    return out


def main():
    trace, script, srcline_out = sys.argv[1:4]
    lp = loops(script)
    tabs = tables(trace)
    base = os.path.basename(script)
    recs, cur = [], None
    for line in open(srcline_out, errors='replace'):
        f = line.split(None, 1)
        if not f:
            continue
        if re.match(r'^\S+:\d+$', f[0]):
            if cur:
                cur[2] = f[0]
            continue
        try:
            ip = int(f[0], 16)
        except ValueError:
            continue
        cur = [ip, f[1].strip() if len(f) > 1 else '', None]
        recs.append(cur)
    n = exact = in_loop = out_loop = 0
    per_loop = collections.defaultdict(collections.Counter)
    wrong = collections.Counter()
    for ip, sym, sl in recs:
        m = re.search(r'::(trace#\d+ @\S+:(\d+))\((root|side[^)]*)\)', sym)
        if not m:
            continue
        cand = [(k, v) for k, v in tabs.items()
                if k[0] <= ip < k[0] + v[0] and v[1] == m.group(1)]
        if len(cand) != 1:
            continue
        n += 1
        (start, _, _), (_, _, sig, rows) = cand[0]
        i = bisect.bisect_right([r[0] for r in rows], ip - start) - 1
        want = '%s:%d' % (os.path.basename(rows[i][2]), rows[i][1]) if i >= 0 else None
        if sl == want:
            exact += 1
        else:
            wrong[(m.group(1), sl, want)] += 1
        if m.group(3) != 'root' or not sl or not sl.startswith(base + ':'):
            continue
        start_line, line = int(m.group(2)), int(sl.split(':')[1])
        for name, (lo, hi) in lp.items():
            if lo <= start_line <= hi:
                if lo <= line <= hi:
                    in_loop += 1
                    per_loop[name][line] += 1
                else:
                    out_loop += 1
                    wrong[(m.group(1), sl, 'a line of loop %s' % name)] += 1
    print('%d samples in traces with a line table: %d exactly the table\'s line; '
          'root traces of the loops: %d inside their loop, %d outside'
          % (n, exact, in_loop, out_loop))
    for name in sorted(per_loop):
        print('  loop %s %s: lines %s' % (name, lp[name], dict(sorted(per_loop[name].items()))))
    for (tr, sl, want), c in wrong.most_common(5):
        print('  %d samples in %s: perf says %s, expected %s' % (c, tr, sl, want))
    ok = (n >= 50 and exact >= 0.95 * n and in_loop > 0 and out_loop == 0 and
          any(len(c) >= 2 for c in per_loop.values()))
    sys.exit(0 if ok else 1)


main()
