#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Damage generator for real lttng-etw traces, and a harness that runs the
analysis tools on the damaged copies and classifies what they did.

  damage.py list
  damage.py apply CLASS SRC DST [--seed N]
  damage.py run --trace SRC --cli LTTNG_ETW [--plugin-dir DIR] [--work DIR]
                [--classes A,B,...] [--stream NAME] [--random N | --minutes M] [--seed N]
                [--stall-timeout S] [--memory-limit MIB] [--no-babeltrace] [--check] [--unprivileged]

`apply` copies SRC (a trace or session output directory) to DST and damages
the copy in one way. `run` does that for every class (or N random cases, or
for M minutes), runs `lttng-etw report`, `report --json`, `perfmap` and
`babeltrace2 -c sink.etw.report` on each copy, prints the outcome table
(damage class x tool -> outcome counts) and, with --check, exits 1 when a
tool broke its promise for that class:

  error       exit 1 with an `lttng-etw: ...` message (reader crash, hang,
              damage our pre-checks refuse)
  incomplete  exit 3 (or 1 when nothing usable is left), `incomplete`
              said, the damaged stream named
  clean       exit 0, 1 or 3, never a signal or a hang
  readable    exit 0 or 3: what the reader alone refuses, holding
              nothing, is left out and the rest read

and always: lttng-etw never dies by a signal or hangs, exits 0/1/3 only,
JSON output parses (strict UTF-8, strict JSON), perf map lines are
`START SIZE NAME` with no control character in NAME.

The packet layout is the one LTTng-UST 2.x writes (packet header: magic,
uuid, stream_id, stream_instance_id; context: timestamp_begin,
timestamp_end, content_size, packet_size, packet_seq_num,
events_discarded, cpu_id, little endian on x86-64), and the index files
are LTTng's CTF index 1.1 (big endian).
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

CTF_MAGIC = 0xC1FC1FC1
META_MAGIC = 0x75D11D57
U64_MAX = (1 << 64) - 1

# Offsets in an LTTng-UST packet (bytes from the packet start).
OFF_MAGIC, OFF_INSTANCE_ID, OFF_TS_BEGIN, OFF_TS_END = 0, 24, 32, 40
OFF_CONTENT, OFF_PACKET, OFF_SEQ, OFF_DISC = 48, 56, 64, 72
PKT_HDR_END = 88  # events start after cpu_id (aligned)
PKT_HDR_END_CONTEXT = 84  # where cpu_id ends: an empty packet's content_size


# ---- trace layout ----

def trace_dirs(root):
    """Every CTF trace directory (holding `metadata`) under root."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        if 'metadata' in files:
            out.append(d)
    return out


def stream_files(tdir):
    return sorted(os.path.join(tdir, f) for f in os.listdir(tdir)
                  if f != 'metadata' and not f.startswith('.')
                  and os.path.isfile(os.path.join(tdir, f)))


# `apply --stream NAME`: damage that stream file (by base name) only.
ONLY_STREAM = None


def all_streams(root):
    found = [s for d in trace_dirs(root) for s in stream_files(d)]
    if ONLY_STREAM is not None:
        found = [s for s in found if os.path.basename(s) == ONLY_STREAM]
        if not found:
            raise SystemExit('damage.py: no stream file named %s' % ONLY_STREAM)
    return found


def packets(path):
    """(offset, content_bytes, packet_bytes, seq) of each packet, walking
    packet_size as the reader does; stops at the first implausible one."""
    out = []
    with open(path, 'rb') as f:
        data = f.read()
    off = 0
    while off + PKT_HDR_END <= len(data):
        magic, = struct.unpack_from('<I', data, off)
        cs, ps, seq = struct.unpack_from('<QQQ', data, off + OFF_CONTENT)
        if magic != CTF_MAGIC or ps == 0 or ps % 8 or off + ps // 8 > len(data):
            break
        out.append((off, cs // 8, ps // 8, seq))
        off += ps // 8
    return out


def index_of(stream):
    return os.path.join(os.path.dirname(stream), 'index',
                        os.path.basename(stream) + '.idx')


def metadata_packets(path):
    """(offset, content_bytes, packet_bytes) of a packetized metadata file."""
    with open(path, 'rb') as f:
        data = f.read()
    out, off = [], 0
    while off + 37 <= len(data):
        magic, = struct.unpack_from('<I', data, off)
        if magic != META_MAGIC:
            break
        cs, ps = struct.unpack_from('<II', data, off + 24)
        out.append((off, cs // 8, ps // 8))
        if ps == 0:
            break
        off += ps // 8
    return out


def metadata_text(path):
    with open(path, 'rb') as f:
        data = f.read()
    pk = metadata_packets(path)
    if not pk:
        return data
    return b''.join(data[o + 37:o + c] for o, c, _ in pk)


def write_metadata_text(path, text, pk_size=4096):
    """Rewrite a packetized metadata file with new TSDL text, keeping the
    first packet's header fields (uuid, byte order, versions)."""
    with open(path, 'rb') as f:
        data = f.read()
    hdr = bytearray(data[:37])
    out = bytearray()
    chunk = pk_size - 37
    for i in range(0, max(len(text), 1), chunk):
        part = text[i:i + chunk]
        h = bytearray(hdr)
        struct.pack_into('<II', h, 24, (37 + len(part)) * 8, pk_size * 8)
        out += h + part + b'\0' * (chunk - len(part))
    with open(path, 'wb') as f:
        f.write(out)


def patch(path, off, fmt, *vals):
    with open(path, 'r+b') as f:
        f.seek(off)
        f.write(struct.pack(fmt, *vals))


class NotApplicable(Exception):
    """A damage class that does not fit this trace (nothing to damage the
    way it damages): the case is skipped, counted against ALLOWED_NA. Any
    other exception is a bug of the harness and fails the run."""


# How many cases may be not applicable before the run fails: every class
# fits malformed_e2e's trace, so none; a run over another trace (no packet
# to pick, a metadata lacking what an edit needs) passes --allow-na.
ALLOWED_NA = 0


def pick_packet(rng, root, want_several=False):
    """A (stream, packet) pair, preferring streams with several packets."""
    cands = [(s, p) for s in all_streams(root) for p in packets(s)]
    if want_several:
        multi = [(s, p) for s, p in cands if len(packets(s)) > 1]
        cands = multi or cands
    if not cands:
        raise NotApplicable('no packet found in ' + root)
    return rng.choice(cands)


