#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A test's cleanup (tests/lib/lttng.sh, letw_cleanup) destroys every
# session it registered even when a second signal arrives while it runs —
# what Ctrl-C does to a test run: every process gets SIGINT, then each
# test launcher SIGTERMs the tree once more. A child test script registers
# SESSIONS sessions and waits; this script sends it SIGTERM, waits until
# the first of them is gone (its cleanup is under way), sends SIGTERM
# again, and checks that no session is left. Before the cleanup ignored
# further signals, the second one ran the script's `exit 130` trap from
# inside its EXIT trap and the sessions not yet destroyed were left.
#
#   cleanup_signal.sh          (needs root: the root lttng-sessiond)
. "$(dirname "$0")/../lib/lttng.sh"

SESSIONS=8
letw_ensure_sessiond

if [ "${1:-}" = --child ]; then
	# Started: destroying a started session waits for its consumer
	# (~0.5 s here), so the cleanup lasts long enough for the second
	# signal to land in the middle of it, every run.
	for i in $(seq 1 "$SESSIONS"); do
		s=$(letw_session_create letw-cleanup-sig)
		echo "$s" >>"$2.names"
		lttng enable-event -u 'letw:*' -s "$s" >/dev/null || letw_fail "lttng enable-event"
		lttng start "$s" >/dev/null || letw_fail "lttng start"
	done
	mv "$2.names" "$2"
	sleep 120 &
	letw_track $!
	wait $! # returns at once on a signal: the traps run without delay
	exit 0
fi

names=$LETW_TEST_TMP/names
bash "$0" --child "$names" &
child=$!
letw_track "$child"
letw_wait_for test -s "$names" || letw_fail "the child registered no session"
mapfile -t sessions <"$names"
# Ours to destroy too if the child leaks them: this test must not leak.
LETW_TEST_SESSIONS+=("${sessions[@]}")
[ "${#sessions[@]}" = "$SESSIONS" ] || letw_fail "the child registered ${#sessions[@]} sessions"

kill -TERM "$child"
letw_wait_for bash -c "! lttng list '${sessions[0]}' >/dev/null 2>&1" ||
	letw_fail "the child's cleanup destroyed nothing"
kill -TERM "$child" 2>/dev/null # during the cleanup, like a launcher's
wait "$child"
letw_untrack "$child"
left=()
for s in "${sessions[@]}"; do
	lttng list "$s" >/dev/null 2>&1 && left+=("$s")
done
[ "${#left[@]}" = 0 ] ||
	letw_fail "${#left[@]} of $SESSIONS sessions left after a second SIGTERM during the cleanup: ${left[*]}"
echo "PASS: $SESSIONS sessions destroyed by a cleanup that got a second SIGTERM"
