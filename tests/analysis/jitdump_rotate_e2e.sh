#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A perf profile spanning a rotation, named through the merged jitdump:
# letw-minijit runs under `perf record -k mono -e cpu-clock` with
# LETW_JITDUMP_DIR set (its placeholder DIR/jit-PID.dump mapped) while a
# session records it; fn_0 runs in the first chunk; `lttng rotate`, a
# capture-state pass re-enumerates the live code into the second chunk,
# then SIGUSR1 frees fn_0 and compiles fn_3 at its address, which runs in
# the second chunk. `lttng-etw jitdump TRACE -o DIR` writes each chunk's
# dump and merges them into DIR/jit-PID.dump: every chunk's code, each
# code_index once, the code live across the rotation LOADed once; then
# `perf inject --jit` names the samples at that address fn_0 in the first
# chunk and fn_3 in the second, and `perf report` shows both.
. "$(dirname "$0")/common.sh"
command -v perf >/dev/null || letw_fail "perf not installed"

T=$LETW_TEST_TMP
here=$(cd "$(dirname "$0")" && pwd)
export HOME=$T/home PERF_BUILDID_DIR=$T/buildid
mkdir -p "$HOME"

anl_perf_minijit "$T/perf.out" --functions 40 --hot 4 --seconds 60 \
	--reuse "$T/reuse" --list "$T/list"
perf_pid=$ANL_PERF_PID pid=$ANL_PID

s=$(anl_session jitrot "$pid")
lttng start "$s" >/dev/null || letw_fail "lttng start"
echo go >"$T/go"
anl_wait_file "$T/list.ready"
letw_wait_cpu "$pid" 1 # chunk 1: fn_0 runs
lttng rotate "$s" >/dev/null || letw_fail "lttng rotate"
"$LETW_CLI" capture-state --pid "$pid" --wait >/dev/null || letw_fail "capture-state"
kill -USR1 "$pid"
anl_wait_file "$T/reuse"
letw_wait_cpu "$pid" 1 # chunk 2: fn_3 runs where fn_0 was
kill -TERM "$pid"
wait "$perf_pid" || { cat "$T/perf.out" >&2; letw_fail "perf record / letw-minijit failed"; }
lttng stop "$s" >/dev/null || letw_fail "lttng stop"
[ -e "$T/jit/jit-$pid.dump" ] || letw_fail "the runtime mapped no placeholder $T/jit/jit-$pid.dump"

trace=$(anl_trace "$s")
"$LETW_CLI" jitdump "$trace" -o "$T/jit" --no-progress >"$T/jitdump.log" 2>&1 ||
	letw_fail "lttng-etw jitdump: exit $?: $(cat "$T/jitdump.log")"
letw_log "$(cat "$T/jitdump.log")"
chunks=("$T"/jit/*/jit-"$pid".dump)
[ "${#chunks[@]}" = 2 ] || letw_fail "expected a dump per chunk, got: ${chunks[*]}"
$LETW_PY "$here/jitdump_merge_check.py" "$T/jit/jit-$pid.dump" "${chunks[@]}" -- fn_0 fn_3 fn_1 >&2 ||
	letw_fail "the merged dump is not the chunks' code, once each, in time order"
grep -q "merged the chunks' dumps into $T/jit/jit-PID.dump" "$T/jitdump.log" ||
	letw_fail "jitdump does not say it merged the chunks: $(cat "$T/jitdump.log")"

perf inject --jit -i "$T/perf.data" -o "$T/perf.jit.data" >"$T/inject.log" 2>&1 ||
	letw_fail "perf inject --jit: $(cat "$T/inject.log")"
perf script -i "$T/perf.jit.data" -F time,ip,sym --ns >"$T/jit.txt" 2>/dev/null ||
	letw_fail "perf script"
$LETW_PY "$here/jitdump_check.py" reuse "$T/reuse" "$T/jit.txt" - >&2 ||
	letw_fail "samples of the two chunks at fn_0's address are not named by time"
perf report -i "$T/perf.jit.data" --stdio --sort sym >"$T/report.txt" 2>/dev/null ||
	letw_fail "perf report"
for fn in fn_0 fn_3; do
	grep -q "::$fn(" "$T/report.txt" || letw_fail "perf report names no sample $fn"
done
echo "jitdump_rotate_e2e: ok"