def event_bytes(rng, root):
    """(stream, offset, length) of the event area of a random packet."""
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    return s, off + PKT_HDR_END, max(0, cs - PKT_HDR_END)


# ---- damage classes: fn(root, rng) -> (description, stream named) ----

def d_content_huge(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    v = (1 << 63) + rng.randrange(1 << 20) * 8
    patch(s, off + OFF_CONTENT, '<Q', v)
    return 'content_size=%#x in packet at %d' % (v, off), s


def d_packet_huge(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    v = (1 << 63) + rng.randrange(1 << 20) * 8
    patch(s, off + OFF_PACKET, '<Q', v)
    return 'packet_size=%#x in packet at %d' % (v, off), s


def d_packet_past_file(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    v = (os.path.getsize(s) + rng.choice([4096, 1 << 20, 1 << 40])) * 8
    patch(s, off + OFF_PACKET, '<Q', v)
    return 'packet_size=%d bytes (past the file) at %d' % (v // 8, off), s


def d_content_past_packet(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    v = (ps + rng.choice([8, 4096, 1 << 30])) * 8
    patch(s, off + OFF_CONTENT, '<Q', v)
    return 'content_size > packet_size at %d' % off, s


def d_seq_max(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    patch(s, off + OFF_SEQ, '<Q', U64_MAX)
    return 'packet_seq_num=2^64-1 at %d' % off, s


def later_packet(rng, root):
    """(stream, its packets, index i >= 1 of one of them)."""
    cands = [(st, i) for st in all_streams(root)
             for i in range(1, len(packets(st)))]
    if not cands:
        raise NotApplicable('no stream with several packets in ' + root)
    st, i = rng.choice(cands)
    return st, packets(st), i


def d_seq_gap(root, rng):
    # Not a stream's first packet: renumbering from there makes a stream
    # that starts at packet_seq_num N, which is no gap the reader can see
    # (LTTng writes such streams in snapshots and overwrite mode). Only
    # LTTng's index still says 0 there, and the analysis does not compare
    # the index's sequence numbers with the stream's (the class flaked in
    # malformed_e2e, ~1 run in 10, whenever the first packet was picked).
    s, pk, i = later_packet(rng, root)
    off = pk[i][0]
    # Renumber this packet and every later one: the reader sees a gap
    # (discarded packets) but every byte is still there.
    gap = rng.randrange(1, 5)
    for o, _, _, q in packets(s):
        if o >= off:
            patch(s, o + OFF_SEQ, '<Q', q + gap)
    return 'packet_seq_num jumps by %d at %d' % (gap, off), s


def d_seq_backwards(root, rng):
    # A sequence number below the previous packet's, the bytes kept: the
    # reader takes it for nearly 2^64 discarded packets and the next
    # packet's gap for the rest (the gaps telescope to the original 0): the
    # analysis's sum wrapped to 0 ("trace complete"). Strictly below: the
    # previous packet's own number again, on a stream's last packet, is a
    # duplicate the reader reports no loss for (nothing is missing), which
    # made the check of this class fail now and then.
    cands = [(st, pk, i) for st in all_streams(root) for pk in [packets(st)]
             for i in range(1, len(pk)) if pk[i - 1][3] >= 1]
    if not cands:
        raise NotApplicable('no packet after one numbered 1 or more in ' + root)
    s, pk, i = rng.choice(cands)
    off, prev = pk[i][0], pk[i - 1][3]
    v = rng.randrange(0, prev)
    patch(s, off + OFF_SEQ, '<Q', v)
    return 'packet_seq_num %d after %d at %d' % (v, prev, off), s


def d_packet_repeated(root, rng):
    # A packet written twice in a row (a copy tool retrying a chunk): the
    # index is left as it was.
    s, pk, i = later_packet(rng, root)
    off, _, ps, seq = pk[i]
    with open(s, 'r+b') as f:
        f.seek(off)
        body = f.read(ps)
        rest = f.read()
        f.seek(off + ps)
        f.write(body + rest)
    return 'packet %d (seq %d) repeated at %d' % (i, seq, off + ps), s


def d_packets_swapped(root, rng):
    # Two neighbouring packets in each other's place.
    s, pk, i = later_packet(rng, root)
    (a, _, pa, _), (_, _, pb, _) = pk[i - 1], pk[i]
    with open(s, 'r+b') as f:
        f.seek(a)
        first = f.read(pa)
        second = f.read(pb)
        f.seek(a)
        f.write(second + first)
    return 'packets %d and %d swapped at %d' % (i - 1, i, a), s


def d_ts_begin_max(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    patch(s, off + OFF_TS_BEGIN, '<Q', U64_MAX)
    return 'timestamp_begin=2^64-1 at %d' % off, s


def d_discarded(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    v = rng.randrange(1, 1000)
    for o, _, _, q in packets(s):
        if o >= off:
            with open(s, 'rb') as f:
                f.seek(o + OFF_DISC)
                cur, = struct.unpack('<Q', f.read(8))
            patch(s, o + OFF_DISC, '<Q', cur + v)
    return 'events_discarded += %d from packet at %d' % (v, off), s


def d_discarded_back(root, rng):
    """The tracer's discarded-events counter going back (seen in a real
    session: babeltrace2 then reports 2^64 - 653 discarded events, which
    summed with the stream's earlier discards to 2^64 - 1 in the report)."""
    s, pk, i = later_packet(rng, root)
    v = rng.randrange(1, 1000)
    for o, _, _, q in pk[:i]:
        with open(s, 'rb') as f:
            f.seek(o + OFF_DISC)
            cur, = struct.unpack('<Q', f.read(8))
        patch(s, o + OFF_DISC, '<Q', cur + v)
    return 'events_discarded goes back by %d at packet %d' % (v, i), s


def d_bad_magic(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    patch(s, off, '<I', 0xDEADBEEF)
    return 'packet magic 0xdeadbeef at %d' % off, s


def d_truncated_mid(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root)
    cut = off + rng.randrange(1, ps)
    os.truncate(s, cut)
    return 'cut at byte %d (inside a packet)' % cut, s


def d_truncated_at_packet(root, rng):
    s, (off, cs, ps, seq) = pick_packet(rng, root, want_several=True)
    if off == 0:
        off = packets(s)[-1][0]
    if off == 0:
        return d_stream_emptied(root, rng, s)
    os.truncate(s, off)
    return 'cut at packet boundary %d (index still lists the rest)' % off, s


def d_stream_deleted(root, rng, s=None):
    s = s or rng.choice(all_streams(root))
    os.unlink(s)
    return 'stream file deleted (index kept)', s


def d_stream_emptied(root, rng, s=None):
    s = s or rng.choice(all_streams(root))
    os.truncate(s, 0)
    return 'stream file truncated to 0 bytes (index kept)', s


def two_streams(rng, root):
    """Two stream files of one trace, with packets."""
    for d in trace_dirs(root):
        found = [s for s in stream_files(d) if packets(s)]
        if len(found) >= 2:
            return rng.sample(found, 2)
    raise NotApplicable('no trace with two stream files')


def d_stream_copied_over(root, rng):
    a, b = two_streams(rng, root)
    shutil.copyfile(a, b)
    return 'stream file overwritten by a copy of %s' % os.path.basename(a), b


def span(path):
    """(first packet's timestamp_begin, last packet's timestamp_end)."""
    pk = packets(path)
    with open(path, 'rb') as f:
        data = f.read()
    tb, = struct.unpack_from('<Q', data, pk[0][0] + OFF_TS_BEGIN)
    te, = struct.unpack_from('<Q', data, pk[-1][0] + OFF_TS_END)
    return tb, te


def d_instance_id_dup(root, rng):
    """Every packet of b claims a's stream_instance_id: two files, one
    stream, over the same time (the reader's muxer then fails naming no
    file). Files whose times overlap: under tracefile rotation a file
    between two pieces of a's stream would read as one more piece of it,
    which loses nothing and is no damage the reader or we can see."""
    files = [s for d in trace_dirs(root) for s in stream_files(d) if packets(s)]
    pairs = [(a, b) for a in files for b in files
             if a != b and os.path.dirname(a) == os.path.dirname(b)
             and span(a)[0] < span(b)[1] and span(b)[0] < span(a)[1]]
    if not pairs:
        raise NotApplicable('no two stream files overlapping in time')
    a, b = rng.choice(pairs)
    iid, = struct.unpack_from('<Q', open(a, 'rb').read(), OFF_INSTANCE_ID)
    for off, _cs, _ps, _seq in packets(b):
        patch(b, off + OFF_INSTANCE_ID, '<Q', iid)
    return 'stream_instance_id of every packet set to that of %s' % os.path.basename(a), b


def d_index_name_escape(root, rng):
    """An index for a stream file that is not there, named with a line
    break and an escape sequence: the report names that stream."""
    s = rng.choice(all_streams(root))
    weird = os.path.join(os.path.dirname(s), 'chan\nnel\x1b[31m_0')
    shutil.copyfile(index_of(s), index_of(weird))
    return 'an index for a missing stream file named with a newline and ESC', None


def d_stream_devzero(root, rng):
    s = rng.choice(all_streams(root))
    os.unlink(s)
    os.symlink('/dev/zero', s)
    return 'stream file replaced by a link to /dev/zero', s


def d_stream_fifo(root, rng):
    s = rng.choice(all_streams(root))
    os.unlink(s)
    os.mkfifo(s)
    return 'stream file replaced by a FIFO', s


def d_stream_zeroed(root, rng):
    s = rng.choice(all_streams(root))
    size = os.path.getsize(s)
    with open(s, 'wb') as f:
        f.write(b'\0' * size)
    return 'stream file overwritten with zeros', s


def d_index_extra(root, rng):
    s = rng.choice([x for x in all_streams(root) if os.path.exists(index_of(x))])
    ip = index_of(s)
    with open(ip, 'rb') as f:
        data = f.read()
    elen, = struct.unpack_from('>I', data, 12)
    last = bytearray(data[-elen:])
    off, psize = struct.unpack_from('>QQ', last, 0)
    struct.pack_into('>Q', last, 0, off + psize // 8)
    if elen >= 72:
        seq, = struct.unpack_from('>Q', last, 64)
        struct.pack_into('>Q', last, 64, seq + 1)
    with open(ip, 'ab') as f:
        f.write(bytes(last))
    return 'index lists one packet more than the stream holds', s


def d_index_fewer(root, rng):
    s = rng.choice([x for x in all_streams(root)
                    if os.path.exists(index_of(x)) and len(packets(x)) > 1] or
                   [x for x in all_streams(root) if os.path.exists(index_of(x))])
    ip = index_of(s)
    with open(ip, 'rb') as f:
        data = f.read()
    elen, = struct.unpack_from('>I', data, 12)
    if len(data) - 16 >= elen:
        os.truncate(ip, len(data) - elen)
    return 'index lists one packet fewer than the stream holds', s


def d_index_garbled(root, rng):
    s = rng.choice([x for x in all_streams(root) if os.path.exists(index_of(x))])
    ip = index_of(s)
    size = os.path.getsize(ip)
    with open(ip, 'r+b') as f:
        for _ in range(8):
            f.seek(rng.randrange(size))
            f.write(bytes([rng.randrange(256)]))
    return 'random bytes in the index file', s


def d_index_deleted(root, rng):
    s = rng.choice([x for x in all_streams(root) if os.path.exists(index_of(x))])
    os.unlink(index_of(s))
    return 'index file deleted', s


def d_index_fifo(root, rng):
    # The reader maps the index of every stream file it reads: opening a
    # FIFO waits for a writer forever (the pre-checks refuse it; without
    # them the supervisor must see the reader asleep on it).
    s = rng.choice([x for x in all_streams(root) if os.path.exists(index_of(x))])
    os.unlink(index_of(s))
    os.mkfifo(index_of(s))
    return 'index file replaced by a FIFO', index_of(s)


def d_garbled_events(root, rng):
    s, start, n = event_bytes(rng, root)
    with open(s, 'r+b') as f:
        for _ in range(rng.randrange(1, 16)):
            if n <= 0:
                break
            f.seek(start + rng.randrange(n))
            f.write(os.urandom(rng.randrange(1, 64)))
    return 'random bytes in event payloads', s


def find_all(data, pat):
    out, i = [], data.find(pat)
    while i >= 0:
        out.append(i)
        i = data.find(pat, i + 1)
    return out


def string_sites(root, rng):
    """Offsets of name strings in the event area of stream files."""
    sites = []
    for s in all_streams(root):
        with open(s, 'rb') as f:
            data = f.read()
        for pat in (b'fn_', b'minijit.', b'VSD_', b'stub'):
            sites += [(s, i) for i in find_all(data, pat)]
    return sites


def overwrite_names(root, rng, patterns, what):
    """Overwrite the start of up to 40 name strings with one of patterns."""
    sites = string_sites(root, rng)
    if not sites:
        return d_garbled_events(root, rng)
    picks = rng.sample(sites, min(len(sites), rng.randrange(1, 40)))
    for s, i in picks:
        patch(s, i, '3B', *rng.choice(patterns))
    return '%s in %d name(s)' % (what, len(picks)), picks[0][0]


def d_bad_utf8(root, rng):
    return overwrite_names(root, rng, [(0xff, 0xfe, 0x80), (0xc3, 0x28, 0x41),
                                       (0xed, 0xa0, 0x80), (0xe2, 0x82, 0x20)],
                           'invalid UTF-8')


def d_control_chars(root, rng):
    return overwrite_names(root, rng, [(0x0a, 0x0d, 0x09), (0x1b, 0x5b, 0x32),
                                       (0x7f, 0x0a, 0x0a), (0xc2, 0x85, 0x0a)],
                           'control characters')


def method_sites(root):
    """(stream, offset of the namespace) of every method record, located
    by its namespace string."""
    sites = []
    for s in all_streams(root):
        with open(s, 'rb') as f:
            data = f.read()
        sites += [(s, i) for i in find_all(data, b'minijit.Module')]
    return sites


# ... code_start u64, code_size u32, token u32, flags u32, version u64, namespace
METHOD_START_BACK, METHOD_SIZE_BACK = 28, 20
# Code starts no user space holds (the analysis takes up to 2^57).
ABSURD_STARTS = (0x7ffffffffffff000, U64_MAX - 16, 0xffff800000000000)


def d_absurd_size(root, rng):
    """Method records (located by their namespace string): code_size or
    code_start set to values no JIT produces."""
    sites = method_sites(root)
    if not sites:
        return d_garbled_events(root, rng)
    picks = rng.sample(sites, min(len(sites), rng.randrange(1, 8)))
    for s, i in picks:
        if rng.random() < 0.5:
            patch(s, i - METHOD_SIZE_BACK, '<I', rng.choice([0xffffffff, 0x80000000, 0xfffff000]))
        else:
            patch(s, i - METHOD_START_BACK, '<Q', rng.choice(ABSURD_STARTS))
    return 'absurd code_size/code_start in %d method record(s)' % len(picks), picks[0][0]


def d_method_address_absurd(root, rng):
    """Method records at a code_start past user space: absurd records the
    analysis leaves out, the trace called incomplete, naming the file."""
    sites = method_sites(root)
    if not sites:
        raise NotApplicable('no method record in ' + root)
    picks = rng.sample(sites, min(len(sites), rng.randrange(1, 8)))
    for s, i in picks:
        patch(s, i - METHOD_START_BACK, '<Q', rng.choice(ABSURD_STARTS))
    # Named: the first of the files damaged, in a rotated stream's order
    # (the report names a stream's first few files holding absurd records).
    def order(path):
        m = re.match(r'^(.*)_(\d+)$', path)
        return (m.group(1), int(m.group(2))) if m else (path, 0)
    return ('code_start past user space in %d method record(s)' % len(picks),
            min((p for p, _ in picks), key=order))


COMPLETE_LINE = re.compile(
    r'letw_rundown:(dc(?:start|end))_complete: .*\{ instance_id = \d+, pass_id = (\d+), '
    r'emitted = (\d+), skipped_raced = (\d+), duration_ns = (\d+) \}')
COMPLETE_FIELDS = ('emitted', 'skipped_raced', 'duration_ns')
# Counters no walk reaches (the analysis takes up to 2^48 as a count):
# what a flipped or overwritten field holds.
ABSURD_COUNTS = (U64_MAX, 1 << 62, (1 << 48) + 1)


def complete_sites(root):
    """(stream, offset of pass_id, flavour, [pass_id, emitted, skipped_raced,
    duration_ns]) of every rundown Complete event, found by the values
    babeltrace2 reads: the four u64 fields lie together in the payload."""
    out = subprocess.run(['babeltrace2', root], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, check=True).stdout.decode('utf-8', 'replace')
    sites = []
    for m in COMPLETE_LINE.finditer(out):
        vals = [int(x) for x in m.groups()[1:]]
        pat = struct.pack('<4Q', *vals)
        hits = [(st, i) for st in all_streams(root)
                for i in find_all(open(st, 'rb').read(), pat)]
        if len(hits) != 1:
            continue  # two passes alike (never seen): not one to damage
        sites.append((hits[0][0], hits[0][1], m.group(1), vals))
    if not sites:
        raise NotApplicable('no rundown complete event in the trace')
    return sites


def damage_completes(root, rng, fields):
    """Every Complete gets one of fields (in turn) set to an absurd count."""
    sites = complete_sites(root)
    first, vfirst = rng.randrange(len(fields)), rng.randrange(len(ABSURD_COUNTS))
    said = []
    for n, (st, off, fl, vals) in enumerate(sites):
        field = fields[(first + n) % len(fields)]
        v = ABSURD_COUNTS[(vfirst + n) % len(ABSURD_COUNTS)]
        patch(st, off + 8 * (1 + COMPLETE_FIELDS.index(field)), '<Q', v)
        said.append('%s_complete of pass %d: %s %d' % (fl, vals[0], field, v))
    return '; '.join(said), sites[0][0]


def d_complete_emitted_absurd(root, rng):
    """A pass's records emitted past 2^48 (2^64-1 printed as the count,
    the pass judged lossy against it)."""
    return damage_completes(root, rng, ('emitted',))


def d_complete_walk_absurd(root, rng):
    """skipped_raced or duration_ns past 2^48 (2^64-1 printed, the pass
    called complete)."""
    return damage_completes(root, rng, ('skipped_raced', 'duration_ns'))


def a_metadata(root, rng):
    return os.path.join(rng.choice(trace_dirs(root)), 'metadata')


def edit_tsdl(root, rng, fn):
    md = a_metadata(root, rng)
    text = metadata_text(md)
    new = fn(text)
    if new == text:
        raise NotApplicable('metadata edit matched nothing')
    if metadata_packets(md):
        write_metadata_text(md, new)
    else:
        with open(md, 'wb') as f:
            f.write(new)
    return md


def d_meta_duplicate_field(root, rng):
    def fn(t):
        # An event declaring both fields: its second becomes the first.
        evs = [m for m in re.finditer(rb'event \{.*?\n\};', t, re.S)
               if b'} _method_id;' in m.group(0) and b'} _module_id;' in m.group(0)]
        m = rng.choice(evs)
        body = m.group(0).replace(b'} _module_id;', b'} _method_id;', 1)
        return t[:m.start()] + body + t[m.end():]
    return 'an event declares `_method_id` twice', edit_tsdl(root, rng, fn)


def d_meta_no_freq(root, rng):
    return 'clock block without freq', edit_tsdl(
        root, rng, lambda t: re.sub(rb'\n\s*freq = \d+;[^\n]*', b'', t, count=1))


def d_meta_freq_zero(root, rng):
    return 'clock freq = 0', edit_tsdl(
        root, rng, lambda t: re.sub(rb'freq = \d+;', b'freq = 0;', t, count=1))


def d_meta_no_name(root, rng):
    def fn(t):
        names = [m for m in re.finditer(rb'\n\s*name = "letw_[^"]*";', t)]
        m = rng.choice(names)
        return t[:m.start()] + t[m.end():]
    return 'an event block without `name`', edit_tsdl(root, rng, fn)


def d_meta_syntax(root, rng):
    def fn(t):
        i = rng.randrange(len(t) // 4, len(t) - 64)
        return t[:i] + b'}}}} struct ;;;; { event typealias @@@@ ' + t[i + 40:]
    return 'garbled TSDL text', edit_tsdl(root, rng, fn)


def d_meta_wide_field(root, rng):
    """`_code_size` declared 64 bits wide: every later field shifts, and
    sizes decode to absurd values."""
    return '_code_size declared as a 64-bit integer', edit_tsdl(
        root, rng, lambda t: re.sub(rb'size = 32;( align = 8; signed = 0; encoding = none; base = 10; \} _code_size;)',
                                    rb'size = 64;\1', t))


def d_meta_content_past_file(root, rng):
    md = a_metadata(root, rng)
    pk = metadata_packets(md)
    off, cs, ps = rng.choice(pk)
    size = os.path.getsize(md)
    v = (size - off + rng.choice([1, 4096, 1 << 20])) * 8
    patch(md, off + 24, '<II', v, max(v, ps * 8))
    return 'metadata packet content_size past the file at %d' % off, md


def d_meta_cut(root, rng):
    md = a_metadata(root, rng)
    pk = metadata_packets(md)
    off, cs, ps = rng.choice(pk)
    cut = off + rng.randrange(40, max(41, cs))
    os.truncate(md, cut)
    return 'metadata cut at byte %d (inside a packet)' % cut, md


def d_meta_bad_magic(root, rng):
    md = a_metadata(root, rng)
    off, cs, ps = rng.choice(metadata_packets(md))
    patch(md, off, '<I', 0x12345678)
    return 'metadata packet magic damaged at %d' % off, md


def d_meta_deleted(root, rng):
    md = a_metadata(root, rng)
    os.unlink(md)
    return 'metadata deleted', md


def d_meta_fifo(root, rng):
    md = a_metadata(root, rng)
    os.unlink(md)
    os.mkfifo(md)
    return 'metadata replaced by a FIFO', md


def d_meta_devzero(root, rng):
    md = a_metadata(root, rng)
    os.unlink(md)
    os.symlink('/dev/zero', md)
    return 'metadata replaced by a link to /dev/zero', md


def d_meta_emptied(root, rng):
    md = a_metadata(root, rng)
    os.truncate(md, 0)
    return 'metadata truncated to 0 bytes', md


def d_random_bytes(root, rng):
    files = [f for d in trace_dirs(root) for f in
             stream_files(d) + [os.path.join(d, 'metadata')] +
             [index_of(s) for s in stream_files(d) if os.path.exists(index_of(s))]]
    f = rng.choice(files)
    size = os.path.getsize(f)
    n = rng.randrange(1, 32)
    with open(f, 'r+b') as fh:
        for _ in range(n):
            fh.seek(rng.randrange(max(1, size)))
            fh.write(bytes([rng.randrange(256)]))
    return '%d random byte(s) in %s' % (n, os.path.basename(f)), f


def d_unreadable_stream(root, rng):
    s = rng.choice(all_streams(root))
    os.chmod(s, 0)
    return 'stream file mode 000', s


def d_unreadable_dir(root, rng):
    d = rng.choice(trace_dirs(root))
    os.chmod(d, 0)
    return 'trace directory mode 000', d


def add_undescribed(root, rng, empty):
    """A per-process trace (--buffers-pid) of a process that exited before
    LTTng described its channel: its metadata declares no stream class and
    no event, and (empty) its stream files hold only the empty packets
    flushed at its exit. Added beside the trace's own directories; the
    reader refuses it ("No stream class with ID") and with it the rest."""
    src = rng.choice(trace_dirs(root))
    dst = os.path.join(root, 'ust', 'pid', 'letw-exited-4242-20260101-000000')
    os.makedirs(dst)
    text = metadata_text(os.path.join(src, 'metadata'))
    text = re.sub(rb'\n(stream|event) \{.*?\n\};', b'', text, flags=re.S)
    shutil.copyfile(os.path.join(src, 'metadata'), os.path.join(dst, 'metadata'))
    if metadata_packets(os.path.join(dst, 'metadata')):
        write_metadata_text(os.path.join(dst, 'metadata'), text)
    else:
        with open(os.path.join(dst, 'metadata'), 'wb') as f:
            f.write(text)
    made = []
    for s in stream_files(src)[:2]:
        pk = packets(s)
        if not pk:
            continue
        with open(s, 'rb') as f:
            data = f.read()
        out = os.path.join(dst, os.path.basename(s))
        if empty:
            # Header and context only: content_size says no event follows.
            first = bytearray(data[:4096])
            struct.pack_into('<QQ', first, OFF_CONTENT, PKT_HDR_END_CONTEXT * 8, 4096 * 8)
            first[PKT_HDR_END_CONTEXT:] = b'\0' * (4096 - PKT_HDR_END_CONTEXT)
            data = bytes(first)
        with open(out, 'wb') as f:
            f.write(data)
        made.append(out)
    if not made:
        raise NotApplicable('no stream file with a packet in ' + src)
    return made


def d_pid_trace_undescribed(root, rng):
    add_undescribed(root, rng, True)
    return 'a per-process trace whose metadata declares no stream, its files empty packets', None


def d_pid_trace_undescribed_events(root, rng):
    made = add_undescribed(root, rng, False)
    # Named by its directory: any of its files holding events may be the
    # one the refusal names.
    return ('a per-process trace whose metadata declares no stream, its files holding events',
            os.path.dirname(made[0]))


# name: (function, expectation, needs an unprivileged tool run)
CLASSES = {
    'content-size-huge': (d_content_huge, 'error-named', False),
    'packet-size-huge': (d_packet_huge, 'error-named', False),
    'packet-size-past-file': (d_packet_past_file, 'error-named', False),
    'content-past-packet': (d_content_past_packet, 'error-named', False),
    'seq-num-max': (d_seq_max, 'error-named', False),
    'seq-gap': (d_seq_gap, 'incomplete', False),
    'ts-begin-max': (d_ts_begin_max, 'error-named', False),
    'seq-backwards': (d_seq_backwards, 'error-named', False),
    'packet-repeated': (d_packet_repeated, 'error-named', False),
    'packets-swapped': (d_packets_swapped, 'error-named', False),
    'events-discarded': (d_discarded, 'clean', False),
    'events-discarded-back': (d_discarded_back, 'incomplete', False),
    'bad-packet-magic': (d_bad_magic, 'error-named', False),
    'truncated-mid-packet': (d_truncated_mid, 'error-named', False),
    'truncated-at-packet': (d_truncated_at_packet, 'incomplete', False),
    'stream-deleted': (d_stream_deleted, 'incomplete', False),
    'stream-emptied': (d_stream_emptied, 'incomplete', False),
    'stream-devzero': (d_stream_devzero, 'incomplete', False),
    'stream-fifo': (d_stream_fifo, 'incomplete', False),
    'stream-copied-over': (d_stream_copied_over, 'error-named', False),
    'instance-id-dup': (d_instance_id_dup, 'error-named', False),
    'index-name-escape': (d_index_name_escape, 'clean', False),
    'stream-zeroed': (d_stream_zeroed, 'error', False),
    'index-extra-packet': (d_index_extra, 'incomplete', False),
    'index-fewer-packets': (d_index_fewer, 'clean', False),
    'index-garbled': (d_index_garbled, 'clean', False),
    'index-deleted': (d_index_deleted, 'clean', False),
    'index-fifo': (d_index_fifo, 'error-named', False),
    'garbled-events': (d_garbled_events, 'clean', False),
    'invalid-utf8': (d_bad_utf8, 'clean', False),
    'control-chars': (d_control_chars, 'clean', False),
    'absurd-size': (d_absurd_size, 'clean', False),
    'method-address-absurd': (d_method_address_absurd, 'incomplete', False),
    # A damaged Complete says nothing of its pass: never "complete".
    'complete-emitted-absurd': (d_complete_emitted_absurd, 'incomplete', False),
    'complete-walk-absurd': (d_complete_walk_absurd, 'incomplete', False),
    'meta-duplicate-field': (d_meta_duplicate_field, 'error', False),
    'meta-clock-no-freq': (d_meta_no_freq, 'error', False),
    'meta-clock-freq-zero': (d_meta_freq_zero, 'error', False),
    'meta-event-no-name': (d_meta_no_name, 'error', False),
    'meta-syntax': (d_meta_syntax, 'error', False),
    'meta-wide-field': (d_meta_wide_field, 'clean', False),
    'meta-content-past-file': (d_meta_content_past_file, 'error', False),
    'meta-cut-mid-packet': (d_meta_cut, 'error', False),
    'meta-bad-magic': (d_meta_bad_magic, 'clean', False),
    'meta-deleted': (d_meta_deleted, 'error', False),
    'meta-emptied': (d_meta_emptied, 'error', False),
    'meta-fifo': (d_meta_fifo, 'error-named', False),
    'meta-devzero': (d_meta_devzero, 'error-named', False),
    'random-bytes': (d_random_bytes, 'clean', False),
    'pid-trace-undescribed': (d_pid_trace_undescribed, 'readable', False),
    'pid-trace-undescribed-events': (d_pid_trace_undescribed_events, 'error-named', False),
    'unreadable-stream': (d_unreadable_stream, 'error', True),
    'unreadable-dir': (d_unreadable_dir, 'error', True),
}
# A stream file against its index, and packet headers against themselves
# (damage_index.py: this file would pass 1,200 lines).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import damage_index  # noqa: E402
CLASSES.update(damage_index.classes(sys.modules[__name__]))


def apply(cls, src, dst, rng, shared=False):
    """Copy src to dst and damage the copy; shared: readable by every
    user first (the unreadable-* classes then take one path away)."""
    shutil.copytree(src, dst, symlinks=True)
    os.chmod(dst, 0o755)
    if shared:
        subprocess.run(['chmod', '-R', 'a+rX', dst], check=True)
    return CLASSES[cls][0](dst, rng)


# ---- the harness ----

def run_tool(argv, timeout, env=None, user=None):
    """(outcome, exit code or signal, stdout bytes, stderr text)."""
    if user is not None:
        argv = ['setpriv', '--reuid=%d' % user, '--regid=%d' % user,
                '--clear-groups'] + argv
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return 'hang', None, out, err.decode('utf-8', 'replace')
    err = err.decode('utf-8', 'replace')
    if p.returncode < 0:
        return 'signal:' + signal.Signals(-p.returncode).name, p.returncode, out, err
    outcome = {0: 'ok', 1: 'error', 3: 'incomplete'}.get(p.returncode, 'exit%d' % p.returncode)
    # Which layer said no: the reader crashed or hung under the supervisor.
    if outcome == 'error' and 'crashed on' in err:
        outcome = 'error:crash'
    elif outcome == 'error' and ('made no progress' in err or 'without progress' in err):
        outcome = 'error:hang'
    elif outcome == 'error' and 'ran out of memory' in err:
        outcome = 'error:oom'
    return outcome, p.returncode, out, err


def strict_json(b):
    """Problems with a JSON document: '' when it is valid UTF-8 and
    strict JSON."""
    try:
        t = b.decode('utf-8')
    except UnicodeDecodeError as e:
        return 'invalid UTF-8: %s' % e

    def bad_const(c):
        raise ValueError('non-standard constant ' + c)
    try:
        json.loads(t, parse_constant=bad_const)
    except ValueError as e:
        return 'invalid JSON: %s' % e
    return ''


MAP_LINE = re.compile(rb'^[0-9a-f]+ [0-9a-f]+ [^\x00-\x1f\x7f]+$')


def map_problems(d):
    probs = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not re.match(r'^perf-\d+\.map$', f):
            probs.append('stray file ' + f)
            continue
        with open(os.path.join(d, f), 'rb') as fh:
            for n, line in enumerate(fh.read().split(b'\n')[:-1], 1):
                if not MAP_LINE.match(line):
                    probs.append('%s:%d: bad line %r' % (f, n, line[:80]))
                    break
                try:
                    line.decode('utf-8')
                except UnicodeDecodeError:
                    probs.append('%s:%d: invalid UTF-8' % (f, n))
                    break
    return probs


NOPRECHECK_LOSSY = {'seq-backwards'}

# A count near 2^64, or one the complete-* classes wrote (ABSURD_COUNTS),
# as a number or as nanoseconds printed in ms ("walk 18446744073709.551 ms").
ABSURD_PRINTED = re.compile(r'\b1844674407\d{10}\b|' + '|'.join(
    r'\b%d\b|\b%d\.\d' % (v, v // 10**6) for v in ABSURD_COUNTS))


def check(expect, tool, res, named, cls=None):
    """Broken promises of one tool run, as a list of strings."""
    outcome, rc, out, err = res
    bad = []
    if tool == 'babeltrace2':
        return bad  # the reader is not ours to protect: recorded only
    # 'error-named': the pre-checks refuse it, naming the stream file (the
    # reader's own message, without them, may not).
    want_name = expect == 'error-named'
    if want_name:
        expect = 'error'
        if (named and tool != 'report-noprecheck' and outcome.startswith('error')
                and os.path.basename(named) not in err):
            bad.append('the damaged stream %s is not named' % os.path.basename(named))
    # Names from the trace (file names, method names) reach the text the
    # user reads: an escape sequence or a stray line break must not.
    if tool != 'report-json' and '\x1b' in err + out.decode('utf-8', 'replace'):
        bad.append('an escape character (from the trace) in the output')
    error = outcome.startswith('error')
    if not error and outcome not in ('ok', 'incomplete'):
        bad.append('outcome ' + outcome)
    if error and not re.search(r'^lttng-etw: ', err, re.M):
        bad.append('exit 1 without an lttng-etw message')
    if 'analysis crashed' in err:
        bad.append('our own code crashed')
    # Without the pre-checks the reader itself meets the damage: some of
    # it (a first packet's sequence number of 2^64-1) it reads fine.
    if expect == 'error' and not error and tool != 'report-noprecheck':
        bad.append('expected an error (exit 1), got ' + outcome)
    # Without the pre-checks the reader takes a sequence number going back
    # for 2^64 - 2 packets lost, and the next for the rest of 2^64: their
    # sum once wrapped to 0 and the report said "trace complete".
    if cls in NOPRECHECK_LOSSY and tool == 'report-noprecheck' and outcome == 'ok':
        bad.append('said complete although the reader reported packets lost')
    # 'readable': something the reader alone refuses, which the tools
    # leave out because nothing is lost: the rest is read as usual.
    if expect == 'readable' and error and tool != 'report-noprecheck':
        bad.append('expected the rest of the trace read, got ' + outcome)
    # A count past 2^48 is a counter gone back, not a count: said as
    # unknown, never printed (or summed into 2^64 - 1). Not in an error:
    # the reader's own error causes, relayed as they are, print its
    # sentinels ("last-eh-at=18446744073709551615").
    if not outcome.startswith('error') and ABSURD_PRINTED.search(
            err + out.decode('utf-8', 'replace')):
        bad.append('a count near 2^64 in the output')
    if expect == 'incomplete':
        # Exit 3; or exit 1 when nothing was left to work on (perfmap with
        # no code record in what remains), still naming what is missing.
        if outcome != 'incomplete' and not error:
            bad.append('expected incomplete (exit 3), got ' + outcome)
        text = err + out.decode('utf-8', 'replace')
        if 'incomplete' not in text:
            bad.append('"incomplete" not said')
        if named and os.path.basename(named) not in text:
            bad.append('the damaged stream %s is not named' % os.path.basename(named))
    return bad


# report-noprecheck: the report with LETW_NO_PRECHECK=1, so the reader
# meets the damage and the supervisor's side is what is checked.
TOOLS = ('report', 'report-json', 'perfmap', 'jitdump', 'report-noprecheck', 'babeltrace2')


def run_case(args, cls, rng, case_dir):
    fn, expect, unpriv = CLASSES[cls]
    trace = os.path.join(case_dir, 'trace')
    user = None
    if unpriv and os.geteuid() == 0:
        # Root reads everything: run the tools as nobody, who can reach
        # the trace but not the path the damage took away.
        user = 65534
        for d in (args.work, case_dir):
            os.chmod(d, 0o755)
    desc, named = apply(cls, args.trace, trace, rng, shared=user is not None)
    env = dict(os.environ)
    env['LETW_STALL_TIMEOUT'] = str(args.stall_timeout)
    # A damaged length can make the reader allocate without end (and
    # fault pages, which the stall watch counts as progress): the cap
    # turns that into an error quickly, at any machine's memory size.
    env['LETW_MEMORY_LIMIT'] = str(args.memory_limit)
    cli = [args.cli]
    results = {}
    for tool in TOOLS:
        if tool == 'babeltrace2' and args.no_babeltrace:
            continue
        tenv = env
        if tool == 'report':
            argv = cli + ['report', trace, '--no-progress']
        elif tool == 'report-noprecheck':
            argv = cli + ['report', trace, '--no-progress']
            tenv = dict(env, LETW_NO_PRECHECK='1')
        elif tool == 'report-json':
            argv = cli + ['report', trace, '--json', '--no-progress']
        elif tool == 'perfmap':
            md = os.path.join(case_dir, 'maps')
            if user is not None:
                os.makedirs(md, exist_ok=True)
                os.chmod(md, 0o777)
            argv = cli + ['perfmap', trace, '-o', md, '--no-progress']
        elif tool == 'jitdump':
            jd = os.path.join(case_dir, 'dumps')
            if user is not None:
                os.makedirs(jd, exist_ok=True)
                os.chmod(jd, 0o777)
            argv = cli + ['jitdump', trace, '-o', jd, '--no-progress']
        else:
            argv = ['babeltrace2', '--plugin-path=' + args.plugin_dir, trace,
                    '-c', 'sink.etw.report']
        res = run_tool(argv, args.tool_timeout, tenv, user)
        bad = check(expect, tool, res, named, cls)
        if tool == 'report-json' and res[0] in ('ok', 'incomplete'):
            p = strict_json(res[2])
            if p:
                bad.append(p)
        if tool == 'perfmap':
            bad += map_problems(os.path.join(case_dir, 'maps'))
        results[tool] = (res, bad)
    return desc, named, results


def table(counts, classes):
    tools = [t for t in TOOLS if any((c, t) in counts for c in classes)]
    width = max(len(c) for c in classes) + 2
    lines = ['%-*s %s' % (width, 'damage class', ' | '.join('%-26s' % t for t in tools))]
    for c in classes:
        cells = []
        for t in tools:
            oc = counts.get((c, t), {})
            cells.append('%-26s' % ' '.join('%s:%d' % kv for kv in sorted(oc.items())))
        lines.append('%-*s %s' % (width, c, ' | '.join(cells)))
    return '\n'.join(lines)


def cmd_run(args):
    rng = random.Random(args.seed)
    classes = args.classes.split(',') if args.classes else [
        c for c in CLASSES if c not in damage_index.NOT_DEFAULT]
    for c in classes:
        if c not in CLASSES:
            sys.exit('damage.py: unknown class ' + c)
    args.work = args.work or tempfile.mkdtemp(prefix='letw-damage.')
    os.makedirs(args.work, exist_ok=True)
    counts, failures, not_applicable, n = {}, [], [], 0
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    plan = None if (args.random or deadline) else list(classes)
    while True:
        if plan is not None:
            if not plan:
                break
            cls = plan.pop(0)
        else:
            if (args.random and n >= args.random) or (deadline and time.time() >= deadline):
                break
            cls = rng.choice(classes)
        case_dir = os.path.join(args.work, 'case%05d' % n)
        os.makedirs(case_dir)
        case_seed = rng.randrange(1 << 30)
        try:
            desc, named, results = run_case(args, cls, random.Random(case_seed), case_dir)
        except NotApplicable as e:
            print('# %s (seed %d): not applicable: %s' % (cls, case_seed, e), file=sys.stderr)
            not_applicable.append('%s (seed %d): %s' % (cls, case_seed, e))
            shutil.rmtree(case_dir, ignore_errors=True)
            n += 1
            continue
        line = '# %s (seed %d): %s:' % (cls, case_seed, desc)
        for tool, (res, bad) in results.items():
            counts.setdefault((cls, tool), {})
            counts[(cls, tool)][res[0]] = counts[(cls, tool)].get(res[0], 0) + 1
            first = next((l for l in res[3].splitlines() if l.startswith('lttng-etw:')), '')
            line += ' %s=%s' % (tool, res[0])
            if args.verbose and first:
                line += ' [%s]' % first[:160]
            for b in bad:
                failures.append('%s/%s (case seed %d, %s): %s\n    stderr: %s' % (
                    cls, tool, case_seed, desc, b, res[3].strip()[-600:]))
        print(line, file=sys.stderr)
        if not args.keep:
            subprocess.run(['chmod', '-R', 'u+rwX', case_dir], check=False)
            shutil.rmtree(case_dir, ignore_errors=True)
        n += 1
    print(table(counts, [c for c in classes if any((c, t) in counts for t in TOOLS)]))
    print('%d case(s), %d broken promise(s), %d not applicable (%d allowed)' % (
        n, len(failures), len(not_applicable), args.allow_na))
    for f in failures:
        print('BROKEN: ' + f)
    if len(not_applicable) > args.allow_na:
        # A class that silently stops applying (a pattern no longer in
        # the trace) would otherwise drop out of the run unseen.
        for c in not_applicable:
            print('NOT APPLICABLE: ' + c)
        failures.append('too many classes not applicable')
    return 1 if (args.check and failures) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    sub.add_parser('list')
    a = sub.add_parser('apply')
    a.add_argument('cls')
    a.add_argument('src')
    a.add_argument('dst')
    a.add_argument('--seed', type=int, default=1)
    a.add_argument('--stream', help='damage this stream file (base name) '
                   'instead of one picked at random')
    r = sub.add_parser('run')
    r.add_argument('--trace', required=True)
    r.add_argument('--cli', required=True)
    r.add_argument('--plugin-dir', default='')
    r.add_argument('--work')
    r.add_argument('--classes')
    r.add_argument('--stream', help='damage this stream file (base name) '
                   'in every case')
    r.add_argument('--random', type=int, default=0)
    r.add_argument('--minutes', type=float, default=0)
    r.add_argument('--seed', type=int, default=1)
    r.add_argument('--stall-timeout', type=float, default=2)
    r.add_argument('--tool-timeout', type=float, default=30)
    r.add_argument('--memory-limit', type=int, default=1024,
                   help="MiB the CLI's reader may take (LETW_MEMORY_LIMIT)")
    r.add_argument('--no-babeltrace', action='store_true')
    r.add_argument('--check', action='store_true')
    r.add_argument('--allow-na', type=int, default=ALLOWED_NA,
                   help='cases that may be not applicable (default %(default)s)')
    r.add_argument('--keep', action='store_true')
    r.add_argument('-v', '--verbose', action='store_true')
    args = ap.parse_args()
    if args.cmd == 'list':
        for c, (fn, e, u) in CLASSES.items():
            print('%-24s %-10s %s' % (c, e, (fn.__doc__ or '').strip().split('\n')[0]))
        return 0
    global ONLY_STREAM
    if args.cmd == 'apply':
        ONLY_STREAM = args.stream
        desc, named = apply(args.cls, args.src, args.dst, random.Random(args.seed))
        print('%s: %s' % (named, desc))
        return 0
    ONLY_STREAM = args.stream
    return cmd_run(args)


if __name__ == '__main__':
    sys.exit(main())
