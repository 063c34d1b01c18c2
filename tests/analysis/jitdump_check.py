#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks of perf's view of minijit code through a jitdump from the trace.

usage:
  jitdump_check.py reuse REUSE_FILE JIT_SCRIPT MAP_SCRIPT
      REUSE_FILE is letw-minijit's --reuse record; *_SCRIPT are
      `perf script -F time,ip,sym --ns` of the profile after
      `perf inject --jit` and of the raw profile with the perf map. Samples
      in the reused range before fn_0 was unpublished must be fn_0, after
      fn_3 was published fn_3. Prints both figures; fails unless the
      jitdump gets >= 95% of each side right and the map gets the earlier
      side wrong (a map has one name per range).
  jitdump_check.py annotate ANNOTATE_OUT HEX
      ANNOTATE_OUT is `perf annotate --stdio -s SYM`; HEX the bytes the JIT
      emitted. The instructions perf shows must be objdump's disassembly of
      those bytes, one for one.
  jitdump_check.py srcline TRACE SOURCE JIT_SCRIPT
      JIT_SCRIPT is `perf script -F ip,sym,srcline` after inject. No
      sample in minijit code may show a line outside the block of the
      function perf names, and >= 95% must show exactly the line of the
      line table the trace carries for that code (innermost frame).
