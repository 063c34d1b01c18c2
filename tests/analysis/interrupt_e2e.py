#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""SIGTERM, Ctrl-C or a hang-up while lttng-etw's sinks write their outputs
stops them.

The sinks write their outputs in their last consume, after the reader has
reached the end of the trace. A SIGTERM (to the CLI, which forwards it to
its reader child) or a Ctrl-C (to the whole process group) arriving then
was taken by the child's handler, which only set babeltrace2's
interrupter: the dump was written to its end and put in place, and the
command exited 0 as if nothing had happened. Now the writer stops, removes
its temporary file and leaves the previous dump as it was, and the command
exits 130 saying `interrupted` (as the session commands do, and as a shell
reports a command a signal stopped: it exited 1, which a script could not
tell from a damaged trace).

The write phase is caught deterministically, not by timing: the test waits
for the dump's temporary file to appear, stops the reader child
(SIGSTOP), sends the signal, waits until the child has it pending, then
lets it go on (SIGCONT): the signal lands while the dump is being written,
however fast the disk. Should the whole dump be written before the test
sees its temporary file (a 160 MB dump takes ~50 ms), the run is tried
again. No LTTng session: the trace is written through the bindings
(output_safety_trace.py, kind `slow`).

The three sinks under babeltrace2 (through the bindings): a source whose
trace ends sets the graph's interrupter as it ends, so each sink sees it
exactly in its end of stream: perfmap and jitdump leave no file, `report
-o FILE` leaves FILE as it was, and each fails the graph saying which
file it did not write. Before, all three wrote their outputs.

