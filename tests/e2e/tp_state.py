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
defining them, listed by `nm`: liblttng-etw's .symtab, so an unstripped build) and read
through /proc/PID/mem (ptrace access: root or the same user). Each one's
provider and event names are read back through its own pointers: a layout
that is not the one assumed fails (exit 2) instead of reading a wrong
field."""
import struct
import subprocess
import sys

def symbols(path, prefix):
    """{name: value} of the symbols of ELF file path (its .symtab, local
    ones included: `nm`) whose names start with prefix."""
    res = subprocess.run(['nm', '--defined-only', path], capture_output=True, text=True)
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith(prefix) and int(parts[0], 16):
            out[parts[2]] = int(parts[0], 16)
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
