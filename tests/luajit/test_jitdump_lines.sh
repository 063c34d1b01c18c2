#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# LuaJIT traces' source lines in perf, through a jitdump built from the
# trace: letw-luajit runs hotloops.lua under `perf record -k mono -e
# cpu-clock` with LETW_JITDUMP_DIR set (its placeholder jit-PID.dump is
# mapped), publishing each trace with the line table it gathers from
# LuaJIT's recorder; a session records every runtime event. After
# `lttng-etw jitdump` + `perf inject --jit`, `perf script -F srcline` must
# show, for samples in traces, the lines the traced tables give, inside
# the loop each root trace compiles (check_lua_lines.py).
# perf's jitted-*.so and build-id cache stay in the test's temporary dir.
# usage: test_jitdump_lines.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
host="$build/bin/letw-luajit"
cli="$build/bin/lttng-etw"
script="$here/hotloops.lua"
command -v perf >/dev/null || letw_fail "perf is not installed"
letw_ensure_sessiond
T=$LETW_TEST_TMP
export HOME=$T/home PERF_BUILDID_DIR=$T/buildid
mkdir -p "$HOME" "$T/jit"
mkfifo "$T/go"

perf record -q -k mono -e cpu-clock -o "$T/perf.data" -- \
	bash -c 'read x <"$1"; shift; exec "$@"' sh "$T/go" \
	env LETW_JITDUMP_DIR="$T/jit" "$host" --stats "$script" "$T/ready" "$T/stop" \
	>"$T/host.out" 2>&1 &
perf_pid=$!
letw_track "$perf_pid"
letw_wait_for pgrep -P "$perf_pid" >/dev/null || letw_fail "perf did not start the workload"
pid=$(pgrep -P "$perf_pid")
letw_track "$pid"

s=$(letw_session_create luajit-jitdump) || exit 1
letw_session_track "$s" "$pid"
lttng enable-event -u -s "$s" 'letw_runtime:*' >/dev/null || letw_fail "enable-event"
lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"
lttng start "$s" >/dev/null || letw_fail "lttng start"
echo go >"$T/go"
letw_wait_for test -e "$T/ready" || letw_fail "the Lua workload never became ready"
sleep 1 # samples of the compiled loops
touch "$T/stop"
wait "$perf_pid" || letw_fail "perf record / letw-luajit failed: $(cat "$T/host.out")"
lttng stop "$s" >/dev/null || letw_fail "lttng stop"
letw_log "$(grep 'traces published' "$T/host.out")"

trace="$T/$s"
"$cli" jitdump "$trace" -o "$T/jit" --no-progress >"$T/jitdump.log" 2>&1 ||
	letw_fail "lttng-etw jitdump: $(cat "$T/jitdump.log")"
letw_log "$(cat "$T/jitdump.log")"
grep -q ' [1-9][0-9]* with line tables' "$T/jitdump.log" || letw_fail "no trace carried a line table"
perf inject --jit -i "$T/perf.data" -o "$T/perf.jit.data" >"$T/inject.log" 2>&1 ||
	letw_fail "perf inject --jit: $(cat "$T/inject.log")"
perf script -i "$T/perf.jit.data" -F ip,sym,srcline >"$T/srcline.txt" 2>/dev/null ||
	letw_fail "perf script"
$LETW_PY "$here/check_lua_lines.py" "$trace" "$script" "$T/srcline.txt" >&2 ||
	letw_fail "perf's source lines of LuaJIT traces are not the traced line tables'"
echo "PASS"
