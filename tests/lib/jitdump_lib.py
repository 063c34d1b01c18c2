# SPDX-License-Identifier: MIT
"""What the jitdump checkers share: the line tables a trace carries, read
with bt2 independently of the C sink, and `perf script -F ip,sym,srcline`
output."""
import bisect
import os
import re

import bt2

from letw_trace import payload

CODE = ('letw_runtime:method_load', 'letw_rundown:method_dcstart', 'letw_rundown:method_dcend')
LINES = ('letw_runtime:method_lines', 'letw_rundown:method_lines_start',
         'letw_rundown:method_lines_end')


def line_tables(trace):
    """{(code_start, method_id, version): (size, name, [(off, line, file)])}:
    every code version with a line table, its innermost row per offset."""
    loads, rows = {}, {}
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is not bt2._EventMessageConst:
            continue
        if msg.event.name not in CODE and msg.event.name not in LINES:
            continue
        name, ev = msg.event.name, payload(msg.event)
        key = (int(ev['code_start']), int(ev['method_id']), int(ev['version_id']))
        if name in CODE:
            loads[key] = (int(ev['code_size']), str(ev['name']))
            continue
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
        out[key] = loads[key] + (sorted((o,) + best[o][1:] for o in best),)
    return out


def table_of(tables, ip, name):
    """(code_start, rows) of the one code version named `name` holding ip."""
    cand = [(k[0], v[2]) for k, v in tables.items()
            if k[0] <= ip < k[0] + v[0] and v[1] == name]
    return cand[0] if len(cand) == 1 else (None, None)


def expected_srcline(start, rows, ip):
    """perf's srcline for ip per the table: 'basename:line' (or None)."""
    i = bisect.bisect_right([r[0] for r in rows], ip - start) - 1
    return '%s:%d' % (os.path.basename(rows[i][2]), rows[i][1]) if i >= 0 else None


def srcline_samples(path):
    """[ip, sym, srcline or None] of `perf script -F ip,sym,srcline`."""
    recs, cur = [], None
    for line in open(path, errors='replace'):
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
    return recs
