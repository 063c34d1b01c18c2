#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# JVMTI agent benchmark (issue 12; not part of the test command):
#  1. throughput of the Java workload (tests/jvm/java/Workload.java: six
#     hot methods, rounds per second after a warm-up, by wall time and by
#     the main thread's CPU time, and the process's CPU time per round —
#     JIT, GC and lttng-etw's control thread included) without the agent,
#     with the agent and no session, and with the agent and a session
#     recording every lttng-etw event (line tables and code bytes included);
#     configurations interleaved, REPS runs each, medians, ratios to the
#     no-agent run of this same run;
#  2. a DCStart pass on a JVM holding ~METHODS compiled methods (generated:
#     bench/jvm/gen_methods.py, C1-compiled), from the passes' Complete
#     events (duration_ns, emitted) in a lossless (blocking) channel, and
#     the agent's attach replay (GenerateEvents) of the same JVM.
#
#   bench/jvm/run.sh [--build-dir DIR] [--reps N] [--rounds N] [--methods N] [--out FILE]
#
# Needs root (a root lttng-sessiond; started if none answers), OpenJDK 17
# (the JDK the agent was built with), lttng-tools, babeltrace2. Every
# session is named jvmbench-<pid>-*, tracks only its JVM's vpid and is
# destroyed on exit; every JVM started is killed on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/build
REPS=3
ROUNDS=1500
METHODS=20000
OUT=$ROOT/bench/results/jvm.md

while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) BUILD=$(realpath -m "$2"); shift ;;
	--reps) REPS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--methods) METHODS=$2; shift ;;
	--out) OUT=$(realpath -m "$2"); shift ;;
	-h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done

