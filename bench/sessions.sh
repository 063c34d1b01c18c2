#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a per-session rundown costs the LTTng commands that trigger it. One
# letw-minijit process publishing N functions (default 10^5); a session
# recording `letw_rundown:*dcstart*` into a blocking channel; then, R times
# each, interleaved: `lttng start` (a DCStart pass, ENABLE), `lttng
# regenerate statedump` (a CAPTURE_STATE pass), and, as the baseline of the
# same run, `lttng regenerate statedump` of a second session that records
# no lttng-etw event (lttng-ust's own statedump, no pass). Prints the median
# and range of each command's wall time and of the passes' own duration
# (duration_ns of their Complete events, from `lttng-etw report --json`).
#
# lttng-sessiond waits for every traced process's statedump reply, and the
# lttng-etw callback waits for its pass at most LETW_STATEDUMP_WAIT_MS
# (default 1000): past that bound the command returns while the pass goes
# on, so the command time is min(pass, bound) plus LTTng's own cost.
#
#   bench/sessions.sh [--build-dir DIR] [--functions N] [--runs R] [--out FILE]
#
# Needs root (a root lttng-sessiond). Not part of the test command.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
FUNCS=100000
RUNS=7
OUT=$ROOT/bench/results/sessions.md
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) BUILD=$(realpath -m "$2"); shift ;;
	--functions) FUNCS=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	--out) OUT=$(realpath -m "$2"); shift ;;
	-h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "sessions.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
MINIJIT=$BUILD/bin/letw-minijit CLI=$BUILD/bin/lttng-etw
for b in "$MINIJIT" "$CLI"; do
	[ -x "$b" ] || { echo "sessions.sh: no $b (build first)" >&2; exit 1; }
done
pgrep -x lttng-sessiond >/dev/null || lttng-sessiond --daemonize >/dev/null

TMP=$(mktemp -d /tmp/letw-bench-sessions.XXXXXX)
JIT= SESSIONS=()
cleanup() {
	local s
	# A second Ctrl-C or SIGTERM must not cut the cleanup short and leak
	# the session.
	trap '' INT TERM HUP
	for s in "${SESSIONS[@]}"; do lttng destroy "$s" >/dev/null 2>&1 || true; done
	if [ -n "$JIT" ]; then kill "$JIT" 2>/dev/null || true; wait "$JIT" 2>/dev/null || true; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$MINIJIT" --functions "$FUNCS" --seconds 3600 --list "$TMP/live" >/dev/null &
JIT=$!
for _ in $(seq 1 600); do [ -e "$TMP/live.ready" ] && break; sleep 0.1; done
[ -e "$TMP/live.ready" ] || { echo "sessions.sh: minijit never got ready" >&2; exit 1; }

ms() { # COMMAND... : wall time of the command in ms
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

other=letw-bench-other-$$
lttng create "$other" --output="$TMP/$other" >/dev/null
SESSIONS+=("$other")
lttng enable-event -u -s "$other" 'lttng_ust_statedump:*' >/dev/null
lttng start "$other" >/dev/null

: >"$TMP/start" ; : >"$TMP/regen" ; : >"$TMP/base"
for r in $(seq 1 "$RUNS"); do
	s=letw-bench-sess-$$-$r
	lttng create "$s" --output="$TMP/$s" >/dev/null
	SESSIONS+=("$s")
	lttng enable-channel -u -s "$s" --subbuf-size=4M --num-subbuf=8 \
		--blocking-timeout=inf chan >/dev/null
	lttng enable-event -u -s "$s" -c chan 'letw_rundown:*dcstart*' \
		--filter "\$ctx.vpid == $JIT" >/dev/null
	lttng add-context -u -s "$s" -c chan -t vpid >/dev/null
	ms lttng start "$s" >>"$TMP/start"
	sleep 2 # let a pass longer than the callback's bound end
	ms lttng regenerate statedump -s "$s" >>"$TMP/regen"
	sleep 2
	ms lttng regenerate statedump -s "$other" >>"$TMP/base"
	lttng stop "$s" >/dev/null
	"$CLI" report "$TMP/$s" --json --no-progress -o "$TMP/$s.json" >/dev/null 2>&1 || true
	python3 - "$TMP/$s.json" "$JIT" >>"$TMP/pass" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
for p in rep["processes"]:
    if p["vpid"] == int(sys.argv[2]):
        for ps in p["passes"]:
            if ps.get("status") == "complete" and "duration_ns" in ps:
                print(ps["duration_ns"] // 1000000)
EOF
	lttng destroy "$s" >/dev/null
done

stats() { # FILE -> "median (min–max)"
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		if (!NR) { print "none"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%d ms (%d–%d, n=%d)\n", m, v[1], v[NR], NR }'
}
{
	echo "# Per-session rundown latency (bench/sessions.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'),"
	echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; one letw-minijit"
	echo "process publishing $FUNCS functions; $RUNS runs, interleaved; median (range)."
	echo
	echo "| what | time |"
	echo "|---|---:|"
	echo "| pass duration (Complete's duration_ns) | $(stats "$TMP/pass") |"
	echo "| \`lttng start\` (DCStart pass, ENABLE) | $(stats "$TMP/start") |"
	echo "| \`lttng regenerate statedump\` (CAPTURE_STATE pass) | $(stats "$TMP/regen") |"
	echo "| baseline: \`lttng regenerate statedump\` of a session recording no lttng-etw event | $(stats "$TMP/base") |"
} | tee "$OUT"
echo "written: $OUT"
