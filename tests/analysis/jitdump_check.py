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
      side wrong (a map has one name per range). MAP_SCRIPT `-`: no map
      (jitdump_rotate_e2e: the two sides are two chunks' code).
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
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from jitdump_lib import expected_srcline, line_tables, srcline_samples, table_of  # noqa: E402


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

    jit = score(jit_script)
    pmap = score(map_script) if map_script != '-' else None
    for what, g in (('jitdump + perf inject --jit', jit), ('perf map (lttng-etw perfmap)', pmap)):
        if g is None:
            continue
        print('%s: before the reuse %d right / %d wrong (%s), after %d right / %d wrong (%s)'
              % (what, g['before'][0], g['before'][1], names['before'],
                 g['after'][0], g['after'][1], names['after']))
    ok = True
    for side in ('before', 'after'):
        r, w = jit[side]
        if r + w < 20 or r < 0.95 * (r + w):
            print('FAIL: jitdump, %s the reuse: %d right of %d' % (side, r, r + w))
            ok = False
    # Without a perf map (MAP_SCRIPT '-') there is no control to judge.
    if pmap:
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


def srcline(trace, source, jit_script):
    tables = line_tables(trace)
    text = open(source).read().splitlines()
    base = os.path.basename(source)
    jit = exact = in_block = other_block = 0
    wrong = {}
    for ip, sym, sl in srcline_samples(jit_script):
        m = re.search(r'::(fn_\d+)\(', sym)
        if not m:
            continue
        start, rows = table_of(tables, ip, m.group(1))
        if start is None:
            continue
        jit += 1
        want = expected_srcline(start, rows, ip)
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
