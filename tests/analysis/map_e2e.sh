#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Map reconstruction on real traces: letw-scenario publishes known records
# through the real library while a real LTTng session records them; the
# perf map the CLI (and the loadable plugin under babeltrace2) derives
# from the trace must hold exactly the code the scenario published.
. "$(dirname "$0")/common.sh"

# run_scenario NAME "PRE STEPS" "POST STEPS" [EVENTS...]
# PRE runs before the session starts (only a rundown can see it), POST
# while it records; then a DCEnd rundown and the stop.
run_scenario() {
	local name=$1 pre=$2 post=$3 f pid s
	shift 3
	f=$LETW_TEST_TMP/$name
	# shellcheck disable=SC2086 # steps are words on purpose
	"$LETW_SCENARIO" $pre touch "$f.ready" wait "$f.go" $post \
		touch "$f.done" wait "$f.exit" &
	pid=$!
	letw_track "$pid"
	anl_wait_file "$f.ready"
	s=$(anl_session "map-$name" "$pid" "" "$@")
	"$LETW_CLI" start "$s" --pid "$pid" >&2 || letw_fail "$name: lttng-etw start"
	touch "$f.go"
	anl_wait_file "$f.done"
	"$LETW_CLI" stop "$s" --pid "$pid" >&2 || letw_fail "$name: lttng-etw stop"
	touch "$f.exit"
	wait "$pid" || letw_fail "$name: letw-scenario failed"
	"$LETW_CLI" perfmap "$(anl_trace "$s")" -o "$f.maps" --no-progress \
		2>"$f.stderr" || { cat "$f.stderr" >&2; letw_fail "$name: perfmap"; }
	SCEN_PID=$pid SCEN_SESSION=$s SCEN_MAP=$f.maps/perf-$pid.map SCEN_ERR=$f.stderr
	[ -s "$SCEN_MAP" ] || [ -n "${ANL_NO_CONTEXT:-}" ] || letw_fail "$name: no map for pid $pid"
}

# expect_map FILE LINE...: the map holds exactly these lines (any order).
expect_map() {
	local file=$1
	shift
	diff <(printf '%s\n' "$@" | sort) <(sort "$file") >&2 ||
		letw_fail "map $file differs from what was published (< expected, > got)"
}

NS_SIG_TIER='mj::f_a(i64)->i64 [optimized]'

# 1. loads and unloads while recording: unloaded code stays named. Names
# under 3 bytes get "()": perf skips a map line with a shorter NAME.
run_scenario load_unload "" \
	"load 0x10000 0x100 f_a mj (i64)->i64 2 load 0x20000 0x80 f_b unload 0x10000 stub 0x30000 0x10 2 0x20000 jmp load 0x40000 0x20 f load 0x50000 0x20 go load 0x60000 0x20 abc"
expect_map "$SCEN_MAP" "10000 100 $NS_SIG_TIER" "20000 80 f_b" \
	"30000 10 stub<jump>@0x20000 jmp" "40000 20 f()" "50000 20 go()" "60000 20 abc"

# 2. an address reused by different code: latest by default, all on
# request, and said on stderr either way. Through the loadable plugin too.
run_scenario reuse "" \
	"load 0x10000 0x100 old unload 0x10000 load 0x10000 0x40 new1 load 0x10080 0x40 new2"
# The old code keeps the two gaps the new code leaves (latest mode names
# every address after the most recent code there).
expect_map "$SCEN_MAP" "10000 40 new1" "10040 40 old" "10080 40 new2" "100c0 40 old"
grep -q "held different code over time" "$SCEN_ERR" ||
	letw_fail "reuse: no reuse summary on stderr"
grep -q "0 older region(s) omitted, 1 trimmed to the part no newer code covers" "$SCEN_ERR" ||
	{ cat "$SCEN_ERR" >&2; letw_fail "reuse: the summary does not count the old region as trimmed"; }
