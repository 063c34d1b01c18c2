#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every lttng-etw benchmark and write bench/results/: results.csv,
# results.md and plots. Builds what is missing, starts lttng-sessiond if
# none answers, and destroys every session it created, even on failure.
#
#   bench/run.sh [--quick] [--build-dir DIR] [--out DIR] [--keep-tmp]
#
#   --quick          table sizes 10^4 and 10^5 only, shorter phases (~2 min)
#   --build-dir DIR  build tree to use (default build-bench/, configured
#                    and built when missing)
#   --out DIR        where the results go (default bench/results/)
#   --keep-tmp       keep the run's temporary directory (traces, logs)
#
# Needs root (a root lttng-sessiond), lttng-tools, babeltrace2, perf, gnuplot
# and /usr/bin/python3. Not part of the test command; nothing here gates on
# time.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-bench
OUT=$ROOT/bench/results
QUICK=0
KEEP_TMP=0

usage() {
	# The header comment from its first sentence to its end: a fixed
	# line range cut the help off mid-sentence once the header grew.
	sed -n '3,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--build-dir) BUILD=$(realpath -m "$2"); shift ;;
	--out) OUT=$(realpath -m "$2"); shift ;;
	--keep-tmp) KEEP_TMP=1 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done

if [ "$QUICK" = 1 ]; then
	SIZES="10000 100000"
	STALL_SECONDS=1.5; PASSES=2; OPS=20000; LAT_ITER=3
else
	SIZES="10000 100000 1000000"
	STALL_SECONDS=3; PASSES=3; OPS=50000; LAT_ITER=7
fi
# One JIT thread: with two cores, the thread, the walker and the consumer
# daemon already share the CPUs; more threads measure the kernel scheduler.
STALL_THREADS=${STALL_THREADS:-1}
# Channel configurations (per CPU, per-UID buffers).
BLOCK_SUBBUF=4M; BLOCK_NUM=8     # blocking: lossless, consumer-paced
DISC_SUBBUF=32M; DISC_NUM=16     # discard: 512 MiB per CPU, memory-paced

# Keep the whole script under ~15 minutes: filling a 10^6 table can degrade
# to tens of µs per publish (see README), so every fill is bounded, and once
# BUDGET seconds are spent the remaining 10^6 steps are skipped (and noted).
BUDGET=${BUDGET:-780}
FILL_TIMEOUT=${FILL_TIMEOUT:-60}
SCRIPT_START=$(date +%s)

PREFIX="letwbench-$$-$RANDOM"
TMP=$(mktemp -d /tmp/letwbench.XXXXXX)

