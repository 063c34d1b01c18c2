#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check perf's symbolization of JIT samples against the runtime's list.

usage: perf_check.py LIST PERF_SCRIPT_OUTPUT MIN_SAMPLES MIN_FRACTION

LIST is letw-minijit's --list file ("method 0xSTART SIZE NAMESPACE NAME
VERSION" lines). PERF_SCRIPT_OUTPUT is `perf script -F ip,sym -G`. Every
sample whose ip falls in a listed method must be named NAMESPACE::NAME
(followed by the signature / tier the naming scheme appends). Prints the
figures; exits 1 when fewer than MIN_SAMPLES samples fall in JIT code or
the named fraction is below MIN_FRACTION.
"""
import bisect
import sys


def main():
    list_path, script_path, min_samples, min_frac = sys.argv[1:5]
    ranges = []
    for line in open(list_path):
        f = line.split()
        if f and f[0] == 'method':
            ranges.append((int(f[1], 16), int(f[2]), f[3] + '::' + f[4]))
    ranges.sort()
    starts = [r[0] for r in ranges]
    in_jit = named = 0
    wrong = {}
    for line in open(script_path):
        f = line.split(None, 1)
        if not f:
            continue
        try:
            ip = int(f[0], 16)
        except ValueError:
            continue
        sym = f[1].strip() if len(f) > 1 else ''
        i = bisect.bisect_right(starts, ip) - 1
        if i < 0 or ip >= ranges[i][0] + ranges[i][1]:
            continue
        in_jit += 1
        want = ranges[i][2]
        if sym == want or sym.startswith(want + '(') or sym.startswith(want + ' '):
            named += 1
        else:
            wrong[(want, sym)] = wrong.get((want, sym), 0) + 1
    frac = named / in_jit if in_jit else 0.0
    print(f'samples in JIT code: {in_jit}, named right: {named} ({frac:.1%})')
    for (want, sym), n in sorted(wrong.items(), key=lambda x: -x[1])[:5]:
        print(f'  {n} samples in {want} named {sym!r}')
    ok = in_jit >= int(min_samples) and frac >= float(min_frac)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
