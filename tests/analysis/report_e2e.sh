#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sink.etw.report on real traces: a complete pass reports complete (with
# the runtime churning code during the rundowns); a pass cut by killing
# the process mid-rundown reports truncated and a non-zero exit; a
# discard-mode channel with tiny buffers reports the discarded events as
# the cause (not an overwrite); a pass cut by `lttng stop --no-wait`
# is said cut by the trace's end, and, the session started again, by a
# stop while its process went on (not "killed"); a process without a
# pass beside one with a pass is said by report and perfmap (a note, or
# exit 3 when the trace lost packets).
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP

# passes_of JSON PID: "flavour:status" of every pass of that process.
passes_of() {
	anl_json "$1" "' '.join(p['flavour']+':'+p['status'] for x in r['processes'] if x['vpid']==$2 for p in x['passes'])"
}

# nw_data TRACE: a stream file of channel `blk` (not its index) holds
# data: a pass has begun. Once a letw-minijit without --churn is ready,
# nothing but its passes writes into a session recording it, a pass writes
# its Init first, and the consumer writes a sub-buffer out once it is full,
# a few dozen records into a pass (4 KiB ones): data means the Init is in
# the session's buffers, and a stop's flush keeps it.
nw_data() {
	[ -n "$(find "$1" -type f -name 'blk_*' ! -name '*.idx' -size +0c -print -quit)" ]
}

# 1. Complete: DCStart at start, DCEnd at stop, code churning meanwhile.
"$LETW_MINIJIT" --functions 3000 --seconds 30 --churn --list "$T/c.list" >"$T/c.out" 2>&1 &
pid=$!
letw_track "$pid"
anl_wait_file "$T/c.list.ready"
s=$(anl_session rep-complete "$pid")
"$LETW_CLI" start "$s" --pid "$pid" >&2 || letw_fail "complete: lttng-etw start"
sleep 1 # let the churn thread load and unload code while recorded
"$LETW_CLI" stop "$s" --pid "$pid" >&2 || letw_fail "complete: lttng-etw stop"
kill -TERM "$pid"
wait "$pid" || { cat "$T/c.out" >&2; letw_fail "complete: letw-minijit failed"; }
"$LETW_CLI" report "$(anl_trace "$s")" --no-progress >"$T/c.txt" 2>"$T/c.err"
rc=$?
cat "$T/c.txt" "$T/c.err" >&2
[ "$rc" = 0 ] || letw_fail "complete: report exit $rc, expected 0"
"$LETW_CLI" report "$(anl_trace "$s")" --json -o "$T/c.json" --no-progress ||
	letw_fail "complete: report --json"
# Sessions of others on this machine may flip the tracepoints and add
# passes: require every pass complete, and both flavours present.
got=$(passes_of "$T/c.json" "$pid")
case " $got " in *" dcstart:complete "*"dcend:complete "*) ;;
*) letw_fail "complete: passes are '$got'" ;; esac
echo " $got " | grep -Eq ":(truncated|lossy|inconsistent) " && letw_fail "complete: passes are '$got'"
[ "$(anl_json "$T/c.json" "all(p['seen']==p['emitted']>0 for x in r['processes'] for p in x['passes'])")" = True ] ||
	letw_fail "complete: records seen differ from emitted"
# babeltrace2 with the loadable plugin agrees (exit 0).
babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" "$(anl_trace "$s")" -c sink.etw.report >/dev/null ||
	letw_fail "complete: babeltrace2 -c sink.etw.report failed"

# 2. Truncated: kill -9 during a DCStart walk. The channel blocks rather
# than discards, and its 4 KiB sub-buffers make the walk run at the
# consumer's pace (part 4), so nothing but the kill cuts it: a walk of
# 20,000 records lasts seconds. Per-process buffers: a process killed in
# the middle of writing an event would leave a shared per-user sub-buffer
# uncommitted, and `lttng stop` would wait for it forever. The kill waits
# until the walk has begun, until the trace holds data (nw_data says why
# that means its Init was written). It used to come after a delay moved
# from attempt to attempt by what the last one's trace showed, which took
# a kill before the capture's pass began, after the start's pass had
# ended, for a kill too late: the next delay was shorter, and a control
# thread slow to begin its passes (300 ms late in a test of this test)
# failed all eight attempts.
LTTNG_UST_ALLOW_BLOCKING=1 "$LETW_MINIJIT" --functions 20000 --seconds 60 \
	--list "$T/t.list" >/dev/null 2>&1 &
