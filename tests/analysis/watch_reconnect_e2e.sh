#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `lttng-etw watch` and a restarted lttng-sessiond, at the moments the
# ctl_signal.c shim fixes (a real restart leaves them to chance):
#  1. the new sessiond already answers when watch first asks whether one
#     does (the shim holds that question until it is up): only the check of
#     watch's own triggers (letw_watch_tag_registered: none in the new one)
#     tells it from the old one still shutting down; watch says sessiond
#     went away and watches the new one's session;
#  2. the new sessiond answers but refuses the notification channel (the
#     shim): watch says why, once, and keeps trying (it waited in silence);
#  3. another watch of the session started on the new sessiond while this
#     one waited: this one, back, exits 1 naming it, as it refuses to start
#     beside one (it watched on: two passes a chunk).
#
# Like watch_sessiond_e2e, it stops the shared root lttng-sessiond, and
# starts it again on every way out.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
SO=${LETW_CTL_SIGNAL_SO:-}
[ -f "$SO" ] || letw_fail "LETW_CTL_SIGNAL_SO is not set to the shim"
G=$T/alive.gate
N=$T/nochan
# The watch's gate opened first: a watch held in it would not end.
trap 'rm -f "$G" "$N"; anl_sessiond_back; letw_cleanup' EXIT
s=$(letw_unique wrc)
printf '%s\n' "$s" >>"$T/sessions"
# mk: the session, started, one event enabled: a rotation needs no
# traced process.
mk() {
	lttng create "$s" --output="$T/$s" >/dev/null || letw_fail "create $s"
	lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable-event $s"
	lttng start "$s" >/dev/null || letw_fail "start $s"
}
# registered N: watch a registered for the N-th time.
registered() { [ "$(grep -c "watching the rotations of \`$s\`" "$T/a.out")" -ge "$1" ]; }

mk
anl_watch "$s" "$T/a.out" env LD_PRELOAD="$SO" LETW_CTL_ALIVE_GATE="$G" LETW_CTL_NOCHAN="$N" \
	"$LETW_CLI"
a=$ANL_WATCH

# 1 and 2: the question held while sessiond restarts, the channel refused.
touch "$G" "$N"
anl_sessiond_stop
anl_sessiond_back
mk
rm -f "$G"
letw_wait_for grep -q "lttng-sessiond went away" "$T/a.out" ||
	letw_fail "watch did not tell the new sessiond from the old one: $(cat "$T/a.out")"
letw_running "$a" || letw_fail "watch ended under the new sessiond: $(cat "$T/a.out")"
# Three attempts refused: the cause said once.
letw_wait_for eval '[ "$(grep -c refused "$N")" -ge 3 ]' ||
	letw_fail "watch did not try the channel again: $(cat "$T/a.out")"
[ "$(grep -c "lttng-sessiond answers, but no notification channel to it opens (Connection refused)" "$T/a.out")" = 1 ] ||
	letw_fail "watch did not say once why it cannot watch the new sessiond: $(cat "$T/a.out")"
rm -f "$N"
letw_wait_for registered 2
"$LETW_BIN_DIR/letw-test-triggers" "lttng-etw-watch.$a-" >>"$T/triggers"
registered 2 || letw_fail "watch did not watch the new sessiond's session: $(cat "$T/a.out")"
lttng rotate "$s" >/dev/null || letw_fail "rotate $s"
letw_wait_for grep -q "^session \`$s\`: rotation 0 began, statedump regenerated\$" "$T/a.out" ||
	letw_fail "no rotation line under the new sessiond: $(cat "$T/a.out")"

# 3. Another watch of the session on the next sessiond, started while
# this one is held: this one steps back.
touch "$G"
anl_sessiond_stop
anl_sessiond_back
mk
anl_watch "$s" "$T/b.out"
b=$ANL_WATCH
rm -f "$G"
anl_watch_refused "$a" "$T/a.out" "$s" "$b" "watch back after the restart"
# Said as a running watch stopping, not as a refusal to start.
grep -q "before this one came back: .*this one stops" "$T/a.out" ||
	letw_fail "watch back after the restart: not said as stopping: $(cat "$T/a.out")"
letw_running "$b" || letw_fail "the second watch ended: $(cat "$T/b.out")"
anl_watch_stop "$b" "$T/b.out" "the second watch"
echo "watch_reconnect_e2e: ok"
