# SPDX-License-Identifier: MIT
"""A perf jitdump read back, for the tests (jitdump_logic.py,
jitdump_merge_check.py): one parser of the format jitdump_write.h writes.

parse(path) returns (header, records): the header's fields as a dict, and
per record a dict with its kind ('load', 'move', 'debug', 'close',
'unwinding'), its ts and its fields. A record past the end of the file or
of an unknown type is an AssertionError.
"""
import struct

KINDS = {0: 'load', 1: 'move', 2: 'debug', 3: 'close', 4: 'unwinding'}


def parse(path):
    d = open(path, 'rb').read()
    magic, version, total, mach, _, pid, ts, flags = struct.unpack_from('<IIIIIIQQ', d, 0)
    assert magic == 0x4A695444 and version == 1, '%s: not a jitdump' % path
    hdr = dict(magic=magic, version=version, total=total, mach=mach, pid=pid, ts=ts, flags=flags)
    recs, off = [], total
    while off < len(d):
        rid, size, rts = struct.unpack_from('<IIQ', d, off)
        assert size >= 16 and off + size <= len(d), '%s: a record past the end' % path
        assert rid in KINDS, '%s: unexpected record type %d' % (path, rid)
        body = d[off + 16:off + size]
        r = dict(kind=KINDS[rid], ts=rts)
        if rid == 0:
            pid_, tid, vma, addr, csize, index = struct.unpack_from('<IIQQQQ', body, 0)
            name_end = body.index(b'\0', 40)
            r.update(pid=pid_, addr=addr, size=csize, index=index,
                     name=body[40:name_end].decode(), code=body[len(body) - csize:],
                     name_pad=len(body) - csize - name_end - 1)
        elif rid == 1:
            pid_, tid, vma, old, addr, csize, index = struct.unpack_from('<IIQQQQQ', body, 0)
            r.update(pid=pid_, addr=addr, size=csize, index=index)
        elif rid == 2:
            addr, n = struct.unpack_from('<QQ', body, 0)
            ents, p = [], 16
            for _ in range(n):
                a, line, disc = struct.unpack_from('<QiI', body, p)
                e = body.index(b'\0', p + 16)
                ents.append((a, line, body[p + 16:e].decode()))
                p = e + 1
            r.update(addr=addr, entries=ents)
        recs.append(r)
        off += size
    return hdr, recs