pid=$!
letw_track "$pid"
anl_wait_file "$T/t.list.ready"
truncated_ok=$(anl_session rep-trunc "$pid" "--buffers-pid --blocking-timeout=inf --subbuf-size=4k --num-subbuf=2 blk")
lttng start "$truncated_ok" >/dev/null || letw_fail "truncated: lttng start"
# If another session on this machine already enabled the rundown and the
# process polls, the start flips nothing: ask for the pass explicitly (it
# queues behind the start's own pass, if any).
"$LETW_CLI" capture-state --pid "$pid" --mask 0x1000000000058 >/dev/null ||
	letw_fail "truncated: capture-state"
letw_wait_for nw_data "$(anl_trace "$truncated_ok")" ||
	letw_fail "truncated: no data of the pass in the trace in 30 s"
kill -9 "$pid"
wait "$pid" 2>/dev/null
letw_untrack "$pid"
timeout 120 lttng stop "$truncated_ok" >/dev/null || letw_fail "truncated: lttng stop"
babeltrace2 "$(anl_trace "$truncated_ok")" >"$T/t.trace.txt" 2>/dev/null
inits=$(grep -c "letw_rundown:dcstart_init" "$T/t.trace.txt")
completes=$(grep -c "letw_rundown:dcstart_complete" "$T/t.trace.txt")
[ "$inits" -gt "$completes" ] ||
	letw_fail "truncated: the kill cut no pass ($inits init, $completes complete)"
"$LETW_CLI" report "$(anl_trace "$truncated_ok")" --json -o "$T/t.json" --no-progress
rc=$?
[ "$rc" = 3 ] || letw_fail "truncated: report exit $rc, expected 3 (incomplete)"
got=$(passes_of "$T/t.json" "$pid")
case " $got " in *" dcstart:truncated "*) ;; *) letw_fail "truncated: passes are '$got'" ;; esac
babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" "$(anl_trace "$truncated_ok")" \
	-c sink.etw.report >"$T/t.txt" 2>&1 && letw_fail "truncated: babeltrace2 exited 0"
grep -q "truncated" "$T/t.txt" || letw_fail "truncated: text report does not say truncated"

# 3. Discarded events: a discard-mode channel far too small for the walk.
"$LETW_MINIJIT" --functions 5000 --seconds 30 --list "$T/d.list" >/dev/null 2>&1 &
pid=$!
letw_track "$pid"
anl_wait_file "$T/d.list.ready"
s=$(anl_session rep-discard "$pid" "--discard --subbuf-size=4096 --num-subbuf=2 tiny")
"$LETW_CLI" start "$s" --pid "$pid" >&2 || letw_fail "discard: lttng-etw start"
"$LETW_CLI" stop "$s" --pid "$pid" >&2 || letw_fail "discard: lttng-etw stop" # finds channel `tiny`
kill -TERM "$pid"
wait "$pid"
"$LETW_CLI" report "$(anl_trace "$s")" --json -o "$T/d.json" --no-progress
rc=$?
[ "$rc" = 3 ] || letw_fail "discard: report exit $rc, expected 3 (passes lost records)"
[ "$(anl_json "$T/d.json" "r['summary']['discarded_events'] > 0")" = True ] ||
	letw_fail "discard: no discarded events reported"
[ "$(anl_json "$T/d.json" "any(p['discarded_events'] > 0 or p['discarded_uncounted'] for x in r['processes'] for p in x['passes'])")" = True ] ||
	letw_fail "discard: no discarded events attributed to a pass"
