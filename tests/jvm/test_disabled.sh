#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 12, test 4: LETW_DISABLE=1. The workload runs with the agent loaded
# and warms up while a session enabling every lttng-etw event records it
# (its start would run a DCStart pass): nothing comes from the process, a
# capture-state is answered -ENOTCONN, the agent says tracing is off, the
# JVM exits 0. The same run without LETW_DISABLE does emit (DCStart
# records naming the hot methods), so the check can fail.
# usage: test_disabled.sh BUILD_DIR JAVA_HOME
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
. "$here/jvm.sh" "$1" "$2"

letw_ensure_sessiond
jvm_compile "$here/java/Workload.java"
s=$(letw_session_create jvm-disabled) || exit 1
for ev in 'letw_runtime:*' 'letw_rundown:*'; do
	lttng enable-event -u -s "$s" "$ev" >/dev/null || letw_fail "enable $ev"
done
lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"

# run ENV_ASSIGNMENT TAG : one JVM with the agent, traced by the session
# from its first seconds until it is hot; sets $run_pid.
run() {
	local stop="$LETW_TEST_TMP/stop-$2"
	env $1 "$java" "-agentpath:$agent=log=$LETW_TEST_TMP/agent-$2.log" "${JVM_FLAGS[@]}" \
		-cp "$classes" letw.test.Workload "$stop" >"$LETW_TEST_TMP/jvm-$2.out" 2>&1 &
	run_pid=$!
	letw_track "$run_pid"
	letw_session_track "$s" "$run_pid"
	lttng start "$s" >/dev/null || letw_fail "start"
	jvm_wait_hot "$run_pid"
	reply=$(letw_ctl "$run_pid" capture)
	echo "# capture-state ($2): $reply" >&2
	if [ "$2" = disabled ]; then
		[ "$(letw_reply_field "$reply" status)" = -107 ] ||
			letw_fail "capture-state should say -ENOTCONN: $reply"
	else
		[ "$(letw_reply_field "$reply" status)" = 0 ] && [ "$(letw_reply_field "$reply" pass_id)" != 0 ] ||
			letw_fail "capture-state of the control run: $reply"
	fi
	jvm_stop "$run_pid" "$stop"
	lttng stop "$s" >/dev/null || letw_fail "stop"
}

run LETW_DISABLE=1 disabled
pid=$run_pid
grep -q 'tracing off' "$LETW_TEST_TMP/agent-disabled.log" ||
	letw_fail "the agent did not notice LETW_DISABLE: $(cat "$LETW_TEST_TMP/agent-disabled.log")"

run LETW_DISABLE= enabled
pid2=$run_pid
jvm_no_crash
# The trace of both runs, read once: a babeltrace2 failure fails the test
# (it must not pass for "no event from the disabled JVM").
babeltrace2 "$LETW_TEST_TMP/$s" >"$LETW_TEST_TMP/trace.txt" 2>"$LETW_TEST_TMP/bt2.err" ||
	letw_fail "babeltrace2: $(cat "$LETW_TEST_TMP/bt2.err")"
n=$(grep -c "vpid = $pid\b" "$LETW_TEST_TMP/trace.txt")
[ "$n" = 0 ] || letw_fail "$n events from a JVM with LETW_DISABLE=1"
grep "vpid = $pid2\b" "$LETW_TEST_TMP/trace.txt" >"$LETW_TEST_TMP/enabled.txt"
n2=$(grep -c 'letw_rundown:method_dcstart' "$LETW_TEST_TMP/enabled.txt")
hot=$(grep -o 'namespace = "letw.test.Workload", name = "hot[A-Za-z]*"' "$LETW_TEST_TMP/enabled.txt" |
	sort -u | wc -l)
[ "$n2" -ge 1 ] && [ "$hot" -ge 6 ] ||
	letw_fail "control run: $n2 method_dcstart, $hot hot methods named (want >= 1 and 6)"
echo "PASS: LETW_DISABLE=1 runs the JVM untraced; without it, $n2 DCStart records name the hot methods"
