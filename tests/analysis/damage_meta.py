# SPDX-License-Identifier: MIT
"""damage.py's classes for a trace's metadata: TSDL the reader refuses or
crashes on (a field declared twice, a clock without a frequency, a syntax
error), metadata packets cut or sized past the file, and the metadata file
deleted, emptied or replaced by a FIFO or /dev/zero. Each must end in a
clear error (no crash, no hang reaches the user).

bind(D) gives it the damage module (its trace helpers); damage.py's CLASSES
table names these functions.
"""
import os
import re

D = None


def bind(module):
    global D
    D = module


def a_metadata(root, rng):
    return os.path.join(rng.choice(D.trace_dirs(root)), 'metadata')


def edit_tsdl(root, rng, fn):
    md = a_metadata(root, rng)
    text = D.metadata_text(md)
    new = fn(text)
    if new == text:
        raise D.NotApplicable('metadata edit matched nothing')
    if D.metadata_packets(md):
        D.write_metadata_text(md, new)
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
    pk = D.metadata_packets(md)
    off, cs, ps = rng.choice(pk)
    size = os.path.getsize(md)
    v = (size - off + rng.choice([1, 4096, 1 << 20])) * 8
    D.patch(md, off + 24, '<II', v, max(v, ps * 8))
    return 'metadata packet content_size past the file at %d' % off, md


def d_meta_cut(root, rng):
    md = a_metadata(root, rng)
    pk = D.metadata_packets(md)
    off, cs, ps = rng.choice(pk)
    cut = off + rng.randrange(40, max(41, cs))
    os.truncate(md, cut)
    return 'metadata cut at byte %d (inside a packet)' % cut, md


def d_meta_bad_magic(root, rng):
    md = a_metadata(root, rng)
    off, cs, ps = rng.choice(D.metadata_packets(md))
    D.patch(md, off, '<I', 0x12345678)
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
