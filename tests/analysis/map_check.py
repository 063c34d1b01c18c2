#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every code region of letw-minijit's --list must be in a perf map.

usage: map_check.py LIST MAP

LIST lines: "method 0xSTART SIZE NAMESPACE NAME VERSION" and
"stub 0xSTART SIZE KIND 0xOWNER". A method must appear as START SIZE
NAMESPACE::NAME(...) and a stub as START SIZE stub<KIND>@0xOWNER..., per
the naming scheme in analysis/README.md. Exits 1 listing what is missing.
"""
import sys

KINDS = ['unknown', 'precode', 'jump', 'dispatch', 'resolve', 'thunk', 'block']


def main():
    lst, mp = sys.argv[1:3]
    have = {}
    for line in open(mp):
        start, size, name = line.rstrip('\n').split(' ', 2)
        have.setdefault((int(start, 16), int(size, 16)), []).append(name)
    missing = []
    n = 0
    for line in open(lst):
        f = line.split()
        if not f or f[0] not in ('method', 'stub'):
            continue
        n += 1
        key = (int(f[1], 16), int(f[2]))
        if f[0] == 'method':
            want = f[3] + '::' + f[4]
            ok = any(x == want or x.startswith(want + '(') or x.startswith(want + ' ')
                     for x in have.get(key, []))
        else:
            kind = int(f[3])
            want = 'stub<%s>@0x%x' % (KINDS[kind] if kind < len(KINDS) else kind, int(f[4], 16))
            ok = any(x == want or x.startswith(want + ' ') for x in have.get(key, []))
        if not ok:
            missing.append('%s at 0x%x size %d (map has %s)' % (want, key[0], key[1], have.get(key)))
    print('%d listed regions, %d missing from the map' % (n, len(missing)))
    for m in missing[:10]:
        print('  missing:', m)
    sys.exit(1 if missing or n == 0 else 0)


if __name__ == '__main__':
    main()
