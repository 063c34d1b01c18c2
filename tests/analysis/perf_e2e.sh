#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf end to end: letw-minijit runs its JIT'd hot loop under
# `perf record -e cpu-clock -g` while an LTTng session with rundown records
# it; `lttng-etw stop` runs the DCEnd rundown; `lttng-etw perfmap` derives
# the map from the trace alone (the runtime writes none); perf script must
# then name most samples in JIT code as the runtime's own list says, and
# none without the map (so the names come from it).
. "$(dirname "$0")/common.sh"
command -v perf >/dev/null || letw_fail "perf not installed"

T=$LETW_TEST_TMP
# The workload runs until told to stop (SIGTERM, after `lttng-etw stop`),
# not for a fixed time: its 8 s had to cover the session's setup, the
# start's pass, perf's start, 2 s of samples, perf's own teardown (1.2 s
# here) and the stop's pass; on a slower machine the process could exit
# before `lttng-etw stop` asked it for its DCEnd pass.
"$LETW_MINIJIT" --functions 300 --seconds 120 --list "$T/list" --list-hot >"$T/minijit.out" 2>&1 &
pid=$!
letw_track "$pid"
anl_wait_file "$T/list.ready"
s=$(anl_session perf "$pid")
"$LETW_CLI" start "$s" --pid "$pid" >&2 || letw_fail "lttng-etw start"
perf record -e cpu-clock -g -p "$pid" -o "$T/perf.data" -- sleep 2 >&2 2>"$T/perf.err" ||
	{ cat "$T/perf.err" >&2; letw_fail "perf record"; }
"$LETW_CLI" stop "$s" --pid "$pid" >&2 || letw_fail "lttng-etw stop"
kill -TERM "$pid"
wait "$pid" || { cat "$T/minijit.out" >&2; letw_fail "letw-minijit failed"; }
[ ! -e "/tmp/perf-$pid.map" ] || letw_fail "the runtime wrote /tmp/perf-$pid.map itself"

"$LETW_CLI" perfmap "$(anl_trace "$s")" -o "$T/maps" --no-progress >&2 ||
	letw_fail "lttng-etw perfmap"
[ -s "$T/maps/perf-$pid.map" ] || letw_fail "no map for pid $pid"

# Without the map perf cannot name JIT code.
perf script -i "$T/perf.data" -F ip,sym -G >"$T/nomap.txt" 2>/dev/null ||
	letw_fail "perf script"
if python3 "$(dirname "$0")/perf_check.py" "$T/list" "$T/nomap.txt" 1 0.01 >&2; then
	letw_fail "JIT samples were named without the map: the check proves nothing"
fi

# perf reads /tmp/perf-PID.map at report time: install it only for this
# step, and remove it whatever happens.
cp "$T/maps/perf-$pid.map" "/tmp/perf-$pid.map"
trap 'rm -f "/tmp/perf-$pid.map"; letw_cleanup' EXIT
perf script -i "$T/perf.data" -F ip,sym -G >"$T/script.txt" 2>/dev/null ||
	letw_fail "perf script"
perf report -i "$T/perf.data" --stdio --sort sym >"$T/report.txt" 2>/dev/null ||
	letw_fail "perf report"
grep -q 'minijit\.Module' "$T/report.txt" || letw_fail "perf report shows no minijit symbol"
rm -f "/tmp/perf-$pid.map"
python3 "$(dirname "$0")/perf_check.py" "$T/list" "$T/script.txt" 50 0.9 >&2 ||
	letw_fail "perf did not name most JIT samples right"
echo "perf_e2e: ok"
