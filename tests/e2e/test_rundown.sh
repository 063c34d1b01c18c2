#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end, real lttng-sessiond: the demo runtime publishes code, then
#  1. a session enabling letw_rundown:*dcstart* starts → exactly one
#     DCStart pass (ENABLE_PROVIDER) listing every live record;
#  2. enabling *dcend* in the running session, then regenerating its
#     statedump (what `lttng-etw stop` does) → one DCEnd pass (ENABLE with
#     only the keyword the session gained);
#  3. CAPTURE_STATE through the control socket → one pass of both
#     flavours, acknowledged with its pass id after the Complete;
# all checked against the runtime's own list of its live code.
# usage: test_rundown.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
jit="$build/bin/letw-minijit"

letw_ensure_sessiond
live="$LETW_TEST_TMP/live.txt"
"$jit" --functions 2000 --seconds 120 --list "$live" &
pid=$!
letw_track "$pid"
letw_wait_for test -e "$live.ready" || letw_fail "runtime did not publish its list"

s=$(letw_session_create rundown) || exit 1
letw_session_track "$s" "$pid"
lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' --filter "\$ctx.vpid == $pid" >/dev/null ||
	letw_fail "enable dcstart"
lttng add-context -u -s "$s" -t vpid -t vtid >/dev/null || letw_fail "add-context"
# Each session gets its own pass (the statedump hook), so other sessions on
# this machine do not matter; a pass of theirs would not be in our trace.
before_start=$(letw_ctl_field "$pid" last_dcstart_pass_id) || letw_fail "no STATUS from $pid"
lttng start "$s" >/dev/null || letw_fail "start"
letw_wait_field "$pid" last_dcstart_pass_id != "$before_start" ||
	letw_fail "no DCStart pass after lttng start"

before_end=$(letw_ctl_field "$pid" last_dcend_pass_id) || letw_fail "no STATUS from $pid"
lttng enable-event -u -s "$s" 'letw_rundown:*dcend*' --filter "\$ctx.vpid == $pid" >/dev/null ||
	letw_fail "enable dcend"
lttng regenerate statedump -s "$s" >/dev/null || letw_fail "regenerate statedump"
letw_wait_field "$pid" last_dcend_pass_id != "$before_end" ||
	letw_fail "no DCEnd pass after enabling *dcend* and regenerating the statedump"
[ "$(letw_ctl_field "$pid" last_dcstart_pass_id)" = "$(letw_ctl_field "$pid" last_dcend_pass_id)" ] &&
	letw_fail "the DCEnd request also ran a DCStart"

reply=$(letw_ctl "$pid" capture) || letw_fail "capture-state request failed: $reply"
letw_log "capture-state reply: $reply"
cap_id=$(letw_reply_field "$reply" pass_id)
passes=$(letw_reply_field "$reply" passes)
[ "$passes" = 3 ] || letw_fail "capture-state ran passes=$passes, expected both flavours (3)"
[ "$(letw_ctl_field "$pid" last_dcend_pass_id)" = "$cap_id" ] ||
	letw_fail "the acknowledged pass is not the last completed one"

lttng stop "$s" >/dev/null || letw_fail "stop"
$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$pid" "$live" \
	dcstart:1 dcend:1 "dcstart:2:$cap_id" "dcend:2:$cap_id" ||
	letw_fail "trace does not match the runtime's live code"
kill -TERM "$pid"
wait "$pid" || letw_fail "runtime exited with $?"
letw_untrack "$pid"
echo "PASS: DCStart on start, DCEnd on enable + regenerate, capture-state acknowledged"
