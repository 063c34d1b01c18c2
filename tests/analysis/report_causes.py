#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""report_logic.py's cases of the report's causes: why a pass is not
complete, from the evidence of a trace of several streams with packets
(streams beginning late, their stream files' first packet numbers,
sequence gaps, discarded events), fed to the real sink through a bt2
source. Run by report_logic.py."""
import json
import os
import shutil
import struct
import tempfile

import bt2

from report_logic import complete, event_classes, init, method, passes

class StreamsIter(bt2._UserMessageIterator):
    """Several streams with packets: ('packet', i, ts) begins stream i's
    next packet (ending its open one), ('discard', i, beg, end, count)
    and ('lost', i, beg, end, count) are discarded events and packets,
    ('on', i, EVENT) puts an event (method(), init(), ...) in stream i."""

    def __init__(self, config, port):
        self._src = port.user_data
        self._msgs = self._build()

    def _build(self):
        s = self._src
        streams = [s.trace.create_stream(s.scs[cls], name=name) for name, cls in s.streams]
        for st in streams:
            yield self._create_stream_beginning_message(st)
        pk, last = [None] * len(streams), 0
        for step in s.steps:
            kind, i = step[0], step[1]
            if kind == 'packet':
                if pk[i]:
                    yield self._create_packet_end_message(pk[i], default_clock_snapshot=step[2])
                pk[i] = streams[i].create_packet()
                yield self._create_packet_beginning_message(pk[i], default_clock_snapshot=step[2])
                last = step[2]
            elif kind in ('discard', 'lost'):
                make = (self._create_discarded_events_message if kind == 'discard'
                        else self._create_discarded_packets_message)
                yield make(streams[i], count=step[4], beg_clock_snapshot=step[2],
                           end_clock_snapshot=step[3])
            else:
                name, ts, vpid, fields = step[2]
                msg = self._create_event_message(s.ec[s.streams[i][1]][name], pk[i],
                                                 default_clock_snapshot=ts)
                msg.event.common_context_field['vpid'] = vpid
                for k, v in fields.items():
                    msg.event.payload_field[k] = v
                yield msg
                last = ts
        for i, st in enumerate(streams):
            if pk[i]:
                yield self._create_packet_end_message(pk[i], default_clock_snapshot=last)
            yield self._create_stream_end_message(st)

    def __next__(self):
        return next(self._msgs)


# What LTTng-UST 2.13 writes in a trace's environment: the sink reads a
# stream file's first packet (its packet_seq_num) only in LTTng's traces.
LTTNG_ENV = {'domain': 'ust', 'tracer_name': 'lttng-ust', 'tracer_major': 2,
             'tracer_minor': 13, 'architecture_bit_width': 64}


# The clock class's offset from the origin, in seconds: < 0 puts every
# time of the trace before it (negative ns).
CLOCK_OFFSET_S = 0


class StreamsSource(bt2._UserSourceComponent, message_iterator_class=StreamsIter):
    """obj: (streams: [(name, channel)], steps, env). A stream's name is
    its path, as src.ctf.fs names it; channels are stream classes."""

    def __init__(self, config, params, obj):
        self.streams, self.steps, env = obj
        tc = self._create_trace_class()
        cc = self._create_clock_class(frequency=1000000000,
                                      offset=bt2.ClockClassOffset(CLOCK_OFFSET_S, 0))
        self.scs, self.ec = {}, {}
        for cls in sorted(set(c for _, c in self.streams)):
            ctx = tc.create_structure_field_class()
            ctx.append_member('vpid', tc.create_signed_integer_field_class(32))
            self.scs[cls] = tc.create_stream_class(
                default_clock_class=cc, event_common_context_field_class=ctx,
                supports_packets=True, packets_have_beginning_default_clock_snapshot=True,
                packets_have_end_default_clock_snapshot=True,
                supports_discarded_events=True, discarded_events_have_default_clock_snapshots=True,
                supports_discarded_packets=True,
                discarded_packets_have_default_clock_snapshots=True)
            self.ec[cls] = event_classes(tc, self.scs[cls])
        self.trace = tc(environment=env)
        self._add_output_port('out', self)


def first_packet(path, ts_begin, seq, discarded=0):
    """A stream file whose first packet has LTTng-UST's header and context
    (little endian, 64-bit), beginning at ts_begin (clock cycles)."""
    ctx = struct.pack('<6QI', ts_begin, ts_begin, 84 * 8, 4096 * 8, seq, discarded, 0)
    with open(path, 'wb') as f:
        f.write(struct.pack('<I16sIQ', 0xC1FC1FC1, bytes(16), 0, 0) + ctx)
        f.write(bytes(4096 - 84))


def report_streams(plugin, streams, steps, fmt='json', env=None):
    """The report (parsed JSON, or text) of those streams and steps."""
    fd, path = tempfile.mkstemp(suffix='.report')
    os.close(fd)
    try:
        g = bt2.Graph()
        src = g.add_component(StreamsSource, 'src',
                              obj=(streams, steps, LTTNG_ENV if env is None else env))
        sink = g.add_component(plugin.sink_component_classes['report'], 'sink',
                               params={'format': fmt, 'output': path,
                                       'fail-on-incomplete': False})
        g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
        g.run()
        with open(path) as f:
            return json.load(f) if fmt == 'json' else f.read()
    finally:
        os.unlink(path)


MS = 1000000


def judged(plugin, check, streams, steps, env=None):
    """The JSON report's passes of process 100 and its trace streams, having
    checked that the text report's status lines give the same causes."""
    r = report_streams(plugin, streams, steps, env=env)
    text = report_streams(plugin, streams, steps, fmt='text', env=env)
    ps = passes(r)
    for p in ps:
        # A report without causes (the code before them) fails the checks
        # rather than the test.
        p.setdefault('cause', None)
        p['cause_text'] = p.get('cause_text') or ''
        line = '%s pass %d (instance 0): %s%s' % (
            p['flavour'], p['pass_id'], p['status'],
            ' (%s)' % p['cause_text'] if p['cause_text'] else '')
        check('the text report says what the JSON says: %s' % line[:60], line + '\n' in text,
              (line, text))
    return ps, r['trace']['streams']


