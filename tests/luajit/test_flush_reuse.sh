#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# LuaJIT flushing all its traces thousands of times (and, now and then,
# one function's traces, whose numbers the next traces reuse) while a
# session records every lttng-etw event and capture-state rundowns run in
# the middle of it:
#  - each method_unload pairs with a method_load, nothing stays live and
#    the loads match the host's count of published traces (check_pairs.py);
#  - `lttng-etw report` finds every rundown pass complete and consistent
#    (no record of code unloaded before the pass, no duplicate, nothing
#    missing, no discarded event);
#  - sink.etw.perfmap, run by babeltrace2 from the plugin directory,
#    reports address ranges that held different code over time (LuaJIT
#    maps its machine code afresh after each flush, sometimes where an
#    earlier area was).
# usage: test_flush_reuse.sh BUILD_DIR PLUGIN_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
plugins=$2
host="$build/bin/letw-luajit"
cli="$build/bin/lttng-etw"
min_flushes=3000
captures=8

letw_ensure_sessiond
go="$LETW_TEST_TMP/go"
stop="$LETW_TEST_TMP/stop"
hold="$LETW_TEST_TMP/hold"
mkfifo "$go" || letw_fail "mkfifo"
# Blocking channel: a lossless trace, or pairing could not be checked.
LTTNG_UST_ALLOW_BLOCKING=1 "$host" --stats "$here/flushes.lua" "$min_flushes" "$go" "$stop" "$hold" \
	>"$LETW_TEST_TMP/host.out" 2>&1 &
pid=$!
letw_track "$pid"
# `lttng-etw start --pid` ignores a process without a control socket yet:
# it used to run when the lttng commands below were done, and a host
# slower to start (under TSan) had none then.
letw_wait_for letw_ctl "$pid" ping >/dev/null ||
	letw_fail "the host never answered on its control socket: $(cat "$LETW_TEST_TMP/host.out")"

s=$(letw_session_create luajit-flush) || exit 1
letw_session_track "$s" "$pid"
lttng enable-channel -u -s "$s" --subbuf-size=4M --num-subbuf=8 --blocking-timeout=inf chan \
	>/dev/null || letw_fail "enable-channel"
for ev in 'letw_runtime:*' 'letw_rundown:*'; do
	lttng enable-event -u -s "$s" -c chan "$ev" --filter "\$ctx.vpid == $pid" >/dev/null ||
		letw_fail "enable $ev"
done
lttng add-context -u -s "$s" -c chan -t vpid >/dev/null || letw_fail "add-context"
"$cli" start "$s" --pid "$pid" >"$LETW_TEST_TMP/start.log" 2>&1 ||
	letw_fail "lttng-etw start: $(cat "$LETW_TEST_TMP/start.log")"

# The workload waits on the FIFO until the session is recording it.
timeout 30 sh -c 'echo go >"$1"' sh "$go" || letw_fail "the Lua workload never opened $go"
for i in $(seq 1 "$captures"); do
	# The first one while the workload holds its traces live between two
	# flushes (the others fall wherever they fall).
	[ "$i" = 1 ] && touch "$hold" && { letw_wait_for test -e "$hold.held" ||
		letw_fail "the Lua workload never held its traces"; }
	"$cli" capture-state --pid "$pid" --wait >>"$LETW_TEST_TMP/capture.log" 2>&1 ||
		letw_fail "capture-state $i: $(cat "$LETW_TEST_TMP/capture.log")"
	rm -f "$hold"
done
touch "$stop"
wait "$pid" || letw_fail "letw-luajit exited with $?: $(cat "$LETW_TEST_TMP/host.out")"
lttng stop "$s" >/dev/null || letw_fail "stop"
stats=$(grep 'traces published' "$LETW_TEST_TMP/host.out") || letw_fail "no host statistics"
letw_log "$stats"
published=$(echo "$stats" | sed -n 's/.*traces published \([0-9]*\),.*/\1/p')
flushes=$(echo "$stats" | sed -n 's/.*flushes \([0-9]*\),.*/\1/p')
[ "${flushes:-0}" -ge "$min_flushes" ] || letw_fail "only ${flushes:-0} flushes"
replaced=$(echo "$stats" | sed -n 's/.*replaced \([0-9]*\),.*/\1/p')
# jit.flush(f) + collect: trace numbers were reused without a full flush.
[ "${replaced:-0}" -ge 1 ] || letw_fail "no trace number was reused (replaced=${replaced:-0})"
echo "$stats" | grep -q 'errors 0$' || letw_fail "the host saw lttng-etw errors: $stats"

trace="$LETW_TEST_TMP/$s"
$LETW_PY "$here/check_pairs.py" "$trace" "$pid" "$published" || letw_fail "loads and unloads do not pair"

"$cli" report "$trace" --json --no-progress -o "$LETW_TEST_TMP/report.json" ||
	letw_fail "lttng-etw report: a pass is not complete (exit $?)"
$LETW_PY - "$LETW_TEST_TMP/report.json" "$pid" "$captures" <<'EOF' || letw_fail "the rundown report is not clean"
import json, sys
rep = json.load(open(sys.argv[1]))
pid, captures = int(sys.argv[2]), int(sys.argv[3])
summ = rep["summary"]
print("# report summary: %s" % summ)
procs = [p for p in rep["processes"] if p["vpid"] == pid]
assert procs, "process %d absent from the report" % pid
for key in ("truncated", "lossy", "inconsistent"):
    assert summ[key] == 0, "%s passes: %d" % (key, summ[key])
# The capture-states ran while LuaJIT was flushing: one pass of each
# flavour per request, on top of the one the session start caused.
passes = procs[0]["passes"]
for flavour in ("dcstart", "dcend"):
    n = sum(1 for p in passes if p["flavour"] == flavour)
    assert n >= captures, "%d %s passes, expected at least %d" % (n, flavour, captures)
# ...and they caught LuaJIT with live traces: the first one at least,
# which ran while the workload held its traces between two flushes.
seen = max(p["seen_methods"] for p in passes if p["control_code"] == 2)
assert seen > 0, "no capture-state pass saw a live trace"
print("# capture-state passes saw up to %d live traces" % seen)
EOF

# sink.etw.perfmap straight from babeltrace2, as a user of the plugin would.
reuse=$(letw_perfmap_reuse "$plugins" "$trace" "$pid") || exit 1
echo "PASS: $flushes flushes: loads and unloads pair, rundowns consistent, $reuse reused address range(s) reported"
