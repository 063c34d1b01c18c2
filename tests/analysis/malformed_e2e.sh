#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Damaged traces. A real trace (letw-minijit churning code under a real
# session, small sub-buffers so each stream file holds many packets) is
# damaged by damage.py in every way it knows — stream packets, files,
# LTTng's index, metadata — and `lttng-etw report`, `report --json`,
# `perfmap` and `jitdump` must keep their promises on each copy (damage.py check()):
# exit 1 with an `lttng-etw:` message for what the reader cannot read
# (crash and hang classes included: once refused by the pre-checks, once
# with LETW_NO_PRECHECK=1 so the supervisor meets the crash or hang),
# exit 3 naming the stream for every lost-stream class, strict JSON and
# clean perf map lines always, never a signal or a hang. Then: the sink
# classes under babeltrace2 fail on an incomplete trace; a trace without
# lttng-etw events and a directory without a trace are errors; two damaged
# traces under valgrind.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
HERE=$(cd "$(dirname "$0")" && pwd)
command -v setpriv >/dev/null || letw_fail "setpriv (util-linux) is needed for the unreadable-path cases"

# record_trace PREFIX CHANNEL: letw-minijit churning code, both rundowns,
# under a session of that channel; sets REC_TRACE to its directory (not
# printed: letw_fail in a $(...) would end only the subshell).
record_trace() {
	local prefix=$1 chan=$2 jpid ses
	LTTNG_UST_ALLOW_BLOCKING=1 "$LETW_MINIJIT" --functions 1500 --seconds 30 --churn \
		--list "$T/$prefix.list" >"$T/$prefix.out" 2>&1 &
	jpid=$!
	letw_track "$jpid"
	anl_wait_file "$T/$prefix.list.ready"
	ses=$(anl_session "$prefix" "$jpid" "$chan") || exit 1
	"$LETW_CLI" start "$ses" --pid "$jpid" >&2 || letw_fail "$prefix: lttng-etw start"
	sleep 0.5
	"$LETW_CLI" stop "$ses" --pid "$jpid" >&2 || letw_fail "$prefix: lttng-etw stop"
	kill -TERM "$jpid"
	wait "$jpid" || { cat "$T/$prefix.out" >&2; letw_fail "$prefix: letw-minijit failed"; }
	REC_TRACE=$(anl_trace "$ses")
}

# A real trace to damage: loads, unloads and both rundowns, ~20 packets
# per stream file. Blocking channel: nothing discarded in the original.
record_trace dmg "--subbuf-size=16K --num-subbuf=8 --blocking-timeout=inf small"
good=$REC_TRACE
"$LETW_CLI" report "$good" --no-progress >"$T/good.txt" ||
	{ cat "$T/good.txt" >&2; letw_fail "the undamaged trace does not pass"; }
grep -q "trace complete" "$T/good.txt" || letw_fail "the undamaged trace is not called complete"

# More stream files than the soft open-file limit (a per-process, per-CPU
# session on a large machine passes 1024): babeltrace2 keeps each one open,
# and the reader failed half-way on "Too many open files", naming an
# innocent file. 400 healthy streams of one empty packet each (distinct
# stream instance ids) under a soft limit of 256 must read; under a hard
# limit of 256, the trace is refused before reading, saying why.
cp -a "$good" "$T/many"
python3 - "$HERE" "$T/many" 400 <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import damage
d = damage.trace_dirs(sys.argv[2])[0]
src = damage.stream_files(d)[0]
off, cs, ps, seq = damage.packets(src)[0]
with open(src, 'rb') as f:
    pk = bytearray(f.read()[off:off + ps])
struct.pack_into('<Q', pk, damage.OFF_CONTENT, damage.PKT_HDR_END_CONTEXT * 8)
struct.pack_into('<Q', pk, damage.OFF_SEQ, 0)
struct.pack_into('<Q', pk, damage.OFF_DISC, 0)
for k in range(int(sys.argv[3])):
    struct.pack_into('<Q', pk, damage.OFF_INSTANCE_ID, 1000 + k)
    with open('%s/many_%d' % (d, k), 'wb') as f:
        f.write(pk)
