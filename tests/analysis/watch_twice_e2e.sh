#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two `lttng-etw watch` of one session: each regenerated the statedump at
# each rotation, two passes a chunk. The second now refuses to start (exit
# 1), naming the first, found by its triggers (lttng-etw-watch.<pid>-...)
# and its process alive (that pid, started at the tick the names hold),
# however it was started (a renamed binary, valgrind); the triggers a
# stopped watch leaves registered (a dead pid) do not stop a later one.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
s=$(letw_session_create wtw) || exit 1
lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable-event"
lttng start "$s" >/dev/null || letw_fail "start $s"

anl_watch "$s" "$T/w1.out"
w1=$ANL_WATCH
# refused NAME: a watch of the session now must refuse, naming $peer.
refused() {
	"$LETW_CLI" watch --session "$s" >"$T/$1.out" 2>&1 &
	letw_track "$!"
	anl_watch_refused "$!" "$T/$1.out" "$s" "$peer" "$1"
}
peer=$w1
refused w2

# watch_via NAME CMD...: anl_watch of the session by CMD; sets peer.
watch_via() {
	anl_watch "$s" "$T/$1.out" "${@:2}"
	peer=$ANL_WATCH
}
# stop_peer NAME: SIGTERM, exit 0 (its triggers left registered: the
# session exists).
stop_peer() { anl_watch_stop "$peer" "$T/$1.out" "$1"; }

# The first stopped (its triggers left registered: the session exists).
stop_peer w1
# A peer is found by its triggers and its process, whatever runs it: a
# renamed copy of the binary (its command line's first word no longer
# ends in lttng-etw: it was missed), and valgrind (its first word is
# valgrind).
cp "$LETW_CLI" "$T/etw-renamed"
watch_via w3 "$T/etw-renamed"
refused w4
stop_peer w3
if command -v valgrind >/dev/null; then
	watch_via w5 valgrind -q "$LETW_CLI"
	refused w6
	stop_peer w5
else
	echo "watch_twice_e2e: no valgrind: its case skipped"
fi
# The dead peers' triggers stop no one.
watch_via w7
stop_peer w7
echo "watch_twice_e2e: ok"
