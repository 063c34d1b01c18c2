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
import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from jitdump_lib import expected_srcline, line_tables, srcline_samples, table_of  # noqa: E402


def loops(script):
    hot, out = {}, {}
    for n, line in enumerate(open(script), 1):
        m = re.search(r'-- (HOT|END) (\w+)', line)
        if m and m.group(1) == 'HOT':
            hot[m.group(2)] = n
        elif m:
            out[m.group(2)] = (hot[m.group(2)], n)
    return out


def main():
    trace, script, srcline_out = sys.argv[1:4]
    lp = loops(script)
    tabs = line_tables(trace)
    base = os.path.basename(script)
    n = exact = in_loop = out_loop = 0
    per_loop = collections.defaultdict(collections.Counter)
    wrong = collections.Counter()
    for ip, sym, sl in srcline_samples(srcline_out):
        m = re.search(r'::(trace#\d+ @\S+:(\d+))\((root|side[^)]*)\)', sym)
        if not m:
            continue
        start, rows = table_of(tabs, ip, m.group(1))
        if start is None:
            continue
        n += 1
        want = expected_srcline(start, rows, ip)
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
