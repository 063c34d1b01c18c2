#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the libFuzzer harnesses (clang + ASan + UBSan + coverage, sub-build
# BUILD_DIR/reliability-fuzz) and run each for SECONDS:
#   letw-fuzz-ctlsock  the control-socket request path (provider/ctlsock.c)
#   letw-fuzz-trace    mutated CTF streams through sink.etw.report
# usage: fuzz.sh SOURCE_DIR BUILD_DIR [SECONDS]   (default 25 each)
# BUILD_DIR is a plain build: its letw-faultapp records the seed trace.
# Corpora are kept in BUILD_DIR/reliability-fuzz between runs (corpus-ctlsock,
# trace-KEY/corpus with its seed trace);
# crashes are written there too (crash-*) and fail the test, except the
# known upstream classes below, which are reported while fuzzing goes on.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
src=$1 bin=$2 secs=${3:-25}
[ -d "$src" ] && [ -d "$bin" ] || letw_fail "usage: $0 SOURCE_DIR BUILD_DIR [SECONDS]"
command -v clang >/dev/null || letw_fail "clang is needed (Debian: clang, libclang-rt-14-dev)"
# The upstream classes below are told from ours by the function and
# library names in the sanitizer's stacks: without llvm-symbolizer every
# frame of the harness is a bare address, so a babeltrace2 stop reads as
# ours and fails the test only when the fuzzer happens to meet one
# (a fresh Debian 12 root, 2026-12-07). Failing here says why, every run.
command -v llvm-symbolizer >/dev/null ||
	letw_fail "llvm-symbolizer is needed to classify the fuzzers' stops (Debian: llvm)"
fz="$bin/reliability-fuzz"
letw_log "building the harnesses in $fz"
CC=clang cmake -S "$src" -B "$fz" -DLETW_FUZZ=ON -DLETW_WERROR=OFF \
	-DLETW_SANITIZE=address,undefined,fuzzer-no-link \
	-DLETW_BUILD_EXAMPLES=OFF -DLETW_BUILD_BENCH=OFF >"$fz.log" 2>&1 ||
	{ cat "$fz.log" >&2; letw_fail "configure"; }
cmake --build "$fz" -j2 --target letw-fuzz-ctlsock letw-fuzz-trace letw-bt-plugin \
	>>"$fz.log" 2>&1 || { tail -40 "$fz.log" >&2; letw_fail "build"; }
plugin=$(ls "$fz"/analysis/plugins/babeltrace-plugin-etw.so) || letw_fail "no plugin built"

