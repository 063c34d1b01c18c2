#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf through a jitdump built from the trace, end to end: letw-minijit
# runs under `perf record -k mono -e cpu-clock` with LETW_JITDUMP_DIR set
# (so it maps its placeholder jit-PID.dump), publishing line tables into
# its --source listing, while a session records every runtime event (code
# bytes and line tables included). Mid-run, SIGUSR1 makes it free fn_0 and
# compile fn_3 at the same address. Then `lttng-etw jitdump` + `perf inject
# --jit`:
#  a. address reuse: samples in the range before the reuse are fn_0, after
#     it fn_3; the same profile through `lttng-etw perfmap` gets the first
#     ones wrong (both figures printed);
#  b. annotation: `perf annotate` of fn_3 and of fn_1 shows exactly the
#     instructions of the bytes the JIT emitted;
#  c. source lines: `perf script -F srcline` shows, for samples in minijit
#     code, the listing's line the trace's line table gives.
# Everything perf writes (jitted-*.so, build-id cache) stays in the test's
# temporary directory.
. "$(dirname "$0")/common.sh"
command -v perf >/dev/null || letw_fail "perf not installed"
command -v objdump >/dev/null || letw_fail "objdump (binutils) not installed"

T=$LETW_TEST_TMP
here=$(cd "$(dirname "$0")" && pwd)
export HOME=$T/home PERF_BUILDID_DIR=$T/buildid
mkdir -p "$HOME"
trap 'rm -f "/tmp/perf-${pid:-x}.map"; letw_cleanup' EXIT

# perf starts the workload (so it sees every mapping, the placeholder's
# included); the workload waits on a FIFO until the session traces it.
anl_perf_minijit "$T/perf.out" --functions 40 --hot 4 --seconds 60 \
	--source "$T/mj.src" --reuse "$T/reuse" --list "$T/list" --list-code
perf_pid=$ANL_PERF_PID pid=$ANL_PID

s=$(anl_session jitdump "$pid")
letw_session_track "$s" "$pid"
lttng start "$s" >/dev/null || letw_fail "lttng start"
echo go >"$T/go"
anl_wait_file "$T/list.ready"
letw_wait_cpu "$pid" 1 # samples before the reuse
kill -USR1 "$pid"
anl_wait_file "$T/reuse"
letw_wait_cpu "$pid" 1 # samples after it
kill -TERM "$pid"
wait "$perf_pid" || { cat "$T/perf.out" >&2; letw_fail "perf record / letw-minijit failed"; }
grep -q '0 wrong results' "$T/perf.out" || { cat "$T/perf.out" >&2; letw_fail "letw-minijit failed"; }
lttng stop "$s" >/dev/null || letw_fail "lttng stop"
[ -e "$T/jit/jit-$pid.dump" ] || letw_fail "the runtime mapped no placeholder $T/jit/jit-$pid.dump"
grep -q "jit-$pid.dump" <(perf script -i "$T/perf.data" --show-mmap-events 2>/dev/null) ||
	letw_fail "perf.data has no mmap of the placeholder"

trace=$(anl_trace "$s")
"$LETW_CLI" jitdump "$trace" -o "$T/jit" --no-progress >"$T/jitdump.log" 2>&1 ||
	letw_fail "lttng-etw jitdump: $(cat "$T/jitdump.log")"
letw_log "$(cat "$T/jitdump.log")"
perf inject --jit -i "$T/perf.data" -o "$T/perf.jit.data" >"$T/inject.log" 2>&1 ||
	letw_fail "perf inject --jit: $(cat "$T/inject.log")"
ls "$T"/jit/jitted-"$pid"-*.so >/dev/null 2>&1 || letw_fail "perf inject wrote no jitted-*.so"
perf script -i "$T/perf.jit.data" -F time,ip,sym --ns >"$T/jit.txt" 2>/dev/null ||
	letw_fail "perf script (jitdump)"

# The same profile through a perf map.
"$LETW_CLI" perfmap "$trace" -o "$T/maps" --no-progress 2>"$T/perfmap.log" ||
	letw_fail "lttng-etw perfmap"
cp "$T/maps/perf-$pid.map" "/tmp/perf-$pid.map"
perf script -i "$T/perf.data" -F time,ip,sym --ns >"$T/map.txt" 2>/dev/null ||
	letw_fail "perf script (map)"
rm -f "/tmp/perf-$pid.map"

# a. time-correct names over the reused range
$LETW_PY "$here/jitdump_check.py" reuse "$T/reuse" "$T/jit.txt" "$T/map.txt" >&2 ||
	letw_fail "address reuse: the jitdump did not name the samples by time"

# b. annotation: perf's instructions are the JIT's bytes
sym() { # NAME: perf's symbol of the function, as the profile shows it
	sed -n "s/^.*[0-9a-f]\{6,\} \(minijit\.[^ ]*::$1(.*\)$/\1/p" "$T/jit.txt" | head -1
}
check_annotate() { # FN HEX
	local name
	name=$(sym "$1")
	[ -n "$name" ] || letw_fail "no sample named $1"
	perf annotate -i "$T/perf.jit.data" --stdio -s "$name" >"$T/annotate.$1" 2>/dev/null ||
		letw_fail "perf annotate $name"
	$LETW_PY "$here/jitdump_check.py" annotate "$T/annotate.$1" "$2" >&2 ||
		letw_fail "perf annotate of $1 does not show the JIT's instructions"
}
check_annotate fn_3 "$(sed -n 's/^new fn_3 [^ ]* [^ ]* [^ ]* //p' "$T/reuse")"
check_annotate fn_1 "$(sed -n 's/^code fn_1 //p' "$T/list")"

# c. source lines
perf script -i "$T/perf.jit.data" -F ip,sym,srcline >"$T/srcline.txt" 2>/dev/null ||
	letw_fail "perf script srcline"
$LETW_PY "$here/jitdump_check.py" srcline "$trace" "$T/mj.src" "$T/srcline.txt" >&2 ||
	letw_fail "perf's source lines are not the traced line tables'"
perf report -i "$T/perf.jit.data" --stdio --sort srcline >"$T/report.txt" 2>/dev/null ||
	letw_fail "perf report --sort srcline"
grep -q 'mj\.src:[0-9]' "$T/report.txt" || letw_fail "perf report --sort srcline shows no mj.src line"
echo "jitdump_e2e: ok"
