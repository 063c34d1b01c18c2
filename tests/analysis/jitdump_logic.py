#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""sink.etw.jitdump's file on crafted event sequences.

The real sink (loaded from the plugin with babeltrace2's Python bindings)
reads a small bt2 source emitting the lttng-etw schema with chosen
contents, on a clock whose class has a large offset, and the jitdump it
writes is parsed back and checked record by record against the
specification and the dating rules (jitdump_proc.h).

usage: jitdump_logic.py PLUGIN_DIR
"""
import os
import shutil
import sys
import tempfile

import bt2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jitdump_parse import parse  # noqa: E402

U = lambda bits: ('u', bits)
METHOD = [('instance_id', U(16)), ('method_id', U(64)), ('module_id', U(64)),
          ('code_start', U(64)), ('code_size', U(32)), ('method_token', U(32)),
          ('method_flags', U(32)), ('version_id', U(64)), ('namespace', 's'),
          ('name', 's'), ('signature', 's')]
INIT = [('instance_id', U(16)), ('pass_id', U(64)), ('control_code', U(32)),
        ('match_any_keyword', U(64))]
LINES = [('instance_id', U(16)), ('method_id', U(64)), ('code_start', U(64)),
         ('version_id', U(64)), ('rows_total', U(32)), ('row_first', U(32)),
         ('native_offsets', 'a32'), ('lines', 'a32'), ('files_idx', 'a32'),
         ('inline_depths', 'a32'), ('files', 's')]
CODE = [('instance_id', U(16)), ('method_id', U(64)), ('code_start', U(64)),
        ('version_id', U(64)), ('code_size', U(32)), ('offset', U(32)), ('bytes', 'a8')]
EVENTS = {
    'letw_runtime:method_load': METHOD, 'letw_runtime:method_unload': METHOD,
    'letw_rundown:method_dcstart': METHOD, 'letw_rundown:method_dcend': METHOD,
    'letw_rundown:dcstart_init': INIT,
    'letw_runtime:method_lines': LINES, 'letw_rundown:method_lines_start': LINES,
    'letw_runtime:method_code_bytes': CODE,
}
OFFSET_S = 1700000000  # the clock class's origin offset: must not leak in


class Iter(bt2._UserMessageIterator):
    def __init__(self, config, port):
        self._src = port.user_data
        self._msgs = self._build()

    def _build(self):
        s = self._src
        stream = s.trace.create_stream(s.sc)
        yield self._create_stream_beginning_message(stream)
        for name, ts, vpid, fields in s.steps:
            msg = self._create_event_message(s.ec[name], stream, default_clock_snapshot=ts)
            if s.pid_ns:
                # vpid is (vpid, pid_ns) here.
                vpid, msg.event.common_context_field['pid_ns'] = vpid
            msg.event.common_context_field['vpid'] = vpid
            for k, v in fields.items():
                msg.event.payload_field[k] = v
            yield msg
        yield self._create_stream_end_message(stream)

    def __next__(self):
        return next(self._msgs)


class Source(bt2._UserSourceComponent, message_iterator_class=Iter):
    def __init__(self, config, params, steps):
        tc = self._create_trace_class()
        cc = self._create_clock_class(frequency=1000000000,
                                      offset=bt2.ClockClassOffset(OFFSET_S, 0))
        ctx = tc.create_structure_field_class()
        ctx.append_member('vpid', tc.create_signed_integer_field_class(32))
        # Steps whose vpid is (vpid, pid_ns): LTTng's pid_ns context too.
        self.pid_ns = any(isinstance(st[2], tuple) for st in steps)
        if self.pid_ns:
            ctx.append_member('pid_ns', tc.create_unsigned_integer_field_class(64))
        self.sc = tc.create_stream_class(default_clock_class=cc,
                                         event_common_context_field_class=ctx)
        self.ec = {}
        for name, layout in EVENTS.items():
            fc = tc.create_structure_field_class()
            for fname, kind in layout:
                if kind == 's':
                    f = tc.create_string_field_class()
                elif kind in ('a32', 'a8'):
                    f = tc.create_dynamic_array_field_class(
                        tc.create_unsigned_integer_field_class(int(kind[1:])))
                else:
                    f = tc.create_unsigned_integer_field_class(kind[1])
                fc.append_member(fname, f)
            self.ec[name] = self.sc.create_event_class(name=name, payload_field_class=fc)
        self.trace = tc()
        self.steps = steps
        self._add_output_port('out', self)


def method(ev, ts, start, name, size=0x40, vpid=100, mid=None, version=1):
    prov = 'runtime' if ev.endswith('load') else 'rundown'
    return ('letw_%s:%s' % (prov, ev), ts, vpid,
            {'instance_id': 0, 'method_id': mid if mid is not None else start,
             'module_id': 0, 'code_start': start, 'code_size': size, 'method_token': 0,
             'method_flags': 8, 'version_id': version, 'namespace': 'ns', 'name': name,
             'signature': '()'})


def lines(ts, start, rows, files, first=0, total=None, vpid=100, mid=None, ev='method_lines',
          version=1):
    prov = 'runtime' if ev == 'method_lines' else 'rundown'
    return ('letw_%s:%s' % (prov, ev), ts, vpid,
            {'instance_id': 0, 'method_id': mid if mid is not None else start,
             'code_start': start, 'version_id': version,
             'rows_total': total if total is not None else len(rows), 'row_first': first,
             'native_offsets': [r[0] for r in rows], 'lines': [r[1] for r in rows],
             'files_idx': [r[2] for r in rows], 'inline_depths': [r[3] for r in rows],
             'files': '\n'.join(files)})


def code(ts, start, size, offset, data, vpid=100):
    return ('letw_runtime:method_code_bytes', ts, vpid,
            {'instance_id': 0, 'method_id': start, 'code_start': start, 'version_id': 1,
             'code_size': size, 'offset': offset, 'bytes': list(data)})


def init(ts, vpid=100):
    return ('letw_rundown:dcstart_init', ts, vpid,
            {'instance_id': 0, 'pass_id': 1, 'control_code': 1, 'match_any_keyword': 0x58})


def run(plugin, steps, params=None):
    out = tempfile.mkdtemp(prefix='letw-jdlogic-')
    g = bt2.Graph()
    src = g.add_component(Source, 'src', obj=steps)
    # These sequences stop at a pass's Init (no Complete): the sink says
    # the pass is truncated and, failing on it by default, would keep the
    # dumps from being checked. pass_verdict.py tests that verdict.
    p = {'output-dir': out, 'fail-on-incomplete': False}
    p.update(params or {})
    sink = g.add_component(plugin.sink_component_classes['jitdump'], 'sink', params=p)
    g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
    try:
        g.run()
        files = {os.path.relpath(os.path.join(top, f), out): parse(os.path.join(top, f))
                 for top, _, fs in os.walk(out) for f in fs}
        # The sink writes LOAD, DEBUG_INFO and CLOSE only.
        for name, (_, recs) in files.items():
            assert all(r['kind'] in ('load', 'debug', 'close') for r in recs), name
        return files
    finally:
        shutil.rmtree(out, ignore_errors=True)


def loads(recs):
    return [r for r in recs if r['kind'] == 'load']


def check(cond, what):
    if not cond:
        print('FAIL: ' + what)
        sys.exit(1)
    print('ok: ' + what)


def main():
    plugin = bt2.find_plugins_in_path(sys.argv[1], fail_on_load_error=True)[0]
    A, B, C, D = 0x10000, 0x20000, 0x30000, 0x40000
    body = bytes(range(256)) * 20  # 5120 bytes: two chunks
    steps = [
        init(1000),                                      # first event of 100
        method('method_dcstart', 1100, A, 'early'),      # code loaded before the trace
        method('method_load', 1200, B, 'fresh', size=len(body)),
        code(1201, B, len(body), 0, body[:4096]),
        code(1202, B, len(body), 4096, body[4096:]),
        method('method_dcstart', 1300, B, 'fresh', size=len(body)),  # already loaded
        method('method_load', 2000, C, 'first'),
        lines(2001, C, [(0, 10, 0, 0), (8, 11, 0, 0), (8, 50, 1, 1), (0x20, 12, 0, 0)],
              ['/src/outer.c', '/src/inl.h']),
        method('method_unload', 3000, C, 'first'),
        method('method_load', 4000, C, 'second', size=0x20, mid=77),  # reuse of C
        code(4001, C, 0x20, 0, b'\x90' * 0x10),          # half the bytes only
        method('method_unload', 5000, C, 'second', size=0x20, mid=77),
        method('method_dcend', 9000, C, 'third'),        # new at C, after 'second' died
        method('method_unload', 9500, D, 'unseen'),      # loaded before the trace
        lines(9600, A, [(0, 1, 0, 0)], ['x'], mid=999),  # names no region: orphan
        method('method_load', 1500, A + 0x1000, 'other-process', vpid=200),
    ]
    files = run(plugin, steps)
    check(sorted(files) == ['jit-100.dump', 'jit-200.dump'], 'one jitdump per process')
    hdr, recs = files['jit-100.dump']
    check(dict(hdr, mach=0) == dict(magic=0x4A695444, version=1, total=40, mach=0, pid=100,
                                    ts=1000, flags=0),
          'header: magic, version 1, total_size 40, pid, first event time, flags 0')
    ld = loads(recs)
    by = {(r['addr'], r['name'].split('::')[1].split('(')[0]): r for r in ld}
    check(len(ld) == 6, '6 LOADs: early, fresh, first, second, third, unseen (%d)' % len(ld))
    check(by[(A, 'early')]['ts'] == 1,
          'DCStart-only code mapped before the trace (1 ns: samples before the session resolve)')
    check(by[(B, 'fresh')]['ts'] == 1200 and by[(B, 'fresh')]['code'] == body,
          'a load at its time, with its real bytes from two chunks; no second LOAD for its DCStart')
    check(by[(C, 'first')]['ts'] == 2000 and by[(C, 'second')]['ts'] == 4000,
          'address reuse: a LOAD at each load time')
    check(by[(C, 'third')]['ts'] == 5000,
          'rundown-only code at a reused address: mapped when the previous code there died')
    check(by[(D, 'unseen')]['ts'] == 1, 'unload of code never seen loaded: mapped from the start')
    check(sorted(r['index'] for r in ld) == list(range(1, 7)), 'code_index unique, 1..6')
    check([r['ts'] for r in ld] == sorted(r['ts'] for r in ld), 'LOADs in time order')
    filler = [r for r in ld if r['name'] != 'ns::fresh()']
    check(all(len(r['code']) == r['size'] and r['code'][:r['size'] - 12] ==
              b'\xcc' * (r['size'] - 12) for r in filler) and
          len(set(r['code'] for r in filler)) == len(filler),
          'without all of its bytes a LOAD carries int3 filler, unique per load (partial bytes unused)')
    dbg = [(i, r) for i, r in enumerate(recs) if r['kind'] == 'debug']
    check(len(dbg) == 1, 'one DEBUG_INFO (the orphan line chunk names no region)')
    i, d = dbg[0]
    check(recs[i + 1]['kind'] == 'load' and recs[i + 1]['addr'] == C and
          recs[i + 1]['name'].startswith('ns::first') and d['addr'] == C and d['ts'] == 2000,
          'DEBUG_INFO right before its LOAD, same time and address')
    check(d['entries'] == [(C, 10, '/src/outer.c'), (C + 8, 50, '/src/inl.h'),
                           (C + 0x20, 12, '/src/outer.c'), (C + 0x40, 12, '/src/outer.c')],
          'entries: innermost inline frame per offset, plain code addresses, closing entry at the end')
    check(recs[-1]['kind'] == 'close' and recs[-1]['ts'] == 9600, 'CLOSE at the last event')
    _, recs2 = files['jit-200.dump']
    check([(r['addr'], r['ts']) for r in loads(recs2)] == [(A + 0x1000, 1500)],
          'the other process gets its own dump')

    # A rundown copy of code unloaded and replaced at its start during
    # its pass (the walker emits its copies after its read-side section):
    # no LOAD of the freed code after the newer code's (perf then named
    # the newer code after the freed one for the rest of the profile).
    X = 0x50000
    files = run(plugin, [
        method('method_load', 500, X, 'old'),
        init(1000),
        method('method_unload', 1100, X, 'old'),
        method('method_load', 1200, X, 'new'),
        method('method_dcstart', 1300, X, 'old'),
    ])
    got = [(r['name'].split('::')[1].split('(')[0], r['ts']) for r in loads(files['jit-100.dump'][1])]
    check(got == [('old', 500), ('new', 1200)],
          'a stale rundown copy of replaced code adds no LOAD (%s)' % got)

    # elf-text-offset shifts the DEBUG_INFO addresses (older perfs).
    files = run(plugin, steps[6:8], {'elf-text-offset': 64})
    d = [r for r in files['jit-100.dump'][1] if r['kind'] == 'debug'][0]
    check(d['entries'][0][0] == C + 64, 'elf-text-offset=64 adds 64')

    # Line tables in chunks, from a rundown twin, for DCStart-only code.
    rows = [(k * 4, 100 + k, 0, 0) for k in range(10)]
    steps = [init(10), method('method_dcstart', 20, A, 'late'),
             lines(21, A, rows[:6], ['f.lua'], total=10, ev='method_lines_start'),
             lines(22, A, rows[6:], ['f.lua'], first=6, total=10, ev='method_lines_start')]
    _, recs = run(plugin, steps)['jit-100.dump']
    d = [r for r in recs if r['kind'] == 'debug']
    check(len(d) == 1 and [e[1] for e in d[0]['entries']] == list(range(100, 110)) + [109],
          'a table in two rundown chunks is assembled')
    _, recs = run(plugin, steps[:3])['jit-100.dump']
    check(not [r for r in recs if r['kind'] == 'debug'], 'an incomplete table gives no DEBUG_INFO')

    # Damaged counts are ignored, not allocated.
    steps = [init(10), method('method_load', 20, A, 'damaged', size=0x20),
             lines(21, A, [(0, 1, 0, 0)], ['f'], total=4000000000),
             code(22, A, 0xfffffff0, 0, b'\x90')]
    _, recs = run(plugin, steps)['jit-100.dump']
    check(not [r for r in recs if r['kind'] == 'debug'] and
          loads(recs)[0]['code'][:0x14] == b'\xcc' * 0x14,
          'a chunk with a damaged row count or code size is dropped')

    # One vpid in two pid namespaces (pid_ns context): a dump each, under
    # pidns-INO/, each LOAD with its own process's code bytes (the code
    # records are decoded apart from the loads: both must key alike).
    na, nb = 4026532001, 4026532002
    ca, cb = b'\xaa' * 0x40, b'\xbb' * 0x40
    files = run(plugin, [init(10, vpid=(7, na)), init(11, vpid=(7, nb)),
                         method('method_load', 20, A, 'in_a', vpid=(7, na)),
                         method('method_load', 21, A, 'in_b', vpid=(7, nb)),
                         code(22, A, 0x40, 0, cb, vpid=(7, nb)),
                         code(23, A, 0x40, 0, ca, vpid=(7, na))])
    da, db = 'pidns-%d/jit-7.dump' % na, 'pidns-%d/jit-7.dump' % nb
    check(sorted(files) == [da, db], 'one jitdump per pid namespace (%s)' % sorted(files))
    check([(r['name'].split('::')[1].split('(')[0], r['pid'], r['code']) for r in loads(files[da][1])] ==
          [('in_a', 7, ca)] and files[da][0]['pid'] == 7 and
          [(r['name'].split('::')[1].split('(')[0], r['pid'], r['code']) for r in loads(files[db][1])] ==
          [('in_b', 7, cb)] and files[db][0]['pid'] == 7,
          'each namespace\'s dump: its own code and bytes, pid = the vpid')

    try:
        run(plugin, [init(10)])
        check(False, 'a trace without code records fails')
    except bt2._Error:
        check(True, 'a trace without code records fails')
    print('jitdump_logic: all checks passed')


if __name__ == '__main__':
    main()
