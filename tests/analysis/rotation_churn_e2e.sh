#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Size rotation filled by the runtime, not by the pass: a letw-minijit of
# few functions (a pass of ~50 records, ~5 KB) churning code fast enough
# that its letw_runtime events fill a 256 KB chunk in less than 5 s. Every
# rotation `lttng-etw watch` sees gets its statedump, and every chunk a
# complete pass of its own. The watch used to hold back every rotation
# within 5 s of its own regenerate in a session rotating on size (the rule
# against a pass larger than the rotation size rotating for ever), so
# every second chunk had no pass although the pass was tiny; the rule now
# weighs the pass's records (STATUS) against the rotation size.
# (rotation_e2e checks that a pass larger than the size still does not
# rotate for ever.)
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP

"$LETW_MINIJIT" --functions 40 --modules 2 --churn --churn-batch 256 --churn-pause-us 100 \
	--seconds 120 --list "$T/churn.list" >/dev/null &
pid=$!
letw_track "$pid"
anl_wait_file "$T/churn.list.ready"
s=$(letw_session_create rotchurn) || exit 1
letw_session_track "$s" "$pid"
lttng enable-event -u -s "$s" 'letw_runtime:*,letw_rundown:*dcstart*' >/dev/null ||
	letw_fail "enable-event"
lttng add-context -u -s "$s" -t vpid -t vtid >/dev/null || letw_fail "add-context"
lttng enable-rotation -s "$s" --size 256K >/dev/null || letw_fail "enable-rotation --size 256K"
anl_watch "$s" "$T/watch.out"
watch=$ANL_WATCH
"$LETW_CLI" start "$s" --pid "$pid" >/dev/null || letw_fail "lttng-etw start"
t0=$SECONDS
enough() { [ "$(grep -c "statedump regenerated\|not regenerating" "$T/watch.out")" -ge 6 ]; }
# A bound on a hang, not the premise below: ~12 s here.
LETW_WAIT_SECONDS=120 letw_wait_for enough ||
	letw_fail "fewer than 6 rotations in 120 s: $(cat "$T/watch.out")"
took=$((SECONDS - t0))
# The pass's size as the process tells it (STATUS), which watch weighs
# against the rotation size.
"$LETW_CLI" status --pid "$pid" >"$T/status.out" || letw_fail "status: $(cat "$T/status.out")"
grep -Eq "last dcstart pass [0-9]+, last dcend pass [0-9]+ \\([1-9][0-9]* records, [1-9][0-9]* bytes of payload\\)" "$T/status.out" ||
	letw_fail "status does not tell the last pass's size: $(cat "$T/status.out")"
echo "# last pass $(grep -o "[0-9]* records, [0-9]* bytes of payload" "$T/status.out"), rotation size 262144" >&2
lttng stop "$s" >/dev/null || letw_fail "stop"
lttng destroy "$s" >/dev/null || letw_fail "destroy"
kill -TERM "$watch"
wait "$watch" || letw_fail "watch exited with $? on SIGTERM: $(cat "$T/watch.out")"
letw_untrack "$watch"
kill -TERM "$pid"
wait "$pid" || letw_fail "minijit failed"
letw_untrack "$pid"

handled=$(grep -c "statedump regenerated" "$T/watch.out")
echo "# $handled rotations regenerated in ~$took s" >&2
! grep -q "not regenerating" "$T/watch.out" ||
	letw_fail "a rotation held back although the pass is tiny: $(cat "$T/watch.out")"
tr=$(anl_trace "$s")
# The premise: a chunk begun and ended by size rotations that lasted less
# than 5 s (its name's times, to the second: at most 4 s apart). watch's
# regenerate for it came after its beginning, so the old rule held back
# the rotation that ended it; with none, this checks nothing. A slower
# machine fills fewer chunks that fast, and one is enough (it was "6
# rotations within 25 s", a 2x margin over this machine's 12 s).
ls "$tr/archives" >"$T/chunks"
$LETW_PY - "$T/chunks" <<'PY' || letw_fail "no chunk between two rotations lasted under 5 s, so no rotation fell in the rule's window: $(tr '\n' ' ' <"$T/chunks")"
import datetime, re, sys
names = sorted((l.strip() for l in open(sys.argv[1]) if l.strip()),
               key=lambda n: int(n.rsplit("-", 1)[1]))
def t(x):
    return datetime.datetime.strptime(x, "%Y%m%dT%H%M%S%z")
spans = []
for n in names[1:-1]:  # begun and ended by a rotation
    m = re.fullmatch(r"(\d{8}T\d{6}[+-]\d{4})-(\d{8}T\d{6}[+-]\d{4})-\d+", n)
    assert m, "unexpected chunk name %r" % n
    spans.append((t(m.group(2)) - t(m.group(1))).total_seconds())
print("# chunks between rotations lasted %s s" % spans, file=sys.stderr)
sys.exit(0 if any(x <= 4 for x in spans) else 1)
PY
"$LETW_CLI" report "$tr" --json --no-progress >"$T/report.jsonl" ||
	letw_fail "report per chunk: exit $? ($(cat "$T/report.jsonl"))"
# Chunk i+1 is the one rotation i began (rotation_e2e): each one watch
# regenerated for, and the first (the start's), holds a complete pass.
grep -o "rotation [0-9]* began, statedump regenerated" "$T/watch.out" | cut -d' ' -f2 >"$T/handled"
$LETW_PY - "$T/report.jsonl" "$pid" "$T/handled" "$(ls "$tr/archives" | wc -l)" <<'PY' ||
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pid = int(sys.argv[2])
want = [0] + [int(l) + 1 for l in open(sys.argv[3]) if l.strip()]
assert len(docs) == int(sys.argv[4]), "%d chunk reports, %s chunks" % (len(docs), sys.argv[4])
records = []
for i in want:
    assert i < len(docs), "chunk %d of a handled rotation not archived (%d)" % (i, len(docs))
    passes = [p for x in docs[i]["processes"] if x["vpid"] == pid for p in x["passes"]]
    assert any(p["status"] == "complete" for p in passes), (i, passes)
    records += [p.get("emitted") for p in passes]
print("# chunks checked: %d of %d; pass records: %s" % (len(want), len(docs), sorted(set(map(str, records)))), file=sys.stderr)
PY
	letw_fail "a chunk watch handled has no complete pass: $(cat "$T/watch.out")"
echo "rotation_churn_e2e: ok"