PY
[ $? = 0 ] || letw_fail "cannot add streams to $T/many"
(ulimit -Sn 256 && exec "$LETW_CLI" report "$T/many" --no-progress) >"$T/many.txt" 2>"$T/many.err" ||
	{ cat "$T/many.err" >&2; letw_fail "400 added stream files, past a soft limit of 256: not read"; }
grep -q "trace complete" "$T/many.txt" ||
	{ cat "$T/many.txt" >&2; letw_fail "400 healthy empty streams: the trace is not called complete"; }
(ulimit -n 256 && exec "$LETW_CLI" report "$T/many" --no-progress) >/dev/null 2>"$T/many.err"
rc=$?
[ "$rc" = 1 ] && grep -q "has 402 streams.*256 files a process may have open (ulimit -n" "$T/many.err" &&
	! grep -q "many_[0-9]" "$T/many.err" ||
	{ cat "$T/many.err" >&2; letw_fail "more stream files than the hard limit: exit $rc, not refused before reading"; }

# Tracefile rotation (enable-channel --tracefile-size): a stream is several
# files (small_C_0, small_C_1, ...), each with its own index, and the reader
# counts a stream's packets over all of them: damage in a later file shows
# only against that file's own index. An index listing a packet more than a
# later file holds, and a stream's last file cut at a packet boundary (its
# index unchanged), once said "trace complete"; each must make every tool
# say incomplete (exit 3), naming the file. Intact, the trace is complete.
record_trace dmgrot "--subbuf-size=16K --num-subbuf=8 --blocking-timeout=inf --tracefile-size=65536 small"
rot=$REC_TRACE
"$LETW_CLI" report "$rot" --no-progress >"$T/rot.txt" ||
	{ cat "$T/rot.txt" >&2; letw_fail "the undamaged rotated trace does not pass"; }
grep -q "trace complete" "$T/rot.txt" || letw_fail "the undamaged rotated trace is not called complete"
# babeltrace2 reads a stream's files one after the other, holding one:
# the limit check counts streams, not files (counting files and 64 more,
# it refused this trace under a hard limit of 24, which reads: a trace of
# 35 such files read at a limit of 10).
nrot=$(find "$rot" -type f ! -path '*/index/*' ! -name metadata -size +0 | wc -l)
[ "$nrot" -gt 2 ] || letw_fail "the rotated trace has $nrot stream files only"
(ulimit -n 24 && exec "$LETW_CLI" report "$rot" --no-progress) >"$T/rotlim.txt" 2>"$T/rotlim.err" &&
	grep -q "trace complete" "$T/rotlim.txt" ||
	{ cat "$T/rotlim.err" >&2; letw_fail "$nrot stream files, under a hard limit of 24: not read"; }
