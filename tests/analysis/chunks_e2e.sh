#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How report, perfmap and jitdump take the directories they are given, on
# a real rotated session: a TRACE that is a link to a trace is read where
# it leads; a chunk without lttng-etw events (the process idle through it)
# is said and skipped, not an error, unless every chunk is such (it used to
# stop the next chunks, exit 1); a session stopped but not destroyed has
# its current chunk read too; the CLI's output written into a snapshot
# session's directory leaves it one.
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

# Stopped, not destroyed: the current chunk is read too, after the archived
# ones (it was not: archives/ alone). -o FILE beside archives/ writes
# FILE.<chunk> there: files, not chunks, skipped without a word next time.
cur=$(ls "$tr" | grep -vx archives)
[[ $cur =~ ^[0-9]{8}T[0-9]{6}[+-][0-9]{4}-2$ ]] || letw_fail "current chunk: \`$cur\`"
"$LETW_CLI" report "$tr" --json --no-progress -o "$tr/report.json" 2>/dev/null
for run in 1 2; do
	"$LETW_CLI" report "$tr" --json --no-progress >"$T/cur.jsonl" 2>"$T/cur.err"
	rc=$?
	[ "$rc" = 0 ] || letw_fail "stopped session ($run): exit $rc, not 0 ($(cat "$T/cur.err"))"
	! grep -q "report\.json" "$T/cur.err" || letw_fail "report's own files said: $(cat "$T/cur.err")"
	$LETW_PY - "$T/cur.jsonl" "${arch[0]}" "$cur" <<'PY' ||
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [d["chunk"] for d in docs] == sys.argv[2:], [d["chunk"] for d in docs]
for d in docs:
    assert d["summary"]["complete"] == 1, d["summary"]
PY
		letw_fail "stopped session ($run): reports $(cat "$T/cur.jsonl")"
done
[ -s "$tr/report.json.$cur" ] || letw_fail "report -o: no report of the current chunk"
"$LETW_CLI" perfmap "$tr" -o "$T/curmaps" --no-progress 2>/dev/null
[ -s "$T/curmaps/$cur/perf-$pid.map" ] || letw_fail "perfmap: no map of the current chunk"

