#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""sink.etw.report's judgements on crafted event sequences.

Real LTTng sessions cannot produce a duplicate, a record of freed code or a
missed record on demand (the provider is correct), so this test feeds the
real sink (loaded from the plugin with babeltrace2's Python bindings) from
a small bt2 source that emits the lttng-etw schema with chosen contents,
and checks every verdict of the report.

usage: report_logic.py PLUGIN_DIR
"""
import json
import os
import shutil
import sys
import tempfile

import bt2

METHOD = [('instance_id', 'u', 16), ('method_id', 'u', 64), ('module_id', 'u', 64),
          ('code_start', 'u', 64), ('code_size', 'u', 32), ('method_token', 'u', 32),
          ('method_flags', 'u', 32), ('version_id', 'u', 64), ('namespace', 's', 0),
          ('name', 's', 0), ('signature', 's', 0)]
INIT = [('instance_id', 'u', 16), ('pass_id', 'u', 64), ('control_code', 'u', 32),
        ('match_any_keyword', 'u', 64)]
COMPLETE = [('instance_id', 'u', 16), ('pass_id', 'u', 64), ('emitted', 'u', 64),
            ('skipped_raced', 'u', 64), ('duration_ns', 'u', 64)]
EVENTS = {
    'letw_runtime:method_load': METHOD, 'letw_runtime:method_unload': METHOD,
    'letw_rundown:method_dcstart': METHOD, 'letw_rundown:method_dcend': METHOD,
    'letw_rundown:dcstart_init': INIT, 'letw_rundown:dcstart_complete': COMPLETE,
    'letw_rundown:dcend_init': INIT, 'letw_rundown:dcend_complete': COMPLETE,
}
MASK = 0x1000000000058  # DCStart, methods + stubs + modules


def event_classes(tc, sc):
    """EVENTS' event classes in stream class sc (of trace class tc), by
    name: the schema every synthetic trace of these tests shares."""
    ec = {}
    for name, layout in EVENTS.items():
        fc = tc.create_structure_field_class()
        for fname, kind, bits in layout:
            fc.append_member(fname, tc.create_string_field_class() if kind == 's'
                             else tc.create_unsigned_integer_field_class(bits))
        ec[name] = sc.create_event_class(name=name, payload_field_class=fc)
    return ec


class Iter(bt2._UserMessageIterator):
    def __init__(self, config, port):
        self._src = port.user_data
        self._msgs = self._build()

    def _build(self):
        s = self._src
        stream = s.trace.create_stream(s.sc)
        yield self._create_stream_beginning_message(stream)
        for step in s.steps:
            if step[0] == 'discard':
                _, beg, end, count = step
                yield self._create_discarded_events_message(
                    stream, count=count, beg_clock_snapshot=beg, end_clock_snapshot=end)
                continue
            name, ts, vpid, fields = step
            msg = self._create_event_message(s.ec[name], stream, default_clock_snapshot=ts)
            if s.with_vpid == 'pid_ns':
                # vpid is (vpid, pid_ns) here.
                msg.event.common_context_field['vpid'] = vpid[0]
                msg.event.common_context_field['pid_ns'] = vpid[1]
            elif s.with_vpid:
                msg.event.common_context_field['vpid'] = vpid
            for k, v in fields.items():
                msg.event.payload_field[k] = v
            yield msg
        yield self._create_stream_end_message(stream)

    def __next__(self):
        return next(self._msgs)


class Source(bt2._UserSourceComponent, message_iterator_class=Iter):
    def __init__(self, config, params, obj):
        steps, with_vpid = obj
        tc = self._create_trace_class()
        cc = self._create_clock_class(frequency=1000000000)
        ctx = None
        if with_vpid:
            ctx = tc.create_structure_field_class()
            ctx.append_member('vpid', tc.create_signed_integer_field_class(32))
        if with_vpid == 'pid_ns':
            # As LTTng-UST records it (an inode number).
            ctx.append_member('pid_ns', tc.create_unsigned_integer_field_class(64))
        self.sc = tc.create_stream_class(
            default_clock_class=cc, event_common_context_field_class=ctx,
            supports_discarded_events=True, discarded_events_have_default_clock_snapshots=True)
        self.ec = event_classes(tc, self.sc)
        self.trace = tc()
        self.steps = steps
        self.with_vpid = with_vpid
        self._add_output_port('out', self)


def method(ev, ts, start, name, vpid=100, size=0x10):
    return ('letw_%s:%s' % ('runtime' if ev.endswith('load') else 'rundown', ev), ts, vpid,
            {'instance_id': 0, 'method_id': start, 'module_id': 0, 'code_start': start,
             'code_size': size, 'method_token': 0, 'method_flags': 8, 'version_id': 0,
             'namespace': 'ns', 'name': name, 'signature': ''})


def init(ts, pass_id, vpid=100, fl='dcstart'):
    return ('letw_rundown:%s_init' % fl, ts, vpid,
            {'instance_id': 0, 'pass_id': pass_id, 'control_code': 1, 'match_any_keyword': MASK})


def complete(ts, pass_id, emitted, skipped=0, vpid=100, fl='dcstart', duration=1000):
    return ('letw_rundown:%s_complete' % fl, ts, vpid,
            {'instance_id': 0, 'pass_id': pass_id, 'emitted': emitted,
             'skipped_raced': skipped, 'duration_ns': duration})


def report(plugin, steps, with_vpid=True):
    fd, path = tempfile.mkstemp(suffix='.json')
    os.close(fd)
    try:
        g = bt2.Graph()
        src = g.add_component(Source, 'src', obj=(steps, with_vpid))
        sink = g.add_component(plugin.sink_component_classes['report'], 'sink',
                               params={'format': 'json', 'output': path,
                                       'fail-on-incomplete': False})
        g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
        g.run()
        return json.load(open(path))
    finally:
        os.unlink(path)


def perfmap_run(plugin, steps, with_vpid=True):
    """sink.etw.perfmap (fail-on-incomplete, the default) on these steps:
    whether it failed the graph, and {path under output-dir: names}."""
    d = tempfile.mkdtemp()
    try:
        g = bt2.Graph()
        src = g.add_component(Source, 'src', obj=(steps, with_vpid))
        sink = g.add_component(plugin.sink_component_classes['perfmap'], 'sink',
                               params={'output-dir': d})
        g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
        failed = False
        try:
            g.run()
        except bt2._Error:
            failed = True
        maps = {}
        for top, _, files in os.walk(d):
            for f in files:
                with open(os.path.join(top, f)) as m:
                    maps[os.path.relpath(os.path.join(top, f), d)] = sorted(
                        line.split(' ', 2)[2].strip() for line in m)
        return failed, maps
    finally:
        shutil.rmtree(d)


def perfmap_fails(plugin, steps):
    return perfmap_run(plugin, steps)[0]


def sink_run(plugin, cls, steps):
    """sink.etw.CLS (fail-on-incomplete, the default) into a new directory:
    whether it failed the graph, and the files it wrote."""
    d = tempfile.mkdtemp()
    try:
        g = bt2.Graph()
        src = g.add_component(Source, 'src', obj=(steps, True))
        sink = g.add_component(plugin.sink_component_classes[cls], 'sink',
                               params={'output-dir': d})
        g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
        try:
            g.run()
            return False, os.listdir(d)
        except bt2._Error:
            return True, os.listdir(d)
    finally:
        shutil.rmtree(d)


def passes(r, vpid=100):
    return [p for x in r['processes'] if x['vpid'] == vpid for p in x['passes']]


FAILURES = []


def check(name, cond, detail):
    print('%s: %s' % ('ok  ' if cond else 'FAIL', name))
    if not cond:
        print('      ', detail)
        FAILURES.append(name)


def main():
    plugins = bt2.find_plugins_in_path(sys.argv[1])
    plugin = [p for p in plugins if p.name == 'etw'][0]

    # Imported here: report_causes uses this file's schema and helpers.
    from report_causes import check_causes
    check_causes(plugin, check)

    r = report(plugin, [init(10, 1),
                        method('method_dcstart', 11, 0x1000, 'a'),
                        method('method_dcstart', 12, 0x2000, 'b'), complete(13, 1, 2)])
    p = passes(r)
    check('paired pass with every record is complete',
          [q['status'] for q in p] == ['complete'] and p[0]['seen'] == 2, p)

    # Two processes with one vpid (a pid reused, pid namespaces), or the
    # same passes read twice: each pass alone looks complete, but a
    # process's pass ids rise, so the second pass 1 gives it away.
    twice = [init(10, 1), method('method_dcstart', 11, 0x1000, 'a'), complete(13, 1, 1),
             init(20, 1), method('method_dcstart', 21, 0x5000, 'z'), complete(23, 1, 1)]
    r = report(plugin, twice)
    p = passes(r)
    check('a pass id seen again makes the vpid\'s passes inconsistent',
          [q['status'] for q in p] == ['inconsistent', 'inconsistent'] and
          r['processes'][0]['pass_id_repeats'] == 1, r['processes'])
    # Not when the ids rise, nor for one walk's two flavours (one id).
    r = report(plugin, [init(10, 1), complete(11, 1, 0), init(20, 2), complete(21, 2, 0),
                        init(30, 3), init(30, 3, fl='dcend'), complete(31, 3, 0),
                        complete(31, 3, 0, fl='dcend')])
    # perfmap cannot judge passes, but must not write a map of two
    # processes as one without failing (the CLI: exit 3).
    check('perfmap fails on a vpid that was two processes', perfmap_fails(plugin, twice), '')
    check('perfmap passes the same records in rising passes',
          not perfmap_fails(plugin, twice[:3] + [init(20, 2)] + twice[4:5] + [complete(23, 2, 1)]),
          '')
    check('rising ids, and both flavours of one pass, are one process',
          r['processes'][0]['pass_id_repeats'] == 0 and
          all(q['status'] == 'complete' for q in passes(r)), r['processes'])

    r = report(plugin, [init(10, 1), method('method_dcstart', 11, 0x1000, 'a'),
                        method('method_dcstart', 12, 0x1000, 'a'), complete(13, 1, 2)])
    p = passes(r)[0]
    check('a record listed twice is a duplicate',
          p['status'] == 'inconsistent' and p['duplicates'] == 1, p)

    r = report(plugin, [method('method_load', 1, 0x1000, 'a'), method('method_unload', 2, 0x1000, 'a'),
                        init(10, 1), method('method_dcstart', 11, 0x1000, 'a'), complete(13, 1, 1)])
    p = passes(r)[0]
    check('a record of code unloaded before the pass is inconsistent',
          p['status'] == 'inconsistent' and p['unloaded_before_pass'] == 1 and
          p['unloaded_before_pass_examples'][0]['name'] == 'ns::a', p)

    r = report(plugin, [method('method_load', 1, 0x1000, 'a'), init(10, 1),
                        method('method_unload', 11, 0x1000, 'a'),
                        method('method_dcstart', 12, 0x1000, 'a'), complete(13, 1, 1)])
    p = passes(r)[0]
    check('a record of code unloaded during the pass is a legal race',
          p['status'] == 'complete' and p['raced_with_unload'] == 1 and
          p['unloaded_before_pass'] == 0, p)

    # The walker's copy emitted after the code was unloaded and its start
    # reused during the pass: a race too, and b (loaded during the pass)
    # is not taken for replaced.
    r = report(plugin, [method('method_load', 1, 0x1000, 'a'), init(10, 1),
                        method('method_unload', 11, 0x1000, 'a'),
                        method('method_load', 12, 0x1000, 'b'),
                        method('method_dcstart', 13, 0x1000, 'a'), complete(14, 1, 1)])
    p = passes(r)[0]
    check('a copy of code unloaded and replaced during the pass is a legal race',
          p['status'] == 'complete' and p['raced_with_unload'] == 1 and
          p['unloaded_before_pass'] == 0 and p['missing'] == 0, p)

    r = report(plugin, [method('method_load', 1, 0x1000, 'a'), method('method_load', 2, 0x2000, 'b'),
                        init(10, 1), method('method_dcstart', 11, 0x1000, 'a'), complete(13, 1, 1)])
    p = passes(r)[0]
    check('code live across the pass but not listed is missing',
          p['status'] == 'inconsistent' and p['missing'] == 1 and
          p['missing_examples'][0]['name'] == 'ns::b', p)

    r = report(plugin, [method('method_load', 1, 0x2000, 'b'), init(10, 1), complete(13, 1, 0, skipped=1),
                        method('method_unload', 20, 0x2000, 'b')])
    p = passes(r)[0]
    check('absent code unloaded just after a pass that skipped records may have raced',
          p['status'] == 'complete' and p['missing'] == 0 and p['missing_maybe_raced'] == 1, p)

    r = report(plugin, [method('method_load', 1, 0x2000, 'b'), ('discard', 3, 5, 4),
                        init(10, 1), complete(13, 1, 0)])
    p = passes(r)[0]
    check('absent code whose unload may be among events discarded before the pass is not missing',
          p['status'] == 'complete' and p['missing'] == 0 and p['missing_maybe_discarded'] == 1, p)

    r = report(plugin, [init(10, 1), method('method_dcstart', 11, 0x1000, 'a')])
    p = passes(r)[0]
    check('an init without its complete is truncated',
          p['status'] == 'truncated' and p['has_init'] and not p['has_complete'], p)
    # Nothing after it in the trace: not "the process killed" alone.
    check('... and the trace ends during it', p.get('cause') == 'trace_ends' and
          'the trace ends during the pass' in p.get('cause_text', ''), p)

    r = report(plugin, [init(10, 1), init(20, 2), complete(21, 2, 0)])
    p = passes(r)
    check('a pass followed by the next init is truncated, the next one complete',
          [(q['pass_id'], q['status']) for q in p] == [(1, 'truncated'), (2, 'complete')], p)
    check('... its process went on: not killed',
          p[0].get('cause') == 'complete_missing' and 'killed' not in p[0].get('cause_text', '') and
          p[1].get('cause', 0) is None and p[1].get('cause_text', 0) is None, p)

    r = report(plugin, [method('method_dcstart', 11, 0x1000, 'a'), complete(13, 1, 1)])
    x = r['processes'][0]
    check('a complete without its init is truncated, its records outside any pass',
          x['passes'][0]['status'] == 'truncated' and not x['passes'][0]['has_init'] and
          x['orphan_records'] == 1, x)

    r = report(plugin, [init(10, 1), method('method_dcstart', 11, 0x1000, 'a'), complete(13, 1, 3)])
    p = passes(r)[0]
    check('fewer records than emitted is lossy', p['status'] == 'lossy', p)

    # perfmap and jitdump judge the same passes truncated or lossy: they
    # write what there is, then fail (the CLI: exit 3), never a silent
    # map that lacks code. A complete pass and runtime events alone pass.
    whole = [init(10, 1), method('method_dcstart', 11, 0x1000, 'a'),
             method('method_dcstart', 12, 0x2000, 'b'), complete(13, 1, 2)]
    for cls in ('perfmap', 'jitdump'):
        for what, steps, fails in (
                ('a complete pass', whole, False),
                ('runtime events and a complete pass',
                 [method('method_load', 5, 0x3000, 'c')] + whole, False),
                ('a lossy pass (emitted 3, 2 seen)', whole[:3] + [complete(13, 1, 3)], True),
                ('an init without its complete', whole[:3], True),
                ('a complete without its init', whole[1:], True),
                ('a pass cut by the next init', whole[:2] + [init(12, 2)] + whole[2:3] +
                 [complete(13, 2, 1)], True),
                ('one flavour lossy of a walk\'s two',
                 whole[:1] + [init(10, 1, fl='dcend')] + whole[1:] +
                 [complete(14, 1, 1, fl='dcend')], True)):
            failed, files = sink_run(plugin, cls, steps)
            check('%s %s on %s' % (cls, 'fails' if fails else 'passes', what),
                  failed == fails and files, (failed, files))

    r = report(plugin, [init(10, 1), method('method_dcstart', 11, 0x1000, 'a'),
                        ('discard', 11, 12, 5), complete(13, 1, 2),
                        ('discard', 30, 40, 7)])
    p = passes(r)[0]
    check('discarded events inside the pass window are attributed to it',
          p['status'] == 'lossy' and p['discarded_events'] == 5 and
          r['summary']['discarded_events'] == 12, (p, r['summary']))

    r = report(plugin, [init(10, 1, vpid=1), init(11, 7, vpid=2),
                        method('method_dcstart', 12, 0x1000, 'a', vpid=1),
                        method('method_dcstart', 13, 0x1000, 'a', vpid=2),
                        complete(14, 7, 1, vpid=2), complete(15, 1, 1, vpid=1)])
    check('interleaved processes are paired separately',
          [(q['pass_id'], q['status']) for q in passes(r, 1) + passes(r, 2)] ==
          [(1, 'complete'), (7, 'complete')], r)

    r = report(plugin, [init(10, 1, fl='dcstart'), init(10, 1, fl='dcend'),
                        method('method_dcstart', 11, 0x1000, 'a'), method('method_dcend', 11, 0x1000, 'a'),
                        complete(12, 1, 1, fl='dcstart'), complete(12, 1, 1, fl='dcend')])
    check('one walk with both flavours makes two passes with the same id',
          [(q['flavour'], q['status']) for q in passes(r)] ==
          [('dcstart', 'complete'), ('dcend', 'complete')], r)

    # The pid_ns context tells one vpid in two pid namespaces apart
    # (containers): two processes, each its own pass 1, no repeat; their
    # maps go to pidns-INO/ each. One namespace: named as without it.
    a, b = (1, 4026532001), (1, 4026532002)
    two = [init(10, 1, vpid=a), method('method_dcstart', 11, 0x1000, 'x', vpid=a),
           init(12, 1, vpid=b), method('method_dcstart', 13, 0x1000, 'y', vpid=b),
           complete(14, 1, 1, vpid=a), complete(15, 1, 1, vpid=b)]
    r = report(plugin, two, with_vpid='pid_ns')
    check('one vpid in two pid namespaces is two processes, each complete',
          sorted((x['vpid'], x.get('pid_ns'), x['pass_id_repeats'], [q['status'] for q in x['passes']])
                 for x in r['processes']) ==
          [(1, a[1], 0, ['complete']), (1, b[1], 0, ['complete'])], r['processes'])
    failed, maps = perfmap_run(plugin, two, with_vpid='pid_ns')
    check('perfmap writes one map per pid namespace, each with its own code',
          not failed and maps == {'pidns-%d/perf-1.map' % a[1]: ['ns::x'],
                                  'pidns-%d/perf-1.map' % b[1]: ['ns::y']}, (failed, maps))
    one = [init(10, 1, vpid=a), method('method_dcstart', 11, 0x1000, 'x', vpid=a),
           complete(14, 1, 1, vpid=a)]
    r = report(plugin, one, with_vpid='pid_ns')
    failed, maps = perfmap_run(plugin, one, with_vpid='pid_ns')
    check('one pid namespace: the JSON says which, the map is perf-VPID.map',
          [(x['vpid'], x.get('pid_ns')) for x in r['processes']] == [a] and
          not failed and maps == {'perf-1.map': ['ns::x']}, (r['processes'], failed, maps))

    r = report(plugin, [init(10, 1), method('method_dcstart', 11, 0x1000, 'a'), complete(12, 1, 1)],
               with_vpid=False)
    check('events without a vpid context count under process 0',
          [x['vpid'] for x in r['processes']] == [0] and passes(r, 0)[0]['status'] == 'complete', r)

    if FAILURES:
        print('%d failure(s)' % len(FAILURES))
        sys.exit(1)


if __name__ == '__main__':
    main()