# A stream's second file, and the last file of a stream holding two packets
# or more (cut at its last packet, a file of one packet would be emptied,
# which is another class); failing that, the second file itself. Then a
# later file (not a stream's first) holding a rundown Complete, and one
# holding a method record, for the absurd-record classes ('-': none).
read -r later last cfile mfile < <(python3 - "$HERE" "$rot" <<'PY'
import os, re, sys
sys.path.insert(0, sys.argv[1])
import damage
import damage_records  # bound to damage by its import
files = {}
for s in (x for d in damage.trace_dirs(sys.argv[2]) for x in damage.stream_files(d)):
    m = re.match(r'^(.*)_(\d+)$', os.path.basename(s))
    if m:
        files.setdefault(m.group(1), []).append((int(m.group(2)), s))
rotated = sorted((sorted(v) for v in files.values() if len(v) > 1), key=len, reverse=True)
if not rotated:
    sys.exit('no stream was rotated')
lasts = [v[-1][1] for v in rotated if len(damage.packets(v[-1][1])) > 1]


def later_with(pred):
    return next((os.path.basename(s) for v in rotated for _, s in v[1:] if pred(s)), '-')


completes = {site[0] for site in damage_records.complete_sites(sys.argv[2])}
print(os.path.basename(rotated[0][1][1]), os.path.basename((lasts or [rotated[0][1][1]])[0]),
      later_with(lambda s: s in completes),
      later_with(lambda s: damage_records.find_all(open(s, 'rb').read(), b'minijit.Module')))
PY
)
rotbad=
[ -n "$last" ] || letw_fail "no rotated stream in $rot (tracefile-size ignored?)"
echo "rotated trace: damaging $later (a second file), $last (a last file), $cfile and $mfile (later files)" >&2
# A packet sequence gap in the second file: babeltrace2 reports it on the
# stream, which it names by the first file; the report must name the file.
# So must it for an absurd record (a Complete's counter past 2^48, a method
# past user space) in a later file, and for events discarded in the last
# file (its discarded-events counter rising there, not going back after):
# the stream's first file was named.
[ "$cfile" != - ] && [ "$mfile" != - ] ||
	letw_fail "no later file of a rotated stream holds a Complete ($cfile) and a method record ($mfile)"
for c in "index-extra-packet $later" "truncated-at-packet $last" "seq-gap $later" \
	"complete-emitted-absurd $cfile" "complete-walk-absurd $cfile" "method-address-absurd $mfile" \
	"events-discarded $last"; do
	read -r cls file <<<"$c"
	python3 "$HERE/damage.py" run --trace "$rot" --cli "$LETW_CLI" --work "$T/rotdmg-$cls" \
		--classes "$cls" --stream "$file" --no-babeltrace --stall-timeout 1 --tool-timeout 60 \
		--check >"$T/rotdmg.out" 2>"$T/rotdmg.err"
	rc=$?
	cat "$T/rotdmg.out" >&2
	[ "$rc" = 0 ] || { tail -20 "$T/rotdmg.err" >&2; rotbad+="; $cls in $file: a tool broke its promise"; }
	# Exit 3, not the error check() also takes: the rest of the trace is there.
	grep -Eq "^$cls +(incomplete:1 +\| ){3}incomplete:1 " "$T/rotdmg.out" ||
		rotbad+="; $cls in $file: not incomplete (exit 3) for every tool"
done
# Two files of a rotated stream renamed into each other, their indexes not:
# babeltrace2 orders a stream's files by their indexes' timestamps and its
# muxer then saw time go back, naming no file; the pre-checks must name it.
python3 "$HERE/damage.py" run --trace "$rot" --cli "$LETW_CLI" --work "$T/rotdmg-swap" \
	--classes rotated-files-swapped --no-babeltrace --stall-timeout 1 --tool-timeout 60 \
	--check >"$T/rotdmg.out" 2>"$T/rotdmg.err" ||
	{ cat "$T/rotdmg.out" >&2; tail -20 "$T/rotdmg.err" >&2; rotbad+="; rotated-files-swapped: a tool broke its promise"; }
[ -z "${rotbad:-}" ] || letw_fail "rotated trace${rotbad}"


