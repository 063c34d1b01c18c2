#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 12, test 3: code cache churn. Churn.java defines and drops classes
# through class loaders of its own, in a 3 MiB code cache, so HotSpot
# unloads their compiled code and reuses its memory; a lossless session
# records every lttng-etw event from before the churn, with capture-state
# passes in the middle of it (the JVM stops between two rounds for each,
# until the test says the capture is done):
#  - every method_unload pairs with a load (or a record of the first
#    DCStart pass), live records never overlap, the payload classes'
#    methods are loaded and unloaded by the hundred, each in the module of
#    its class loader, loaders' modules unloaded too, and the line tables
#    show an inlined call at its source lines (check_churn_jvm.py);
#  - the agent refused no live code and met no unknown unload;
#  - `lttng-etw report` finds every pass complete and consistent, and a
#    complete capture-state pass per request;
#  - sink.etw.perfmap reports address ranges that held different code;
#  - the JVM exits 0.
# usage: test_churn.sh BUILD_DIR JAVA_HOME PLUGIN_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
. "$here/jvm.sh" "$1" "$2"
plugins=$3
rounds=400
captures=3

letw_ensure_sessiond
jvm_compile "$here/java/Churn.java"
go="$LETW_TEST_TMP/go"
stop="$LETW_TEST_TMP/stop"
# C1 only (compiles after a few hundred calls), synchronously; a small
# code cache makes HotSpot sweep and reuse freed code early.
LTTNG_UST_ALLOW_BLOCKING=1 "$java" "-agentpath:$agent=log=$LETW_TEST_TMP/agent.log" \
	-XX:TieredStopAtLevel=1 -Xbatch -XX:ReservedCodeCacheSize=3m \
	"-XX:ErrorFile=$LETW_TEST_TMP/hs_err_pid%p.log" \
	-cp "$classes" letw.test.Churn "$classes" "$go" "$rounds" "$stop" "$captures" >"$LETW_TEST_TMP/jvm.out" 2>&1 &
pid=$!
letw_track "$pid"

s=$(letw_session_create jvm-churn) || exit 1
letw_session_track "$s" "$pid"
# Blocking channel: a lossless trace, or pairing could not be checked.
lttng enable-channel -u -s "$s" --subbuf-size=4M --num-subbuf=8 --blocking-timeout=inf chan \
	>/dev/null || letw_fail "enable-channel"
for ev in 'letw_runtime:*' 'letw_rundown:*' 'letw_runtime:method_lines'; do
	lttng enable-event -u -s "$s" -c chan "$ev" >/dev/null || letw_fail "enable $ev"
done
lttng add-context -u -s "$s" -c chan -t vpid >/dev/null || letw_fail "add-context"
# The agent's control socket exists once the JVM reached VMInit: asked
# before (a slow start on a loaded machine), `start --pid` rightly says
# the pid is no lttng-etw process.
LETW_WAIT_SECONDS=60 letw_wait_for letw_ctl_field "$pid" passes >/dev/null ||
	letw_fail "the agent's control socket never answered: $(cat "$LETW_TEST_TMP/jvm.out")"
"$cli" start "$s" --pid "$pid" >"$LETW_TEST_TMP/start.log" 2>&1 ||
	letw_fail "lttng-etw start: $(cat "$LETW_TEST_TMP/start.log")"

# The JVM holds at stop i until stop i is done: a capture-state the
# test is slow to run still lands mid-churn, never after the last round.
stopped() { [ -e "$stop.$1.held" ] || letw_pid_gone "$pid"; }
touch "$go"
for i in $(seq 1 "$captures"); do
	letw_wait_for stopped "$i" && [ -e "$stop.$i.held" ] ||
		letw_fail "the JVM never stopped its churn for capture $i: $(cat "$LETW_TEST_TMP/jvm.out")"
	"$cli" capture-state --pid "$pid" --wait >>"$LETW_TEST_TMP/capture.log" 2>&1 ||
		letw_fail "capture-state $i: $(cat "$LETW_TEST_TMP/capture.log")"
	touch "$stop.$i.done"
done
wait "$pid" || letw_fail "the JVM exited with $?: $(cat "$LETW_TEST_TMP/jvm.out")"
letw_untrack "$pid"
jvm_no_crash
lttng stop "$s" >/dev/null || letw_fail "stop"
grep -q "^rounds $rounds " "$LETW_TEST_TMP/jvm.out" || letw_fail "churn incomplete: $(cat "$LETW_TEST_TMP/jvm.out")"
stats=$(grep 'vm death' "$LETW_TEST_TMP/agent.log") || letw_fail "no agent statistics"
letw_log "$stats"
for k in method_overlap unload_unknown method_failed name_failed; do
	echo "$stats" | grep -q " $k=0 " || letw_fail "agent: $k is not 0: $stats"
done

trace="$LETW_TEST_TMP/$s"
$LETW_PY "$here/check_churn_jvm.py" "$trace" "$pid" "$rounds" "$here/java/Churn.java" || letw_fail "loads and unloads do not pair"
"$cli" report "$trace" --json --no-progress -o "$LETW_TEST_TMP/report.json" ||
	letw_fail "lttng-etw report: a pass is not complete (exit $?)"
$LETW_PY - "$LETW_TEST_TMP/report.json" "$pid" "$captures" <<'PY' || letw_fail "the rundown report is not clean"
import json, sys
rep = json.load(open(sys.argv[1]))
pid, captures = int(sys.argv[2]), int(sys.argv[3])
summ = rep["summary"]
print("# report summary: %s" % summ)
procs = [p for p in rep["processes"] if p["vpid"] == pid]
assert procs, "process absent from the report"
for key in ("truncated", "lossy", "inconsistent"):
    assert summ[key] == 0, "%s passes: %d" % (key, summ[key])
# The capture-states ran in the middle of the churn: each left a
# complete pass (control code 2, CAPTURE_STATE) in the trace.
mid = [p for p in procs[0]["passes"] if p["control_code"] == 2 and p["status"] == "complete"]
print("# complete capture-state passes: %d" % len(mid))
assert len(mid) >= captures, "%d complete capture-state passes for %d requests" % (len(mid), captures)
PY

# sink.etw.perfmap straight from babeltrace2, as a user of the plugin would.
reuse=$(letw_perfmap_reuse "$plugins" "$trace" "$pid") || exit 1
echo "PASS: $rounds class loaders churned: loads and unloads pair, report clean, $reuse reused range(s)"
