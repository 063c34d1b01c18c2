#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lttng-etw demo: a JIT runtime (examples/minijit) compiles and runs
# real x86-64 code; *then* an LTTng session starts, the library answers
# with a DCStart rundown naming all code compiled before the session
# existed, `lttng-etw stop` asks for the DCEnd rundown, and the trace alone
# gives perf the names of the JIT'd frames it sampled meanwhile.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/deps.sh"

letw_install_deps
letw_build "$root" "$root/build"
letw_start_sessiond || { echo "cannot start lttng-sessiond" >&2; exit 1; }

bin="$root/build/bin"
out=$(mktemp -d /tmp/lttng-etw-demo.XXXXXX)
session="letw-demo-$$"
pid=""
perf_pid=""
stopped=""
finished=""
cleanup() {
	local rc=$?
	# A second Ctrl-C or SIGTERM must not cut the cleanup short and leak
	# the session.
	trap '' INT TERM HUP
	local undone=""
	# perf record of step 2, when interrupted there: it would sample on
	# until its target died.
	if [ -n "$perf_pid" ] && kill "$perf_pid" 2>/dev/null; then
		wait "$perf_pid" 2>/dev/null || true
	fi
	stop_runtime && undone="stopped runtime $pid, "
	lttng destroy "$session" >/dev/null 2>&1 && undone="${undone}destroyed session $session, "
	[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
	# Kept for the reader when the demo ran through (its last line says
	# where); an interrupted or failed run leaves nothing behind, and says
	# so: a command it interrupted may have just said what it left (a
	# session left started, say), which this cleanup undid.
	[ -n "$finished" ] && return
	rm -rf "$out" || true
	if [ -n "$interrupted" ]; then
		echo "demo: interrupted (SIG$interrupted)" >&2
	else
		echo "demo: failed (exit $rc)" >&2
	fi
	echo "demo: ${undone}removed $out: nothing is left" >&2
}
# Stopped before the last lines, so its exit summary does not follow them.
# Fails when there was none left to stop; once reaped, its pid is never
# signalled again (it may be another process's by then).
stop_runtime() {
	[ -n "$pid" ] && [ -z "$stopped" ] && kill "$pid" 2>/dev/null || return 1
	wait "$pid" 2>/dev/null
	stopped=1
	return 0
}
trap cleanup EXIT
# Caught, not left to the default: a command that handles Ctrl-C itself
# and exits 0 (perf record, the last stage of a pipeline) would let the
# demo go on, or end with no word of the interrupt.
interrupted=""
trap 'interrupted=INT; exit 130' INT
trap 'interrupted=TERM; exit 143' TERM
trap 'interrupted=HUP; exit 129' HUP

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "1. A JIT runtime compiles 2000 functions (no tracing session yet)"
"$bin/letw-minijit" --functions 2000 --seconds 60 --list "$out/live.txt" &
pid=$!
for _ in $(seq 1 100); do [ -e "$out/live.txt.ready" ] && break; sleep 0.1; done
[ -e "$out/live.txt.ready" ] || { echo "runtime did not start" >&2; exit 1; }
echo "runtime pid $pid: $(grep -c '^method' "$out/live.txt") live methods," \
	"$(grep -c '^stub' "$out/live.txt") stubs (its own list: $out/live.txt)"

say "2. perf samples the runtime while an LTTng session traces it"
lttng create "$session" --output="$out/trace" >/dev/null
# Only the demo runtime: tracking its vpid keeps the session from switching
# on the tracepoints (and so rundowns) of other lttng-etw processes here.
lttng track -u -s "$session" --vpid="$pid" >/dev/null
lttng enable-event -u -s "$session" 'letw_runtime:*' --filter "\$ctx.vpid == $pid" >/dev/null
lttng enable-event -u -s "$session" 'letw_rundown:*dcstart*' --filter "\$ctx.vpid == $pid" >/dev/null
lttng add-context -u -s "$session" -t vpid -t vtid >/dev/null
perf record -q -e cpu-clock -g -p "$pid" -o "$out/perf.data" -- sleep 3 2>/dev/null &
perf_pid=$!
"$bin/lttng-etw" start "$session" --pid "$pid"
wait "$perf_pid" || true
perf_pid=""
"$bin/lttng-etw" stop "$session" --pid "$pid"

say "3. The rundown passes in the trace (babeltrace2)"
babeltrace2 "$out/trace" | grep -E 'letw_rundown:(dcstart|dcend)_(init|complete)' |
	sed -E 's/^\[[^]]*\] \([^)]*\) [^ ]+ //'
# (sed -n reads all its input: head or grep -m would SIGPIPE babeltrace2.)
babeltrace2 "$out/trace" | grep 'letw_rundown:method_dcstart' |
	sed -nE '1,3s/^\[[^]]*\] \([^)]*\) [^ ]+ //p'

say "4. Rundown completeness report (lttng-etw report)"
"$bin/lttng-etw" report "$out/trace" || true

say "5. perf map derived from the trace only (lttng-etw perfmap)"
# Exit 3: the maps were written from an incomplete trace (it says which
# streams lost data); the demo goes on with them.
"$bin/lttng-etw" perfmap "$out/trace" -o "$out/maps" || [ $? = 3 ]
head -n 5 "$out/maps/perf-$pid.map"

say "6. perf report names the JIT'd frames"
cp "$out/maps/perf-$pid.map" "/tmp/perf-$pid.map"
perf report -i "$out/perf.data" --stdio --sort sym --no-children 2>/dev/null |
	grep -E '^ +[0-9.]+%' | sed -n '1,12p'
stop_runtime || true
echo
echo "trace: $out/trace   perf data: $out/perf.data   maps: $out/maps"
echo "(kept: rm -rf $out when done)"
finished=1
