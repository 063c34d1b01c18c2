#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check a jitdump merged from a chunked trace's dumps.

usage: jitdump_merge_check.py MERGED CHUNK_DUMP... [-- NAME...]

MERGED is DIR/jit-PID.dump, CHUNK_DUMP each DIR/<chunk>/jit-PID.dump. The
merged dump must: be one header and records in time order ending in one
CLOSE; give every LOAD a code_index of its own; hold every chunk's code
(address, size, name) at some time; and never LOAD the same code at an
address where it is already the latest code (a region live across a
rotation, re-enumerated by the next chunk's rundown, written once). Each
NAME (e.g. fn_0) must be the name of some LOAD. Prints the figures.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jitdump_parse import parse  # noqa: E402


def main():
    args = sys.argv[1:]
    names = args[args.index('--') + 1:] if '--' in args else []
    paths = args[:args.index('--')] if '--' in args else args
    hdr, recs = parse(paths[0])
    loads = [r for r in recs if r['kind'] == 'load']
    ok = True

    def fail(msg):
        nonlocal ok
        print('FAIL: ' + msg)
        ok = False

    if not loads:
        fail('the merged dump holds no LOAD (the placeholder left as it was?)')
    idx = [r['index'] for r in loads]
    if len(set(idx)) != len(idx):
        fail('code_index not unique: %d LOADs, %d indexes' % (len(idx), len(set(idx))))
    if [r['ts'] for r in recs] != sorted(r['ts'] for r in recs):
        fail('records not in time order')
    if [r['kind'] for r in recs].count('close') != 1 or recs[-1]['kind'] != 'close':
        fail('not one CLOSE, at the end')
    have = {(r['addr'], r['size'], r['name']) for r in loads}
    for p in paths[1:]:
        h, rs = parse(p)
        if h['mach'] != hdr['mach'] or h['pid'] != hdr['pid']:
            fail('%s: header differs from the merged one' % p)
        miss = [(r['addr'], r['name']) for r in rs if r['kind'] == 'load' and
                (r['addr'], r['size'], r['name']) not in have]
        if miss:
            fail('%s: %d LOAD(s) not in the merged dump, e.g. %s' % (p, len(miss), miss[:3]))
    latest, repeats = {}, 0
    for r in loads:
        key = (r['addr'], r['size'], r['name'])
        repeats += latest.get(r['addr']) == key
        latest[r['addr']] = key
    if repeats:
        fail('%d LOAD(s) of code already the latest at its address' % repeats)
    for n in names:
        if not any('::%s(' % n in r['name'] for r in loads):
            fail('no LOAD named %s' % n)
    print('merged: %d LOADs from %d chunk dump(s) of %s LOADs, %d code_index, %d repeats'
          % (len(loads), len(paths) - 1,
             '+'.join(str(sum(r['kind'] == 'load' for r in parse(p)[1])) for p in paths[1:]),
             len(set(idx)), repeats))
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
