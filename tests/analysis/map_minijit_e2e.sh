#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Map reconstruction with the demo runtime. (1) letw-minijit publishes its
# code before the session starts, so only the DCStart rundown names it: the
# map must hold every region of the runtime's own list with the right name.
# (2) With --churn the runtime re-tiers, frees and regenerates code while
# recorded: the map gains the new regions and the report still finds both
# rundowns complete.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP

# record NAME MINIJIT-ARGS...: run minijit, record start..stop, leave the
# trace in $TRACE and the pid in $PID.
record() {
	local name=$1
	shift
	"$LETW_MINIJIT" "$@" --seconds 30 --list "$T/$name.list" >"$T/$name.out" 2>&1 &
	PID=$!
	letw_track "$PID"
	anl_wait_file "$T/$name.list.ready"
	local s
	s=$(anl_session "mapjit-$name" "$PID")
	"$LETW_CLI" start "$s" --pid "$PID" >&2 || letw_fail "$name: lttng-etw start"
	sleep 1
	"$LETW_CLI" stop "$s" --pid "$PID" >&2 || letw_fail "$name: lttng-etw stop"
	kill -TERM "$PID"
	wait "$PID" || { cat "$T/$name.out" >&2; letw_fail "$name: letw-minijit failed"; }
	TRACE=$(anl_trace "$s")
}

record stable --functions 1000
for mode in latest all; do
	"$LETW_CLI" perfmap "$TRACE" -o "$T/stable.$mode" --mode $mode --no-progress >&2 ||
		letw_fail "stable: perfmap --mode $mode"
	python3 "$(dirname "$0")/map_check.py" "$T/stable.list" "$T/stable.$mode/perf-$PID.map" >&2 ||
		letw_fail "stable: the $mode map misses code of the runtime's list"
done

# The list is the state before the churn starts; code it frees before the
# session starts is legitimately absent, so here only growth is checked.
record churn --functions 1000 --churn
"$LETW_CLI" perfmap "$TRACE" -o "$T/churn" --mode all --no-progress >&2 ||
	letw_fail "churn: perfmap"
[ "$(wc -l <"$T/churn/perf-$PID.map")" -gt "$(grep -c '^method\|^stub' "$T/churn.list")" ] ||
	letw_fail "churn: no region beyond the initial list: the churn was not recorded"
"$LETW_CLI" report "$TRACE" --json -o "$T/churn.json" --no-progress ||
	letw_fail "churn: report exit $? (a rundown is not complete)"
echo "map_minijit_e2e: ok"