AGENT=$BUILD/lib/liblttng-etw-jvmti.so
CLI=$BUILD/bin/lttng-etw
JHOME=$(sed -n 's/^LETW_JAVA_HOME:PATH=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
[ -n "$JHOME" ] || JHOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
JAVA=$JHOME/bin/java JAVAC=$JHOME/bin/javac JCMD=$JHOME/bin/jcmd
[ -f "$AGENT" ] && [ -x "$CLI" ] || { echo "run.sh: build $BUILD first (agent, lttng-etw CLI)" >&2; exit 1; }

TMP=$(mktemp -d /tmp/jvmbench.XXXXXX)
PREFIX="jvmbench-$$"
PIDS=()
cleanup() {
	local p s
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	for s in $(lttng list 2>/dev/null | sed -n "s/^ *[0-9]*) \($PREFIX-[^ ]*\) .*/\1/p"); do
		lttng destroy "$s" >/dev/null 2>&1 || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
lttng list >/dev/null 2>&1 || lttng-sessiond --daemonize >/dev/null 2>&1
note() { echo "# $*" >&2; }

FLAGS=(-XX:+PreserveFramePointer -XX:CompileCommand=quiet
	"-XX:CompileCommand=dontinline,letw.test.Workload::hot*")
mkdir -p "$TMP/classes"
"$JAVAC" -d "$TMP/classes" "$ROOT/tests/jvm/java/Workload.java"

# session_new NAME PID CHANNEL_ARGS... : a session tracking PID only.
session_new() {
	local s=$1 pid=$2; shift 2
	lttng create "$s" --output="$TMP/$s" >/dev/null
	lttng track -u -s "$s" --vpid="$pid" >/dev/null
	lttng enable-channel -u -s "$s" "$@" chan >/dev/null
	lttng add-context -u -s "$s" -c chan -t vpid >/dev/null
}

# throughput CONFIG : "rounds/s rounds/cpu-s process-cpu-ms/round" of one
# run (none | agent | session).
throughput() {
	local cfg=$1 go="$TMP/go-$RANDOM" out="$TMP/wl.out" pid s
	local agentarg=()
	[ "$cfg" = none ] || agentarg=("-agentpath:$AGENT")
	"$JAVA" "${agentarg[@]}" "${FLAGS[@]}" -cp "$TMP/classes" letw.test.Workload \
		--rounds "$ROUNDS" "$go" >"$out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	if [ "$cfg" = session ]; then
		s="$PREFIX-tput-$RANDOM"
		session_new "$s" "$pid" --subbuf-size=1M --num-subbuf=8
		for ev in 'letw_runtime:*' 'letw_rundown:*' 'letw_runtime:method_lines' \
			'letw_runtime:method_code_bytes' 'letw_rundown:method_lines_*' \
			'letw_rundown:method_code_bytes_*'; do
			lttng enable-event -u -s "$s" -c chan "$ev" >/dev/null
		done
		"$CLI" start "$s" --pid "$pid" >/dev/null 2>&1
	fi
	touch "$go"
	wait "$pid"
	if [ "$cfg" = session ]; then
		lttng destroy "$s" >/dev/null
	fi
	echo "$(sed -n 's/^rounds_per_s //p' "$out") $(sed -n 's/^rounds_per_cpu_s //p' "$out")" \
		"$(sed -n 's/^process_cpu_ms_per_round //p' "$out")"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A T C P
for rep in $(seq 1 "$REPS"); do
	for cfg in none agent session; do
		read -r w c p < <(throughput "$cfg")
		note "rep $rep $cfg: $w rounds/s, $c rounds/cpu-s, $p process cpu ms/round"
		T[$cfg]="${T[$cfg]:-} $w"
		C[$cfg]="${C[$cfg]:-} $c"
		P[$cfg]="${P[$cfg]:-} $p"
	done
done
declare -A M MC MP
for cfg in none agent session; do
	M[$cfg]=$(echo "${T[$cfg]}" | tr ' ' '\n' | grep . | median)
	MC[$cfg]=$(echo "${C[$cfg]}" | tr ' ' '\n' | grep . | median)
	MP[$cfg]=$(echo "${P[$cfg]}" | tr ' ' '\n' | grep . | median)
done

# ---- DCStart pass on ~METHODS compiled methods ----
classes=$(( (METHODS + 99) / 100 ))
python3 "$ROOT/bench/jvm/gen_methods.py" "$TMP/gen" "$classes" 100
mkdir -p "$TMP/gcls"
"$JAVAC" -d "$TMP/gcls" $(find "$TMP/gen" -name '*.java')
GFLAGS=(-XX:TieredStopAtLevel=1 -Xbatch -XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,letw.bench.*::m*")

# gen_jvm AGENT_OPTS|- OUT : start the generated program, wait for "ready".
gen_jvm() {
	local stop="$TMP/gstop-$RANDOM" a=()
	[ "$1" = - ] || a=("-agentpath:$AGENT=$1")
	LTTNG_UST_ALLOW_BLOCKING=1 "$JAVA" "${a[@]}" "${GFLAGS[@]}" -cp "$TMP/gcls" letw.bench.GenMain \
		"$classes" "$stop" >"$2" 2>&1 &
	GPID=$!
	GSTOP=$stop
	PIDS+=("$GPID")
	for _ in $(seq 1 1200); do
		grep -q '^ready' "$2" && return 0
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "run.sh: the generated program never got ready: $(cat "$2")" >&2
	exit 1
}

gen_jvm "log=$TMP/gen-agent.log" "$TMP/gen.out"
compiled=$("$JCMD" "$GPID" Compiler.codelist | grep -cE '^[0-9]+ ')
s="$PREFIX-dcstart-$RANDOM"
session_new "$s" "$GPID" --subbuf-size=4M --num-subbuf=8 --blocking-timeout=inf
lttng enable-event -u -s "$s" -c chan 'letw_rundown:*dcstart*' >/dev/null
"$CLI" start "$s" --pid "$GPID" >/dev/null 2>&1
for _ in 1 2 3 4; do
	"$CLI" capture-state --pid "$GPID" --wait >/dev/null
done
lttng stop "$s" >/dev/null
touch "$GSTOP"
wait "$GPID"
babeltrace2 "$TMP/$s" 2>/dev/null | grep 'letw_rundown:dcstart_complete' |
	sed -n 's/.*emitted = \([0-9]*\).*duration_ns = \([0-9]*\).*/\1 \2/p' >"$TMP/passes.txt"
discarded=$(babeltrace2 "$TMP/$s" 2>&1 >/dev/null | grep -ci discarded || true)
lttng destroy "$s" >/dev/null
npasses=$(wc -l <"$TMP/passes.txt")
emitted=$(awk '{ print $1 }' "$TMP/passes.txt" | median)
pass_ms=$(awk '{ print $2 / 1e6 }' "$TMP/passes.txt" | median)
pass_min=$(awk '{ print $2 / 1e6 }' "$TMP/passes.txt" | sort -g | head -1)
pass_max=$(awk '{ print $2 / 1e6 }' "$TMP/passes.txt" | sort -g | tail -1)

# The same program without the agent, attached late: the replay.
gen_jvm - "$TMP/gen2.out"
"$JCMD" "$GPID" JVMTI.agent_load "$AGENT" "log:$TMP/attach.log" >/dev/null
replay_ms=$(sed -n 's/.*attach: replayed live code in \([0-9.]*\) ms.*/\1/p' "$TMP/attach.log")
replayed=$(sed -n 's/.*attach: methods=\([0-9]*\) .*/\1/p' "$TMP/attach.log")
touch "$GSTOP"
wait "$GPID"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
{
	echo "## JVMTI agent (bench/jvm/run.sh, $(date -u +%Y-%m-%d), $(nproc) cores, $("$JAVA" -version 2>&1 | head -1))"
	echo
	echo "Workload throughput (six hot methods, $ROUNDS rounds after a warm-up; median of $REPS interleaved runs):"
	echo
	echo "| configuration | rounds/s (wall) | ratio | rounds per main-thread CPU s | ratio | process CPU ms/round | ratio | wall rounds/s of each run |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
	for cfg in none agent session; do
		case $cfg in
		none) label="no agent" ;;
		agent) label="agent, no session" ;;
		session) label="agent, session recording everything" ;;
		esac
		echo "| $label | ${M[$cfg]} | $(ratio "${M[$cfg]}" "${M[none]}") | ${MC[$cfg]} |" \
			"$(ratio "${MC[$cfg]}" "${MC[none]}") | ${MP[$cfg]} | $(ratio "${MP[$cfg]}" "${MP[none]}") |${T[$cfg]} |"
	done
	echo
	echo "Load average when the table was written: $(cut -d' ' -f1-3 /proc/loadavg) (other work shares the cores: wall figures vary run to run)."
	echo
	echo "DCStart on a JVM holding $compiled compiled methods (jcmd Compiler.codelist; $classes generated classes, C1):"
	echo
	echo "| measure | value |"
	echo "|---|---:|"
	echo "| DCStart passes measured (session start + 4 capture-states) | $npasses |"
	echo "| records per pass (median emitted, methods + stubs + modules) | $emitted |"
	echo "| pass duration, median (min-max) | $pass_ms ms ($pass_min-$pass_max) |"
	echo "| per record | $(awk -v a="$pass_ms" -v n="$emitted" 'BEGIN { printf "%.2f", a * 1000 / n }') µs |"
	echo "| discarded-event messages in the trace (blocking channel) | $discarded |"
	echo "| attach replay (GenerateEvents, publish of $replayed methods) | $replay_ms ms |"
} | tee "$OUT"
