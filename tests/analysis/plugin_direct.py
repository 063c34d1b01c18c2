#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The sink classes used straight from babeltrace2, as its users run them
(`babeltrace2 --plugin-path DIR TRACE -c sink.etw.X -p ...`), on traces
made by output_safety_trace.py (no LTTng session):

a. an empty path (`output=""`, `output-dir=""`) is refused when the
   component is made, by a cause naming the parameter; before, the report
   read the whole trace and then failed to rename its finished file to
   "" (a cause naming neither the parameter nor why), and the output
   directory said only "Invalid argument".

usage: plugin_direct.py PLUGIN_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interrupt_e2e import FAILURES, check  # noqa: E402
from output_safety_trace import write as write_trace  # noqa: E402


def bt(plugin_dir, args, cwd):
    """babeltrace2 ARGS with the plugin: (exit status, stderr)."""
    r = subprocess.run(['babeltrace2', '--plugin-path', plugin_dir] + args, cwd=cwd,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stderr.decode(errors='replace')


def empty_paths(plugin_dir, tmp, trace):
    for cls, key in (('report', 'output'), ('perfmap', 'output-dir'),
                     ('jitdump', 'output-dir')):
        cwd = tempfile.mkdtemp(dir=tmp, prefix=cls + '.')
        rc, err = bt(plugin_dir, [trace, '-c', 'sink.etw.' + cls, '-p', '%s=""' % key], cwd)
        name = 'sink.etw.%s %s="": ' % (cls, key)
        check(name + 'fails', 0 < rc < 128, 'exit %d' % rc)
        # babeltrace2 folds its causes' lines: the words, not the lines.
        said = ' '.join(err.split())
        check(name + 'the cause names the parameter',
              'parameter `%s` is an empty path' % key in said, err[-600:])
        check(name + 'refused before reading the trace',
              'Component initialization method failed' in said, err[-600:])
        check(name + 'nothing written', os.listdir(cwd) == [], os.listdir(cwd))


def main():
    plugin_dir = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix='letw-plugin-direct.')
    try:
        one = os.path.join(tmp, 'one')
        write_trace('one', one)
        empty_paths(plugin_dir, tmp, one)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        sys.exit('%d check(s) failed: %s' % (len(FAILURES), ', '.join(FAILURES)))


if __name__ == '__main__':
    main()
