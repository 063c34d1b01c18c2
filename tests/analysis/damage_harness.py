# SPDX-License-Identifier: MIT
"""damage.py's harness: for each case, copy the trace, damage the copy
(damage.apply), run `lttng-etw report`, `report --json`, `perfmap`,
`jitdump` and `babeltrace2 -c sink.etw.report` on it under timeouts, and
judge each outcome against the class's promise (check()); cmd_run() prints
the table of outcomes and, with --check, fails on a broken promise.

bind(D) gives it the damage module (its classes, apply, the trace
helpers); `damage.py run` calls cmd_run().
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import damage_index
import damage_records

D = None


def bind(module):
    global D
    D = module


def run_tool(argv, timeout, env=None, user=None):
    """(outcome, exit code or signal, stdout bytes, stderr text)."""
    if user is not None:
        argv = ['setpriv', '--reuid=%d' % user, '--regid=%d' % user,
                '--clear-groups'] + argv
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return 'hang', None, out, err.decode('utf-8', 'replace')
    err = err.decode('utf-8', 'replace')
    if p.returncode < 0:
        return 'signal:' + signal.Signals(-p.returncode).name, p.returncode, out, err
    outcome = {0: 'ok', 1: 'error', 3: 'incomplete'}.get(p.returncode, 'exit%d' % p.returncode)
    # Which layer said no: the reader crashed or hung under the supervisor.
    if outcome == 'error' and 'crashed on' in err:
        outcome = 'error:crash'
    elif outcome == 'error' and ('made no progress' in err or 'without progress' in err):
        outcome = 'error:hang'
    elif outcome == 'error' and 'ran out of memory' in err:
        outcome = 'error:oom'
    return outcome, p.returncode, out, err


def strict_json(b):
    """Problems with a JSON document: '' when it is valid UTF-8 and
    strict JSON."""
    try:
        t = b.decode('utf-8')
    except UnicodeDecodeError as e:
        return 'invalid UTF-8: %s' % e

    def bad_const(c):
        raise ValueError('non-standard constant ' + c)
    try:
        json.loads(t, parse_constant=bad_const)
    except ValueError as e:
        return 'invalid JSON: %s' % e
    return ''


MAP_LINE = re.compile(rb'^[0-9a-f]+ [0-9a-f]+ [^\x00-\x1f\x7f]+$')


def map_problems(d):
    probs = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not re.match(r'^perf-\d+\.map$', f):
            probs.append('stray file ' + f)
            continue
        with open(os.path.join(d, f), 'rb') as fh:
            for n, line in enumerate(fh.read().split(b'\n')[:-1], 1):
                if not MAP_LINE.match(line):
                    probs.append('%s:%d: bad line %r' % (f, n, line[:80]))
                    break
                try:
                    line.decode('utf-8')
                except UnicodeDecodeError:
                    probs.append('%s:%d: invalid UTF-8' % (f, n))
                    break
    return probs


NOPRECHECK_LOSSY = {'seq-backwards'}

# A count near 2^64, or one the complete-* classes wrote (damage_records.ABSURD_COUNTS),
# as a number or as nanoseconds printed in ms ("walk 18446744073709.551 ms").
ABSURD_PRINTED = re.compile(r'\b1844674407\d{10}\b|' + '|'.join(
    r'\b%d\b|\b%d\.\d' % (v, v // 10**6) for v in damage_records.ABSURD_COUNTS))


def check(expect, tool, res, named, cls=None):
    """Broken promises of one tool run, as a list of strings."""
    outcome, rc, out, err = res
    bad = []
    if tool == 'babeltrace2':
        return bad  # the reader is not ours to protect: recorded only
    # 'error-named': the pre-checks refuse it, naming the stream file (the
    # reader's own message, without them, may not).
    want_name = expect == 'error-named'
    if want_name:
        expect = 'error'
        if (named and tool != 'report-noprecheck' and outcome.startswith('error')
                and os.path.basename(named) not in err):
            bad.append('the damaged stream %s is not named' % os.path.basename(named))
    # Names from the trace (file names, method names) reach the text the
    # user reads: an escape sequence or a stray line break must not.
    if tool != 'report-json' and '\x1b' in err + out.decode('utf-8', 'replace'):
        bad.append('an escape character (from the trace) in the output')
    error = outcome.startswith('error')
    if not error and outcome not in ('ok', 'incomplete'):
        bad.append('outcome ' + outcome)
    if error and not re.search(r'^lttng-etw: ', err, re.M):
        bad.append('exit 1 without an lttng-etw message')
    if 'analysis crashed' in err:
        bad.append('our own code crashed')
    # Without the pre-checks the reader itself meets the damage: some of
    # it (a first packet's sequence number of 2^64-1) it reads fine.
    if expect == 'error' and not error and tool != 'report-noprecheck':
        bad.append('expected an error (exit 1), got ' + outcome)
    # Without the pre-checks the reader takes a sequence number going back
    # for 2^64 - 2 packets lost, and the next for the rest of 2^64: their
    # sum once wrapped to 0 and the report said "trace complete".
    if cls in NOPRECHECK_LOSSY and tool == 'report-noprecheck' and outcome == 'ok':
        bad.append('said complete although the reader reported packets lost')
    # 'readable': something the reader alone refuses, which the tools
    # leave out because nothing is lost: the rest is read as usual.
    if expect == 'readable' and error and tool != 'report-noprecheck':
        bad.append('expected the rest of the trace read, got ' + outcome)
    # A count past 2^48 is a counter gone back, not a count: said as
    # unknown, never printed (or summed into 2^64 - 1). Not in an error:
    # the reader's own error causes, relayed as they are, print its
    # sentinels ("last-eh-at=18446744073709551615").
    if not outcome.startswith('error') and ABSURD_PRINTED.search(
            err + out.decode('utf-8', 'replace')):
        bad.append('a count near 2^64 in the output')
    if expect == 'incomplete':
        # Exit 3; or exit 1 when nothing was left to work on (perfmap with
        # no code record in what remains), still naming what is missing.
        if outcome != 'incomplete' and not error:
            bad.append('expected incomplete (exit 3), got ' + outcome)
        text = err + out.decode('utf-8', 'replace')
        if 'incomplete' not in text:
            bad.append('"incomplete" not said')
        if named and os.path.basename(named) not in text:
            bad.append('the damaged stream %s is not named' % os.path.basename(named))
    return bad


# report-noprecheck: the report with LETW_NO_PRECHECK=1, so the reader
# meets the damage and the supervisor's side is what is checked.
TOOLS = ('report', 'report-json', 'perfmap', 'jitdump', 'report-noprecheck', 'babeltrace2')


def run_case(args, cls, rng, case_dir):
    fn, expect, unpriv = D.CLASSES[cls]
    trace = os.path.join(case_dir, 'trace')
    user = None
    if unpriv and os.geteuid() == 0:
        # Root reads everything: run the tools as nobody, who can reach
        # the trace but not the path the damage took away.
        user = 65534
        for d in (args.work, case_dir):
            os.chmod(d, 0o755)
    desc, named = D.apply(cls, args.trace, trace, rng, shared=user is not None)
    env = dict(os.environ)
    env['LETW_STALL_TIMEOUT'] = str(args.stall_timeout)
    # A damaged length can make the reader allocate without end (and
    # fault pages, which the stall watch counts as progress): the cap
    # turns that into an error quickly, at any machine's memory size.
    env['LETW_MEMORY_LIMIT'] = str(args.memory_limit)
    cli = [args.cli]
    results = {}
    for tool in TOOLS:
        if tool == 'babeltrace2' and args.no_babeltrace:
            continue
        tenv = env
        if tool == 'report':
            argv = cli + ['report', trace, '--no-progress']
        elif tool == 'report-noprecheck':
            argv = cli + ['report', trace, '--no-progress']
            tenv = dict(env, LETW_NO_PRECHECK='1')
        elif tool == 'report-json':
            argv = cli + ['report', trace, '--json', '--no-progress']
        elif tool in ('perfmap', 'jitdump'):
            out = os.path.join(case_dir, 'maps' if tool == 'perfmap' else 'dumps')
            if user is not None:
                os.makedirs(out, exist_ok=True)
                os.chmod(out, 0o777)
            argv = cli + [tool, trace, '-o', out, '--no-progress']
        else:
            argv = ['babeltrace2', '--plugin-path=' + args.plugin_dir, trace,
                    '-c', 'sink.etw.report']
        res = run_tool(argv, args.tool_timeout, tenv, user)
        bad = check(expect, tool, res, named, cls)
        if tool == 'report-json' and res[0] in ('ok', 'incomplete'):
            p = strict_json(res[2])
            if p:
                bad.append(p)
        if tool == 'perfmap':
            bad += map_problems(os.path.join(case_dir, 'maps'))
        results[tool] = (res, bad)
    return desc, named, results


def table(counts, classes):
    tools = [t for t in TOOLS if any((c, t) in counts for c in classes)]
    width = max(len(c) for c in classes) + 2
    lines = ['%-*s %s' % (width, 'damage class', ' | '.join('%-26s' % t for t in tools))]
    for c in classes:
        cells = []
        for t in tools:
            oc = counts.get((c, t), {})
            cells.append('%-26s' % ' '.join('%s:%d' % kv for kv in sorted(oc.items())))
        lines.append('%-*s %s' % (width, c, ' | '.join(cells)))
    return '\n'.join(lines)


def cmd_run(args):
    rng = random.Random(args.seed)
    classes = args.classes.split(',') if args.classes else [
        c for c in D.CLASSES if c not in damage_index.NOT_DEFAULT]
    for c in classes:
        if c not in D.CLASSES:
            sys.exit('damage.py: unknown class ' + c)
    args.work = args.work or tempfile.mkdtemp(prefix='letw-damage.')
    os.makedirs(args.work, exist_ok=True)
    counts, failures, not_applicable, n = {}, [], [], 0
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    plan = None if (args.random or deadline) else list(classes)
    while True:
        if plan is not None:
            if not plan:
                break
            cls = plan.pop(0)
        else:
            if (args.random and n >= args.random) or (deadline and time.time() >= deadline):
                break
            cls = rng.choice(classes)
        case_dir = os.path.join(args.work, 'case%05d' % n)
        os.makedirs(case_dir)
        case_seed = rng.randrange(1 << 30)
        try:
            desc, named, results = run_case(args, cls, random.Random(case_seed), case_dir)
        except D.NotApplicable as e:
            print('# %s (seed %d): not applicable: %s' % (cls, case_seed, e), file=sys.stderr)
            not_applicable.append('%s (seed %d): %s' % (cls, case_seed, e))
            shutil.rmtree(case_dir, ignore_errors=True)
            n += 1
            continue
        line = '# %s (seed %d): %s:' % (cls, case_seed, desc)
        for tool, (res, bad) in results.items():
            counts.setdefault((cls, tool), {})
            counts[(cls, tool)][res[0]] = counts[(cls, tool)].get(res[0], 0) + 1
            first = next((l for l in res[3].splitlines() if l.startswith('lttng-etw:')), '')
            line += ' %s=%s' % (tool, res[0])
            if args.verbose and first:
                line += ' [%s]' % first[:160]
            for b in bad:
                failures.append('%s/%s (case seed %d, %s): %s\n    stderr: %s' % (
                    cls, tool, case_seed, desc, b, res[3].strip()[-600:]))
        print(line, file=sys.stderr)
        if not args.keep:
            subprocess.run(['chmod', '-R', 'u+rwX', case_dir], check=False)
            shutil.rmtree(case_dir, ignore_errors=True)
        n += 1
    print(table(counts, [c for c in classes if any((c, t) in counts for t in TOOLS)]))
    print('%d case(s), %d broken promise(s), %d not applicable (%d allowed)' % (
        n, len(failures), len(not_applicable), args.allow_na))
    for f in failures:
        print('BROKEN: ' + f)
    if len(not_applicable) > args.allow_na:
        # A class that silently stops applying (a pattern no longer in
        # the trace) would otherwise drop out of the run unseen.
        for c in not_applicable:
            print('NOT APPLICABLE: ' + c)
        failures.append('too many classes not applicable')
    return 1 if (args.check and failures) else 0