"""
import bisect
import os
import re
import subprocess
import sys


def parse_time(tok):
    s, ns = tok.rstrip(':').split('.')
    return int(s) * 10**9 + int(ns.ljust(9, '0'))


def samples(path):
    """(time, ip, sym) of `perf script -F time,ip,sym --ns` lines."""
    out = []
    for line in open(path, errors='replace'):
        f = line.split(None, 2)
        if len(f) < 2 or not f[0].rstrip(':').replace('.', '').isdigit():
            continue
        try:
            ip = int(f[1], 16)
        except ValueError:
            continue
        out.append((parse_time(f[0]), ip, f[2].strip() if len(f) > 2 else ''))
    return out


def reuse(reuse_file, jit_script, map_script):
    old, new = [l.split() for l in open(reuse_file).read().splitlines()[:2]]
    addr, t_old, t_new = int(old[2], 16), int(old[4]), int(new[4])
    size = max(int(old[3]), int(new[3]))
    names = {'before': old[1], 'after': new[1]}

    def score(path):
        got = {'before': [0, 0], 'after': [0, 0]}  # right, wrong
        for t, ip, sym in samples(path):
            if not addr <= ip < addr + size or t_old <= t <= t_new:
                continue
            side = 'before' if t < t_old else 'after'
            right = re.search(r'::%s\(' % names[side], sym) is not None
            got[side][0 if right else 1] += 1
        return got

    jit, pmap = score(jit_script), score(map_script)
    for what, g in (('jitdump + perf inject --jit', jit), ('perf map (lttng-etw perfmap)', pmap)):
        print('%s: before the reuse %d right / %d wrong (%s), after %d right / %d wrong (%s)'
              % (what, g['before'][0], g['before'][1], names['before'],
                 g['after'][0], g['after'][1], names['after']))
    ok = True
    for side in ('before', 'after'):
        r, w = jit[side]
        if r + w < 20 or r < 0.95 * (r + w):
            print('FAIL: jitdump, %s the reuse: %d right of %d' % (side, r, r + w))
            ok = False
    r, w = pmap['before']
    if r + w < 20 or w < 0.5 * (r + w):
        print('FAIL: the perf map named the earlier code right (%d of %d): '
              'the test proves nothing' % (r, r + w))
        ok = False
    return ok


def norm(ops):
    # perf: "jne 94 <sym+0x14>", objdump: "jne 0x94"
    ops = re.sub(r'\s*<.*>$', '', ops).strip()
    ops = re.sub(r'\b0x([0-9a-f]+)\b', r'\1', ops)
    return re.sub(r'\s+', ' ', ops)


def annotate(annotate_out, hexbytes):
    code = bytes.fromhex(open(hexbytes).read().strip() if os.path.exists(hexbytes) else hexbytes)
    perf = []
    for line in open(annotate_out, errors='replace'):
        m = re.match(r'^\s*[\d.]+\s*:\s+([0-9a-f]+):\s+(.*)$', line)
        if m:
            perf.append((int(m.group(1), 16), norm(m.group(2))))
    if not perf:
        print('FAIL: no instruction in perf annotate output')
        return False
    base = perf[0][0]  # where perf's ELF file puts .text
    binf = annotate_out + '.bin'
    open(binf, 'wb').write(code)
    dis = subprocess.run(['objdump', '-D', '-b', 'binary', '-mi386:x86-64',
                          '--adjust-vma=0x%x' % base, binf],
                         capture_output=True, text=True, check=True).stdout
    want = []
    for line in dis.splitlines():
        m = re.match(r'^\s*([0-9a-f]+):\t[0-9a-f ]+\t(.*)$', line)
        if m:
            want.append((int(m.group(1), 16), norm(m.group(2))))
    if perf != want:
        n = min(len(perf), len(want))
        bad = next((i for i in range(n) if perf[i] != want[i]), n)
        print('FAIL: instruction %d: perf shows %r, the JIT emitted %r (%d vs %d instructions)'
              % (bad, perf[bad] if bad < len(perf) else None,
                 want[bad] if bad < len(want) else None, len(perf), len(want)))
        return False
    print('annotate: %d instructions, identical to the %d bytes the JIT emitted'
          % (len(perf), len(code)))
    return True


def line_tables(trace):
    """{(code_start, method_id, version): (size, name, [(off, line)])}."""
    import bt2
    loads, rows = {}, {}
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if 'code_start' not in ev.payload_field:
            continue
        key = (int(ev['code_start']), int(ev['method_id']), int(ev['version_id']))
        if ev.name in ('letw_runtime:method_load', 'letw_rundown:method_dcstart',
                       'letw_rundown:method_dcend'):
            loads[key] = (int(ev['code_size']), str(ev['name']))
        elif ev.name in ('letw_runtime:method_lines', 'letw_rundown:method_lines_start',
                         'letw_rundown:method_lines_end'):
            t = rows.setdefault(key, {})
            first = int(ev['row_first'])
            for j, (o, l, d) in enumerate(zip(ev['native_offsets'], ev['lines'],
                                              ev['inline_depths'])):
                t[first + j] = (int(o), int(d), int(l))
    out = {}
    for key, t in rows.items():
        if key not in loads:
            continue
        best = {}
        for i in sorted(t):
            o, d, l = t[i]
            if o not in best or d >= best[o][0]:
                best[o] = (d, l)
        out[key] = (loads[key][0], loads[key][1], sorted((o, best[o][1]) for o in best))
    return out


def srcline(trace, source, jit_script):
    tables = line_tables(trace)
    text = open(source).read().splitlines()
    base = os.path.basename(source)
    recs, cur = [], None
    for line in open(jit_script, errors='replace'):
        f = line.split(None, 1)
        if not f:
            continue
        if ':' in f[0] and not line.startswith(' ' * 6) and re.match(r'^\S+:\d+$', f[0]):
            if cur:
                cur[2] = f[0]
            continue
        try:
            ip = int(f[0], 16)
        except ValueError:
            continue
        cur = [ip, f[1].strip() if len(f) > 1 else '', None]
        recs.append(cur)
    jit = exact = in_block = other_block = 0
    wrong = {}
    for ip, sym, sl in recs:
        m = re.search(r'::(fn_\d+)\(', sym)
        if not m:
            continue
        cand = [(k, v) for k, v in tables.items()
                if k[0] <= ip < k[0] + v[0] and v[1] == m.group(1)]
        if len(cand) != 1:
            continue
        jit += 1
        (start, _, _), (_, _, rows) = cand[0]
        offs = [o for o, _ in rows]
        i = bisect.bisect_right(offs, ip - start) - 1
        want = '%s:%d' % (base, rows[i][1]) if i >= 0 else None
        if sl == want:
            exact += 1
        else:
            wrong[(sym, sl, want)] = wrong.get((sym, sl, want), 0) + 1
        if sl and sl.startswith(base + ':'):
            n = int(sl.split(':')[1])
            k = n - 1
            while 0 <= k < len(text) and not text[k].startswith('fn '):
                k -= 1
            if k >= 0 and text[k].startswith('fn %s(' % m.group(1)):
                in_block += 1
            else:
                other_block += 1
    print('srcline: %d samples in minijit code with a line table: %d in the right '
          'function block of %s, %d in another one, %d exactly the traced line table\'s'
          % (jit, in_block, base, other_block, exact))
    for (sym, sl, want), n in sorted(wrong.items(), key=lambda x: -x[1])[:5]:
        print('  %d samples in %s: perf says %s, the line table %s' % (n, sym, sl, want))
    # perf's own srcline lookup (addr2line) now and then gives up on a
    # sample: such samples show no line, never a wrong one.
    return jit >= 50 and other_block == 0 and exact >= 0.95 * jit


def main():
    cmd = sys.argv[1]
    ok = {'reuse': reuse, 'annotate': annotate, 'srcline': srcline}[cmd](*sys.argv[2:])
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
