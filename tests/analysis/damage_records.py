# SPDX-License-Identifier: MIT
"""damage.py's classes for lttng-etw's own records inside intact packets:
names that are not UTF-8 or hold control characters, method records at
addresses no process has, and rundown Completes whose counters are no
counts. The tools must keep every output valid, and call a trace whose
records are absurd incomplete, naming the file that holds them.

bind(D) gives it the damage module (its trace helpers, and the --stream
choice they honour); damage.py's CLASSES table names these functions.
"""
import re
import struct
import subprocess

D = None
U64_MAX = (1 << 64) - 1


def bind(module):
    global D
    D = module


def find_all(data, pat):
    out, i = [], data.find(pat)
    while i >= 0:
        out.append(i)
        i = data.find(pat, i + 1)
    return out


def string_sites(root, rng):
    """Offsets of name strings in the event area of stream files."""
    sites = []
    for s in D.all_streams(root):
        with open(s, 'rb') as f:
            data = f.read()
        for pat in (b'fn_', b'minijit.', b'VSD_', b'stub'):
            sites += [(s, i) for i in find_all(data, pat)]
    return sites


def overwrite_names(root, rng, patterns, what):
    """Overwrite the start of up to 40 name strings with one of patterns."""
    sites = string_sites(root, rng)
    if not sites:
        return D.d_garbled_events(root, rng)
    picks = rng.sample(sites, min(len(sites), rng.randrange(1, 40)))
    for s, i in picks:
        D.patch(s, i, '3B', *rng.choice(patterns))
    return '%s in %d name(s)' % (what, len(picks)), picks[0][0]


def d_bad_utf8(root, rng):
    return overwrite_names(root, rng, [(0xff, 0xfe, 0x80), (0xc3, 0x28, 0x41),
                                       (0xed, 0xa0, 0x80), (0xe2, 0x82, 0x20)],
                           'invalid UTF-8')


def d_control_chars(root, rng):
    return overwrite_names(root, rng, [(0x0a, 0x0d, 0x09), (0x1b, 0x5b, 0x32),
                                       (0x7f, 0x0a, 0x0a), (0xc2, 0x85, 0x0a)],
                           'control characters')


# ... code_start u64, code_size u32, token u32, flags u32, version u64, namespace
METHOD_START_BACK, METHOD_SIZE_BACK = 28, 20


def looks_like_method(data, i):
    """Whether the namespace string at i ends a method record's fixed
    fields: a user-space code start, a code size a JIT makes, a version
    id. A module record names its module `minijit.ModuleK` too, with other
    fields before it: patched as a method's, its damage broke the event
    itself (the reader's error, where the class promises `incomplete`: a
    CI run met one in 2026-12-07's malformed_e2e)."""
    if i < METHOD_START_BACK:
        return False
    start, size = struct.unpack_from('<QI', data, i - METHOD_START_BACK)
    version, = struct.unpack_from('<Q', data, i - 8)
    return 0x1000 <= start < (1 << 47) and 0 < size < (1 << 20) and version < (1 << 32)


def in_content(pkts, i):
    """Whether offset i lies in a packet's content: past content_size, a
    reused sub-buffer keeps old events' bytes, which no reader decodes
    (damage there changed nothing: the trace stayed complete, where the
    class promises `incomplete`)."""
    return any(off <= i < off + cs for off, cs, _, _ in pkts)


def method_sites(root):
    """(stream, offset of the namespace) of every method record, located
    by its namespace string and checked by its fields and place."""
    sites = []
    for s in D.all_streams(root):
        with open(s, 'rb') as f:
            data = f.read()
        pkts = D.packets(s)
        sites += [(s, i) for i in find_all(data, b'minijit.Module')
                  if looks_like_method(data, i) and in_content(pkts, i - METHOD_START_BACK)]
    return sites
# Code starts no user space holds (the analysis takes up to 2^57).
ABSURD_STARTS = (0x7ffffffffffff000, U64_MAX - 16, 0xffff800000000000)


def d_absurd_size(root, rng):
    """Method records (located by their namespace string): code_size or
    code_start set to values no JIT produces."""
    sites = method_sites(root)
    if not sites:
        return D.d_garbled_events(root, rng)
    picks = rng.sample(sites, min(len(sites), rng.randrange(1, 8)))
    for s, i in picks:
        if rng.random() < 0.5:
            D.patch(s, i - METHOD_SIZE_BACK, '<I', rng.choice([0xffffffff, 0x80000000, 0xfffff000]))
        else:
            D.patch(s, i - METHOD_START_BACK, '<Q', rng.choice(ABSURD_STARTS))
    return 'absurd code_size/code_start in %d method record(s)' % len(picks), picks[0][0]


def d_method_address_absurd(root, rng):
    """Method records at a code_start past user space: absurd records the
    analysis leaves out, the trace called incomplete, naming the file."""
    sites = method_sites(root)
    if not sites:
        raise D.NotApplicable('no method record in ' + root)
    picks = rng.sample(sites, min(len(sites), rng.randrange(1, 8)))
    for s, i in picks:
        D.patch(s, i - METHOD_START_BACK, '<Q', rng.choice(ABSURD_STARTS))
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
        hits = [(st, i) for st in D.all_streams(root)
                for i in find_all(open(st, 'rb').read(), pat)]
        if len(hits) != 1:
            continue  # two passes alike (never seen): not one to damage
        sites.append((hits[0][0], hits[0][1], m.group(1), vals))
    if not sites:
        raise D.NotApplicable('no rundown complete event in the trace')
    return sites


def damage_completes(root, rng, fields):
    """Every Complete gets one of fields (in turn) set to an absurd count."""
    sites = complete_sites(root)
    first, vfirst = rng.randrange(len(fields)), rng.randrange(len(ABSURD_COUNTS))
    said = []
    for n, (st, off, fl, vals) in enumerate(sites):
        field = fields[(first + n) % len(fields)]
        v = ABSURD_COUNTS[(vfirst + n) % len(ABSURD_COUNTS)]
        D.patch(st, off + 8 * (1 + COMPLETE_FIELDS.index(field)), '<Q', v)
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
