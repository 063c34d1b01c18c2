#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How many of a provider's tracepoints lttng-ust switched on in a process,
read from the process itself: usage: tp_state.py PID PROVIDER.

Prints "ON of TOTAL". A tracepoint is on when lttng-ust connected a probe
to it (an event recorder of a started session, or an event notifier of a
trigger): its `state` field (struct lttng_ust_tracepoint, lttng-ust's
tracepoint-types.h, base ABI). Nothing else tells from outside that a
trigger reached a process, since a trigger is no session (`lttng list`
shows none) and the process runs no pass for it.

The tracepoint structures are found by their symbols
(lttng_ust_tracepoint_PROVIDER___EVENT, local symbols of the library
defining them: liblttng-etw's .symtab, so an unstripped build) and read
through /proc/PID/mem (ptrace access: root or the same user). Each one's
provider and event names are read back through its own pointers: a layout
that is not the one assumed fails (exit 2) instead of reading a wrong
field."""
import struct
import sys

SHT_SYMTAB = 2


def symbols(path, prefix):
    """{name: st_value} of the .symtab symbols of ELF64 file path whose
    names start with prefix."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        return {}  # not a little-endian ELF64
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum = struct.unpack_from('<HH', data, 0x3a)
    out = {}
    for i in range(shnum):
        sh = struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize)
        if sh[1] != SHT_SYMTAB:
            continue
        link = struct.unpack_from('<IIQQQQIIQQ', data, shoff + sh[6] * shentsize)
        stroff = link[4]
        for off in range(sh[4], sh[4] + sh[5], 24):
            st_name, _, _, _, st_value, _ = struct.unpack_from('<IBBHQQ', data, off)
            end = data.index(b'\0', stroff + st_name)
            name = data[stroff + st_name:end].decode('latin-1')
            if name.startswith(prefix) and st_value:
                out[name] = st_value
    return out


def mapped_files(pid):
    """{path: load base} of the files mapped in pid (base: the start of the
    mapping at file offset 0)."""
    bases = {}
    with open('/proc/%d/maps' % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or not parts[5].startswith('/'):
                continue
            if int(parts[2], 16) == 0:
                bases.setdefault(parts[5].strip(), int(parts[0].split('-')[0], 16))
    return bases


def cstring(mem, addr):
    mem.seek(addr)
    return mem.read(128).split(b'\0', 1)[0].decode('latin-1')


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: tp_state.py PID PROVIDER')
    pid, provider = int(sys.argv[1]), sys.argv[2]
    prefix = 'lttng_ust_tracepoint_%s___' % provider
    found = None
    for path, base in mapped_files(pid).items():
        try:
            syms = symbols(path, prefix)
        except OSError:
            continue
        if syms:
            found = (path, base, syms)
            break
    if not found:
        print('tp_state: no mapped file of %d defines %s* (stripped?)' % (pid, prefix),
              file=sys.stderr)
        sys.exit(2)
    path, base, syms = found
    on = 0
    with open('/proc/%d/mem' % pid, 'rb') as mem:
        for name, value in sorted(syms.items()):
            mem.seek(base + value)
            # struct_size (u32), provider_name, event_name, state (int)
            _, prov, event, state = struct.unpack('<I4xQQi', mem.read(28))
            want = name[len(prefix):]
            if cstring(mem, prov) != provider or cstring(mem, event) != want:
                print('tp_state: %s in %s is not laid out as lttng-ust 2.13 base ABI'
                      % (name, path), file=sys.stderr)
                sys.exit(2)
            on += state != 0
    print('%d of %d' % (on, len(syms)))


if __name__ == '__main__':
    main()