usage: interrupt_e2e.py LTTNG_ETW_CLI PLUGIN_DIR
"""
import ctypes
import fnmatch
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import bt2

HERE = os.path.dirname(os.path.abspath(__file__))
PREVIOUS = b'the previous dump\n'
FAILURES = []


def check(name, cond, detail):
    print('%s: %s' % ('ok  ' if cond else 'FAIL', name))
    if not cond:
        print('       %s' % (detail,))
        FAILURES.append(name)


def die_with_us():
    """In the CLI before exec: killed when this test is (a ctest timeout
    kills the test alone); its reader child dies with it
    (PR_SET_PDEATHSIG, as the CLI sets it)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def children(pid):
    try:
        with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def proc_state(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def pending(pid, sig):
    """Whether sig is pending for pid (its thread or its process)."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                k, _, v = line.partition(':')
                if k in ('SigPnd', 'ShdPnd') and int(v, 16) >> (sig - 1) & 1:
                    return True
    except OSError:
        pass
    return False


def wait_until(cond, limit):
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True


def kill_all(p):
    """The CLI's process group (the CLI and its reader child), however the
    run ended."""
    for _ in range(100):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            break
        if p.poll() is None:
            try:
                p.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        time.sleep(0.01)
    p.wait()


def temps(out):
    return [f for f in os.listdir(out) if fnmatch.fnmatch(f, '*.tmp.*')]


def nohup_die_with_us():
    """As nohup(1) starts the CLI: SIGHUP ignored."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    die_with_us()


def interrupt_write(cli, trace, out, sig, to_group, nohup=False):
    """One run of jitdump into out, signalled while it writes. Returns
    (exit status, stderr, seconds from the signal's delivery to the exit),
    or None when the dump was written before it could be caught. nohup:
    started with SIGHUP ignored (sig then is never pending: the child is
    let go on 0.5 s after it)."""
    p = subprocess.Popen([cli, 'jitdump', trace, '-o', out, '--no-progress'],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=nohup_die_with_us if nohup else die_with_us)
    try:
        # Busy polling: the dump is written in some 50 ms.
        end = time.monotonic() + 120
        while not temps(out):
            if p.poll() is not None:
                return None
            if time.monotonic() > end:
                raise RuntimeError('no temporary file in %s after 120 s' % out)
        kids = children(p.pid)
        if len(kids) != 1:
            return None  # the reader child already gone
        child = kids[0]
        os.kill(child, signal.SIGSTOP)
        if not wait_until(lambda: proc_state(child) in ('T', 't', None), 10):
            raise RuntimeError('the reader child %d does not stop' % child)
        if proc_state(child) is None or not temps(out):
            return None  # it was done before it stopped
        if to_group:
            os.killpg(p.pid, sig)      # Ctrl-C: the whole foreground group
        else:
            os.kill(p.pid, sig)        # kill(1): the CLI only, which forwards it
        if nohup:
            time.sleep(0.5)
        elif not wait_until(lambda: pending(child, sig), 10):
            raise RuntimeError('signal %d never reached the reader child' % sig)
        t0 = time.monotonic()
        os.kill(child, signal.SIGCONT)
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            return (None, 'still running 60 s after the signal', 60.0)
        return (p.returncode, err.decode(errors='replace'), time.monotonic() - t0)
    finally:
        kill_all(p)


def caught(cli, trace, tmp, name, sig, to_group, nohup=False):
    """A jitdump into a fresh directory holding a previous dump, sent sig
    while it writes (up to 5 tries: a write can end before the test sees
    it): (out, dump, (rc, err, secs)), or None after failing the check."""
    for attempt in range(5):
        out = tempfile.mkdtemp(dir=tmp, prefix=name.replace(' ', '-') + '.')
        dump = os.path.join(out, 'jit-100.dump')
        with open(dump, 'wb') as f:
            f.write(PREVIOUS)
        r = interrupt_write(cli, trace, out, sig, to_group, nohup=nohup)
        if r is not None:
            return out, dump, r
        print('     %s: the dump was written before the test caught it: again' % name)
        shutil.rmtree(out)
    check(name + ': the write is caught', False, 'written before its temporary file was seen, 5 times')
    return None


def case(cli, trace, tmp, name, sig, to_group):
    got = caught(cli, trace, tmp, name, sig, to_group)
    if got is None:
        return
    out, dump, r = got
    rc, err, secs = r
    check(name + ': exit status 130', rc == 130, 'exit %s: %s' % (rc, err))
    check(name + ': says interrupted', 'lttng-etw: interrupted' in err, err)
    check(name + ': no temporary file left', not temps(out), os.listdir(out))
    with open(dump, 'rb') as f:
        head = f.read(len(PREVIOUS) + 1)
    check(name + ': the previous dump is left as it was', head == PREVIOUS,
          'jit-100.dump begins %r' % head[:16])
    check(name + ': nothing else in the output directory', os.listdir(out) == ['jit-100.dump'],
          os.listdir(out))
    check(name + ': stops within 10 s', secs < 10, '%.1f s' % secs)


def nohup_case(cli, trace, tmp):
    """SIGHUP to a jitdump started under nohup, to the CLI and its group,
    while it writes: ignored, as start/stop/snapshot ignore it, the dump
    written whole, exit 0. The CLI and its reader child caught it and
    stopped: `nohup lttng-etw jitdump ... &` did not outlive the terminal."""
    name = 'SIGHUP under nohup'
    got = caught(cli, trace, tmp, name, signal.SIGHUP, True, nohup=True)
    if got is None:
        return
    out, dump, r = got
    rc, err, secs = r
    check(name + ': exit status 0', rc == 0, 'exit %s: %s' % (rc, err))
    with open(dump, 'rb') as f:
        head = f.read(len(PREVIOUS) + 1)
    check(name + ': the dump is written', head != PREVIOUS and len(head) > len(PREVIOUS),
          'jit-100.dump begins %r' % head[:16])
    check(name + ': no temporary file left', not temps(out), os.listdir(out))


sys.path.insert(0, HERE)
from report_logic import complete, event_classes, init, method  # noqa: E402


class EndIter(bt2._UserMessageIterator):
    """A complete DCStart pass of process 100, whose end sets the
    interrupter: the sink gets the end of the stream (and writes) in the
    consume that follows the signal."""

    def __init__(self, config, port):
        self._src = port.user_data
        self._msgs = self._build(self._src)

    def _build(self, s):
        stream = s.trace.create_stream(s.sc)
        yield self._create_stream_beginning_message(stream)
        for name, ts, vpid, fields in s.steps:
            msg = self._create_event_message(s.ec[name], stream, default_clock_snapshot=ts)
            msg.event.common_context_field['vpid'] = vpid
            for k, v in fields.items():
                msg.event.payload_field[k] = v
            yield msg
        yield self._create_stream_end_message(stream)

    def __next__(self):
        try:
            return next(self._msgs)
        except StopIteration:
            self._src.interrupter.set()
            raise


class EndSource(bt2._UserSourceComponent, message_iterator_class=EndIter):
    def __init__(self, config, params, interrupter):
        tc = self._create_trace_class()
        cc = self._create_clock_class(frequency=1000000000)
        ctx = tc.create_structure_field_class()
        ctx.append_member('vpid', tc.create_signed_integer_field_class(32))
        self.sc = tc.create_stream_class(default_clock_class=cc,
                                         event_common_context_field_class=ctx)
        self.ec = event_classes(tc, self.sc)
        self.trace = tc()
        self.steps = ([init(10, 1)] +
                      [method('method_dcstart', 11 + i, 0x10000 + i * 0x10, n)
                       for i, n in enumerate(['alpha', 'beta', 'gamma'])] +
                      [complete(20, 1, 3)])
        self.interrupter = interrupter
        self._add_output_port('out', self)


def sink_interrupted(plugin, cls, params, interrupt=True):
    """sink.etw.CLS signalled as the trace ends: (whether the graph failed,
    its error's text)."""
    intr = bt2.Interrupter()
    g = bt2.Graph()
    if interrupt:
        g.add_interrupter(intr)
    src = g.add_component(EndSource, 'src', obj=intr)
    sink = g.add_component(plugin.sink_component_classes[cls], 'sink', params=params)
    g.connect_ports(src.output_ports['out'], sink.input_ports['in'])
    try:
        g.run()
        return False, ''
    except bt2._Error as e:
        return True, ' | '.join(c.message for c in e)


def sinks(plugin_dir, tmp):
    plugin = bt2.find_plugins_in_path(plugin_dir)[0]
    for cls in ('perfmap', 'jitdump'):
        out = tempfile.mkdtemp(dir=tmp, prefix=cls + '.')
        failed, why = sink_interrupted(plugin, cls, {'output-dir': out})
        check('sink.etw.%s interrupted: fails' % cls, failed, 'the graph ran to its end')
        check('sink.etw.%s interrupted: says which file' % cls, 'not written' in why, why)
        check('sink.etw.%s interrupted: writes nothing' % cls, os.listdir(out) == [],
              os.listdir(out))
    out = tempfile.mkdtemp(dir=tmp, prefix='report.')
    path = os.path.join(out, 'r.json')
    with open(path, 'w') as f:
        f.write('the previous report\n')
    params = {'format': 'json', 'output': path}
    failed, why = sink_interrupted(plugin, 'report', params)
    check('sink.etw.report -o interrupted: fails', failed, 'the graph ran to its end')
    check('sink.etw.report -o interrupted: says which file', '`%s` not written' % path in why, why)
    with open(path) as f:
        text = f.read()
    check('sink.etw.report -o interrupted: FILE as it was', text == 'the previous report\n', text)
    check('sink.etw.report -o interrupted: no temporary file', os.listdir(out) == ['r.json'],
          os.listdir(out))
    # The same graph not interrupted: the report is written.
    failed, why = sink_interrupted(plugin, 'report', params, interrupt=False)
    check('sink.etw.report -o not interrupted: written', not failed and os.listdir(out) == ['r.json']
          and open(path).read().startswith('{'), why)


def main():
    cli = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix='letw-interrupt.')
    try:
        trace = os.path.join(tmp, 'slow')
        subprocess.run([sys.executable, os.path.join(HERE, 'output_safety_trace.py'),
                        'slow', trace], check=True)
        # The trace as it is: its dump is written and put in place.
        out = os.path.join(tmp, 'whole')
        r = subprocess.run([cli, 'jitdump', trace, '-o', out, '--no-progress'],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=120, preexec_fn=die_with_us)
        check('uninterrupted: exit 0', r.returncode == 0, r.stderr.decode(errors='replace'))
        check('uninterrupted: the dump only', os.listdir(out) == ['jit-100.dump'], os.listdir(out))
        shutil.rmtree(out)
        case(cli, trace, tmp, 'SIGTERM to the CLI', signal.SIGTERM, False)
        case(cli, trace, tmp, 'SIGINT to the group', signal.SIGINT, True)
        # A closed terminal or ssh session: it killed both processes in
        # the write and left a hidden half-written temporary file behind
        # (exit 129, nothing said).
        case(cli, trace, tmp, 'SIGHUP to the CLI', signal.SIGHUP, False)
        case(cli, trace, tmp, 'SIGHUP to the group', signal.SIGHUP, True)
        nohup_case(cli, trace, tmp)
        sinks(sys.argv[2], tmp)
    finally:
        shutil.rmtree(tmp)
    if FAILURES:
        print('%d check(s) failed' % len(FAILURES))
        sys.exit(1)


if __name__ == '__main__':
    main()
