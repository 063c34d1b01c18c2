#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `lttng-etw watch` when lttng-sessiond goes away and comes back: the
# sessions and triggers die with it; watch says so (none of its triggers is
# left registered), keeps running, and once a sessiond answers again
# watches its sessions anew (a rotation there gets its statedump). It used
# to exit 1, its closing notes claiming the dead triggers were left
# registered. The sessions' names hold an ESC: watch's stdout line escapes
# it (it was printed raw, driving the terminal).
#
# This test stops the shared root lttng-sessiond (as the reliability
# sessiond_kill fault does, and like it, in the plain build only: the
# sanitizer sub-builds do not run this folder): it is started again on
# every way out (success, failure, signal), once the stopped one is gone,
# for the tests that follow.
. "$(dirname "$0")/common.sh"

trap 'anl_sessiond_back; letw_cleanup' EXIT

T=$LETW_TEST_TMP
# Named in advance, for `watch --session` (the second is created once the
# sessiond is back); an ESC in each, registered for the cleanup.
s1=$(letw_unique $'wsd\x1b[31m1')
s2=$(letw_unique $'wsd\x1b[31m2')
printf '%s\n' "$s1" "$s2" >>"$T/sessions"
# mk SESSION: a started session with one event enabled: a rotation needs
# no traced process.
mk() {
	lttng create "$1" --output="$T/$1" >/dev/null || letw_fail "create $1"
	lttng enable-event -u -s "$1" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable-event $1"
	lttng start "$1" >/dev/null || letw_fail "start $1"
}
# pat NAME: a grep pattern for NAME as watch writes it (letw_text_str:
# ESC as \x1b).
pat() {
	printf '%s' "$1" | sed 's/\x1b/\\x1b/g; s/[][\\.*^$]/\\&/g'
}
# rotated SESSION: watch's stdout line for SESSION's first rotation.
rotated() {
	grep -q "^session \`$(pat "$1")\`: rotation 0 began, statedump regenerated\$" "$T/w.out"
}

mk "$s1"
"$LETW_CLI" watch -v --session "$s1" --session "$s2" >"$T/w.out" 2>"$T/w.err" &
wp=$!
letw_track "$wp"
# Its triggers recorded for the cleanup as soon as they can exist, so a
# failure anywhere after leaves none registered (watch leaves them on its
# SIGTERM while the session exists).
letw_wait_for grep -q "watching the rotations of" "$T/w.err"
"$LETW_BIN_DIR/letw-test-triggers" "lttng-etw-watch.$wp-" >>"$T/triggers"
grep -q "watching the rotations of" "$T/w.err" ||
	letw_fail "watch did not register: $(cat "$T/w.err")"
lttng rotate "$s1" >/dev/null || letw_fail "rotate $s1"
letw_wait_for rotated "$s1" ||
	letw_fail "no escaped rotation line for the first session: $(od -c "$T/w.out" | head -5)"
! grep -q $'\x1b' "$T/w.out" "$T/w.err" || letw_fail "watch printed a raw ESC"

anl_sessiond_stop
letw_wait_for grep -q "lttng-sessiond went away" "$T/w.err" ||
	letw_fail "watch did not say lttng-sessiond went away: $(cat "$T/w.err")"
letw_running "$wp" || letw_fail "watch ended when lttng-sessiond went away: $(cat "$T/w.err")"
! grep -q "leaving trigger" "$T/w.err" ||
	letw_fail "watch claims triggers that died with lttng-sessiond: $(cat "$T/w.err")"

anl_sessiond_back
letw_wait_for grep -q "lttng-sessiond is back" "$T/w.err" ||
	letw_fail "watch did not see lttng-sessiond back: $(cat "$T/w.err")"
mk "$s2"
letw_wait_for grep -q "watching the rotations of \`$(pat "$s2")\`" "$T/w.err"
"$LETW_BIN_DIR/letw-test-triggers" "lttng-etw-watch.$wp-" >>"$T/triggers"
grep -q "watching the rotations of \`$(pat "$s2")\`" "$T/w.err" ||
	letw_fail "watch did not watch the new sessiond's session: $(cat "$T/w.err")"
lttng rotate "$s2" >/dev/null || letw_fail "rotate $s2"
letw_wait_for rotated "$s2" ||
	letw_fail "no rotation line for the new sessiond's session: $(cat "$T/w.out" "$T/w.err")"
anl_watch_stop "$wp" "$T/w.err" watch
echo "watch_sessiond_e2e: ok"
