# SPDX-License-Identifier: MIT
"""JVM test 2: the first complete DCStart pass of a process that got the
agent late (jcmd JVMTI.agent_load) lists what was compiled before.

usage: check_attach.py TRACE PID CODELIST_BEFORE CODELIST_AFTER

The codelists are `jcmd PID Compiler.codelist` lines taken before the
attach and after the pass ("ID LEVEL STATE NAME(DESC) [blob, begin - end]").
A method in both, at the same code_begin, was live for the whole time: the
pass must hold a method_dcstart at that code_start named
NAMESPACE + "." + NAME + SIGNATURE == NAME(DESC) (the agent's defaults are
the JDK's own spelling), with the same size. The six hot methods of
letw.test.Workload must be among them.

Method handle intrinsics (the native wrappers HotSpot makes per basic-type
signature for MethodHandle.invokeBasic and linkTo*; the workload runs with
--handles so that some are live) are the one exception, and an exact one:
HotSpot gives all of them one jmethodID, which names whichever Method took
MethodHandle's jmethodID slot 0 first, so no JVMTI agent can tell them
apart (jcmd reads the nmethod's own Method). The agent publishes them as
MethodHandle.<intrinsic> with the signature all signature-polymorphic
methods declare, (Object...)Object (runtimes/jvm/naming.h), and that is
what the pass must hold at each, with the codelist's size; at least one
must be checked.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import letw_trace  # noqa: E402

HOT = ("hotMix", "hotSieve", "hotMatmul", "hotCrc", "hotSort", "hotCollatz")
INTRINSIC = re.compile(r"^java\.lang\.invoke\.MethodHandle\."
                       r"(invokeBasic|linkTo(Virtual|Static|Special|Interface|Native))\(")
INTRINSIC_NAME = "java.lang.invoke.MethodHandle.<intrinsic>([Ljava/lang/Object;)Ljava/lang/Object;"
LINE = re.compile(r"^\d+ (\d) \d (\S+) \[0x[0-9a-f]+, (0x[0-9a-f]+) - (0x[0-9a-f]+)\]")


def codelist(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                begin, end = int(m.group(3), 16), int(m.group(4), 16)
                out[begin] = (m.group(2), end - begin, int(m.group(1)))
    return out


# Compiler scratch buffers: HotSpot frees them without an event and
# compiles methods into their range, so the agent must not publish them.
SCRATCH = ("C1 temporary CodeBuffer", "Compile::scratch_buffer", "JVMCI Compiler CodeBuffer")


def first_pass(trace, pid, scratch):
    """method_dcstart records of the first DCStart pass with a Complete;
    the names of any scratch-buffer stubs in the trace go into scratch."""
    open_passes, done = {}, None
    for name, p in letw_trace.vpid_events(trace, pid):
        if name in ("letw_rundown:stub_dcstart", "letw_runtime:stub_load") and \
                p["name"] in SCRATCH:
            scratch.append("%s (%s at 0x%x)" % (p["name"], name, int(p["start"])))
        if name == "letw_rundown:dcstart_init":
            open_passes = {int(p["pass_id"]): {}}
        elif name == "letw_rundown:method_dcstart" and open_passes:
            recs = next(iter(open_passes.values()))
            recs[int(p["code_start"])] = ("%s.%s%s" % (p["namespace"], p["name"], p["signature"]),
                                          int(p["code_size"]))
        elif name == "letw_rundown:dcstart_complete" and int(p["pass_id"]) in open_passes:
            done = open_passes[int(p["pass_id"])]
            break
    if done is None:
        raise SystemExit("FAIL: no complete DCStart pass for process %d" % pid)
    return done


def main():
    trace, pid, before, after = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    a, b = codelist(before), codelist(after)
    stable = {k: v for k, v in a.items() if b.get(k, (None,))[0] == v[0]}
    if not stable:
        raise SystemExit("FAIL: no compiled method in both code lists")
    scratch = []
    recs = first_pass(trace, pid, scratch)
    if scratch:
        print("FAIL: compiler scratch buffers published as stubs: " + ", ".join(scratch[:5]))
        return 1
    missing, wrong, intrinsics = [], [], 0
    for begin, (name, size, level) in sorted(stable.items()):
        want = name
        if INTRINSIC.match(name):
            want = INTRINSIC_NAME
            intrinsics += 1
        r = recs.get(begin)
        if r is None:
            missing.append("%s (level %d) at 0x%x" % (name, level, begin))
        elif r != (want, size):
            wrong.append("0x%x: codelist %s size %d, pass %s size %d (want %s)" %
                         (begin, name, size, r[0], r[1], want))
    levels = {}
    for _, _, level in stable.values():
        levels[level] = levels.get(level, 0) + 1
    print("# %d methods compiled before the attach and live after the pass (by level: %s), "
          "%d of them method handle intrinsics; the pass listed %d methods" %
          (len(stable), levels, intrinsics, len(recs)))
    for m in missing[:10]:
        print("FAIL: not in the pass: " + m)
    for w in wrong[:10]:
        print("FAIL: " + w)
    if missing or wrong:
        return 1
    if not intrinsics:
        print("FAIL: no method handle intrinsic among them: the workload must run with --handles")
        return 1
    named = {r[0].split("(")[0] for r in recs.values()}
    absent = [h for h in HOT if "letw.test.Workload." + h not in named]
    if absent:
        print("FAIL: hot methods not in the pass: " + ", ".join(absent))
        return 1
    print("# every one is in the pass under its Java name, the six hot methods among them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
