# SPDX-License-Identifier: MIT
"""damage.py's classes for a stream file and its LTTng index disagreeing,
and for packet headers that disagree with themselves. babeltrace2 2.0
reads a stream file's packets at the offsets its index lists and orders a
stream's files by the index's timestamps, whenever the index passes its
own few checks (sizes summing to the file's, offsets not going back):
each of these once ended with the reader's own message naming only the
trace ("Invalid CTF magic number", the muxer's "Youngest upstream message
iterator wrapper's timestamp is less than ...", "No stream class with
ID"). The pre-checks must refuse each naming the damaged file.

classes(D) takes the damage module itself (its helpers, and its
--stream choice) and returns its CLASSES entries.
"""
import os
import struct

D = None
IDX_HDR, IDX_ENTRY = 16, 72
OFF_STREAM_ID = 20


def indexed_streams(root, several=2):
    """Stream files whose index is 1.1 and lists every packet, with at
    least `several` packets."""
    out = []
    for s in D.all_streams(root):
        ip = D.index_of(s)
        if not os.path.exists(ip):
            continue
        with open(ip, 'rb') as f:
            hdr = f.read(IDX_HDR)
        if len(hdr) < IDX_HDR or struct.unpack_from('>I', hdr, 12)[0] != IDX_ENTRY:
            continue
        n = (os.path.getsize(ip) - IDX_HDR) // IDX_ENTRY
        if n == len(D.packets(s)) >= several:
            out.append(s)
    if not out:
        raise D.NotApplicable('no indexed stream with %d packets or more in %s' % (several, root))
    return out


def d_packet_ends_before_begin(root, rng):
    # First, middle or last packet: the reader's muxer saw time go back
    # wherever it was.
    s, (off, cs, ps, seq) = D.pick_packet(rng, root)
    with open(s, 'rb') as f:
        f.seek(off + D.OFF_TS_BEGIN)
        tb, = struct.unpack('<Q', f.read(8))
    v = tb - rng.randrange(1000, 10 ** 9)
    D.patch(s, off + D.OFF_TS_END, '<Q', v)
    return 'timestamp_end %d before timestamp_begin %d at %d' % (v, tb, off), s


def d_packet_other_stream_class(root, rng):
    # One packet amid a file of another stream class (the reader takes a
    # file's class from its first packet).
    s, pk, i = D.later_packet(rng, root)
    off = pk[i][0]
    with open(s, 'rb') as f:
        f.seek(off + OFF_STREAM_ID)
        sid, = struct.unpack('<I', f.read(4))
    D.patch(s, off + OFF_STREAM_ID, '<I', sid + 1)
    return 'stream_id %d in packet %d (byte %d)' % (sid + 1, i, off), s


def d_index_offset_mid_packet(root, rng):
    # The sizes still sum to the file's: the reader takes the index and
    # reads that packet where no packet begins.
    s = rng.choice(indexed_streams(root))
    i = rng.randrange(1, len(D.packets(s)))
    at = IDX_HDR + i * IDX_ENTRY
    with open(D.index_of(s), 'rb') as f:
        f.seek(at)
        off, = struct.unpack('>Q', f.read(8))
    v = off + 8 * rng.randrange(1, 64)
    D.patch(D.index_of(s), at, '>Q', v)
    return 'index entry %d offset %d -> %d (mid-packet)' % (i, off, v), s


def d_index_entry_repeated(root, rng):
    # Entry i a copy of entry i - 1, packets of one size: the reader reads
    # a packet twice and never the next one.
    cands = [s for s in indexed_streams(root, 3)
             if len(set(p[2] for p in D.packets(s)[:-1])) == 1]
    if not cands:
        raise D.NotApplicable('no indexed stream of equal packets in ' + root)
    s = rng.choice(cands)
    i = rng.randrange(1, len(D.packets(s)) - 1)
    ip = D.index_of(s)
    with open(ip, 'rb') as f:
        f.seek(IDX_HDR + (i - 1) * IDX_ENTRY)
        prev = f.read(IDX_ENTRY)
    with open(ip, 'r+b') as f:
        f.seek(IDX_HDR + i * IDX_ENTRY)
        f.write(prev)
    return 'index entry %d a copy of entry %d' % (i, i - 1), s


def d_content_size_cut(root, rng):
    # A packet's content cut inside its events, its index unchanged: the
    # reader fails inside an event, with or without the index.
    cands = [(s, p) for s in indexed_streams(root, 1) for p in D.packets(s)
             if p[1] > D.PKT_HDR_END + 400]
    if not cands:
        raise D.NotApplicable('no indexed packet with events in ' + root)
    s, (off, cs, ps, seq) = rng.choice(cands)
    v = D.PKT_HDR_END + rng.randrange(1, (cs - D.PKT_HDR_END) // 2)
    D.patch(s, off + D.OFF_CONTENT, '<Q', v * 8)
    return 'content_size cut from %d to %d bytes at %d (index unchanged)' % (cs, v, off), s


def rotated_pairs(root):
    """Pairs of a stream's consecutive files (NAME_K, NAME_K+1), both
    indexed, under tracefile rotation."""
    pairs = []
    for d in D.trace_dirs(root):
        names = set(os.listdir(d))
        for n in sorted(names):
            head, _, k = n.rpartition('_')
            nxt = '%s_%d' % (head, int(k) + 1) if k.isdigit() else None
            if (nxt in names and os.path.exists(D.index_of(os.path.join(d, n)))
                    and os.path.exists(D.index_of(os.path.join(d, nxt)))):
                pairs.append((os.path.join(d, n), os.path.join(d, nxt)))
    return pairs


def d_rotated_files_swapped(root, rng):
    # Two files of a rotated stream renamed into each other, their indexes
    # not: the reader orders the files by their indexes, wrongly.
    # Packets of one size in both: each index still fits the other file's
    # packets, so only the order the reader puts them in is wrong.
    pairs = [p for p in rotated_pairs(root)
             if len(set(q[2] for f in p for q in D.packets(f))) == 1
             and os.path.getsize(p[0]) == os.path.getsize(p[1])]
    if not pairs:
        raise D.NotApplicable('no rotated stream with two files of one size in ' + root)
    a, b = rng.choice(pairs)
    tmp = a + '.swap'
    os.rename(a, tmp)
    os.rename(b, a)
    os.rename(tmp, b)
    return '%s and %s swapped (indexes kept)' % (os.path.basename(a), os.path.basename(b)), a


# Classes the default run leaves out: they need another trace (damage.py
# run --classes names them).
NOT_DEFAULT = {'rotated-files-swapped'}


def classes(module):
    global D
    D = module
    return {
        'packet-ends-before-begin': (d_packet_ends_before_begin, 'error-named', False),
        'packet-other-stream-class': (d_packet_other_stream_class, 'error-named', False),
        'index-offset-mid-packet': (d_index_offset_mid_packet, 'error-named', False),
        'index-entry-repeated': (d_index_entry_repeated, 'error-named', False),
        'content-size-cut': (d_content_size_cut, 'error-named', False),
        'rotated-files-swapped': (d_rotated_files_swapped, 'error-named', False),
    }
