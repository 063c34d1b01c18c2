#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 12, test 1: agent loaded at startup, session started late.
# The workload runs with -agentpath; once its six hot methods have C2 code,
# perf samples it and only then a session enabling letw_runtime:* and the
# DCStart rundown starts, so the hot methods' names can only come from the
# DCStart pass (check_perf.py checks that the samples' names are those of
# method_dcstart records). On the same process, `jcmd Compiler.perfmap`
# writes the JDK's own map; both maps are applied to the same perf.data:
# ours must name >= 95 % of the samples in the code cache, at least as
# many as the JDK's of those in compiled methods, and name every hot
# method under its Java name.
# usage: test_startup_perf.sh BUILD_DIR JAVA_HOME
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
. "$here/jvm.sh" "$1" "$2"
min_share=${LETW_JVM_MIN_SHARE:-0.95}

command -v perf >/dev/null || letw_fail "perf is not installed"
letw_ensure_sessiond
jvm_compile "$here/java/Workload.java"
stop="$LETW_TEST_TMP/stop"
"$java" "-agentpath:$agent=log=$LETW_TEST_TMP/agent.log" "${JVM_FLAGS[@]}" \
	-cp "$classes" letw.test.Workload "$stop" >"$LETW_TEST_TMP/jvm.out" 2>&1 &
pid=$!
letw_track "$pid"
# perf reads /tmp/perf-PID.map, and Compiler.perfmap writes it: never leave
# one behind.
tmpmap="/tmp/perf-$pid.map"
trap 'rm -f "$tmpmap"; letw_cleanup' EXIT
jvm_wait_hot "$pid"

s=$(letw_session_create jvm-startup) || exit 1
letw_session_track "$s" "$pid"
lttng enable-event -u -s "$s" 'letw_runtime:*' >/dev/null || letw_fail "enable runtime"
lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable dcstart"
lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"

letw_perf_record "$pid" 3
"$cli" start "$s" --pid "$pid" >"$LETW_TEST_TMP/start.log" 2>&1 ||
	letw_fail "lttng-etw start: $(cat "$LETW_TEST_TMP/start.log")"
letw_perf_wait
# The JDK's map and code-cache bounds, from the same process, now.
rm -f "$tmpmap"
jvm_jcmd "$pid" Compiler.perfmap >"$LETW_TEST_TMP/jcmd.log" 2>&1 ||
	letw_fail "jcmd Compiler.perfmap: $(cat "$LETW_TEST_TMP/jcmd.log")"
[ -s "$tmpmap" ] || letw_fail "Compiler.perfmap wrote no $tmpmap"
mv "$tmpmap" "$LETW_TEST_TMP/jdk.map"
jvm_jcmd "$pid" Compiler.codecache >"$LETW_TEST_TMP/codecache.txt" 2>&1 ||
	letw_fail "jcmd Compiler.codecache"
lttng stop "$s" >/dev/null || letw_fail "stop"
jvm_stop "$pid" "$stop"
jvm_no_crash
letw_log "$(grep 'vm death' "$LETW_TEST_TMP/agent.log")"

trace="$LETW_TEST_TMP/$s"
"$cli" report "$trace" --no-progress >"$LETW_TEST_TMP/report.txt" 2>&1 ||
	letw_fail "rundown report not clean: $(cat "$LETW_TEST_TMP/report.txt")"
"$cli" perfmap "$trace" -o "$LETW_TEST_TMP/maps" --no-progress ||
	letw_fail "lttng-etw perfmap failed"
ours="$LETW_TEST_TMP/maps/perf-$pid.map"
[ -s "$ours" ] || letw_fail "no perf map for process $pid"

samples() { # MAP OUT : perf script with MAP (or none) in /tmp
	rm -f "$tmpmap"
	[ "$1" = none ] || cp "$1" "$tmpmap"
	perf script -i "$LETW_TEST_TMP/perf.data" -F ip,sym -G >"$2" 2>/dev/null ||
		letw_fail "perf script ($1)"
	rm -f "$tmpmap"
}
samples "$ours" "$LETW_TEST_TMP/s-ours.txt"
samples "$LETW_TEST_TMP/jdk.map" "$LETW_TEST_TMP/s-jdk.txt"
samples none "$LETW_TEST_TMP/s-none.txt"
$LETW_PY "$here/check_perf.py" --trace "$trace" --pid "$pid" \
	--codecache "$LETW_TEST_TMP/codecache.txt" --ours "$LETW_TEST_TMP/s-ours.txt" \
	--jdk "$LETW_TEST_TMP/s-jdk.txt" --jdk-map "$LETW_TEST_TMP/jdk.map" --none "$LETW_TEST_TMP/s-none.txt" \
	--min-share "$min_share" || letw_fail "the samples are not named as they must be"
echo "PASS: a late DCStart names the JVM's C2 code for perf, at least as well as Compiler.perfmap"
