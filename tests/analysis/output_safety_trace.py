#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write a small CTF trace of lttng-etw events for output_safety_e2e.sh.

The test is about how the CLI writes its output files, not about what it
reads: a trace made here (report_logic.py's schema, with the vpid and
pid_ns contexts, through sink.ctf.fs) needs no LTTng session and gives
exactly the shape each check wants.

usage: output_safety_trace.py KIND DIR
  one    process 100, one complete DCStart pass of three methods
  two    process 2 in two pid namespaces (4026532001, 4026532002)
  empty  a valid trace with no lttng-etw event (the report fails on it)
  big    process 100, 3000 methods with 1000-character names: a 3 MB
         jitdump, which on a 1 MiB disk fails while a record's name is
         put (not its filler, whose writer always said the errno)
  reuse  process 100: alpha's address unloaded, then beta loaded there (a
         range that held different code over time: perfmap's note)
  slow   process 100, 3000 methods of 64 KiB with 1000-character names:
         a 200 MB jitdump (of filler) and a 3 MB map, long enough to write
         that interrupt_e2e.py stops the writer while the output's
         temporary file exists
"""
import os
import sys

import bt2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_logic import complete, event_classes, init, method  # noqa: E402


class Iter(bt2._UserMessageIterator):
    def __init__(self, config, port):
        self._msgs = self._build(port.user_data)

    def _build(self, s):
        stream = s.trace.create_stream(s.sc)
        yield self._create_stream_beginning_message(stream)
        pkt = stream.create_packet()
        yield self._create_packet_beginning_message(pkt)
        for name, ts, (vpid, pid_ns), fields in s.steps:
            msg = self._create_event_message(s.ec[name], pkt, default_clock_snapshot=ts)
            msg.event.common_context_field['vpid'] = vpid
            msg.event.common_context_field['pid_ns'] = pid_ns
            for k, v in fields.items():
                msg.event.payload_field[k] = v
            yield msg
        yield self._create_packet_end_message(pkt)
        yield self._create_stream_end_message(stream)

    def __next__(self):
        return next(self._msgs)


class Source(bt2._UserSourceComponent, message_iterator_class=Iter):
    def __init__(self, config, params, steps):
        tc = self._create_trace_class()
        cc = self._create_clock_class(frequency=1000000000)
        ctx = tc.create_structure_field_class()
        ctx.append_member('vpid', tc.create_signed_integer_field_class(32))
        ctx.append_member('pid_ns', tc.create_unsigned_integer_field_class(64))
        # sink.ctf.fs writes packets only.
        self.sc = tc.create_stream_class(default_clock_class=cc,
                                         event_common_context_field_class=ctx,
                                         supports_packets=True)
        self.ec = event_classes(tc, self.sc)
        self.trace = tc()
        self.steps = steps
        self._add_output_port('out', self)


def process(key, t0, names, base=0x10000, size=0x10):
    steps = [init(t0, 1, vpid=key)]
    for i, n in enumerate(names):
        steps.append(method('method_dcstart', t0 + 1 + i, base + i * size, n, vpid=key,
                            size=size))
    return steps + [complete(t0 + 1 + len(names), 1, len(names), vpid=key)]


def steps_of(kind):
    ns = 4026531836
    if kind == 'one':
        return process((100, ns), 10, ['alpha', 'beta', 'gamma'])
    if kind == 'two':
        return (process((2, 4026532001), 10, ['alpha']) +
                process((2, 4026532002), 100, ['beta'], base=0x40000))
    if kind == 'empty':
        return []
    if kind == 'reuse':
        return process((100, ns), 10, ['alpha']) + [
            method('method_unload', 20, 0x10000, 'alpha', vpid=(100, ns)),
            method('method_load', 21, 0x10000, 'beta', vpid=(100, ns))]
    if kind == 'big':
        return process((100, ns), 10, ['m%05d_' % i + 'x' * 1000 for i in range(3000)])
    if kind == 'slow':
        return process((100, ns), 10, ['m%05d_' % i + 'x' * 1000 for i in range(3000)],
                       size=1 << 16)
    sys.exit('unknown kind %s' % kind)


def write(kind, out):
    """The trace of that kind into the directory out."""
    g = bt2.Graph()
    src = g.add_component(Source, 'src', obj=steps_of(kind))
    sink = g.add_component(bt2.find_plugin('ctf').sink_component_classes['fs'], 'sink',
                           params={'path': out, 'assume-single-trace': True,
                                   'quiet': True})
    g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
    g.run()


if __name__ == '__main__':
    write(sys.argv[1], sys.argv[2])
