#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `lttng-etw watch` and a session name used again: lttng-sessiond 2.13's
# notification thread keys its per-session state by name, and a session
# created again under a destroyed one's name takes the triggers still
# registered for the name. watch used to remove a destroyed session's
# triggers on the COMPLETED of its last rotation, by then often after the
# script's `lttng create` of the same name: sessiond crashed at that new
# session's next rotation (SIGSEGV in lttng_condition_get_type(); an
# audit: 3 runs of 4; this sequence, on the old code: 2 of 2). watch now
# removes them only once the name has been out of the session list for
# two refreshes and is still out right before (cmd_watch.c). The sequence
# (the audit's): watches of a session stopped while its rotations are in
# flight (their triggers left, said), then one watch of every session
# while a session of one name is created, rotated and destroyed six
# times. sessiond must survive it, and the watch end on its SIGTERM.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
sd0=$(letw_sessiond_pid) || letw_fail "no root lttng-sessiond"

"$LETW_MINIJIT" --functions 20000 --seconds 300 --list "$T/jit.list" >/dev/null &
jp=$!
letw_track "$jp"
anl_wait_file "$T/jit.list.ready"

# mk NAME: a session of that name tracing the minijit's rundowns (the name
# registered for the cleanup once, by the caller).
mk() {
	lttng create "$1" --output="$T/$1.$RANDOM$RANDOM" >/dev/null || letw_fail "create $1"
	lttng enable-event -u -s "$1" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable-event $1"
	lttng add-context -u -s "$1" -t vpid -t vtid >/dev/null || letw_fail "add-context $1"
	lttng track -u -s "$1" --vpid="$jp" >/dev/null || letw_fail "track $1"
}
# keep_left ERR: the triggers a stopped watch says it left, for the cleanup.
keep_left() {
	sed -n 's/.*leaving trigger \(lttng-etw-watch\.[^ ]*\) of.*/\1/p' "$1" >>"$T/triggers"
}

s2=$(letw_unique wr2)
echo "$s2" >>"$T/sessions"
mk "$s2"
lttng start "$s2" >/dev/null || letw_fail "start $s2"
sleep 0.5
for i in 1 2 3; do
	"$LETW_CLI" watch --session "$s2" >"$T/w2.$i.out" 2>"$T/w2.$i.err" &
	wp=$!
	letw_track "$wp"
	lttng rotate "$s2" >/dev/null 2>&1
	sleep 0.3
	lttng rotate -n "$s2" >/dev/null 2>&1 &
	rp=$!
	letw_track "$rp"
	sleep "0.$i"
	kill -TERM "$wp"
	wait "$wp"
	letw_untrack "$wp"
	wait "$rp"
	letw_untrack "$rp"
	keep_left "$T/w2.$i.err"
done
sleep 2
lttng stop "$s2" >/dev/null || letw_fail "stop $s2"
lttng destroy "$s2" >/dev/null || letw_fail "destroy $s2"

"$LETW_CLI" watch -v >"$T/w3.out" 2>"$T/w3.err" &
w3=$!
letw_track "$w3"
sleep 1
s3=$(letw_unique wr3)
echo "$s3" >>"$T/sessions"
for i in 1 2 3 4 5 6; do
	mk "$s3"
	lttng start "$s3" >/dev/null || letw_fail "start $s3 ($i)"
	sleep "0.$i"
	lttng rotate -n "$s3" >/dev/null 2>&1
	[ $((i % 2)) = 0 ] && sleep 1.2
	lttng destroy "$s3" >/dev/null 2>&1
done
sleep 3
sd1=$(letw_sessiond_pid)
kill -TERM "$w3"
rc=0
wait "$w3" || rc=$?
letw_untrack "$w3"
keep_left "$T/w3.err"
if [ -z "$sd1" ] || [ "$sd1" != "$sd0" ]; then
	# The shared daemon back for the tests that follow (as scripts/deps.sh
	# starts it), then the failure.
	(letw_ensure_sessiond) # in a subshell: its own failure must not hide this one
	letw_fail "lttng-sessiond $sd0 died under watch (now: ${sd1:-none}): $(tail -5 "$T/w3.err")"
fi
[ "$rc" = 0 ] || letw_fail "watch exited $rc on SIGTERM: $(tail -5 "$T/w3.err")"
! grep -q "notification channel" "$T/w3.err" ||
	letw_fail "watch lost its notification channel: $(tail -5 "$T/w3.err")"
kill -TERM "$jp"
wait "$jp" || letw_fail "minijit failed"
letw_untrack "$jp"
echo "watch_reuse_e2e: ok"
