#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Analysis speed against the reading limit. Records a large trace (letw-
# minijit publishing N functions, DCStart at `lttng-etw start`, code churn,
# DCEnd at `lttng-etw stop`: ~400k events, ~40 MB for the default N), then
# times, interleaved in the same run, `babeltrace2 TRACE -c
# sink.utils.dummy` (babeltrace2 reading every event and doing nothing: the
# limit) and each lttng-etw command (report, perfmap, and jitdump when the
# CLI has it), RUNS times each, and prints the median wall-clock and CPU
# times and the ratios limit/command of both (1.0: as fast as reading;
# higher is better; on a shared machine the CPU ratio is the steadier).
#
#   bench/analysis.sh [--build-dir DIR] [--cli PATH]... [--trace DIR]
#                     [--functions N] [--runs R] [--keep] [--out FILE]
#
# The table also goes to FILE (default bench/results/analysis.md) as
# markdown, with the date, commit and load average of the run.
#
# --cli times another lttng-etw (e.g. one built from an older commit)
# against the same trace; given several times, every one is timed in the
# same interleaved rounds (before/after in one run). --trace reuses a
# recorded trace. Needs root (a
# root lttng-sessiond) to record. Not part of the test command; nothing
# here gates on time.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
CLIS=()
TRACE=
FUNCS=200000
RUNS=7
KEEP=0
OUT=$ROOT/bench/results/analysis.md
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) BUILD=$(realpath -m "$2"); shift ;;
	--cli) CLIS+=("$(realpath -m "$2")"); shift ;;
	--trace) TRACE=$(realpath -m "$2"); shift ;;
	--functions) FUNCS=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	--keep) KEEP=1 ;;
	--out) OUT=$(realpath -m "$2"); shift ;;
	-h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "analysis.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