"$LETW_CLI" report "$(anl_trace "$s")" --no-progress >"$T/d.txt" 2>/dev/null
grep -E "discarded events in the pass window: [1-9]" "$T/d.txt" >&2 ||
	letw_fail "discard: text report shows no discarded events in a pass"
# A discard-mode channel's ring buffer overwrites nothing: every pass it
# cut is so by the events it discarded (was: "overwritten", when one CPU's
# stream began late).
got=$(anl_json "$T/d.json" "sorted(set((p['status'], p['cause']) for x in r['processes'] for p in x['passes'] if p['status'] != 'complete'))")
case "$got" in
"[]" | *overwrit* | *"'records_missing'"* | *"'trace_"*) letw_fail "discard: passes not complete are $got" ;;
esac
echo "$got" | grep -q "events_discarded" || letw_fail "discard: no pass cut by discarded events: $got"

# 4. `lttng stop --no-wait` while a DCStart pass is being written; the
# process lives on. The statedump callback does not wait for the pass
# (LETW_STATEDUMP_WAIT_MS=0), so `lttng start` returns as it begins, and
# the blocking channel of 4 KiB sub-buffers makes it run at the
# consumer's pace (~2,000 records/s here: 64 KiB ones let a pass of 50k
# methods end within 0.2 s one run in two). Session `end` is destroyed at
# once: its trace ends during the pass. Session `again` is started again:
# the process runs its next pass into it, after the cut one. A pass that
# ended before the stop (a faster machine) is tried again with four times
# the methods.
# The stop waits until the pass has begun (nw_data). A fixed `sleep 0.1`
# took that on trust: a control thread not run within it (a loaded
# machine) let the stop come first, the session empty, and more methods
# do not help that: three times and the test failed.
nowait() { # TAG FUNCTIONS: cuts a pass of process $nw_pid in session $nw_s
	LETW_STATEDUMP_WAIT_MS=0 LTTNG_UST_ALLOW_BLOCKING=1 "$LETW_MINIJIT" --functions "$2" \
		--seconds 120 --list "$T/$1.list" >/dev/null 2>&1 &
	nw_pid=$!
	letw_track "$nw_pid"
	anl_wait_file "$T/$1.list.ready"
	nw_s=$(anl_session "rep-nowait-$1" "$nw_pid" "--blocking-timeout=inf --subbuf-size=4k --num-subbuf=2 blk")
	lttng start "$nw_s" >/dev/null || letw_fail "nowait: lttng start"
	letw_wait_for nw_data "$(anl_trace "$nw_s")" ||
		letw_fail "nowait: no data of the pass in the trace of $nw_s in 30 s"
	lttng stop --no-wait "$nw_s" >/dev/null || letw_fail "nowait: lttng stop --no-wait"
}
# count TRACE EVENT
count() { babeltrace2 "$1" 2>/dev/null | grep -c "letw_rundown:$2"; }
n=5000
for attempt in 1 2 3; do
	nowait "e$attempt" "$n"
	pe=$nw_pid se=$nw_s
	nowait "a$attempt" "$n"
	pa=$nw_pid sa=$nw_s
	lttng destroy "$se" >/dev/null || letw_fail "nowait: lttng destroy"
	# The pass it waits for runs at the consumer's pace (~2,000 records/s
	# idle, half that with the CPUs taken): 20,000 methods overran the
	# default 30 s with two busy loops on the two vCPUs, and the third
	# attempt has 80,000.
	"$LETW_CLI" start "$sa" --pid "$pa" --timeout 300 >&2 || letw_fail "nowait: lttng-etw start again"
	lttng stop "$sa" >/dev/null || letw_fail "nowait: lttng stop"
	lttng destroy "$sa" >/dev/null || letw_fail "nowait: lttng destroy"
	kill -TERM "$pe" "$pa"
	wait "$pe" "$pa"
	letw_untrack "$pe"
	letw_untrack "$pa"
	ce="$(count "$(anl_trace "$se")" dcstart_init) $(count "$(anl_trace "$se")" dcstart_complete)"
	ca="$(count "$(anl_trace "$sa")" dcstart_init) $(count "$(anl_trace "$sa")" dcstart_complete)"
	[ "$ce;$ca" = "1 0;2 1" ] && break
	letw_log "attempt $attempt: the stop missed a pass of $n methods (init, complete: $ce and $ca); next: $((n * 4))"
	n=$((n * 4))
	se=