cleanup() {
	local s f pid
	# A second Ctrl-C or SIGTERM must not cut the cleanup short and leak
	# the session.
	trap '' INT TERM HUP
	# perf profilers a stall program started and could not stop (it died):
	# their pids are in $TMP/*.pid; only a perf process is signalled.
	for f in "$TMP"/*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null || true)
		if [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = perf ]; then
			kill -INT "$pid" 2>/dev/null || true
		fi
	done
	for s in $(lttng list 2>/dev/null | grep -o "$PREFIX-[A-Za-z0-9-]*" | sort -u); do
		lttng destroy "$s" >/dev/null 2>&1 || true
	done
	if [ "$KEEP_TMP" = 1 ]; then echo "run.sh: kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "[$(date +%T)] $*" >&2; }

# --- build ------------------------------------------------------------------
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck source=../scripts/deps.sh
. "$ROOT/scripts/deps.sh"
letw_install_deps $LETW_DEPS_BENCH || log "missing packages: some steps may fail"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
	cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD" -j2 --target letw-bench letw-bench-globallock \
	letw-bench-raw lttng-etw-tp >/dev/null
BIN=$BUILD/bin

# --- sessiond ---------------------------------------------------------------
if ! lttng list >/dev/null 2>&1; then
	log "starting lttng-sessiond"
	lttng-sessiond --daemonize
	for _ in $(seq 50); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
fi

# Blocking channels need the traced process to opt in (lttng-ust(3)).
export LTTNG_UST_ALLOW_BLOCKING=1

CSV=$TMP/results.csv
NOTES=$TMP/notes.txt
echo "channel,measure,variant,methods,metric,value,unit" >"$CSV"
: >"$NOTES"

over_budget() { [ $(( $(date +%s) - SCRIPT_START )) -gt "$1" ]; }

# run CHANNEL PROGRAM ARGS... : rows go to the CSV (tagged with the channel
# configuration), notes to notes.txt, notes also to the terminal. A program
# exits 3 when it completed but saw requests from another session (see
# README): it is run once more, budget permitting, and only the last
# attempt's rows are kept. LAST_STATUS holds the final exit status.
run() {
	local chan=$1; shift
	local out status n attempt
	n=$(printf '%s\n' "$@" | grep -A1 -x -- -n | tail -1)
	if [ "$n" = 1000000 ] && over_budget "$BUDGET"; then
		log "skipped (time budget of ${BUDGET}s spent): $*"
		echo "# skipped (time budget of ${BUDGET}s spent): $(basename "$1") ${*:2}" >>"$NOTES"
		LAST_STATUS=0
		return 0
	fi
	for attempt in 1 2; do
		status=0
		out=$("$@" -P "$PREFIX" -O "$TMP" --fill-timeout "$FILL_TIMEOUT") || status=$?
		if [ $status -eq 3 ] && [ $attempt = 1 ] && ! over_budget $((BUDGET - 60)); then
			log "perturbed by another session, running again: $*"
			echo "# perturbed by another session, ran again: $(basename "$1") ${*:2}" >>"$NOTES"
			continue
		fi
		break
	done
	printf '%s\n' "$out" | grep '^#' >>"$NOTES" || true
	printf '%s\n' "$out" | grep -v '^#' | grep . | sed "s/^/$chan,/" >>"$CSV" || true
	printf '%s\n' "$out" | grep '^#' >&2 || true
	if [ $status -ne 0 ] && [ $status -ne 3 ]; then
		log "FAILED ($status): $*"
		echo "# FAILED ($status): $(basename "$1") ${*:2}" >>"$NOTES"
	fi
	LAST_STATUS=$status
}
LAST_STATUS=0

BLOCK=(-S $BLOCK_SUBBUF -N $BLOCK_NUM --blocking)
DISC=(-S $DISC_SUBBUF -N $DISC_NUM --discard)
START=$(date +%s)

# Stall: both variants with rundown events only (the library alone), and
# the lock-free library with the runtime events recorded too — in a discard
# channel of their own (split) and in the rundown events' blocking channel
# (shared, where the JIT thread's own events can wait for the walker's).
for n in $SIZES; do
	for v in letw-bench letw-bench-globallock; do
		log "stall $v N=$n rundown-only"
		run blocking "$BIN/$v" stall -n "$n" -s "$STALL_SECONDS" -t "$STALL_THREADS" "${BLOCK[@]}"
	done
	for cfg in split shared; do
		log "stall letw-bench N=$n $cfg"
		run "$cfg" "$BIN/letw-bench" stall -n "$n" -s "$STALL_SECONDS" -t "$STALL_THREADS" \
			--config "$cfg" "${BLOCK[@]}"
	done
done
for v in letw-bench letw-bench-globallock; do
	# Another session holding the letw tracepoints enabled hides every
	# start of ours (the program then fails rather than guess): retry.
	for attempt in 1 2 3; do
		log "latency $v (attempt $attempt)"
		run blocking "$BIN/$v" latency -n 10000 -i "$LAT_ITER" "${BLOCK[@]}"
		[ "$LAST_STATUS" = 0 ] || [ "$LAST_STATUS" = 3 ] && break
		sleep 15
	done
done
for n in $SIZES; do
	for v in letw-bench letw-bench-globallock; do
		log "rate $v N=$n"
		run blocking "$BIN/$v" rate -n "$n" -p "$PASSES" "${BLOCK[@]}"
		run discard "$BIN/$v" rate -n "$n" -p "$PASSES" "${DISC[@]}"
	done
	log "rate raw N=$n"
	run blocking "$BIN/letw-bench-raw" -n "$n" -p "$PASSES" "${BLOCK[@]}"
	run discard "$BIN/letw-bench-raw" -n "$n" -p "$PASSES" "${DISC[@]}"
done
for n in $SIZES; do
	for v in letw-bench letw-bench-globallock; do
		log "pubcost/memory $v N=$n"
		run blocking "$BIN/$v" pubcost -n "$n" -o "$OPS" "${BLOCK[@]}"
		run none "$BIN/$v" memory -n "$n"
	done
	run none "$BIN/letw-bench" lfht -n "$n" -o "$OPS"
	log "bigrange N=$n"
	run none "$BIN/letw-bench" bigrange -n "$n"
done

# Context-switch profiles of the JIT thread (perf sched_switch + page
# faults with call chains) at the largest size: the lock-free library with
# rundown events only and in the shared-channel session, and the global
# lock (which must show its lock waits: the method can fail).
CTXSW_MD=$TMP/ctxsw.md
: >"$CTXSW_MD"
PROFILE_N=${SIZES##* }
profile() {
	local v=$1 cfg=$2 variant=$3 data=$TMP/perf-$3-$2.data
	log "profile $v N=$PROFILE_N $cfg"
	run "perf-$cfg" "$BIN/$v" stall -n "$PROFILE_N" -s "$STALL_SECONDS" -t "$STALL_THREADS" \
		--config "$cfg" --perf-out "$data" "${BLOCK[@]}"
	if [ -s "$data" ] && [ -f "$data.windows" ]; then
		/usr/bin/python3 "$ROOT/bench/ctxsw.py" --data "$data" --windows "$data.windows" \
			--variant "$variant" --methods "$PROFILE_N" --config "$cfg" \
			--md-out "$TMP/ctxsw-$variant-$cfg.md" >>"$CSV" &&
			cat "$TMP/ctxsw-$variant-$cfg.md" >>"$CTXSW_MD"
	else
		echo "# profile $variant $cfg: no perf data" >>"$NOTES"
	fi
	rm -f "$data"
}
if command -v perf >/dev/null 2>&1; then
	profile letw-bench rundown-only lockfree
	profile letw-bench shared lockfree
	profile letw-bench-globallock rundown-only globallock
else
	echo "# perf not found: no context-switch profile" >>"$NOTES"
fi
ELAPSED=$(( $(date +%s) - START ))

# --- machine and configuration ----------------------------------------------
META=$TMP/meta.txt
{
	echo "date=$(date -u +'%Y-%m-%d %H:%M UTC')"
	echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
	echo "cores=$(nproc)"
	echo "memory=$(free -g | awk '/^Mem:/{print $2}') GiB"
	echo "kernel=$(uname -r)"
	echo "lttng=$(lttng --version | head -1)"
	echo "lttng_ust=$(dpkg-query -W -f '${Version}' liblttng-ust-dev 2>/dev/null || echo '?')"
	echo "liburcu=$(dpkg-query -W -f '${Version}' liburcu-dev 2>/dev/null || echo '?')"
	echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "mode=$([ "$QUICK" = 1 ] && echo quick || echo full)"
	echo "elapsed=${ELAPSED}s of measures, $(( $(date +%s) - SCRIPT_START ))s in all"
	echo "stall_threads=$STALL_THREADS"
	echo "stall_seconds=$STALL_SECONDS"
	echo "passes=$PASSES"
	echo "ops=$OPS"
	echo "latency_iterations=$LAT_ITER"
	echo "blocking=blocking (--blocking-timeout=inf, LTTNG_UST_ALLOW_BLOCKING=1), $BLOCK_NUM x $BLOCK_SUBBUF sub-buffers per CPU, per-UID"
	echo "discard=discard mode, $DISC_NUM x $DISC_SUBBUF sub-buffers per CPU, per-UID"
	echo "split_runtime=discard mode, $BLOCK_NUM x $BLOCK_SUBBUF sub-buffers per CPU, per-UID"
	echo "load_start=$LOAD_START"
	echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "profile_methods=$PROFILE_N"
} >"$META"

mkdir -p "$OUT"
cp "$CSV" "$OUT/results.csv"
cp "$NOTES" "$OUT/notes.txt"
cp "$META" "$OUT/meta.txt"
cp "$CTXSW_MD" "$OUT/ctxsw.md"
/usr/bin/python3 "$ROOT/bench/report.py" --csv "$OUT/results.csv" --meta "$OUT/meta.txt" \
	--notes "$OUT/notes.txt" --ctxsw "$OUT/ctxsw.md" --out "$OUT"
if command -v gnuplot >/dev/null 2>&1; then
	(cd "$OUT" && gnuplot plots.gp)
else
	log "gnuplot not found: no plots (the .dat files and plots.gp are written)"
fi
log "done in ${ELAPSED}s: $OUT/results.md"
