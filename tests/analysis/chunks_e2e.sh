#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How report, perfmap and jitdump take the directories they are given, on
# a real rotated session: a TRACE that is a link to a trace is read where
# it leads.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
"$LETW_SCENARIO" load 0x10000 0x100 f_a touch "$T/ready" wait "$T/exit" &
pid=$!
letw_track "$pid"
anl_wait_file "$T/ready"

# Chunk 0: the start's DCStart pass. Chunk 1: nothing (the process idle,
# as a timer rotation records it). Chunk 2: a capture-state's pass; the
# session stopped, not destroyed: chunk 2 is the current one, still beside
# archives/ (LTTng names it BEGIN-INDEX there).
s=$(anl_session chunks "$pid" "")
"$LETW_CLI" start "$s" --pid "$pid" >/dev/null || letw_fail "lttng-etw start"
lttng rotate "$s" >/dev/null || letw_fail "rotate 1"
lttng rotate "$s" >/dev/null || letw_fail "rotate 2"
"$LETW_CLI" capture-state --pid "$pid" --wait >/dev/null || letw_fail "capture-state"
lttng stop "$s" >/dev/null || letw_fail "stop"
tr=$(anl_trace "$s")
mapfile -t arch < <(ls "$tr/archives")
[ ${#arch[@]} = 2 ] || letw_fail "expected 2 archived chunks: ${arch[*]}"

# A link to a trace directory is that trace (nftw's FTW_PHYS did not
# follow the root itself: "no CTF trace under").
ln -s "$tr/archives/${arch[0]}" "$T/tlink"
"$LETW_CLI" report "$T/tlink" --no-progress >"$T/link.txt" 2>"$T/link.err" ||
	letw_fail "report of a link to a trace: exit $? ($(cat "$T/link.err"))"
grep -q "dcstart pass 1 (instance 0): complete" "$T/link.txt" ||
	letw_fail "report of a link to a trace: $(cat "$T/link.txt")"

touch "$T/exit"
wait "$pid" || letw_fail "letw-scenario failed"
letw_untrack "$pid"
echo "chunks_e2e: ok"