done
[ -n "$se" ] || letw_fail "nowait: could not stop a session during a pass"
"$LETW_CLI" report "$(anl_trace "$se")" --json -o "$T/ne.json" --no-progress
rc=$?
[ "$rc" = 3 ] || letw_fail "nowait: report exit $rc, expected 3"
got=$(anl_json "$T/ne.json" "[(p['status'], p['cause']) for x in r['processes'] if x['vpid']==$pe for p in x['passes']]")
[ "$got" = "[('truncated', 'trace_ends')]" ] || letw_fail "nowait: passes are $got"
"$LETW_CLI" report "$(anl_trace "$se")" --no-progress >"$T/ne.txt" 2>/dev/null
grep -F "truncated (no dcstart_complete in the trace: the trace ends during the pass (session stopped" \
	"$T/ne.txt" >&2 || letw_fail "nowait: the text report does not say the trace ends: $(cat "$T/ne.txt")"
"$LETW_CLI" report "$(anl_trace "$sa")" --json -o "$T/na.json" --no-progress
rc=$?
[ "$rc" = 3 ] || letw_fail "nowait, started again: report exit $rc, expected 3"
got=$(anl_json "$T/na.json" "[(p['status'], p['cause'], 'killed' in (p['cause_text'] or '')) for x in r['processes'] if x['vpid']==$pa for p in x['passes']]")
[ "$got" = "[('truncated', 'complete_missing', False), ('complete', None, False)]" ] ||
	letw_fail "nowait, started again: passes are $got"

# 5. A process without a pass beside one with a pass, in a trace that
# records passes (per-process buffers; B's pass dropped by an event rule's
# filter). Nothing of the trace was lost, so B may have started during
# the session (a polling process gone before its first poll runs no pass):
# a note naming it, exit 0 (it used to go unsaid). With packets lost (a
# sequence gap made by damage.py, as an overwritten pass leaves), it makes
# the trace incomplete: the code B loaded before its first event is in no
# pass, and report and perfmap say so (exit 3). The channel blocks rather
# than discards: with discards the first case depended on the consumer
# keeping up with two churning processes (16 KiB sub-buffers), and a
# loaded machine made the trace lose events, incomplete, exit 3.
LTTNG_UST_ALLOW_BLOCKING=1 "$LETW_MINIJIT" --functions 300 --seconds 30 --churn \
	--list "$T/pa.list" >"$T/pa.out" 2>&1 &
pa=$!
letw_track "$pa"
LTTNG_UST_ALLOW_BLOCKING=1 "$LETW_MINIJIT" --functions 300 --seconds 30 --churn \
	--list "$T/pb.list" >"$T/pb.out" 2>&1 &
pb=$!
letw_track "$pb"
anl_wait_file "$T/pa.list.ready"
anl_wait_file "$T/pb.list.ready"
s=$(letw_session_create rep-passless) || exit 1
letw_session_track "$s" "$pa"
letw_session_track "$s" "$pb"
lttng enable-channel -u -s "$s" --buffers-pid --subbuf-size=16K --blocking-timeout=inf ch >/dev/null ||
	letw_fail "passless: enable-channel"
lttng enable-event -u -s "$s" -c ch 'letw_runtime:*' \
	--filter "\$ctx.vpid == $pa || \$ctx.vpid == $pb" >/dev/null || letw_fail "passless: enable-event"
lttng enable-event -u -s "$s" -c ch 'letw_rundown:*dcstart*' --filter "\$ctx.vpid == $pa" \
	>/dev/null || letw_fail "passless: enable-event rundown"
