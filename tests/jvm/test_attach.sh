#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 12, test 2: late attach. The workload starts without the agent and
# warms up (the hot methods get C2 code); then `jcmd PID JVMTI.agent_load`
# attaches the agent, which replays the live code with GenerateEvents, and
# only then a session enabling the DCStart rundown starts. Every method
# `jcmd Compiler.codelist` shows before the attach and still after the
# pass must be in the pass, at its code_begin, under the name the JDK
# gives it (check_attach.py), the hot methods among them. The workload
# watches its parent with ProcessHandle (--handles), so method handle
# intrinsics are among them too (named as check_attach.py says).
# Last, a capture-state is requested and the JVM told to exit at once: it
# must exit 0 and not crash, whether the pass was still running or not.
# usage: test_attach.sh BUILD_DIR JAVA_HOME
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
. "$here/jvm.sh" "$1" "$2"

letw_ensure_sessiond
jvm_compile "$here/java/Workload.java"
stop="$LETW_TEST_TMP/stop"
"$java" "${JVM_FLAGS[@]}" -cp "$classes" letw.test.Workload "$stop" --handles \
	>"$LETW_TEST_TMP/jvm.out" 2>&1 &
pid=$!
letw_track "$pid"
jvm_wait_hot "$pid"
jvm_codelist "$pid" >"$LETW_TEST_TMP/before.txt"

# KEY:VALUE: jcmd would take an unquoted KEY=VALUE as its own argument.
jvm_jcmd "$pid" JVMTI.agent_load "$agent" "log:$LETW_TEST_TMP/agent.log" \
	>"$LETW_TEST_TMP/attach.out" 2>&1 || letw_fail "jcmd JVMTI.agent_load: $(cat "$LETW_TEST_TMP/attach.out")"
grep -q 'return code: 0' "$LETW_TEST_TMP/attach.out" ||
	letw_fail "the agent refused to attach: $(cat "$LETW_TEST_TMP/attach.out") $(cat "$LETW_TEST_TMP/agent.log")"
# Agent_OnAttach returns after the replay: its summary is in the log.
grep -q 'attach: replayed' "$LETW_TEST_TMP/agent.log" || letw_fail "no replay: $(cat "$LETW_TEST_TMP/agent.log")"
letw_log "$(grep 'attach: methods' "$LETW_TEST_TMP/agent.log")"

s=$(letw_session_create jvm-attach) || exit 1
letw_session_track "$s" "$pid"
lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable dcstart"
lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"
"$cli" start "$s" --pid "$pid" >"$LETW_TEST_TMP/start.log" 2>&1 ||
	letw_fail "lttng-etw start: $(cat "$LETW_TEST_TMP/start.log")"
jvm_codelist "$pid" >"$LETW_TEST_TMP/after.txt"

# Exit with a pass possibly under way (lttng-etw's exit handler stops it).
"$cli" capture-state --pid "$pid" >"$LETW_TEST_TMP/capture.log" 2>&1 ||
	letw_fail "capture-state: $(cat "$LETW_TEST_TMP/capture.log")"
jvm_stop "$pid" "$stop"
jvm_no_crash
lttng stop "$s" >/dev/null || letw_fail "stop"

$LETW_PY "$here/check_attach.py" "$LETW_TEST_TMP/$s" "$pid" "$LETW_TEST_TMP/before.txt" \
	"$LETW_TEST_TMP/after.txt" || letw_fail "the DCStart pass after the attach is incomplete"
echo "PASS: attached late with jcmd, the DCStart pass names every method compiled before"
