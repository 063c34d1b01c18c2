#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every session gets its own rundown (DESIGN §4), real lttng-sessiond:
#  1. sessions A then B, both enabling letw_rundown:*dcstart*, started with
#     plain `lttng start` while the other is active: each holds exactly one
#     DCStart pass (ENABLE) of its own and none of the other's;
#  2. `lttng regenerate statedump -s A`: one CAPTURE_STATE pass, into A only;
#  3. with the hook disabled (LETW_STATEDUMP=0) the polling fallback still
#     gives a DCStart pass at `lttng start`;
#  4. a trigger (event notifier) on letw_rundown events runs no pass, in
#     either process.
# Every pass is checked against the runtime's own list of its live code.
# usage: test_sessions.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
jit="$build/bin/letw-minijit"

letw_ensure_sessiond

# lttng-sessiond's commands return before a pass longer than the statedump
# callback's bound ends: wait until the process has none queued or running.
settled() { letw_wait_field "$1" pending_statedumps = 0; }
# Prints the session's name: call as s=$(new_session ...) || exit 1 (a
# letw_fail in here only ends the $(...) subshell).
new_session() { # PREFIX PID
	local s
	s=$(letw_session_create "$1") || exit 1
	letw_session_track "$s" "$2"
	lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable dcstart"
	lttng add-context -u -s "$s" -t vpid -t vtid >/dev/null || letw_fail "add-context"
	echo "$s"
}
check() { # SESSION PID LIVE EXPECT...
	local s=$1 p=$2 l=$3; shift 3
	$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$p" "$l" "$@" ||
		letw_fail "session $s: trace does not hold exactly $*"
}

live="$LETW_TEST_TMP/live.txt"
"$jit" --functions 2000 --seconds 120 --list "$live" &
pid=$!
letw_track "$pid"
letw_wait_for test -e "$live.ready" || letw_fail "runtime did not publish its list"
passes=$(letw_ctl_field "$pid" passes) || letw_fail "no STATUS from $pid"
[ $((passes & 1)) = 1 ] || letw_fail "the statedump hook is not active"

a=$(new_session sessA "$pid") || exit 1
b=$(new_session sessB "$pid") || exit 1
lttng start "$a" >/dev/null || letw_fail "start A"
settled "$pid" || letw_fail "A's pass never ended"
id_a=$(letw_ctl_field "$pid" last_dcstart_pass_id)
[ "$id_a" != 0 ] || letw_fail "no DCStart pass at lttng start A"
lttng start "$b" >/dev/null || letw_fail "start B"
settled "$pid" || letw_fail "B's pass never ended"
id_b=$(letw_ctl_field "$pid" last_dcstart_pass_id)
[ "$id_b" != "$id_a" ] || letw_fail "no DCStart pass at lttng start B while A is active"

lttng regenerate statedump -s "$a" >/dev/null || letw_fail "regenerate statedump A"
settled "$pid" || letw_fail "A's capture-state never ended"
id_c=$(letw_ctl_field "$pid" last_dcstart_pass_id)
[ "$id_c" != "$id_b" ] || letw_fail "no pass at lttng regenerate statedump"

lttng stop "$a" >/dev/null && lttng stop "$b" >/dev/null || letw_fail "stop"
check "$a" "$pid" "$live" "dcstart:1:$id_a" "dcstart:2:$id_c"
check "$b" "$pid" "$live" "dcstart:1:$id_b"

# The fallback: no hook, the enabled state polled.
live2="$LETW_TEST_TMP/live2.txt"
LETW_STATEDUMP=0 "$jit" --functions 500 --seconds 120 --list "$live2" &
pid2=$!
letw_track "$pid2"
letw_wait_for test -e "$live2.ready" || letw_fail "fallback runtime did not publish its list"
passes=$(letw_ctl_field "$pid2" passes) || letw_fail "no STATUS from $pid2"
[ $((passes & 1)) = 0 ] || letw_fail "LETW_STATEDUMP=0 left the hook active"
c=$(new_session sessC "$pid2") || exit 1
lttng start "$c" >/dev/null || letw_fail "start C"
letw_wait_field "$pid2" last_dcstart_pass_id != 0 ||
	letw_fail "fallback: no DCStart pass after lttng start"
lttng stop "$c" >/dev/null || letw_fail "stop C"
check "$c" "$pid2" "$live2" dcstart:1
id_f=$(letw_ctl_field "$pid2" last_dcstart_pass_id)

# With no session started, a trigger switches the rundown tracepoints on in
# every process with no session behind it: neither process may run a pass.
# A bounded observation: STATUS counts no polling cycles to wait on, so
# this watches for 1.5 s, hundreds of the fallback's 5 ms polling periods
# (and the hook would answer at once); a pass that started only after the
# window would not be caught.
trig=$(letw_trigger_add letw-sessions --condition event-rule-matches --type=user \
	--name='letw_rundown:*' --action notify) || exit 1
sleep 1.5
[ "$(letw_ctl_field "$pid" last_dcstart_pass_id)" = "$id_c" ] && [ "$(letw_ctl_field "$pid" last_dcend_pass_id)" = 0 ] ||
	letw_fail "a trigger on letw_rundown events made the process run a pass: $(letw_ctl "$pid" status) (before: last_dcstart_pass_id=$id_c)"
[ "$(letw_ctl_field "$pid2" last_dcstart_pass_id)" = "$id_f" ] && [ "$(letw_ctl_field "$pid2" last_dcend_pass_id)" = 0 ] ||
	letw_fail "a trigger on letw_rundown events made the polling process run a pass: $(letw_ctl "$pid2" status) (before: last_dcstart_pass_id=$id_f)"
lttng remove-trigger "$trig" >/dev/null || letw_fail "remove-trigger"

kill -TERM "$pid" "$pid2"
wait "$pid" || letw_fail "runtime exited with $?"
letw_untrack "$pid"
wait "$pid2" || letw_fail "fallback runtime exited with $?"
letw_untrack "$pid2"
echo "PASS: one pass per session and statedump, none for a trigger, polling fallback"
