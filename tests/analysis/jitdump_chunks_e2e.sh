#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A rotated session directory (TRACE/archives/<chunk>/, here two copies of
# one real trace, the second with an index listing a packet its stream
# lacks: whatever stream the code ran on, the rest is there to write) is read chunk by chunk
# by jitdump, perfmap and report alike: DIR/<chunk>/jit-PID.dump and
# DIR/<chunk>/perf-PID.map each (the output directory created with its
# parents), the chunks' dumps then merged into DIR/jit-PID.dump (the same
# code twice, as overlapping snapshots hold it: written once), each
# chunk's verdict named
# `chunk NAME:`, exit 3 for the incomplete chunk (0 with
# --allow-incomplete), and a stray file in archives/ is an error (exit 1)
# rather than a chunk silently skipped.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
HERE=$(cd "$(dirname "$0")" && pwd)

LTTNG_UST_ALLOW_BLOCKING=1 "$LETW_MINIJIT" --functions 200 --seconds 30 --list "$T/jit.list" >"$T/jit.out" 2>&1 &
pid=$!
letw_track "$pid"
anl_wait_file "$T/jit.list.ready"
s=$(anl_session chunks "$pid")
"$LETW_CLI" start "$s" --pid "$pid" >&2 || letw_fail "lttng-etw start"
"$LETW_CLI" stop "$s" --pid "$pid" >&2 || letw_fail "lttng-etw stop"
kill -TERM "$pid"
wait "$pid" || { cat "$T/jit.out" >&2; letw_fail "letw-minijit failed"; }
good=$(anl_trace "$s")

rot=$T/rot
mkdir -p "$rot/archives"
cp -a "$good" "$rot/archives/c1"
named=$(python3 "$HERE/damage.py" apply index-extra-packet "$good" "$rot/archives/c2" | cut -d: -f1)
named=$(basename "$named")

# Output directories whose parents do not exist yet: the sinks create them.
"$LETW_CLI" jitdump "$rot" -o "$T/deep/jd" --no-progress 2>"$T/jd.err"
rc=$?
cat "$T/jd.err" >&2
[ "$rc" = 3 ] || letw_fail "jitdump on a rotated session with an incomplete chunk: exit $rc, expected 3"
for c in c1 c2; do
	[ -s "$T/deep/jd/$c/jit-$pid.dump" ] || letw_fail "jitdump wrote no $c/jit-$pid.dump"
done
grep -q "chunk c2: the trace is incomplete" "$T/jd.err" || letw_fail "jitdump does not name the incomplete chunk"
grep -q "chunk c1:" "$T/jd.err" && letw_fail "jitdump calls the complete chunk c1 incomplete"
grep -q "$named" "$T/jd.err" || letw_fail "jitdump does not name the damaged stream $named"
# perf inject reads DIR/jit-PID.dump: the chunks' dumps merged there, the
# second chunk's records (the first's again) once.
$LETW_PY "$HERE/jitdump_merge_check.py" "$T/deep/jd/jit-$pid.dump" "$T/deep/jd/c1/jit-$pid.dump" \
	"$T/deep/jd/c2/jit-$pid.dump" >&2 || letw_fail "the merged dump is not the chunks' code once"
n_loads() { $LETW_PY "$HERE/jitdump_merge_check.py" "$1" | sed -n 's/^merged: \([0-9]*\) LOADs.*/\1/p'; }
merged=$(n_loads "$T/deep/jd/jit-$pid.dump")
one=$(n_loads "$T/deep/jd/c1/jit-$pid.dump")
[ -n "$merged" ] && [ "$merged" -gt 0 ] && [ "$merged" = "$one" ] ||
	letw_fail "the merged dump of two copies of one trace: '$merged' LOADs, one chunk's: '$one'"
grep -q "merged the chunks' dumps into $T/deep/jd/jit-PID.dump (1 process(es), .*: what perf inject --jit reads" "$T/jd.err" ||
	letw_fail "jitdump of chunks does not say it merged them"
"$LETW_CLI" jitdump "$rot" -o "$T/jd2" --allow-incomplete --no-progress 2>"$T/jd2.err" ||
	{ cat "$T/jd2.err" >&2; letw_fail "jitdump --allow-incomplete exit $?"; }

"$LETW_CLI" perfmap "$rot" -o "$T/deep/maps" --no-progress 2>"$T/pm.err"
rc=$?
[ "$rc" = 3 ] || { cat "$T/pm.err" >&2; letw_fail "perfmap: exit $rc, expected 3"; }
for c in c1 c2; do
	[ -s "$T/deep/maps/$c/perf-$pid.map" ] || letw_fail "perfmap wrote no $c/perf-$pid.map"
done
grep -q "chunk c2: the trace is incomplete" "$T/pm.err" || { cat "$T/pm.err" >&2; letw_fail "perfmap does not name the incomplete chunk"; }

"$LETW_CLI" report "$rot" --no-progress >"$T/rep.txt" 2>"$T/rep.err"
rc=$?
[ "$rc" = 3 ] || { cat "$T/rep.err" >&2; letw_fail "report: exit $rc, expected 3"; }
[ "$(grep -c '^chunk c[12]$' "$T/rep.txt")" = 2 ] || letw_fail "report: not one report per chunk"
grep -q "chunk c2: the trace is incomplete" "$T/rep.err" || { cat "$T/rep.err" >&2; letw_fail "report does not name the incomplete chunk"; }

# Anything but a directory in archives/ is not a chunk to skip in silence.
touch "$rot/archives/stray.txt"
for cmd in jitdump perfmap report; do
	"$LETW_CLI" $cmd "$rot" -o "$T/stray.$cmd" --no-progress >/dev/null 2>"$T/stray.err"
	rc=$?
	[ "$rc" = 1 ] || { cat "$T/stray.err" >&2; letw_fail "$cmd with a stray file in archives/: exit $rc, expected 1"; }
	grep -q "stray.txt. is not a trace chunk" "$T/stray.err" || { cat "$T/stray.err" >&2; letw_fail "$cmd does not name the stray file"; }
done
echo "jitdump_chunks_e2e: ok"
