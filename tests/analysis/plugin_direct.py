#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The sink classes used straight from babeltrace2, as its users run them
(`babeltrace2 --plugin-path DIR TRACE -c sink.etw.X -p ...`), on traces
made by output_safety_trace.py (no LTTng session):

a. an empty path (`output=""`, `output-dir=""`) is refused when the
   component is made, by a cause naming the parameter; before, the report
   read the whole trace and then failed to rename its finished file to
   "" (a cause naming neither the parameter nor why), and the output
   directory said only "Invalid argument";
b. a reader that dies while the trace is read (babeltrace2's CTF reader
   on a damaged trace, SIGTERM, which babeltrace2 does not catch: no
   supervisor cleans up after it) leaves `report -p output=FILE`'s
   directory as it was; before, the report's temporary file, made when
   the component was, stayed there (.FILE.tmp.PID.XXXXXX). The report is
   still written when the read ends;
c. `report -p output=FILE` with a name of up to NAME_MAX (255) bytes is
   written; before, its temporary name (.FILE.tmp.PID.XXXXXX) was too
   long and the report failed with "File name too long".

usage: plugin_direct.py PLUGIN_DIR
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interrupt_e2e import FAILURES, check  # noqa: E402
from output_safety_trace import write as write_trace  # noqa: E402

import bt2  # noqa: E402


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


class DyingIter(bt2._UserMessageIterator):
    """A reader that dies (SIGKILL) after the stream's first message: the
    sinks are made and reading."""
    def __init__(self, config, port):
        self._stream = port.user_data.trace.create_stream(port.user_data.sc)
        self._begun = False

    def __next__(self):
        if not self._begun:
            self._begun = True
            return self._create_stream_beginning_message(self._stream)
        os.kill(os.getpid(), signal.SIGKILL)


class DyingSource(bt2._UserSourceComponent, message_iterator_class=DyingIter):
    def __init__(self, config, params, obj):
        tc = self._create_trace_class()
        self.sc = tc.create_stream_class()
        self.trace = tc()
        self._add_output_port('out', self)


def die_reading(plugin_dir, path):
    """In a process of its own: report -p output=path, its reader dying."""
    plugin = bt2.find_plugins_in_path(plugin_dir)[0]
    g = bt2.Graph()
    src = g.add_component(DyingSource, 'src')
    sink = g.add_component(plugin.sink_component_classes['report'], 'sink',
                           params={'output': path})
    g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
    g.run()


def reader_dies(plugin_dir, tmp, trace):
    out = tempfile.mkdtemp(dir=tmp, prefix='dies.')
    path = os.path.join(out, 'r.txt')
    with open(path, 'w') as f:
        f.write('the previous report\n')
    r = subprocess.run([sys.executable, os.path.abspath(__file__), '--die-reading',
                        plugin_dir, path], stdin=subprocess.DEVNULL, timeout=120)
    check('report, reader killed: died', r.returncode == -signal.SIGKILL,
          'exit %d' % r.returncode)
    check('report, reader killed: no temporary file left', os.listdir(out) == ['r.txt'],
          os.listdir(out))
    with open(path) as f:
        text = f.read()
    check('report, reader killed: FILE as it was', text == 'the previous report\n', text)
    # The read whole: the report is put in place, alone.
    out = tempfile.mkdtemp(dir=tmp, prefix='whole.')
    path = os.path.join(out, 'r.txt')
    rc, err = bt(plugin_dir, [trace, '-c', 'sink.etw.report', '-p', 'output="r.txt"'], out)
    with open(path) as f:
        text = f.read()
    check('report -p output=FILE: written', rc == 0 and 'complete' in text, err[-600:] + text)
    check('report -p output=FILE: FILE alone', os.listdir(out) == ['r.txt'], os.listdir(out))


def long_name(plugin_dir, tmp, trace):
    out = tempfile.mkdtemp(dir=tmp, prefix='long.')
    for n in (240, 255):
        name = 'r' * n
        rc, err = bt(plugin_dir, [trace, '-c', 'sink.etw.report', '-p',
                                  'output="%s"' % name], out)
        check('report -p output=(a %d-byte name): exit 0' % n, rc == 0, err[-600:])
        check('report -p output=(a %d-byte name): FILE alone' % n,
              os.listdir(out) == [name], os.listdir(out))
        if os.path.exists(os.path.join(out, name)):
            os.unlink(os.path.join(out, name))


def main():
    if sys.argv[1] == '--die-reading':
        die_reading(sys.argv[2], sys.argv[3])
        sys.exit('the reader did not die')
    plugin_dir = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix='letw-plugin-direct.')
    try:
        one = os.path.join(tmp, 'one')
        write_trace('one', one)
        empty_paths(plugin_dir, tmp, one)
        reader_dies(plugin_dir, tmp, one)
        long_name(plugin_dir, tmp, one)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        sys.exit('%d check(s) failed: %s' % (len(FAILURES), ', '.join(FAILURES)))


if __name__ == '__main__':
    main()