# The reader's memory cap (analysis/cli/memlimit.c): under a cap too small
# to start the reader, the undamaged trace is an out-of-memory error (exit
# 1, the limit named), not a crash, and a bad LETW_MEMORY_LIMIT is refused
# aloud. A damaged length that makes babeltrace2 allocate without end
# (meta-wide-field, for some traces) ends the same way under damage.py's cap.
"$LETW_CLI" report "$good" --no-progress --memory-limit 1 >/dev/null 2>"$T/oom.err"
[ $? = 1 ] || letw_fail "report under a 1 MiB memory limit did not exit 1"
grep -q "ran out of memory .*limit 1 MiB" "$T/oom.err" || { cat "$T/oom.err" >&2; letw_fail "no out-of-memory message"; }
# Between that and enough, whichever allocation crosses the cap first (the
# reader's, a sink's, jitdump's write buffer), the outcome is the same
# message, never another error.
for lim in 2 3 4 5 6 7 8; do
	for cmd in report perfmap jitdump; do
		rc=0
		"$LETW_CLI" $cmd "$good" --no-progress --memory-limit $lim -o "$T/lim.$cmd" \
			>/dev/null 2>"$T/lim.err" || rc=$?
		[ $rc = 0 ] && continue
		[ $rc = 1 ] && grep -q "ran out of memory .*limit $lim MiB" "$T/lim.err" ||
			{ cat "$T/lim.err" >&2; letw_fail "$cmd --memory-limit $lim: exit $rc without the out-of-memory message"; }
	done
done
LETW_MEMORY_LIMIT=lots "$LETW_CLI" report "$good" --no-progress >/dev/null 2>"$T/oomenv.err" ||
	{ cat "$T/oomenv.err" >&2; letw_fail "a bad LETW_MEMORY_LIMIT broke report"; }
grep -q "ignoring LETW_MEMORY_LIMIT" "$T/oomenv.err" || letw_fail "a bad LETW_MEMORY_LIMIT went unsaid"

# Every damage class once, each tool checked against its promise. Pre-checks
# off, the reader's hangs must end within the stall limit (CPU seconds for a
# reader spinning, wall seconds for one asleep on a trace file).
python3 "$HERE/damage.py" run --trace "$good" --cli "$LETW_CLI" --work "$T/damage" \
	--no-babeltrace --stall-timeout 1 --tool-timeout 60 --check >"$T/damage.out" 2>"$T/damage.err"
rc=$?
cat "$T/damage.out" >&2
[ "$rc" = 0 ] || { tail -40 "$T/damage.err" >&2; letw_fail "a tool broke its promise on a damaged trace"; }
# The harness must have met every layer: pre-check refusals, crashes and
# hangs caught by the supervisor, incomplete traces.
for want in 'content-size-huge .*error:crash' 'meta-clock-no-freq .*error:crash' \
	'meta-cut-mid-packet .*error:hang' 'index-fifo .*error:hang' 'stream-deleted .*incomplete' \
	'stream-devzero .*incomplete' 'invalid-utf8 '; do
	grep -Eq "^$want" "$T/damage.out" || letw_fail "damage table lacks /$want/"
done

# The sink classes straight from babeltrace2: no pre-check or supervisor
# there, but an incomplete trace still fails (exit 1) after writing. (An
# index listing a packet more than its stream holds: whatever stream the
# code ran on, everything else is still there to map.)
python3 "$HERE/damage.py" apply index-extra-packet "$good" "$T/deleted" >&2
babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" "$T/deleted" -c sink.etw.report >"$T/bt.txt" 2>&1
[ $? = 1 ] || letw_fail "babeltrace2 -c sink.etw.report passed an incomplete trace"
grep -q "trace: incomplete" "$T/bt.txt" || letw_fail "sink.etw.report does not say the trace is incomplete"
mkdir -p "$T/bt.maps"
babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" "$T/deleted" -c sink.etw.perfmap \
	-p "output-dir=\"$T/bt.maps\"" >"$T/btmap.txt" 2>&1
[ $? = 1 ] || letw_fail "babeltrace2 -c sink.etw.perfmap passed an incomplete trace"
ls "$T/bt.maps"/perf-*.map >/dev/null || letw_fail "sink.etw.perfmap wrote no map before failing"
"$LETW_CLI" perfmap "$T/deleted" -o "$T/allow" --allow-incomplete --no-progress 2>"$T/allow.err" ||
	{ cat "$T/allow.err" >&2; letw_fail "perfmap --allow-incomplete exit $?"; }
