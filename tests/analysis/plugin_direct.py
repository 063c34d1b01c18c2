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
   long and the report failed with "File name too long";
d. the temporary files a writer killed while it wrote left (babeltrace2
   catches SIGINT only: a SIGTERM, SIGHUP or SIGKILL ends it there and
   then, its NAME.tmp.PID.XXXXXX stays) are removed by the next run into
   the same directory (perfmap, jitdump, with its pidns-* directories)
   or to the same file (report): those of a pid that is gone and that no
   process holds the lock on. A live writer's stays (its pid alive, or
   its lock held: one in another pid namespace), and so does a name of
   another program's. Before, they stayed for good.

usage: plugin_direct.py PLUGIN_DIR
"""
import fcntl
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


def gone_pid():
    """The pid of a process that has exited (and been reaped)."""
    p = subprocess.Popen(['true'])
    p.wait()
    return p.pid


def stale_temps(plugin_dir, tmp, trace):
    dead, me = gone_pid(), os.getpid()
    out = tempfile.mkdtemp(dir=tmp, prefix='stale.')
    os.mkdir(os.path.join(out, 'pidns-1'))
    gone = ['perf-100.map.tmp.%d.aB3dE9' % dead, '.jit-100.dump.tmp.%d.Zz0123' % dead,
            'pidns-1/perf-7.map.tmp.%d.qwerty' % dead]
    stay = ['perf-8.map.tmp.%d.live00' % me,         # a live pid
            'perf-9.map.tmp.%d.locked' % dead,       # its lock held
            'notes.tmp.%d.abcdef' % dead]            # not ours
    for n in gone + stay:
        with open(os.path.join(out, n), 'w') as f:
            f.write('partial')
    held = os.open(os.path.join(out, stay[1]), os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        rc, err = bt(plugin_dir, [trace, '-c', 'sink.etw.perfmap', '-p',
                                  'output-dir="%s"' % out], tmp)
    finally:
        os.close(held)
    left = sorted(os.listdir(out)) + sorted('pidns-1/' + n for n in
                                            os.listdir(os.path.join(out, 'pidns-1')))
    check('perfmap after a killed writer: exit 0', rc == 0, err[-600:])
    check('perfmap after a killed writer: its temporary files gone, the others kept',
          left == sorted(stay + ['perf-100.map', 'pidns-1']), left)
    out = tempfile.mkdtemp(dir=tmp, prefix='stale-report.')
    for n in ('.r.txt.tmp.%d.aB3dE9' % dead, '.other.txt.tmp.%d.aB3dE9' % dead):
        with open(os.path.join(out, n), 'w') as f:
            f.write('partial')
    rc, err = bt(plugin_dir, [trace, '-c', 'sink.etw.report', '-p', 'output="r.txt"'], out)
    left = sorted(os.listdir(out))
    check('report after a killed writer: exit 0', rc == 0, err[-600:])
    check("report after a killed writer: its file's temporary gone, another's kept",
          left == ['.other.txt.tmp.%d.aB3dE9' % dead, 'r.txt'], left)


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
        stale_temps(plugin_dir, tmp, one)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        sys.exit('%d check(s) failed: %s' % (len(FAILURES), ', '.join(FAILURES)))


if __name__ == '__main__':
    main()