# Destroyed: chunk 2 archived too. The idle chunk 1 holds no lttng-etw
# event: said and skipped, chunk 2 still read, exit status 0.
lttng destroy "$s" >/dev/null || letw_fail "destroy"
mapfile -t arch < <(ls "$tr/archives")
[ ${#arch[@]} = 3 ] || letw_fail "expected 3 archived chunks: ${arch[*]}"
"$LETW_CLI" report "$tr" --json --no-progress >"$T/all.jsonl" 2>"$T/all.err"
rc=$?
[ "$rc" = 0 ] || letw_fail "report with an idle chunk: exit $rc, not 0 ($(cat "$T/all.err"))"
grep -q "report: chunk ${arch[1]} holds no lttng-etw event" "$T/all.err" ||
	letw_fail "report does not name the idle chunk: $(cat "$T/all.err")"
$LETW_PY - "$T/all.jsonl" "${arch[0]}" "${arch[2]}" <<'PY' ||
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [d["chunk"] for d in docs] == sys.argv[2:], [d["chunk"] for d in docs]
for d in docs:
    assert d["summary"]["complete"] == 1, d["summary"]
PY
	letw_fail "report after the idle chunk: $(cat "$T/all.jsonl")"
for cmd in perfmap jitdump; do
	"$LETW_CLI" $cmd "$tr" -o "$T/$cmd" --no-progress 2>"$T/$cmd.err"
	rc=$?
	[ "$rc" = 0 ] || letw_fail "$cmd with an idle chunk: exit $rc, not 0 ($(cat "$T/$cmd.err"))"
	grep -q "$cmd: chunk ${arch[1]} holds no lttng-etw event" "$T/$cmd.err" ||
		letw_fail "$cmd does not name the idle chunk: $(cat "$T/$cmd.err")"
	f=perf-$pid.map
	[ $cmd = jitdump ] && f=jit-$pid.dump
	for c in "${arch[0]}" "${arch[2]}"; do
		[ -s "$T/$cmd/$c/$f" ] || letw_fail "$cmd: no $c/$f ($(cat "$T/$cmd.err"))"
	done
done

# Chunks 9 and 10 rotated within one second: their names differ only in
# the index, and by name "-10" came before "-9" (a merged jitdump then
# took chunk 10's code for older than chunk 9's). Read in index order.
same=20260101T000000+0000-20260101T000000+0000
mkdir -p "$T/order/archives"
cp -r "$tr/archives/${arch[0]}" "$T/order/archives/$same-9"
cp -r "$tr/archives/${arch[2]}" "$T/order/archives/$same-10"
"$LETW_CLI" report "$T/order" --json --no-progress >"$T/order.jsonl" 2>"$T/order.err" ||
	letw_fail "report of chunks 9 and 10: exit $? ($(cat "$T/order.err"))"
$LETW_PY - "$T/order.jsonl" "$same-9" "$same-10" <<'PY' ||
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [d["chunk"] for d in docs] == sys.argv[2:], [d["chunk"] for d in docs]
PY
	letw_fail "chunks 9 and 10 not read in their order: $(cat "$T/order.jsonl")"

# Only idle chunks: the session recorded nothing of lttng-etw's, an error.
mkdir -p "$T/idle/archives"
cp -r "$tr/archives/${arch[1]}" "$T/idle/archives/"
"$LETW_CLI" report "$T/idle" --no-progress >/dev/null 2>"$T/idle.err"
rc=$?
[ "$rc" = 1 ] && grep -q "none of the 1 chunk(s) of \`$T/idle\` holds an lttng-etw event" "$T/idle.err" ||
	letw_fail "report with only an idle chunk: exit $rc ($(cat "$T/idle.err"))"

# A chunk holding only a per-process trace of a process that exited before
# LTTng described its channel (left out: no event in it) is skipped like an
# idle chunk (it made the whole run fail, exit 1).
mkdir -p "$T/undesc/archives"
cp -r "$tr/archives/${arch[0]}" "$T/undesc/archives/"
cp -r "$tr/archives/${arch[0]}" "$T/undesc/archives/${arch[1]}"
$LETW_PY - "$(dirname "$0")" "$T/undesc/archives/${arch[1]}" <<'PY' || letw_fail "cannot make the undescribed chunk"
import random, shutil, sys
sys.path.insert(0, sys.argv[1])
import damage
chunk = sys.argv[2]
old = damage.trace_dirs(chunk)
damage.add_undescribed(chunk, random.Random(1), True)
for d in old:
    shutil.rmtree(d)
PY
"$LETW_CLI" report "$T/undesc" --no-progress >/dev/null 2>"$T/undesc.err"
rc=$?
[ "$rc" = 0 ] && grep -q "report: chunk ${arch[1]} holds no lttng-etw event" "$T/undesc.err" &&
	grep -q "left out" "$T/undesc.err" ||
	letw_fail "report with a chunk holding only a left-out trace: exit $rc ($(cat "$T/undesc.err"))"

# A snapshot session's directory (two chunks copied under LTTng's snapshot
# names: the directory's layout is what counts) with the CLI's own output
# written into it: still read snapshot by snapshot (the output made it a
# plain trace, the snapshots merged). Another trace there is said.
sn=$T/sn
mkdir "$sn"
snaps=(snapshot-1-20260101-000000-0 snapshot-1-20260101-000001-1)
cp -r "$tr/archives/${arch[0]}" "$sn/${snaps[0]}"
cp -r "$tr/archives/${arch[2]}" "$sn/${snaps[1]}"
"$LETW_CLI" report "$sn" --json --no-progress -o "$sn/report.json" 2>"$T/sn.err" ||
	letw_fail "report -o into the snapshots: exit $? ($(cat "$T/sn.err"))"
for cmd in perfmap jitdump; do
	"$LETW_CLI" $cmd "$sn" -o "$sn/$cmd" --no-progress 2>"$T/sn.err" ||
		letw_fail "$cmd -o into the snapshots: exit $? ($(cat "$T/sn.err"))"
	f=perf-$pid.map
	[ $cmd = jitdump ] && f=jit-$pid.dump
	for c in "${snaps[@]}"; do
		[ -s "$sn/$cmd/$c/$f" ] || letw_fail "$cmd: no $c/$f (snapshots merged?)"
	done
done
"$LETW_CLI" report "$sn" --json --no-progress >"$T/sn.jsonl" 2>"$T/sn.err" ||
	letw_fail "report after output into the snapshots: exit $? ($(cat "$T/sn.err"))"
$LETW_PY - "$T/sn.jsonl" "${snaps[@]}" <<'PY' ||
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [d.get("chunk") for d in docs] == sys.argv[2:], [d.get("chunk") for d in docs]
PY
	letw_fail "snapshots merged after output into them: $(cut -c1-300 "$T/sn.jsonl")"
# -o naming a FIFO or a device, read snapshot by snapshot: every report goes
# into it, in place, as on stdout. It used to create FIFO.<chunk> files
# beside it (and /dev/stdout.<chunk> in /dev), the reader getting nothing.
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.out" &
catp=$!
letw_track "$catp"
"$LETW_CLI" report "$sn" --json --no-progress -o "$T/fifo" 2>"$T/fifo.err" ||
	letw_fail "report -o FIFO per snapshot: exit $? ($(cat "$T/fifo.err"))"
wait "$catp" || letw_fail "the FIFO's reader failed"
letw_untrack "$catp"
[ -p "$T/fifo" ] || letw_fail "report -o FIFO replaced the FIFO"
[ -z "$(find "$T" -maxdepth 1 -name 'fifo.snapshot-*')" ] ||
	letw_fail "report -o FIFO made files beside it: $(ls "$T"/fifo.snapshot-*)"
$LETW_PY - "$T/fifo.out" "${snaps[@]}" <<'PY' ||
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [d.get("chunk") for d in docs] == sys.argv[2:], [d.get("chunk") for d in docs]
PY
	letw_fail "report -o FIFO per snapshot: $(cut -c1-300 "$T/fifo.out")"
"$LETW_CLI" report "$sn" --no-progress -o /dev/stdout 2>"$T/devout.err" >"$T/devout.txt" ||
	letw_fail "report -o /dev/stdout per snapshot: exit $? ($(cat "$T/devout.err"))"
[ "$(grep -c '^chunk snapshot-' "$T/devout.txt")" = 2 ] && [ "$(grep -c '^summary:' "$T/devout.txt")" = 2 ] ||
	letw_fail "report -o /dev/stdout per snapshot: $(head -c 400 "$T/devout.txt")"
[ -z "$(find /dev -maxdepth 1 -name 'stdout.snapshot-*')" ] ||
	letw_fail "report -o /dev/stdout made files in /dev"
cp -r "$tr/archives/${arch[0]}" "$sn/other"
"$LETW_CLI" report "$sn" --no-progress >/dev/null 2>"$T/sn.err"
grep -q "holds 2 snapshots and \`other\`" "$T/sn.err" ||
	letw_fail "snapshots merged with another trace, unsaid: $(cat "$T/sn.err")"

touch "$T/exit"
wait "$pid" || letw_fail "letw-scenario failed"
letw_untrack "$pid"
echo "chunks_e2e: ok"
