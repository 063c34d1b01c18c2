#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The CLI's verdict on rundown passes that are not complete, for every
command that reads a trace (no LTTng session: traces written through the
bindings, as output_safety_trace.py does).

A trace whose streams are intact but whose passes are not whole (a
snapshot's overwrite buffer kept the end of a DCStart pass only; a session
that filtered letw_rundown:method_dcstart) made `report` exit 3 while
`perfmap` and `jitdump` wrote what they had and exited 0 without a word:
a map that lacks code, given as complete. Now all three exit 3 and say
why; perfmap and jitdump exit 0 with --allow-incomplete, still saying it.

usage: pass_verdict.py LTTNG_ETW_CLI
"""
import os
import shutil
import subprocess
import sys
import tempfile

import bt2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from output_safety_trace import Source  # noqa: E402
from report_logic import complete, init, method  # noqa: E402

KEY = (100, 4026531836)
NAMES = ['m%02d' % i for i in range(10)]


def records(t0, names, base=0x10000, size=0x10):
    return [method('method_dcstart', t0 + i, base + i * size, n, vpid=KEY, size=size)
            for i, n in enumerate(names)]


TRACES = {
    # Every record the Complete counts is there.
    'complete': [init(10, 1, vpid=KEY)] + records(11, NAMES) +
                [complete(30, 1, len(NAMES), vpid=KEY)],
    # Complete says 10 emitted, 7 in the trace (lost, overwritten, filtered).
    'lossy': [init(10, 1, vpid=KEY)] + records(11, NAMES[:7]) +
             [complete(30, 1, len(NAMES), vpid=KEY)],
    # The Complete never came (the session stopped, a lost packet).
    'no-complete': [init(10, 1, vpid=KEY)] + records(11, NAMES),
    # The Init was overwritten: the records belong to no pass.
    'no-init': records(11, NAMES) + [complete(30, 1, len(NAMES), vpid=KEY)],
}

FAILURES = []


def check(name, cond, detail):
    print('%s: %s' % ('ok  ' if cond else 'FAIL', name))
    if not cond:
        print('       %r' % (detail,))
        FAILURES.append(name)


def write_trace(steps, out):
    g = bt2.Graph()
    src = g.add_component(Source, 'src', obj=steps)
    sink = g.add_component(bt2.find_plugin('ctf').sink_component_classes['fs'], 'sink',
                           params={'path': out, 'assume-single-trace': True,
                                   'quiet': True})
    g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
    g.run()


def run(cli, args):
    p = subprocess.run([cli] + args + ['--no-progress'], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def main():
    cli = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix='letw-pass-verdict.')
    try:
        for kind, steps in TRACES.items():
            write_trace(steps, os.path.join(tmp, kind))
        for kind in TRACES:
            trace = os.path.join(tmp, kind)
            for cmd in ('perfmap', 'jitdump'):
                for allow in (False, True):
                    out = tempfile.mkdtemp(dir=tmp)
                    rc, text = run(cli, [cmd, trace, '-o', out] +
                                   (['--allow-incomplete'] if allow else []))
                    what = 'map' if cmd == 'perfmap' else 'dump'
                    said = ('1 rundown pass(es) not complete' in text and
                            'the %s may lack code' % what in text)
                    wrote = os.listdir(out)
                    name = '%s %s%s' % (cmd, kind, ' --allow-incomplete' if allow else '')
                    if kind == 'complete':
                        check(name + ': exit 0, nothing said of passes',
                              rc == 0 and 'rundown pass' not in text and wrote,
                              (rc, text, wrote))
                    elif allow:
                        check(name + ': exit 0, says the pass is not complete',
                              rc == 0 and said and wrote and
                              '--allow-incomplete: exit status 0' in text, (rc, text, wrote))
                    else:
                        # The output is written all the same (what there is).
                        check(name + ': exit 3, says the pass is not complete',
                              rc == 3 and said and wrote and
                              '--allow-incomplete to accept' in text, (rc, text, wrote))
                    if kind == 'lossy' and not allow:
                        check(name + ': says how many records of how many',
                              'dcstart pass 1 lossy: 7 of 10 record(s)' in text, text)
            # The report judged these already: unchanged.
            rc, text = run(cli, ['report', trace])
            check('report %s: exit %d' % (kind, 0 if kind == 'complete' else 3),
                  rc == (0 if kind == 'complete' else 3), (rc, text))
    finally:
        shutil.rmtree(tmp)
    if FAILURES:
        print('%d failure(s)' % len(FAILURES))
        sys.exit(1)


if __name__ == '__main__':
    main()
