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
import os
import random
import re
import shutil
import struct
import subprocess
import sys

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
        return F.d_stream_emptied(root, rng, s)
    os.truncate(s, off)
    return 'cut at packet boundary %d (index still lists the rest)' % off, s


def d_garbled_events(root, rng):
    s, start, n = event_bytes(rng, root)
    with open(s, 'r+b') as f:
        for _ in range(rng.randrange(1, 16)):
            if n <= 0:
                break
            f.seek(start + rng.randrange(n))
            f.write(os.urandom(rng.randrange(1, 64)))
    return 'random bytes in event payloads', s


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


# Whole files, records inside intact packets, and the metadata: their
# classes live in damage_files.py, damage_records.py and damage_meta.py,
# the harness in damage_harness.py (together they were 1,240 lines); this
# table keeps every class's name, order (a seed's cases depend on it) and
# expectation in one place.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import damage_files as F  # noqa: E402
import damage_records as R  # noqa: E402
import damage_meta as M  # noqa: E402
import damage_harness as H  # noqa: E402
for _m in (F, R, M, H):
    _m.bind(sys.modules[__name__])

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
    # Lost events, said of the file where the counter rose.
    'events-discarded': (d_discarded, 'incomplete', False),
    'events-discarded-back': (d_discarded_back, 'incomplete', False),
    'bad-packet-magic': (d_bad_magic, 'error-named', False),
    'truncated-mid-packet': (d_truncated_mid, 'error-named', False),
    'truncated-at-packet': (d_truncated_at_packet, 'incomplete', False),
    'stream-deleted': (F.d_stream_deleted, 'incomplete', False),
    'stream-emptied': (F.d_stream_emptied, 'incomplete', False),
    'stream-devzero': (F.d_stream_devzero, 'incomplete', False),
    'stream-fifo': (F.d_stream_fifo, 'incomplete', False),
    'stream-copied-over': (F.d_stream_copied_over, 'error-named', False),
    'instance-id-dup': (F.d_instance_id_dup, 'error-named', False),
    'index-name-escape': (F.d_index_name_escape, 'clean', False),
    'stream-zeroed': (F.d_stream_zeroed, 'error', False),
    'index-extra-packet': (F.d_index_extra, 'incomplete', False),
    'index-fewer-packets': (F.d_index_fewer, 'clean', False),
    'index-garbled': (F.d_index_garbled, 'clean', False),
    'index-deleted': (F.d_index_deleted, 'clean', False),
    'index-fifo': (F.d_index_fifo, 'error-named', False),
    'garbled-events': (d_garbled_events, 'clean', False),
    'invalid-utf8': (R.d_bad_utf8, 'clean', False),
    'control-chars': (R.d_control_chars, 'clean', False),
    'absurd-size': (R.d_absurd_size, 'clean', False),
    'method-address-absurd': (R.d_method_address_absurd, 'incomplete', False),
    # A damaged Complete says nothing of its pass: never "complete".
    'complete-emitted-absurd': (R.d_complete_emitted_absurd, 'incomplete', False),
    'complete-walk-absurd': (R.d_complete_walk_absurd, 'incomplete', False),
    'meta-duplicate-field': (M.d_meta_duplicate_field, 'error', False),
    'meta-clock-no-freq': (M.d_meta_no_freq, 'error', False),
    'meta-clock-freq-zero': (M.d_meta_freq_zero, 'error', False),
    'meta-event-no-name': (M.d_meta_no_name, 'error', False),
    'meta-syntax': (M.d_meta_syntax, 'error', False),
    'meta-wide-field': (M.d_meta_wide_field, 'clean', False),
    'meta-content-past-file': (M.d_meta_content_past_file, 'error', False),
    'meta-cut-mid-packet': (M.d_meta_cut, 'error', False),
    'meta-bad-magic': (M.d_meta_bad_magic, 'clean', False),
    'meta-deleted': (M.d_meta_deleted, 'error', False),
    'meta-emptied': (M.d_meta_emptied, 'error', False),
    'meta-fifo': (M.d_meta_fifo, 'error-named', False),
    'meta-devzero': (M.d_meta_devzero, 'error-named', False),
    'random-bytes': (d_random_bytes, 'clean', False),
    'pid-trace-undescribed': (d_pid_trace_undescribed, 'readable', False),
    'pid-trace-undescribed-events': (d_pid_trace_undescribed_events, 'error-named', False),
    'unreadable-stream': (d_unreadable_stream, 'error', True),
    'unreadable-dir': (d_unreadable_dir, 'error', True),
}
# A stream file against its index, and packet headers against themselves
# (damage_index.py).
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
    return H.cmd_run(args)


if __name__ == '__main__':
    sys.exit(main())