grep -q "incomplete" "$T/allow.err" || letw_fail "perfmap --allow-incomplete does not warn"

# jitdump holds perfmap's promise on a lost stream: the dumps are written,
# the stream is named, exit 3; 0 with --allow-incomplete, still warning.
# The smallest stream goes: which CPU's stream holds the code varies from
# run to run, and emptying the only one with code leaves nothing to dump
# (an error, exit 1, not the promise checked here).
small=$(find "$good" -type f ! -name metadata ! -path '*/index/*' -size +0 -printf '%s %f\n' |
	sort -n | head -1 | cut -d' ' -f2)
[ -n "$small" ] || letw_fail "no stream file in $good"
named=$(python3 "$HERE/damage.py" apply stream-emptied "$good" "$T/emptied" --stream "$small" |
	cut -d: -f1)
"$LETW_CLI" jitdump "$T/emptied" -o "$T/jd" --no-progress 2>"$T/jd.err"
rc=$?
[ "$rc" = 3 ] || { cat "$T/jd.err" >&2; letw_fail "jitdump on an emptied stream: exit $rc, expected 3"; }
grep -q "$(basename "$named")" "$T/jd.err" || { cat "$T/jd.err" >&2; letw_fail "jitdump does not name the emptied stream"; }
ls "$T/jd"/jit-*.dump >/dev/null || letw_fail "jitdump wrote no dump from an incomplete trace"
"$LETW_CLI" jitdump "$T/emptied" -o "$T/jd2" --allow-incomplete --no-progress 2>"$T/jd2.err" ||
	{ cat "$T/jd2.err" >&2; letw_fail "jitdump --allow-incomplete exit $?"; }
grep -q "incomplete" "$T/jd2.err" || letw_fail "jitdump --allow-incomplete does not warn"

# A valid trace with no lttng-etw event (only LTTng-UST statedump).
f=$T/scen
"$LETW_SCENARIO" touch "$f.r2" wait "$f.go2" &
pid=$!
letw_track "$pid"
anl_wait_file "$f.r2"
s2=$(anl_session noetw "$pid" "" 'lttng_ust_statedump:*')
lttng start "$s2" >/dev/null || letw_fail "lttng start"
letw_wait_for bash -c "lttng stop '$s2' >/dev/null && babeltrace2 '$(anl_trace "$s2")' 2>/dev/null | grep -q statedump || { lttng start '$s2' >/dev/null; false; }" ||
	letw_fail "no statedump events recorded"
touch "$f.go2"
wait "$pid"
mkdir -p "$T/empty"
for c in "noetw|$(anl_trace "$s2")|no lttng-etw" "empty|$T/empty|no CTF trace"; do
	IFS='|' read -r name trace what <<<"$c"
	for cmd in perfmap report; do
		"$LETW_CLI" $cmd "$trace" -o "$T/$name.$cmd" --no-progress >/dev/null 2>"$T/$name.err"
		rc=$?
		[ "$rc" = 1 ] || { cat "$T/$name.err" >&2; letw_fail "$name: $cmd exit $rc, expected 1"; }
		grep -q "$what" "$T/$name.err" || { cat "$T/$name.err" >&2; letw_fail "$name: $cmd does not say /$what/"; }
	done
done

# No memory errors on damaged inputs either (valgrind follows the forked
# reader).
if command -v valgrind >/dev/null; then
	for c in truncated-at-packet garbled-events; do
		python3 "$HERE/damage.py" apply $c "$good" "$T/vg-$c" >&2
		valgrind -q --error-exitcode=99 "$LETW_CLI" report "$T/vg-$c" --no-progress \
			>/dev/null 2>"$T/vg.err"
		rc=$?
		case $rc in 1|3) ;; *) cat "$T/vg.err" >&2; letw_fail "valgrind on $c: exit $rc";; esac
	done
fi
echo "malformed_e2e: ok"
