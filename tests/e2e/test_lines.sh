#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end, real lttng-sessiond: a method published with a line table
# gives letw_runtime:method_lines events (chunked) and, when the session
# enables them, method_code_bytes events holding its bytes (the runtime
# vouched its code readable) and none when it did not (the publish path
# never copies fault-safely: that is a system call); the optional events
# stay off for a session that enables only `letw_runtime:*load`.
# usage: test_lines.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1

letw_ensure_sessiond
run_one() { # NAME ENABLE_PATTERN [unvouched] → sets pid, s, addr
	local out="$LETW_TEST_TMP/addr.$1"
	"$build/bin/letw-linesapp" "$LETW_TEST_TMP/ready.$1" "$LETW_TEST_TMP/go.$1" ${3:+"$3"} > "$out" &
	pid=$!
	letw_track "$pid"
	letw_wait_for test -e "$LETW_TEST_TMP/ready.$1" || letw_fail "linesapp did not start"
	s=$(letw_session_create lines) || exit 1
	letw_session_track "$s" "$pid"
	lttng enable-event -u -s "$s" "$2" >/dev/null || letw_fail "enable-event $2"
	lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"
	lttng start "$s" >/dev/null || letw_fail "start"
	touch "$LETW_TEST_TMP/go.$1"
	letw_wait_for test -s "$out" || letw_fail "linesapp did not publish"
	addr=$(cat "$out")
	lttng stop "$s" >/dev/null || letw_fail "stop"
}

run_one all 'letw_runtime:*'
$LETW_PY "$here/check_lines.py" "$LETW_TEST_TMP/$s" "$pid" "$addr" ||
	letw_fail "line table / code bytes events do not match what was published"

run_one unvouched 'letw_runtime:*' unvouched
n=$(babeltrace2 "$LETW_TEST_TMP/$s" 2>/dev/null | grep -c 'method_code_bytes')
[ "$n" = 0 ] || letw_fail "code bytes emitted at publish without LETW_METHOD_OPT_CODE_READABLE ($n)"
letw_trace_has "$LETW_TEST_TMP/$s" 'letw_runtime:method_lines' || letw_fail "no method_lines (unvouched)"

run_one loads 'letw_runtime:*load'
n=$(babeltrace2 "$LETW_TEST_TMP/$s" 2>/dev/null | grep -c 'method_lines\|method_code_bytes')
[ "$n" = 0 ] || letw_fail "optional events recorded by a session that enabled only *load ($n)"
letw_trace_has "$LETW_TEST_TMP/$s" 'letw_runtime:method_load' || letw_fail "no method_load"
echo "OK"