# Seed trace: a real session recording a real runtime's loads, unloads
# and both rundown flavours; the trace corpus is kept with it. A corpus
# input means something only in the frame it was found in (its bytes
# replace that stream's events, decoded with that metadata): against a
# frame recorded anew, kept inputs stopped the reader at once (12 of 70,
# each an out-of-memory). So the frame and its metadata are recorded once
# per version of the event schema (tracepoints/*.h) and kept, with the
# corpus, in their own directory.
key=$(cat "$src"/tracepoints/*.h | sha1sum | cut -c1-12)
seed=$fz/trace-$key
if [ ! -s "$seed/metadata" ] || [ ! -s "$seed/frame" ]; then
	letw_ensure_sessiond
	mkfifo "$LETW_TEST_TMP/in"
	"$bin/bin/letw-faultapp" --records 40 <"$LETW_TEST_TMP/in" >"$LETW_TEST_TMP/out" &
	app=$!; letw_track "$app"
	exec 3>"$LETW_TEST_TMP/in"
	letw_wait_for grep -q '^ready' "$LETW_TEST_TMP/out" || letw_fail "seed runtime"
	s=$(letw_session_create letw-fuzz-seed) || exit 1
	letw_session_track "$s" "$app"
	lttng enable-channel -u -s "$s" --subbuf-size=64k --num-subbuf=4 chan >/dev/null
	lttng add-context -u -s "$s" -c chan -t vpid -t vtid >/dev/null
	lttng enable-event -u -s "$s" -c chan 'letw_runtime:*,letw_rundown:*' \
		--filter "\$ctx.vpid == $app" >/dev/null
	lttng start "$s" >/dev/null || letw_fail "start"
	echo "check" >&3; echo "capture 0x150" >&3; echo "check" >&3; echo quit >&3
	wait "$app" || letw_fail "seed runtime failed"
	lttng stop "$s" >/dev/null
	m=$(find "$LETW_TEST_TMP/$s" -name metadata | head -1)
	[ -n "$m" ] || letw_fail "seed trace has no metadata"
	# The frame: the biggest stream file; the seed input: its first
	# packet's events.
	f=$(ls -S "$(dirname "$m")"/* | grep -v '/metadata$' | head -1)
	[ -s "$f" ] || letw_fail "seed trace has no stream data"
	rm -rf "$seed"
	mkdir -p "$seed/corpus"
	cp "$m" "$seed/metadata.new" && cp "$f" "$seed/frame" &&
		tail -c +97 "$f" | head -c $((65536 - 96)) >"$seed/corpus/seed-events" &&
		mv "$seed/metadata.new" "$seed/metadata" || letw_fail "cannot keep the seed trace in $seed"
fi
meta=$seed/metadata frame=$seed/frame

mkdir -p "$fz/corpus-ctlsock"
# Seed requests: one well-formed request of each type.
for t in 1 2 3; do
	$LETW_PY -c "import struct,sys; sys.stdout.buffer.write(struct.pack('=IHHQQ', 0x4C455457, 1, $t, 0x40, 9))" \
		>"$fz/corpus-ctlsock/seed-$t"
done

# The input libFuzzer stopped on, as it named it in BUILD/reliability-fuzz
# (crash-SHA1, oom-SHA1).
stopped_on() { # LOG
	sed -n 's/.*Test unit written to \.\/\(.*\)$/\1/p' "$1" | tail -1
}

# Did the run stop at an out-of-memory whose allocation babeltrace2 made
# (the first frame past the sanitizer, libFuzzer and glib is in
# libbabeltrace2 or its ctf plugin)? Anything else is ours and fails.
upstream_oom() { # LOG
	grep -q 'ERROR: libFuzzer: out-of-memory (malloc(' "$1" || return 1
	awk '/ERROR: libFuzzer: out-of-memory/ { on = 1; next }
	     on && /^ *#[0-9]+ / {
		if ($0 ~ /sanitizer|fuzzer::|__asan|__interceptor_|libglib-2\.0/) next
		found = ($0 ~ /libbabeltrace2\.so|babeltrace-plugin-ctf\.so/); exit
	     }
	     END { exit !found }' "$1"
}

# Did the run stop at libFuzzer's RSS limit (many allocations, not one
# huge one) with babeltrace2 making the bulk of them? The fast unwinder
# stops at glib (no frame pointers), and libFuzzer lists the live heap
# when its once-a-second RSS sample crosses the limit, which may be after
# the bulk was freed (seen in CI: its own buffers listed as the biggest).
# So the kept input is run again alone with the slow unwinder and the
# harness's heap hook (LETW_FUZZ_HEAP_LIMIT_MB, fuzz_trace.c): the
# allocation that takes the live heap past 256 MiB prints its stack, and
# its first frame past the sanitizer, libFuzzer, glib, libc and the hook
# decides: libbabeltrace2 or its ctf plugin is upstream (babeltrace2 2.0
# creates one field object per element of a dynamic array before reading
# any: a damaged length costs gigabytes); anywhere else, our sink
# included, or no crossing at all, fails.
upstream_rss_oom() { # LOG NAME [env...]
	local log=$1 name=$2 unit; shift 2
	grep -q 'ERROR: libFuzzer: out-of-memory (used:' "$log" || return 1
	unit=$(stopped_on "$log")
	upstream_replay "$log" "$name" "$unit" "$@"
}

# The input UNIT run again alone under the heap hook at 256 MiB, with the
# slow unwinder: whose allocation takes the live heap past it (the rule
# above). Exit 0 when it is babeltrace2's.
upstream_replay() { # LOG NAME UNIT [env...]
	local log=$1 name=$2 unit=$3; shift 3
	[ -n "$unit" ] && [ -f "$fz/$unit" ] || return 1
	(cd "$fz" && env UBSAN_OPTIONS=halt_on_error=0 "$@" LETW_FUZZ_HEAP_LIMIT_MB=256 \
		ASAN_OPTIONS=detect_leaks=0:fast_unwind_on_malloc=0:malloc_context_size=24 \
		"$fz/bin/$name" -rss_limit_mb=8192 -malloc_limit_mb=8192 -runs=1 "$fz/$unit") \
		>"$log.replay" 2>&1
	# (A single allocation over libFuzzer's malloc limit stops it first,
	# with the same full stack.)
	awk '/^LETW-FUZZ-HEAP-LIMIT:|ERROR: libFuzzer: out-of-memory \(malloc\(/ { on = 1; next }
	     on && /^ *#[0-9]+ / {
		if ($0 ~ /sanitizer|fuzzer::|__asan|__interceptor_|libglib-2\.0|libc\.so|heap_hook|heap_stop/) next
		found = ($0 ~ /libbabeltrace2\.so|babeltrace-plugin-ctf\.so/); exit
	     }
	     END { exit !found }' "$log.replay"
}

# Did the harness's heap hook stop the run (LETW_FUZZ_HEAP_LIMIT_MB, set
# while fuzzing the trace: fuzz_trace.c says why libFuzzer's RSS limit
# cannot name the input) in an allocation babeltrace2 made? Same
# first-frame rule as the replay below, on the hook's own stack; the input
# it stopped in is in $fz/heaplimit.unit, kept under its SHA-1 as
# libFuzzer keeps its units.
#
# The allocation that crosses the limit need not be the bulk's: in a
# fresh-clone CI run (2026-12-07) the hook stopped in the report sink's
# 256 KiB string chunk with 1 GiB live, a damaged array's field objects
# just made by the reader holding the rest. So a stop in any other frame
# is replayed alone at 256 MiB (upstream_replay), as the RSS limit's:
# the reader's allocation crossing there is upstream; ours, or none (the
# heap grew over several inputs), fails.
upstream_heap_limit() { # LOG NAME UNIT [env...]
	local log=$1 name=$2 unit=$3; shift 3
	grep -q '^LETW-FUZZ-HEAP-LIMIT:' "$log" || return 1
	awk '/^LETW-FUZZ-HEAP-LIMIT:/ { on = 1; next }
	     on && /^ *#[0-9]+ / {
		if ($0 ~ /sanitizer|fuzzer::|__asan|__interceptor_|libglib-2\.0|libc\.so|heap_hook|heap_stop/) next
		found = ($0 ~ /libbabeltrace2\.so|babeltrace-plugin-ctf\.so/); exit
	     }
	     END { exit !found }' "$log" && return 0
	upstream_replay "$log" "$name" "$unit" "$@"
}

# Did a crash happen inside babeltrace2's CTF reader, below our sink's
# bt_message_iterator_next call (every frame from the fault up to
# letw_sink_consume is libbabeltrace2's or a babeltrace2 plugin's, and the
# frame just above letw_sink_consume is bt_message_iterator_next)? The
# reader decodes the damaged stream before any lttng-etw code sees an
# event: that is the crash class the CLI contains by reading in a
# supervised child (analysis/cli/supervise.c), which an in-process
# harness cannot. A fault in our code, or in a bt_* call our code made
# itself, does not match and fails the test.
upstream_crash() { # LOG
	grep -q 'ERROR: AddressSanitizer: \(SEGV\|ABRT\|BUS\|FPE\|ILL\)' "$1" || return 1
	awk '/ERROR: AddressSanitizer: (SEGV|ABRT|BUS|FPE|ILL)/ { on = 1; next }
	     on && /^ *#[0-9]+ / {
		if ($0 ~ /sanitizer|fuzzer::|__asan|__interceptor_|libglib-2\.0|libc\.so|abort|raise/) next
		if ($0 ~ /letw_sink_consume/) { ok = (prev ~ /bt_message_iterator_next/); exit }
		if ($0 ~ /babeltrace-plugin-etw\.so|letw_|\/analysis\//) { ok = 0; exit }
		if ($0 !~ /libbabeltrace2\.so|babeltrace-plugin-[a-z]+\.so/) { ok = 0; exit }
		prev = $0; ok = 0
	     }
	     END { exit !ok }' "$1"
}

rc=0
# The trace harness's live-heap limit while fuzzing: a quarter of libFuzzer's
# RSS limit (ASan keeps freed memory mapped, so RSS runs ahead of the heap).
LETW_FUZZ_HEAP_MB=1024
# A stop on a known upstream class is reported and the fuzzing goes on
# for the rest of the time, without that input: libFuzzer stops at the
# first, and these classes are frequent (a 300 s run met nine), so one
# run used to end the fuzzing early, and an input kept in the corpus
# (one that stops the reader only now and then) ended every later run
# at its start.
run_fuzzer() { # NAME corpus [env...]
	local name=$1 corpus=$2; shift 2
	local t0=$SECONDS left=$secs round=0 units=0 log r=1 u unit
	letw_log "fuzzing $name for ${secs}s"
	rm -f "$fz/$name".*.log "$fz/$name".*.log.replay "$fz/$name.log" "$fz/$name.log.replay"
	while [ "$left" -gt 0 ] && [ $round -lt 50 ]; do
		round=$((round + 1))
		log=$fz/$name.$round.log
		(cd "$fz" && env UBSAN_OPTIONS=halt_on_error=0 "$@" "$fz/bin/$name" \
			-max_total_time="$left" -timeout=20 -max_len=65536 \
			-rss_limit_mb=4096 -print_final_stats=1 "$corpus") >"$log" 2>&1
		r=$?
		u=$(sed -n 's/^stat::number_of_executed_units: //p' "$log" | tail -1)
		units=$((units + ${u:-0}))
		# UBSan findings do not stop the run (halt_on_error=0): list them.
		grep -h 'runtime error' "$log" | sort | uniq -c | sed 's/^/WARN: UBSan: /' >&2
		[ $r -eq 0 ] && break
		unit=$(stopped_on "$log")
		if [ -s "$fz/heaplimit.unit" ] && grep -q '^LETW-FUZZ-HEAP-LIMIT:' "$log"; then
			unit=heap-$(sha1sum <"$fz/heaplimit.unit" | cut -c1-40)
			mv "$fz/heaplimit.unit" "$fz/$unit"
		fi
		rm -f "$fz/heaplimit.unit"
		if upstream_heap_limit "$log" "$name" "$unit" "$@"; then
			echo "WARN: $name: babeltrace2's CTF reader took the live heap past" \
				"${LETW_FUZZ_HEAP_MB}MiB on a damaged stream (upstream; stack: $log," \
				"and $log.replay when the input was run again alone;" \
				"input kept: $fz/$unit)" >&2
		elif upstream_oom "$log"; then
			# Known, outside lttng-etw: babeltrace2 2.0.4's CTF reader sizes
			# a dynamic array from the (damaged) length in the stream, before
			# any lttng-etw code sees the event; libFuzzer stops at the
			# allocation. Reported as a limitation of the tools, not hidden.
			echo "WARN: $name: babeltrace2's CTF reader asked for" \
				"$(sed -n 's/.*out-of-memory (malloc(\([0-9]*\))).*/\1/p' "$log" | head -1)" \
				"bytes for a damaged stream (upstream; input kept: $fz/$unit)" >&2
		elif upstream_rss_oom "$log" "$name" "$@"; then
			echo "WARN: $name: babeltrace2's CTF reader passed libFuzzer's RSS limit on a" \
				"damaged stream, its own allocations the bulk of the live heap (upstream;" \
				"stacks: $log.replay; input kept: $fz/$unit)" >&2
		elif upstream_crash "$log"; then
			# Known, outside lttng-etw (issue #14: the sink classes cannot
			# protect the reader): reported, input kept, not hidden.
			echo "WARN: $name: babeltrace2's CTF reader crashed on a damaged stream:" \
				"$(grep -m1 'SUMMARY: AddressSanitizer' "$log")" \
				"(upstream; input kept: $fz/$unit)" >&2
		else
			tail -60 "$log" >&2
			echo "FAIL: $name found a crash (see $log, crash-* in $fz)" >&2
			rc=1
			break
		fi
		# libFuzzer names corpus files and artifacts by the input's SHA-1.
		[ -n "$unit" ] && rm -f "$corpus/${unit#*-}"
		left=$((secs - (SECONDS - t0)))
	done
	echo "$name: $units inputs executed in $round run(s) of libFuzzer" >&2
	# Out of restarts with time left: every run stopped early, so the
	# fuzzing did not happen; a failure, not a pass.
	if [ $rc -eq 0 ] && [ $r -ne 0 ] && [ "$left" -gt 0 ]; then
		echo "FAIL: $name stopped $round times with ${left}s left: it did not fuzz" >&2
		rc=1
	fi
}
run_fuzzer letw-fuzz-ctlsock "$fz/corpus-ctlsock"
# TMPDIR: the harness's scratch trace lives in this test's own directory,
# removed at exit whatever way the fuzzer ended.
run_fuzzer letw-fuzz-trace "$seed/corpus" TMPDIR="$LETW_TEST_TMP" LETW_FUZZ_METADATA="$meta" \
	LETW_FUZZ_FRAME="$frame" \
	LETW_FUZZ_PLUGIN="$plugin" ASAN_OPTIONS=detect_leaks=0 \
	LETW_FUZZ_HEAP_LIMIT_MB="$LETW_FUZZ_HEAP_MB" LETW_FUZZ_HEAP_UNIT="$fz/heaplimit.unit"
[ $rc -eq 0 ] && echo "PASS: fuzzing, ${secs}s per harness"
exit $rc
