#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# LuaJIT traces named for perf from a late DCStart rundown. letw-luajit
# runs a script with several hot loops; once every loop is compiled (the
# script writes READY), perf starts sampling it and only then an LTTng
# session enabling nothing but letw_rundown:*dcstart* starts, so the
# trace's names can only come from the DCStart rundown. `lttng-etw perfmap`
# turns the trace into perf-PID.map; with it in /tmp, most samples outside
# libluajit and the kernel must resolve to trace symbols carrying the
# right source lines (check_samples.py), and without it none does.
# usage: test_dcstart_perf.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
host="$build/bin/letw-luajit"
cli="$build/bin/lttng-etw"
script="$here/hotloops.lua"
# "Most" samples; the rest are exit stubs, trace-exit handling and the
# script's own I/O between rounds.
min_share=${LETW_LUAJIT_MIN_SHARE:-0.75}

command -v perf >/dev/null || letw_fail "perf is not installed"
letw_ensure_sessiond
ready="$LETW_TEST_TMP/ready"
stop="$LETW_TEST_TMP/stop"
"$host" --stats "$script" "$ready" "$stop" >"$LETW_TEST_TMP/host.out" 2>&1 &
pid=$!
letw_track "$pid"
letw_wait_for test -e "$ready" || letw_fail "the Lua workload never became ready"

# perf reads /tmp/perf-PID.map; never leave ours behind, even on failure.
tmpmap="/tmp/perf-$pid.map"
trap 'rm -f "$tmpmap"; letw_cleanup' EXIT

s=$(letw_session_create luajit-dcstart) || exit 1
letw_session_track "$s" "$pid"
lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' --filter "\$ctx.vpid == $pid" >/dev/null ||
	letw_fail "enable dcstart"
lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"

letw_perf_record "$pid" 4
# lttng-etw start: lttng start, then waits for the DCStart pass the
# session's statedump runs in the process.
"$cli" start "$s" --pid "$pid" >"$LETW_TEST_TMP/start.log" 2>&1 ||
	letw_fail "lttng-etw start: $(cat "$LETW_TEST_TMP/start.log")"
letw_perf_wait
lttng stop "$s" >/dev/null || letw_fail "stop"
touch "$stop"
wait "$pid" || letw_fail "letw-luajit exited with $?: $(cat "$LETW_TEST_TMP/host.out")"
letw_log "$(grep 'traces published' "$LETW_TEST_TMP/host.out")"

trace="$LETW_TEST_TMP/$s"
# The names come from DCStart: the session recorded no load event. (A
# text file, not babeltrace2 | grep -q: under pipefail grep's early exit
# would fail the pipeline with SIGPIPE.)
letw_trace_text "$trace" >"$LETW_TEST_TMP/trace.txt"
grep -q 'letw_rundown:method_dcstart' "$LETW_TEST_TMP/trace.txt" || letw_fail "no method_dcstart in the trace"
! grep -q 'letw_runtime:' "$LETW_TEST_TMP/trace.txt" || letw_fail "the session recorded runtime events"
"$cli" report "$trace" --no-progress >"$LETW_TEST_TMP/report.txt" 2>&1 ||
	letw_fail "rundown report not clean: $(cat "$LETW_TEST_TMP/report.txt")"

"$cli" perfmap "$trace" -o "$LETW_TEST_TMP/maps" --no-progress ||
	letw_fail "lttng-etw perfmap failed"
map="$LETW_TEST_TMP/maps/perf-$pid.map"
[ -s "$map" ] || letw_fail "no perf map for process $pid"

cp "$map" "$tmpmap"
perf script -i "$LETW_TEST_TMP/perf.data" -F tid,ip,sym,dso -G \
	>"$LETW_TEST_TMP/with-map.txt" 2>/dev/null || letw_fail "perf script (with map)"
rm -f "$tmpmap"
perf script -i "$LETW_TEST_TMP/perf.data" -F tid,ip,sym,dso -G \
	>"$LETW_TEST_TMP/without-map.txt" 2>/dev/null || letw_fail "perf script (without map)"
# perf report, as the README shows it, must name the traces too.
cp "$map" "$tmpmap"
perf report -i "$LETW_TEST_TMP/perf.data" --stdio --no-children --sort sym \
	>"$LETW_TEST_TMP/report-perf.txt" 2>/dev/null || letw_fail "perf report failed"
rm -f "$tmpmap"
grep -q 'trace#[0-9]* @hotloops.lua:' "$LETW_TEST_TMP/report-perf.txt" ||
	letw_fail "perf report shows no trace symbol"

$LETW_PY "$here/check_samples.py" "$script" "$map" "$LETW_TEST_TMP/with-map.txt" \
	"$LETW_TEST_TMP/without-map.txt" "$min_share" || letw_fail "samples do not resolve to the traces"
echo "PASS: a late DCStart rundown names every hot LuaJIT trace for perf"
