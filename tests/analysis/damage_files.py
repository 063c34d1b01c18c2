# SPDX-License-Identifier: MIT
"""damage.py's classes for whole stream files and their LTTng index files:
a stream file deleted, emptied, zeroed, copied over another, replaced by
/dev/zero or a FIFO; two files claiming one stream; an index listing more
or fewer packets than its file, garbled, deleted, or a FIFO. What a stream
lost must be called incomplete, naming it; what the reader cannot open
must end in a clear error, never a hang.

bind(D) gives it the damage module (its trace helpers, and the --stream
choice they honour); damage.py's CLASSES table names these functions.
"""
import os
import shutil
import struct

D = None


def bind(module):
    global D
    D = module


def d_stream_deleted(root, rng, s=None):
    s = s or rng.choice(D.all_streams(root))
    os.unlink(s)
    return 'stream file deleted (index kept)', s


def d_stream_emptied(root, rng, s=None):
    s = s or rng.choice(D.all_streams(root))
    os.truncate(s, 0)
    return 'stream file truncated to 0 bytes (index kept)', s


def two_streams(rng, root):
    """Two stream files of one trace, with D.packets."""
    for d in D.trace_dirs(root):
        found = [s for s in D.stream_files(d) if D.packets(s)]
        if len(found) >= 2:
            return rng.sample(found, 2)
    raise D.NotApplicable('no trace with two stream files')


def d_stream_copied_over(root, rng):
    a, b = two_streams(rng, root)
    shutil.copyfile(a, b)
    return 'stream file overwritten by a copy of %s' % os.path.basename(a), b


def span(path):
    """(first packet's timestamp_begin, last packet's timestamp_end)."""
    pk = D.packets(path)
    with open(path, 'rb') as f:
        data = f.read()
    tb, = struct.unpack_from('<Q', data, pk[0][0] + D.OFF_TS_BEGIN)
    te, = struct.unpack_from('<Q', data, pk[-1][0] + D.OFF_TS_END)
    return tb, te


def d_instance_id_dup(root, rng):
    """Every packet of b claims a's stream_instance_id: two files, one
    stream, over the same time (the reader's muxer then fails naming no
    file). Files whose times overlap: under tracefile rotation a file
    between two pieces of a's stream would read as one more piece of it,
    which loses nothing and is no damage the reader or we can see."""
    files = [s for d in D.trace_dirs(root) for s in D.stream_files(d) if D.packets(s)]
    pairs = [(a, b) for a in files for b in files
             if a != b and os.path.dirname(a) == os.path.dirname(b)
             and span(a)[0] < span(b)[1] and span(b)[0] < span(a)[1]]
    if not pairs:
        raise D.NotApplicable('no two stream files overlapping in time')
    a, b = rng.choice(pairs)
    iid, = struct.unpack_from('<Q', open(a, 'rb').read(), D.OFF_INSTANCE_ID)
    for off, _cs, _ps, _seq in D.packets(b):
        D.patch(b, off + D.OFF_INSTANCE_ID, '<Q', iid)
    return 'stream_instance_id of every packet set to that of %s' % os.path.basename(a), b


def d_index_name_escape(root, rng):
    """An index for a stream file that is not there, named with a line
    break and an escape sequence: the report names that stream."""
    s = rng.choice(D.all_streams(root))
    weird = os.path.join(os.path.dirname(s), 'chan\nnel\x1b[31m_0')
    shutil.copyfile(D.index_of(s), D.index_of(weird))
    return 'an index for a missing stream file named with a newline and ESC', None


def d_stream_devzero(root, rng):
    s = rng.choice(D.all_streams(root))
    os.unlink(s)
    os.symlink('/dev/zero', s)
    return 'stream file replaced by a link to /dev/zero', s


def d_stream_fifo(root, rng):
    s = rng.choice(D.all_streams(root))
    os.unlink(s)
    os.mkfifo(s)
    return 'stream file replaced by a FIFO', s


def d_stream_zeroed(root, rng):
    s = rng.choice(D.all_streams(root))
    size = os.path.getsize(s)
    with open(s, 'wb') as f:
        f.write(b'\0' * size)
    return 'stream file overwritten with zeros', s


def d_index_extra(root, rng):
    s = rng.choice([x for x in D.all_streams(root) if os.path.exists(D.index_of(x))])
    ip = D.index_of(s)
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
    s = rng.choice([x for x in D.all_streams(root)
                    if os.path.exists(D.index_of(x)) and len(D.packets(x)) > 1] or
                   [x for x in D.all_streams(root) if os.path.exists(D.index_of(x))])
    ip = D.index_of(s)
    with open(ip, 'rb') as f:
        data = f.read()
    elen, = struct.unpack_from('>I', data, 12)
    if len(data) - 16 >= elen:
        os.truncate(ip, len(data) - elen)
    return 'index lists one packet fewer than the stream holds', s


def d_index_garbled(root, rng):
    s = rng.choice([x for x in D.all_streams(root) if os.path.exists(D.index_of(x))])
    ip = D.index_of(s)
    size = os.path.getsize(ip)
    with open(ip, 'r+b') as f:
        for _ in range(8):
            f.seek(rng.randrange(size))
            f.write(bytes([rng.randrange(256)]))
    return 'random bytes in the index file', s


def d_index_deleted(root, rng):
    s = rng.choice([x for x in D.all_streams(root) if os.path.exists(D.index_of(x))])
    os.unlink(D.index_of(s))
    return 'index file deleted', s


def d_index_fifo(root, rng):
    # The reader maps the index of every stream file it reads: opening a
    # FIFO waits for a writer forever (the pre-checks refuse it; without
    # them the supervisor must see the reader asleep on it).
    s = rng.choice([x for x in D.all_streams(root) if os.path.exists(D.index_of(x))])
    os.unlink(D.index_of(s))
    os.mkfifo(D.index_of(s))
    return 'index file replaced by a FIFO', D.index_of(s)