out_all=$LETW_TEST_TMP/reuse.all
babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" "$(anl_trace "$SCEN_SESSION")" \
	-c sink.etw.perfmap -p "output-dir=\"$out_all\",mode=\"all\"" 2>"$out_all.err" ||
	{ cat "$out_all.err" >&2; letw_fail "reuse: babeltrace2 -c sink.etw.perfmap"; }
grep -q "mode=all" "$out_all.err" || letw_fail "reuse: plugin printed no reuse summary"
expect_map "$out_all/perf-$SCEN_PID.map" "10000 100 old" "10000 40 new1" "10080 40 new2"

# 3. code published before the session: only the DCStart rundown names
# it (runtime events not even enabled).
run_scenario rundown_only \
	"load 0x40000 0x30 early1 load 0x40100 0x30 early2 stub 0x50000 0x10 1 0x40000 pre" "" \
	'letw_rundown:*dcstart*'
expect_map "$SCEN_MAP" "40000 30 early1" "40100 30 early2" \
	"50000 10 stub<precode>@0x40000 pre"

# 4. code unloaded between DCStart and DCEnd: named (it ran), absent from
# the DCEnd, and the report finds both passes complete.
run_scenario unload_before_dcend "load 0x60000 0x20 gone load 0x70000 0x20 stays" \
	"unload 0x60000"
expect_map "$SCEN_MAP" "60000 20 gone" "70000 20 stays"
rep=$LETW_TEST_TMP/unload_before_dcend.json
"$LETW_CLI" report "$(anl_trace "$SCEN_SESSION")" --json -o "$rep" --no-progress ||
	letw_fail "unload_before_dcend: report exit $?"
# (Sessions of others on this machine may add passes: check each.)
[ "$(anl_json "$rep" "set(p['seen_methods'] for x in r['processes'] for p in x['passes'] if p['flavour']=='dcend')")" = "{1}" ] ||
	letw_fail "unload_before_dcend: DCEnd should list exactly the one live method"
[ "$(anl_json "$rep" "r['summary']['complete'] == r['summary']['passes'] >= 2")" = True ] ||
	letw_fail "unload_before_dcend: expected complete passes only"
# 5. No vpid context: the map is still made, for process 0, with a warning.
ANL_NO_CONTEXT=1 run_scenario novpid "load 0x80000 0x10 early" "load 0x90000 0x10 late"
expect_map "$LETW_TEST_TMP/novpid.maps/perf-0.map" "80000 10 early" "90000 10 late"
grep -q "no vpid context" "$SCEN_ERR" || letw_fail "novpid: no warning about the missing vpid context"

# 6. Empty namespaces and signatures among non-empty ones (a JVM's method
# handle intrinsics with no signature): each is named as published, never
# with another record's text. babeltrace2 2.0.4 decodes an empty CTF string
# into a recycled field whose old text is still there (analysis/plugin/event.c).
steps="" want=()
for i in $(seq 0 99); do
	a=$(printf '0x%x' $((0xa0000 + i * 0x100)))
	if [ $((i % 4)) -eq 3 ]; then
		steps+=" load $a 0x10 bare$i"
		want+=("$(printf '%x' $((0xa0000 + i * 0x100))) 10 bare$i")
	else
		steps+=" load $a 0x10 m$i ns$i (s$i)"
		want+=("$(printf '%x' $((0xa0000 + i * 0x100))) 10 ns$i::m$i(s$i)")
	fi
done
run_scenario empty_strings "$steps" "" 'letw_rundown:*dcstart*'
expect_map "$SCEN_MAP" "${want[@]}"
# 7. Regions over 1 GiB, as the library takes them (any 32-bit size): a
# 1.5 GiB stub heap named by the DCStart rundown, a 4 GiB - 4 KiB method by
# its load. The analysis took any region over 1 GiB for damage, left it
# out and called the trace incomplete (perfmap exit 3).
run_scenario big_regions "stub 0x100000000000 0x60000000 2 0 BigStubHeap" \
	"load 0x200000000000 0xfffff000 huge"
expect_map "$SCEN_MAP" "100000000000 60000000 stub<jump>@0x0 BigStubHeap" \
	"200000000000 fffff000 huge"
echo "map_e2e: ok"
