#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# LETW_DISABLE=1: the runtime runs its JIT'd code normally and a session
# enabling every lttng-etw event records nothing from it; a capture-state
# request is answered with -ENOTCONN instead of a pass.
# usage: test_disabled.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1

letw_ensure_sessiond
# This session tracks every process (the runtimes publish as they start,
# before we could name their vpid): it is short, and only checks vpids.
s=$(letw_session_create disabled) || exit 1
lttng enable-event -u -s "$s" 'letw_runtime:*' >/dev/null || letw_fail "enable"
lttng enable-event -u -s "$s" 'letw_rundown:*' >/dev/null || letw_fail "enable"
lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"
lttng start "$s" >/dev/null || letw_fail "start"

live="$LETW_TEST_TMP/live.txt"
LETW_DISABLE=1 "$build/bin/letw-minijit" --functions 300 --seconds 30 --list "$live" &
pid=$!
letw_track "$pid"
letw_wait_for test -e "$live.ready" || letw_fail "runtime did not start under LETW_DISABLE=1"
grep -q '^method ' "$live" || letw_fail "runtime published nothing"
reply=$($LETW_PY "$here/letw_ctl.py" "$pid" capture)
echo "$reply" | grep -q 'status=-107 ' || letw_fail "capture-state should say -ENOTCONN: $reply"
kill -TERM "$pid"
wait "$pid" || letw_fail "runtime exited with $?"
lttng stop "$s" >/dev/null
n=$(babeltrace2 "$LETW_TEST_TMP/$s" 2>/dev/null | grep -c "vpid = $pid\b" || true)
[ "$n" = 0 ] || letw_fail "$n events from a runtime with LETW_DISABLE=1"

# Control: the same run without LETW_DISABLE does emit, so the check
# above can fail.
lttng start "$s" >/dev/null || letw_fail "restart"
"$build/bin/letw-minijit" --functions 300 --seconds 1 &
pid2=$!
wait "$pid2" || letw_fail "runtime failed"
lttng stop "$s" >/dev/null
n=$(babeltrace2 "$LETW_TEST_TMP/$s" 2>/dev/null | grep "letw_runtime:method_load" | grep -c "vpid = $pid2\b" || true)
[ "$n" -ge 300 ] || letw_fail "control run emitted only $n method_load events"
echo "PASS: LETW_DISABLE=1 runs untraced; without it the same run is traced ($n loads)"
