#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf through a jitdump when the session and perf start late: letw-minijit
# (LETW_JITDUMP_DIR set, so its placeholder is mapped from the start)
# compiles everything, `perf record -k mono -p` starts sampling it, and a
# second and a half later a session enabling only the DCStart rundown —
# records, line tables and code bytes (letw_rundown:*dcstart*,
# method_lines_start, method_code_bytes_start) — starts. From that trace
# alone, after `lttng-etw jitdump` + `perf inject --jit`:
#  - names: most samples in JIT code are named as the runtime's list says,
#    those taken before the session began too (code known only from the
#    rundown is mapped from before the trace; dated at the session's first
#    event, a third of the samples went unnamed);
#  - annotation: perf annotate of fn_1 shows the bytes the JIT emitted;
#  - source lines: perf's srclines are the DCStart line tables';
#  - and the same names when perf recorded the process's fork.
# Needs the walker to emit the rundown twins of method_lines and
# method_code_bytes.
. "$(dirname "$0")/common.sh"
command -v perf >/dev/null || letw_fail "perf not installed"
command -v objdump >/dev/null || letw_fail "objdump (binutils) not installed"

T=$LETW_TEST_TMP
here=$(cd "$(dirname "$0")" && pwd)

# dump_and_check TAG TRACE DIR PERF_DATA LIST: the jitdump of TRACE into
# DIR (where the process's placeholder is), perf inject, then perf must
# name most JIT samples as LIST says; leaves $T/TAG.jit.data.
dump_and_check() {
	local tag=$1 trace=$2 dir=$3 data=$4 list=$5
	"$LETW_CLI" jitdump "$trace" -o "$dir" --no-progress >"$T/$tag.jitdump.log" 2>&1 ||
		letw_fail "$tag: lttng-etw jitdump: $(cat "$T/$tag.jitdump.log")"
	letw_log "$(cat "$T/$tag.jitdump.log")"
	perf inject --jit -i "$data" -o "$T/$tag.jit.data" >"$T/$tag.inject.log" 2>&1 ||
		letw_fail "$tag: perf inject --jit: $(cat "$T/$tag.inject.log")"
	perf script -i "$T/$tag.jit.data" -F ip,sym -G >"$T/$tag.names.txt" 2>/dev/null ||
		letw_fail "$tag: perf script"
	python3 "$here/perf_check.py" "$list" "$T/$tag.names.txt" 50 0.9 >&2 ||
		letw_fail "$tag: perf did not name most JIT samples right from the DCStart jitdump"
}
export HOME=$T/home PERF_BUILDID_DIR=$T/buildid
mkdir -p "$HOME" "$T/jit"

LETW_JITDUMP_DIR="$T/jit" "$LETW_MINIJIT" --functions 40 --hot 4 --seconds 60 \
	--source "$T/mj.src" --list "$T/list" --list-hot --list-code >"$T/minijit.out" 2>&1 &
pid=$!
letw_track "$pid"
anl_wait_file "$T/list.ready"

s=$(anl_session jitdump-late "$pid" "" 'letw_rundown:*dcstart*' \
	'letw_rundown:method_lines_start' 'letw_rundown:method_code_bytes_start')
letw_session_track "$s" "$pid"
perf record -q -k mono -e cpu-clock -p "$pid" -o "$T/perf.data" -- sleep 4 \
	>"$T/perf.log" 2>&1 &
perf_pid=$!
letw_track "$perf_pid"
sleep 1.5
"$LETW_CLI" start "$s" --pid "$pid" >&2 || letw_fail "lttng-etw start"
wait "$perf_pid" || letw_fail "perf record: $(cat "$T/perf.log")"
letw_untrack "$perf_pid"
lttng stop "$s" >/dev/null || letw_fail "lttng stop"
kill -TERM "$pid"
wait "$pid" || { cat "$T/minijit.out" >&2; letw_fail "letw-minijit failed"; }