[ ${#CLIS[@]} -gt 0 ] || CLIS=("$BUILD/bin/lttng-etw")
for c in "${CLIS[@]}"; do
	[ -x "$c" ] || { echo "analysis.sh: no $c (build first)" >&2; exit 1; }
done
CLI=${CLIS[0]} # records the trace
MINIJIT=$BUILD/bin/letw-minijit

TMP=$(mktemp -d /tmp/letw-bench-analysis.XXXXXX)
SESSION=
JIT=
cleanup() {
	# A second Ctrl-C or SIGTERM must not cut the cleanup short and leak
	# the session.
	trap '' INT TERM HUP
	if [ -n "$JIT" ]; then kill "$JIT" 2>/dev/null; wait "$JIT" 2>/dev/null; fi
	if [ -n "$SESSION" ]; then lttng destroy "$SESSION" >/dev/null 2>&1; fi
	if [ "$KEEP" = 1 ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$TRACE" ]; then
	[ -x "$MINIJIT" ] || { echo "analysis.sh: no $MINIJIT" >&2; exit 1; }
	lttng list >/dev/null 2>&1 || lttng-sessiond --daemonize >/dev/null
	LTTNG_UST_ALLOW_BLOCKING=1 "$MINIJIT" --functions "$FUNCS" --seconds 120 --churn \
		--list "$TMP/jit.list" >"$TMP/jit.out" 2>&1 &
	JIT=$!
	while [ ! -e "$TMP/jit.list.ready" ]; do
		kill -0 "$JIT" 2>/dev/null || { cat "$TMP/jit.out" >&2; exit 1; }
		sleep 0.2
	done
	SESSION=letwbench-analysis-$$-$RANDOM
	TRACE=$TMP/trace
	lttng create "$SESSION" --output="$TRACE" >/dev/null
	# Blocking: every record of both rundowns is in the trace.
	lttng enable-channel -u -s "$SESSION" --subbuf-size=4M --num-subbuf=8 \
		--blocking-timeout=inf big >/dev/null
	lttng enable-event -u -s "$SESSION" -c big 'letw_runtime:*' >/dev/null
	lttng enable-event -u -s "$SESSION" -c big 'letw_rundown:*dcstart*' >/dev/null
	lttng add-context -u -s "$SESSION" -c big -t vpid -t vtid >/dev/null
	lttng track -u -s "$SESSION" --vpid="$JIT" >/dev/null
	"$CLI" start "$SESSION" --pid "$JIT" >/dev/null
	sleep 2
	"$CLI" stop "$SESSION" --pid "$JIT" >/dev/null
	lttng destroy "$SESSION" >/dev/null
	SESSION=
	kill "$JIT"; wait "$JIT" 2>/dev/null || true
	JIT=
fi

events=$(babeltrace2 "$TRACE" -c sink.utils.counter -p step=+0 2>/dev/null |
	awk '/Event messages/ { print $1 }' | tail -1)
size=$(du -sm "$TRACE" | cut -f1)

# COMMAND@N: COMMAND of the Nth --cli.
cmds=(dummy)
for i in "${!CLIS[@]}"; do
	cmds+=("report@$i" "perfmap@$i")
	"${CLIS[$i]}" jitdump --help >/dev/null 2>&1 && cmds+=("jitdump@$i")
done

# Microseconds, not GNU time's 10 ms steps (timecmd.py says why).
TIMECMD="python3 $ROOT/bench/timecmd.py"
run_one() { # CMD: "wall cpu" seconds of one run (cpu: user + system,
	   # the reader's child process included)
	# Exit 3 (an incomplete trace) still read and wrote everything: timed.
	# Anything else is a failed run, whose time says nothing: stop.
	local tf=$TMP/time.out CLI='' rc=0
	case $1 in *@*) CLI=${CLIS[${1#*@}]} ;; esac
	case ${1%@*} in
	dummy) $TIMECMD "$tf" babeltrace2 "$TRACE" -c sink.utils.dummy >/dev/null 2>&1 || rc=$? ;;
	report) $TIMECMD "$tf" "$CLI" report "$TRACE" --no-progress >/dev/null 2>&1 || rc=$? ;;
	perfmap) $TIMECMD "$tf" "$CLI" perfmap "$TRACE" -o "$TMP/maps" --no-progress >/dev/null 2>&1 || rc=$? ;;
	jitdump) $TIMECMD "$tf" "$CLI" jitdump "$TRACE" -o "$TMP/jitdump" >/dev/null 2>&1 || rc=$? ;;
	esac
	if [ "$rc" != 0 ] && { [ "$rc" != 3 ] || [ "$1" = dummy ]; }; then
		echo "analysis.sh: $1 exited $rc: no timing" >&2
		exit 1
	fi
	awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }' "$tf"
}

for c in "${cmds[@]}"; do : >"$TMP/t.$c"; run_one "$c" >/dev/null; done # warm the cache
for r in $(seq 1 "$RUNS"); do
	for c in "${cmds[@]}"; do run_one "$c" >>"$TMP/t.$c"; done
done

median() { # FILE COLUMN
	awk -v c="$2" '{ print $c }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
lim=$(median "$TMP/t.dummy" 1)
limcpu=$(median "$TMP/t.dummy" 2)
{
	echo "trace: $events events, $size MB; $RUNS runs each, interleaved"
	for i in "${!CLIS[@]}"; do echo "cli @$i: ${CLIS[$i]}"; done
	echo "ratio = limit / command (median of the runs): 1.00 is as fast as reading the trace"
	printf '%-34s %9s %9s %11s %11s\n' command 'wall s' 'cpu s' 'ratio wall' 'ratio cpu'
} | tee "$TMP/header"
md_rows=
for c in "${cmds[@]}"; do
	w=$(median "$TMP/t.$c" 1)
	u=$(median "$TMP/t.$c" 2)
	case $c in dummy) name="babeltrace2 -c sink.utils.dummy" ;; *) name="lttng-etw ${c%@*} @${c#*@}" ;; esac
	rw=$(echo "$lim / $w" | bc -l) ru=$(echo "$limcpu / $u" | bc -l)
	printf '%-34s %9.4f %9.4f %11.3f %11.3f\n' "$name" "$w" "$u" "$rw" "$ru"
	md_rows+=$(printf '| %s | %.4f | %.4f | %.3f | %.3f |' "$name" "$w" "$u" "$rw" "$ru")$'\n'
done
mkdir -p "$(dirname "$OUT")"
{
	echo "# Analysis speed (bench/analysis.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'),"
	echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end;"
	echo "trace: $events events, $size MB; $RUNS runs each, interleaved; medians."
	for i in "${!CLIS[@]}"; do echo "cli @$i: \`${CLIS[$i]}\`"; done
	echo
	echo "Ratio = limit / command: 1.00 is as fast as babeltrace2 reading the trace into sink.utils.dummy."
	echo
	echo "| command | wall s | cpu s | ratio wall | ratio cpu |"
	echo "|---|---:|---:|---:|---:|"
	printf '%s' "$md_rows"
} >"$OUT"
echo "written: $OUT"