lttng add-context -u -s "$s" -c ch -t vpid -t vtid >/dev/null || letw_fail "passless: add-context"
"$LETW_CLI" start "$s" --pid "$pa" --pid "$pb" >&2 || letw_fail "passless: lttng-etw start"
# Both churn: B's runtime events are in the trace once its stream files
# hold data (was: a sleep of 1 s, taken on trust).
pl_data() {
	[ -n "$(find "$(anl_trace "$s")" -path "*/ust/pid/*-$pb-*" -type f -name 'ch_*' \
		! -name '*.idx' -size +0c -print -quit)" ]
}
letw_wait_for pl_data || letw_fail "passless: no data of process $pb in the trace in 30 s"
lttng stop "$s" >/dev/null || letw_fail "passless: lttng stop"
kill -TERM "$pa" "$pb"
wait "$pa" "$pb"
letw_untrack "$pa"
letw_untrack "$pb"
tr=$(anl_trace "$s")
"$LETW_CLI" report "$tr" --json -o "$T/pl.json" --no-progress 2>"$T/pl.err" ||
	{ cat "$T/pl.err" >&2; letw_fail "passless: report exit $?, expected 0"; }
got=$(anl_json "$T/pl.json" "sorted((x['vpid'] == $pb, x['no_pass'], len(x['passes']) > 0) for x in r['processes'])")
[ "$got" = "[(False, False, True), (True, True, False)]" ] || letw_fail "passless: processes are $got"
got=$(anl_json "$T/pl.json" "(r['summary']['processes_without_pass'], r['summary']['processes_without_pass_judged'])")
[ "$got" = "(1, False)" ] || letw_fail "passless: summary: $got"
"$LETW_CLI" report "$tr" --no-progress 2>/dev/null | grep -q "note: no rundown pass" ||
	letw_fail "passless: the text report has no note"
"$LETW_CLI" perfmap "$tr" -o "$T/pl-maps" --no-progress 2>"$T/pl-map.err" ||
	{ cat "$T/pl-map.err" >&2; letw_fail "passless: perfmap exit $?, expected 0"; }
cat "$T/pl-map.err" >&2
grep -q "^perfmap:   process $pb: no rundown pass" "$T/pl-map.err" ||
	letw_fail "passless: perfmap did not name process $pb"
grep -q "^perfmap:   process $pa:.*no rundown pass" "$T/pl-map.err" && letw_fail "passless: perfmap named process $pa"
[ -s "$T/pl-maps/perf-$pb.map" ] && [ -s "$T/pl-maps/perf-$pa.map" ] ||
	letw_fail "passless: perfmap wrote no map for both"
# Packets lost: now B's pass may have been in them.
python3 "$(dirname "$0")/damage.py" apply seq-gap "$tr" "$T/pl-gap" >&2 ||
	letw_fail "passless: damage.py"
"$LETW_CLI" report "$T/pl-gap" --json -o "$T/plg.json" --no-progress 2>"$T/plg.err"
rc=$?
cat "$T/plg.err" >&2
[ "$rc" = 3 ] || letw_fail "passless, packets lost: report exit $rc, expected 3"
got=$(anl_json "$T/plg.json" "(r['summary']['processes_without_pass'], r['summary']['processes_without_pass_judged'])")
[ "$got" = "(1, True)" ] || letw_fail "passless, packets lost: summary: $got"
grep -q "report: 1 process(es) with events but no rundown pass" "$T/plg.err" ||
	letw_fail "passless, packets lost: report did not say it"
"$LETW_CLI" perfmap "$T/pl-gap" -o "$T/plg-maps" --no-progress 2>"$T/plg-map.err"
rc=$?
cat "$T/plg-map.err" >&2
[ "$rc" = 3 ] || letw_fail "passless, packets lost: perfmap exit $rc, expected 3"
grep -q "perfmap: 1 process(es) with events but no rundown pass" "$T/plg-map.err" ||
	letw_fail "passless, packets lost: perfmap did not say it"
lttng destroy "$s" >/dev/null || letw_fail "passless: lttng destroy"
echo "report_e2e: ok"