trace=$(anl_trace "$s")
letw_trace_text "$trace" >"$T/trace.txt"
grep -q 'letw_rundown:method_dcstart' "$T/trace.txt" || letw_fail "no method_dcstart in the trace"
! grep -q 'letw_runtime:' "$T/trace.txt" || letw_fail "the session recorded runtime events"
grep -q 'letw_rundown:method_lines_start' "$T/trace.txt" ||
	letw_fail "the DCStart pass emitted no method_lines_start (rundown twins missing?)"
grep -q 'letw_rundown:method_code_bytes_start' "$T/trace.txt" ||
	letw_fail "the DCStart pass emitted no method_code_bytes_start (rundown twins missing?)"

# Names, from DCStart alone.
dump_and_check late "$trace" "$T/jit" "$T/perf.data" "$T/list"

# Annotation, from method_code_bytes_start.
perf script -i "$T/late.jit.data" -F ip,sym >"$T/syms.txt" 2>/dev/null
name=$(sed -n 's/^.*[0-9a-f]\{6,\} \(minijit\.[^ ]*::fn_1(.*\)$/\1/p' "$T/syms.txt" | head -1)
[ -n "$name" ] || letw_fail "no sample named fn_1"
perf annotate -i "$T/late.jit.data" --stdio -s "$name" >"$T/annotate.fn_1" 2>/dev/null ||
	letw_fail "perf annotate $name"
$LETW_PY "$here/jitdump_check.py" annotate "$T/annotate.fn_1" \
	"$(sed -n 's/^code fn_1 //p' "$T/list")" >&2 ||
	letw_fail "perf annotate of fn_1 does not show the JIT's instructions"

# Source lines, from method_lines_start.
perf script -i "$T/late.jit.data" -F ip,sym,srcline >"$T/srcline.txt" 2>/dev/null ||
	letw_fail "perf script srcline"
$LETW_PY "$here/jitdump_check.py" srcline "$trace" "$T/mj.src" "$T/srcline.txt" >&2 ||
	letw_fail "perf's source lines are not the DCStart line tables'"
# 2. perf saw the process's fork (`perf record -- launcher`, as `-a`
# does): code known only from the rundown is named too. Dated at 1 ns, its
# mappings came before the fork in perf's replay and the fork dropped them:
# every such sample unnamed. Now dated just after the placeholder was made.
# The workload runs until SIGTERM, a second after the session's start:
# its fixed 4 s had to cover the session's setup (four lttng commands),
# the second of samples before the start and the start's pass, and a
# slower machine could end it before `lttng-etw start` asked for the pass.
mkdir -p "$T/jit2"
perf record -q -k mono -e cpu-clock -o "$T/perf2.data" -- \
	bash -c '"$@" & echo $! >"'"$T"'/pid2"; wait' launcher \
	env LETW_JITDUMP_DIR="$T/jit2" "$LETW_MINIJIT" --functions 40 --hot 4 --seconds 120 \
	--list "$T/list2" --list-hot >"$T/perf2.log" 2>&1 &
perf_pid=$!
letw_track "$perf_pid"
anl_wait_file "$T/list2.ready"
pid2=$(cat "$T/pid2")
letw_track "$pid2"
s2=$(anl_session jitdump-fork "$pid2" "" 'letw_rundown:*dcstart*') || exit 1
sleep 1
"$LETW_CLI" start "$s2" --pid "$pid2" >&2 || letw_fail "fork: lttng-etw start"
sleep 1 # samples after the start too
kill -TERM "$pid2"
wait "$perf_pid" || letw_fail "fork: perf record: $(cat "$T/perf2.log")"
letw_untrack "$perf_pid"
letw_untrack "$pid2"
lttng stop "$s2" >/dev/null || letw_fail "fork: lttng stop"
dump_and_check fork "$(anl_trace "$s2")" "$T/jit2" "$T/perf2.data" "$T/list2"
echo "jitdump_late_e2e: ok"