def check_causes(plugin, check):
    """Why a pass is not complete: the cause the trace's evidence shows
    (check: report_logic's, which counts the failures)."""
    d = tempfile.mkdtemp()
    try:
        cause_cases(plugin, check, d)
    finally:
        shutil.rmtree(d)


def cause_cases(plugin, check, d):
    rec = [('on', 0, method('method_dcstart', (101 + i) * MS, 0x1000 * (i + 1), 'm%d' % i))
           for i in range(3)]
    two = [('cpu0', 'ch'), ('cpu1', 'ch')]

    # A discard-mode channel (LTTng's default) too small for the pass:
    # its events are discarded, and its second CPU's stream begins late.
    # A discard channel's ring buffer overwrites nothing: lossy, from the
    # discarded events (was: overwritten, "the ring buffer dropped packets").
    ps, _ = judged(plugin, check, two, [('packet', 0, 0), ('on', 0, init(100 * MS, 1))] + rec +
                   [('packet', 1, 200 * MS), ('discard', 1, 200 * MS, 250 * MS, 40),
                    ('on', 1, method('method_dcstart', 260 * MS, 0x9000, 'z')),
                    ('on', 1, complete(300 * MS, 1, 10))])
    check('a discard channel that lost events in the pass: lossy, events discarded',
          [(p['status'], p['cause']) for p in ps] == [('lossy', 'events_discarded')] and
          '40 event(s) discarded' in ps[0]['cause_text'], ps)

    # The same late stream in an LTTng trace, its first packet numbered 0
    # (read from the stream file): it lost nothing, whatever its channel.
    # A pass the trace ends in is truncated by that, not overwritten.
    c0, c1 = os.path.join(d, 'ch_0'), os.path.join(d, 'ch_1')
    files = [(c0, 'ch'), (c1, 'ch')]
    first_packet(c0, 0, 0)
    first_packet(c1, 200 * MS, 0)
    cut = [('packet', 0, 0), ('on', 0, init(100 * MS, 1))] + rec + \
          [('packet', 1, 200 * MS), ('on', 1, method('method_dcstart', 250 * MS, 0x9000, 'z'))]
    ps, st = judged(plugin, check, files, cut)
    check('a late stream whose first packet is numbered 0 lost nothing: truncated, the trace ends',
          [(p['status'], p['cause']) for p in ps] == [('truncated', 'trace_ends')] and
          'the trace ends during the pass' in ps[0]['cause_text'] and
          [x.get('first_packet_seq_num') for x in st] == [0, 0], (ps, st))

    # Numbered 58: the 58 packets before it are gone, its channel
    # discarded no event: a snapshot of an overwrite-mode ring buffer.
    first_packet(c1, 200 * MS, 58)
    ps, st = judged(plugin, check, files, cut)
    check('a late stream beginning at packet 58, no event discarded: overwritten',
          [(p['status'], p['cause']) for p in ps] == [('overwritten', 'overwritten')] and
          'packet_seq_num 58' in ps[0]['cause_text'] and ps[0]['bytes_needed'] > 0 and
          [x.get('first_packet_seq_num') for x in st] == [0, 58], (ps, st))
    # ... unless the channel discarded events (here before the trace, as
    # its first packet counts them): then it discards, never overwrites,
    # and its packets went missing after the ring buffer.
    first_packet(c0, 0, 0, discarded=7)
    ps, _ = judged(plugin, check, files, cut)
    check('packets missing from a channel that discards events: truncated, packets lost',
          [(p['status'], p['cause']) for p in ps] == [('truncated', 'packets_lost')] and
          '--tracefile-count' in ps[0]['cause_text'], ps)
    first_packet(c0, 0, 0)

    # Not LTTng's trace, or a file whose first packet is not the one read
    # (another timestamp): numbers unknown, the late stream may have lost
    # packets. Said as such; the verdict stays what the pass shows.
    for what, env in (('a trace of another tracer', {'tracer_name': 'other'}),
                      ('a stream file changed since', None)):
        if env is None:
            first_packet(c1, 199 * MS, 0)
        ps, st = judged(plugin, check, files, cut, env=env)
        check('%s: the late stream may have lost packets, truncated' % what,
              [(p['status'], p['cause']) for p in ps] == [('truncated', 'maybe_overwritten')] and
              'if its channel is in overwrite mode' in ps[0]['cause_text'] and
              st[1].get('first_packet_seq_num', 0) is None, (ps, st))

    # Packet sequence numbers skip in the pass's window (babeltrace2's
    # discarded-packets message): overwritten when the channel discarded
    # no event, lost after the buffer when it did.
    skip = [('packet', 0, 0), ('on', 0, init(100 * MS, 1))] + rec + \
           [('lost', 0, 150 * MS, 200 * MS, 3), ('packet', 0, 200 * MS),
            ('on', 0, complete(300 * MS, 1, 10))]
    ps, _ = judged(plugin, check, [('cpu0', 'ch')], skip)
    check('a sequence gap in the pass, no event discarded: overwritten',
          [(p['status'], p['cause']) for p in ps] == [('overwritten', 'overwritten')] and
          'skip 3' in ps[0]['cause_text'], ps)
    ps, _ = judged(plugin, check, [('cpu0', 'ch')], skip[:1] + [('discard', 0, 5 * MS, 10 * MS, 2)] +
                   skip[1:])
    check('a sequence gap in a channel that discarded events: lossy, packets lost',
          [(p['status'], p['cause']) for p in ps] == [('lossy', 'packets_lost')], ps)

    # A pass without its Complete: where the trace and its process go.
    one = [('cpu0', 'ch')]
    start = [('packet', 0, 0), ('on', 0, init(100 * MS, 1))] + rec
    for what, more, cause in (
            ('a later pass of the process (the session stopped, then started again)',
             [('on', 0, init(2000 * MS, 2)), ('on', 0, complete(2001 * MS, 2, 0))],
             'complete_missing'),
            ('a runtime event of the process 1 s later', [('on', 0, method(
                'method_load', 1100 * MS, 0x8000, 'late'))], 'complete_missing'),
            ('events of another process 1 s later', [('on', 0, method(
                'method_load', 1100 * MS, 0x8000, 'other', vpid=7))], 'process_ends'),
            ('nothing later', [], 'trace_ends')):
        ps, _ = judged(plugin, check, one, start + more)
        check('no complete, %s: %s' % (what, cause),
              (ps[0]['status'], ps[0]['cause']) == ('truncated', cause) and
              ('killed' in ps[0]['cause_text']) == (cause != 'complete_missing'), ps)
    # The same, every time before the clock's origin: a process's latest
    # time began at 0, above them all, and it "went on" (review, f10890a).
    global CLOCK_OFFSET_S
    CLOCK_OFFSET_S = -100000
    try:
        ps, _ = judged(plugin, check, one, start)
    finally:
        CLOCK_OFFSET_S = 0
    check('no complete, nothing later, times before the origin: trace_ends',
          (ps[0]['status'], ps[0]['cause']) == ('truncated', 'trace_ends'), ps)
    # One walk of both flavours (one pass id, Inits side by side): the
    # other flavour's Init is no sign the process went on, its Complete is.
    both = [('packet', 0, 0), ('on', 0, init(100 * MS, 1)),
            ('on', 0, init(100 * MS + 1000, 1, fl='dcend'))]
    ps, _ = judged(plugin, check, one, both)
    check('a walk of both flavours cut after its Inits: the trace ends, for both',
          [(p['flavour'], p['cause']) for p in ps] ==
          [('dcstart', 'trace_ends'), ('dcend', 'trace_ends')], ps)
    ps, _ = judged(plugin, check, one, both + [('on', 0, complete(101 * MS, 1, 0, fl='dcend'))])
    check('... its other flavour completed: the process went on',
          [(p['flavour'], p['status'], p['cause']) for p in ps] ==
          [('dcstart', 'truncated', 'complete_missing'), ('dcend', 'complete', None)], ps)
    # ... with another process's pass begun between the two Inits (another
    # stream's, muxed in by time): still the same walk.
    between = [('packet', 0, 0), ('on', 0, init(100 * MS, 1)),
               ('on', 0, init(100 * MS + 500, 1, vpid=7)),
               ('on', 0, init(100 * MS + 1000, 1, fl='dcend')),
               ('on', 0, complete(101 * MS, 1, 0, fl='dcend'))]
    ps, _ = judged(plugin, check, one, between)
    check('... another process\'s Init between the two: the process went on',
          [(p['flavour'], p['status'], p['cause']) for p in ps] ==
          [('dcstart', 'truncated', 'complete_missing'), ('dcend', 'complete', None)], ps)
    # A Complete without its Init: the pass began before the trace, or not.
    for what, dur, cause in (('before the trace', 200 * MS, 'trace_begins'),
                             ('in the trace', 1000, 'init_missing')):
        ps, _ = judged(plugin, check, one, [('packet', 0, 0)] + rec +
                       [('on', 0, complete(150 * MS, 1, 3, duration=dur))])
        check('no init, the pass began %s: %s' % (what, cause),
              (ps[0]['status'], ps[0]['cause']) == ('truncated', cause), ps)
