#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two `lttng-etw watch` of one session: each regenerated the statedump at
# each rotation, two passes a chunk. The second now refuses to start (exit
# 1), naming the first, found by its triggers (lttng-etw-watch.<pid>-...)
# and its pid alive; the triggers a stopped watch leaves registered (a dead
# pid) do not stop a later one.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
s=$(letw_session_create wtw) || exit 1
lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable-event"
lttng start "$s" >/dev/null || letw_fail "start $s"

anl_watch "$s" "$T/w1.out"
w1=$ANL_WATCH
"$LETW_CLI" watch --session "$s" >"$T/w2.out" 2>&1 &
w2=$!
letw_track "$w2"
LETW_WAIT_SECONDS=10 letw_wait_for eval '! letw_running '"$w2" || {
	"$LETW_BIN_DIR/letw-test-triggers" "lttng-etw-watch.$w2-" >>"$T/triggers"
	letw_fail "a second watch of $s runs beside the first: $(cat "$T/w2.out")"
}
rc=0
wait "$w2" || rc=$?
letw_untrack "$w2"
[ "$rc" = 1 ] && grep -q "another \`lttng-etw watch\` (pid $w1) already watches session \`$s\`" "$T/w2.out" ||
	letw_fail "second watch: exit $rc: $(cat "$T/w2.out")"

# The first stopped (its triggers left registered: the session exists),
# a new watch of the session starts.
kill -TERM "$w1"
wait "$w1" || letw_fail "first watch exited $? on SIGTERM: $(cat "$T/w1.out")"
letw_untrack "$w1"
anl_watch "$s" "$T/w3.out"
kill -TERM "$ANL_WATCH"
wait "$ANL_WATCH" || letw_fail "third watch exited $? on SIGTERM: $(cat "$T/w3.out")"
letw_untrack "$ANL_WATCH"
echo "watch_twice_e2e: ok"
