#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every session gets its own rundown (DESIGN §4), real lttng-sessiond:
#  1. sessions A then B, both enabling letw_rundown:*dcstart*, started with
#     plain `lttng start` while the other is active: each holds exactly one
#     DCStart pass (ENABLE) of its own and none of the other's;
#  2. `lttng regenerate statedump -s A`: one CAPTURE_STATE pass, into A only;
#  3. with the hook disabled (LETW_STATEDUMP=0) the polling fallback still
#     gives a DCStart pass at `lttng start`;
#  4. a trigger (event notifier) on letw_rundown events runs no pass, in
#     either process;
#  5. 100 `lttng regenerate statedump -s D` while the control thread cannot
#     run a pass (the last one after enabling D's DCEnd events) coalesce
#     into one capture-state of D's latest event set (none overflows);
#  6. 66 sessions started while it cannot: the first 64 get a pass each,
#     the statedumps of the 65th and 66th one capture-state into every
#     session, and each session's trace holds only complete passes, the
#     65th's and 66th's too (`lttng-etw report --json`); said so (log,
#     STATUS, `lttng-etw status`). Each of the 66 counts as served: a
#     regenerate of each, one at a time, is a capture-state (not a first
#     ENABLE: the 65th and 66th were not remembered, and 64 sessions were
#     all the control thread's memory held);
#  7. (before 6) statedumps queued while their session was stopped or
#     destroyed run no pass;
#  8. a process started while 66 sessions tracking it are active: each
#     session holds a pass, and none a first ENABLE after it was served.
# Every pass is checked against the runtime's own list of its live code.
# usage: test_sessions.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
jit="$build/bin/letw-minijit"

letw_ensure_sessiond

# lttng-sessiond's commands return before a pass longer than the statedump
# callback's bound ends: wait until the process has none queued or running.
settled() { letw_wait_field "$1" pending_statedumps = 0; }
# Prints the session's name: call as s=$(new_session ...) || exit 1 (a
# letw_fail in here only ends the $(...) subshell).
new_session() { # PREFIX PID
	local s
	s=$(letw_session_create "$1") || exit 1
	letw_session_track "$s" "$2"
	lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable dcstart"
	lttng add-context -u -s "$s" -t vpid -t vtid >/dev/null || letw_fail "add-context"
	echo "$s"
}
# end_runtime PID WHAT: SIGTERM, and it must exit 0.
end_runtime() {
	kill -TERM "$1"
	wait "$1" || letw_fail "$2 runtime exited with $?"
	letw_untrack "$1"
}
# destroy_all SESSION...: all at once, not waiting for the ends of their
# destructions (letw_destroy_session --no-wait).
destroy_all() {
	local s destroys=()
	for s in "$@"; do
		letw_destroy_session --no-wait "$s" &
		destroys+=($!)
	done
	wait "${destroys[@]}"
}
# report_json SESSION: `lttng-etw report --json` of the session's trace;
# prints the JSON file's path (call as j=$(report_json S) || exit 1).
report_json() {
	local json="$LETW_TEST_TMP/$1.json"
	"$build/bin/lttng-etw" report "$LETW_TEST_TMP/$1" --json -o "$json" --no-progress \
		2>"$LETW_TEST_TMP/$1.report.err" ||
		letw_fail "session $1: report: $(head -c 600 "$LETW_TEST_TMP/$1.report.err")"
	echo "$json"
}
# passes_of REPORT_JSON PID [MIN]: PID's passes in a `report --json`, in
# order, as flavour:control_code:status:ok|short (ok: every record counted
# was seen, MIN or more, 2000 unless given), or "none".
passes_of() {
	"$LETW_PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
ps = [p for x in r["processes"] if x["vpid"] == int(sys.argv[2]) for p in x["passes"]]
print(" ".join("%s:%s:%s:%s" % (p["flavour"], p.get("control_code"), p["status"],
      "ok" if p.get("emitted") == p["seen"] >= int(sys.argv[3]) else "short")
      for p in ps) or "none")
' "$1" "$2" "${3:-2000}"
}
check() { # SESSION PID LIVE EXPECT...
	local s=$1 p=$2 l=$3; shift 3
	$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$p" "$l" "$@" ||
		letw_fail "session $s: trace does not hold exactly $*"
}

live="$LETW_TEST_TMP/live.txt"
"$jit" --functions 2000 --seconds 120 --list "$live" &
pid=$!
letw_track "$pid"
letw_wait_for test -e "$live.ready" || letw_fail "runtime did not publish its list"
passes=$(letw_ctl_field "$pid" passes) || letw_fail "no STATUS from $pid"
[ $((passes & 1)) = 1 ] || letw_fail "the statedump hook is not active"

a=$(new_session sessA "$pid") || exit 1
b=$(new_session sessB "$pid") || exit 1
lttng start "$a" >/dev/null || letw_fail "start A"
settled "$pid" || letw_fail "A's pass never ended"
id_a=$(letw_ctl_field "$pid" last_dcstart_pass_id)
[ "$id_a" != 0 ] || letw_fail "no DCStart pass at lttng start A"
lttng start "$b" >/dev/null || letw_fail "start B"
settled "$pid" || letw_fail "B's pass never ended"
id_b=$(letw_ctl_field "$pid" last_dcstart_pass_id)
[ "$id_b" != "$id_a" ] || letw_fail "no DCStart pass at lttng start B while A is active"

lttng regenerate statedump -s "$a" >/dev/null || letw_fail "regenerate statedump A"
settled "$pid" || letw_fail "A's capture-state never ended"
id_c=$(letw_ctl_field "$pid" last_dcstart_pass_id)
[ "$id_c" != "$id_b" ] || letw_fail "no pass at lttng regenerate statedump"

lttng stop "$a" >/dev/null && lttng stop "$b" >/dev/null || letw_fail "stop"
check "$a" "$pid" "$live" "dcstart:1:$id_a" "dcstart:2:$id_c"
check "$b" "$pid" "$live" "dcstart:1:$id_b"

# The fallback: no hook, the enabled state polled.
live2="$LETW_TEST_TMP/live2.txt"
LETW_STATEDUMP=0 "$jit" --functions 500 --seconds 120 --list "$live2" &
pid2=$!
letw_track "$pid2"
letw_wait_for test -e "$live2.ready" || letw_fail "fallback runtime did not publish its list"
passes=$(letw_ctl_field "$pid2" passes) || letw_fail "no STATUS from $pid2"
[ $((passes & 1)) = 0 ] || letw_fail "LETW_STATEDUMP=0 left the hook active"
c=$(new_session sessC "$pid2") || exit 1
lttng start "$c" >/dev/null || letw_fail "start C"
letw_wait_field "$pid2" last_dcstart_pass_id != 0 ||
	letw_fail "fallback: no DCStart pass after lttng start"
lttng stop "$c" >/dev/null || letw_fail "stop C"
check "$c" "$pid2" "$live2" dcstart:1
id_f=$(letw_ctl_field "$pid2" last_dcstart_pass_id)

# With no session started, a trigger switches the rundown tracepoints on in
# every process with no session behind it: neither process may run a pass.
# A handshake, not a window (a fixed 1.5 s, which a slower machine could
# spend before the control thread looked): the rundown tracepoints are on in
# each process after the trigger, read from the process (tp_state.py: a
# trigger shows nowhere else; no session of ours is started, and the others
# track other processes). Not asserted off before it: a trigger of a test
# running at the same time would do as well. Then a STATUS, each on a new
# connection: the control thread answers a connection's first request one
# wake-up after accepting it (provider/ctlsock.c), and every wake-up walks
# the probe arrays and polls the keywords before it answers, running the
# pass a change calls for there and then (control.c, watch_sessions). So
# the pass ids below are read after the thread saw the trigger's probes.
rd_on() { "$LETW_PY" "$here/tp_state.py" "$1" letw_rundown; } # PID: "ON of TOTAL"
rd_all_on() {
	local s
	s=$(rd_on "$1") && [ "${s%% of *}" != 0 ] && [ "${s%% of *}" = "${s##* of }" ]
}
trig=$(letw_trigger_add letw-sessions --condition event-rule-matches --type=user \
	--name='letw_rundown:*' --action notify) || exit 1
for p in "$pid" "$pid2"; do
	letw_wait_for rd_all_on "$p" ||
		letw_fail "the trigger did not switch the rundown tracepoints on in $p: $(rd_on "$p" 2>&1)"
done
[ "$(letw_ctl_field "$pid" last_dcstart_pass_id)" = "$id_c" ] && [ "$(letw_ctl_field "$pid" last_dcend_pass_id)" = 0 ] ||
	letw_fail "a trigger on letw_rundown events made the process run a pass: $(letw_ctl "$pid" status) (before: last_dcstart_pass_id=$id_c)"
[ "$(letw_ctl_field "$pid2" last_dcstart_pass_id)" = "$id_f" ] && [ "$(letw_ctl_field "$pid2" last_dcend_pass_id)" = 0 ] ||
	letw_fail "a trigger on letw_rundown events made the polling process run a pass: $(letw_ctl "$pid2" status) (before: last_dcstart_pass_id=$id_f)"
lttng remove-trigger "$trig" >/dev/null || letw_fail "remove-trigger"

kill -TERM "$pid" "$pid2"
wait "$pid" || letw_fail "runtime exited with $?"
letw_untrack "$pid"
wait "$pid2" || letw_fail "fallback runtime exited with $?"
letw_untrack "$pid2"

# A burst of statedumps for one session during a long pass. The pass is
# made as long as the burst by stopping the control thread (ptrace, that
# thread alone, in poll(2)): every request arrives before any is taken,
# whatever the machine's speed. Each callback returns at once
# (LETW_STATEDUMP_WAIT_MS=0), so 100 regenerates take a few seconds. When
# each request took a place in the queue, 64 held D's first ones and the
# 36 past them were dropped (before the overflow request), the last among
# them: the only one asking for D's DCEnd events, so D never got a DCEnd
# pass.
# hold_control PID: stop PID's control thread (in poll(2), holding none of
# our locks) until release_control.
hold_control() {
	rm -f "$LETW_TEST_TMP/held" "$LETW_TEST_TMP/release"
	"$LETW_PY" "$here/hold_thread.py" "$1" letw-control "$LETW_TEST_TMP/held" \
		"$LETW_TEST_TMP/release" 2>"$LETW_TEST_TMP/hold.err" &
	hold=$!
	letw_track "$hold"
	letw_wait_for test -s "$LETW_TEST_TMP/held" ||
		letw_fail "cannot stop the control thread: $(cat "$LETW_TEST_TMP/hold.err")"
}
release_control() {
	touch "$LETW_TEST_TMP/release"
	wait "$hold" || letw_fail "hold_thread: $(cat "$LETW_TEST_TMP/hold.err")"
	letw_untrack "$hold"
}
live3="$LETW_TEST_TMP/live3.txt"
err3="$LETW_TEST_TMP/burst.err"
LETW_STATEDUMP_WAIT_MS=0 "$jit" --functions 2000 --seconds 120 --list "$live3" 2>"$err3" &
pid3=$!
letw_track "$pid3"
letw_wait_for test -e "$live3.ready" || letw_fail "burst runtime did not publish its list"
d=$(new_session sessD "$pid3") || exit 1
lttng start "$d" >/dev/null || letw_fail "start D"
settled "$pid3" || letw_fail "D's pass never ended"
id_d=$(letw_ctl_field "$pid3" last_dcstart_pass_id)
[ "$id_d" != 0 ] || letw_fail "no DCStart pass at lttng start D"
hold_control "$pid3"
for i in $(seq 1 99); do
	lttng regenerate statedump -s "$d" >/dev/null || letw_fail "regenerate statedump D ($i)"
done
lttng enable-event -u -s "$d" 'letw_rundown:*dcend*' >/dev/null || letw_fail "enable dcend in D"
lttng regenerate statedump -s "$d" >/dev/null || letw_fail "regenerate statedump D (100)"
release_control
settled "$pid3" || letw_fail "the burst's passes never ended"
[ "$(letw_ctl_field "$pid3" last_dcend_pass_id)" != 0 ] ||
	letw_fail "the last regenerate (D's DCEnd events enabled) ran no pass: $(grep -m3 . "$err3")"
! grep -i 'overflowed' "$err3" >&2 || letw_fail "statedump requests overflowed (above)"
lttng stop "$d" >/dev/null || letw_fail "stop D"
# The start's pass, then one for the 100 requests: a capture-state of
# D's whole event set (control code 2, both flavours in one walk), which
# answers the 99 regenerates (a DCStart capture each) and the last one (a
# DCEnd, D having gained it) alike; the DCEnd ENABLE the last one would
# have run alone answers none of the 99. A capture-state sent to every
# lttng-etw process on the machine (`lttng-etw capture-state --all`,
# another test running at the same time) adds passes of control code 2
# into D: up to 3 more are let through, where each request run apart would
# have made 100.
passes_d=$("$LETW_PY" "$here/check_rundown.py" --list "$LETW_TEST_TMP/$d" "$pid3") ||
	letw_fail "cannot list D's passes"
want=() captures=() both=0
for p in $passes_d; do
	case $p in
	"dcstart:1:$id_d") ;;
	*:2:*) [[ " ${captures[*]} " == *" ${p##*:} "* ]] || captures+=("${p##*:}") ;;
	*) letw_fail "D holds a pass that answers nothing: $p (passes: $passes_d)" ;;
	esac
	want+=("$p")
done
flat=" $(echo $passes_d) " # one line, space-separated
for id in "${captures[@]}"; do
	[[ "$flat" == *" dcstart:2:$id "* && "$flat" == *" dcend:2:$id "* ]] && both=$((both + 1))
done
[ "$both" -ge 1 ] || letw_fail "no capture-state of both flavours answers the burst: $passes_d"
[ "${#captures[@]}" -le 4 ] || letw_fail "D holds ${#captures[@]} capture-state passes: $passes_d"
[ "${#captures[@]}" = 1 ] || letw_log "capture-state passes from outside the test: ${captures[*]}"
check "$d" "$pid3" "$live3" "${want[@]}"
[ $(($(letw_ctl_field "$pid3" passes) & 2)) = 0 ] || letw_fail "STATUS says a statedump overflowed"

# Statedumps that wait in the queue while their session is stopped or
# destroyed run no pass: X stopped, Y destroyed, Z left running, all three
# started while the control thread is stopped. Only Z's pass runs (until
# 2026-12-07 all three did, X's and Y's into no session, a wasted walk of
# the table each).
x=$(new_session sessX "$pid3") || exit 1
y=$(new_session sessY "$pid3") || exit 1
z=$(new_session sessZ "$pid3") || exit 1
id_0=$(letw_ctl_field "$pid3" last_dcstart_pass_id)
hold_control "$pid3"
for s in "$x" "$y" "$z"; do
	lttng start "$s" >/dev/null || letw_fail "start $s"
done
lttng stop "$x" >/dev/null || letw_fail "stop X"
letw_destroy_session "$y" # waits: Y must be gone when the queue runs
release_control
settled "$pid3" || letw_fail "Z's pass never ended"
id_z=$(letw_ctl_field "$pid3" last_dcstart_pass_id)
[ "$id_z" = $((id_0 + 1)) ] ||
	letw_fail "$((id_z - id_0)) passes for 1 session still started (of 3 queued: one stopped, one destroyed before their pass)"
lttng stop "$z" >/dev/null || letw_fail "stop Z"
check "$z" "$pid3" "$live3" "dcstart:1:$id_z"
letw_destroy_session --no-wait "$x"
letw_destroy_session --no-wait "$z"

# Only distinct sessions fill the queue: 64 started while the control
# thread is stopped get a pass each, a regenerate of one of them joins its
# queued request, and the statedumps of the 65th and 66th sessions, with
# no room left, join one overflow request: a capture-state into every
# session, run after the 64. Until 2026-12-07 they were dropped, and those
# two sessions held no pass at all. The sessions record the DCStart
# passes (2000 methods each) in small buffers; `lttng-etw report` judges
# each session's trace.
sessions=()
nq=66
for i in $(seq 1 $nq); do
	s=$(letw_session_create "sessQ$i") || exit 1
	letw_session_track "$s" "$pid3"
	lttng enable-channel -u -s "$s" --subbuf-size=262144 --num-subbuf=4 ch >/dev/null ||
		letw_fail "enable-channel"
	lttng enable-event -u -s "$s" -c ch 'letw_rundown:*dcstart*' >/dev/null ||
		letw_fail "enable dcstart"
	lttng add-context -u -s "$s" -c ch -t vpid -t vtid >/dev/null || letw_fail "add-context"
	sessions+=("$s")
done
id_q=$(letw_ctl_field "$pid3" last_dcstart_pass_id)
id_e=$(letw_ctl_field "$pid3" last_dcend_pass_id)
[ "$id_e" -gt "$id_q" ] && id_q=$id_e
hold_control "$pid3"
for i in $(seq 0 63); do
	lttng start "${sessions[$i]}" >/dev/null || letw_fail "start ${sessions[$i]}"
done
lttng regenerate statedump -s "${sessions[0]}" >/dev/null || letw_fail "regenerate statedump"
for i in $(seq 64 $((nq - 1))); do
	lttng start "${sessions[$i]}" >/dev/null || letw_fail "start ${sessions[$i]}"
done
release_control
settled "$pid3" || letw_fail "the $nq sessions' passes never ended"
# 64 passes of their own and the overflow's.
[ "$(letw_ctl_field "$pid3" last_dcstart_pass_id)" -ge $((id_q + 65)) ] ||
	letw_fail "$(($(letw_ctl_field "$pid3" last_dcstart_pass_id) - id_q)) passes for $nq sessions"
[ $(($(letw_ctl_field "$pid3" passes) & 2)) = 2 ] ||
	letw_fail "STATUS does not say a statedump was served by an all-sessions pass"
st=$("$build/bin/lttng-etw" status --pid "$pid3") || letw_fail "lttng-etw status: $st"
[[ "$st" == *"served by an all-sessions pass"* ]] ||
	letw_fail "lttng-etw status does not say a statedump was served by an all-sessions pass: $st"
grep -q ': 2 session statedumps overflowed' "$err3" ||
	letw_fail "not 2 statedumps overflowed: $(grep -i 'overflowed\|dropped' "$err3")"
# Every session served, the folded ones too, and all 66 remembered at
# once: a regenerate of each, one at a time, is a capture-state of its
# own (control code 2). A first ENABLE (code 1) here means the session
# was forgotten.
for s in "${sessions[@]}"; do
	lttng regenerate statedump -s "$s" >/dev/null || letw_fail "regenerate statedump $s"
	settled "$pid3" || letw_fail "$s's regenerate pass never ended"
done
for s in "${sessions[@]}"; do
	lttng stop "$s" >/dev/null || letw_fail "stop $s"
done
# Each session: DCStart passes only, every one complete (seen == emitted,
# 2000 methods or more: the live list). The first 64 begin with their
# own pass (the first session's a capture-state: its regenerate joined
# it), then hold the overflow's; the 65th and 66th hold the overflow's,
# a capture-state (control code 2). Each then holds its regenerate's
# capture-state. A capture-state sent to every
# process by another test may add complete passes of code 2.
for i in $(seq 0 $((nq - 1))); do
	s=${sessions[$i]}
	json=$(report_json "$s") || exit 1
	got=$(passes_of "$json" "$pid3") || letw_fail "session $s: cannot read $json"
	for p in $got; do
		[[ "$p" == dcstart:*:complete:ok ]] || letw_fail "session $s: pass $p (all: $got)"
	done
	case $i in
	0) expect='dcstart:2:* dcstart:2:* dcstart:2:*' ;;
	6[4-9]) expect='dcstart:2:* dcstart:2:*' ;;
	*) expect='dcstart:1:* dcstart:2:* dcstart:2:*' ;;
	esac
	[[ "$got" == *dcstart:1:*dcstart:1:* || ($i -ge 64 && "$got" == *dcstart:1:*) ]] &&
		letw_fail "session $s: its regenerate ran as a first ENABLE (forgotten as served): $got"
	# shellcheck disable=SC2053 # $expect is a pattern
	[[ "$got" == $expect ]] || letw_fail "session $s: passes $got, not $expect"
done
end_runtime "$pid3" burst
destroy_all "${sessions[@]}"

# A process that starts while 66 sessions tracking it are active: its
# first sessions reach it either as statedumps through the hook (the 65th
# and later folded into the overflow pass) or, when lttng-ust ran their
# statedumps before the hook was connected, by adoption at the control
# thread's start. Either way each session holds a pass, and none holds a
# first ENABLE after it was served. Until 2026-12-07, adoption stopped at
# 64 sessions (2 held none), and sessions served by the overflow were
# adopted again (an ENABLE after it).
late=$LETW_TEST_TMP/late.txt
bash -c 'kill -STOP $$; exec "$@"' _ "$jit" --functions 2000 --seconds 120 --list "$late" \
	2>"$LETW_TEST_TMP/late.err" &
pidl=$!
letw_track "$pidl"
letw_wait_for grep -q '^[^ ]* ([^)]*) T' "/proc/$pidl/stat" || letw_fail "late process not stopped"
late_sessions=()
for i in $(seq 1 $nq); do
	s=$(new_session sessL$i "$pidl") || exit 1
	late_sessions+=("$s")
done
for s in "${late_sessions[@]}"; do
	lttng start "$s" >/dev/null || letw_fail "start $s"
done
kill -CONT "$pidl"
letw_wait_for test -e "$late.ready" || letw_fail "late runtime did not publish its list"
# 66 passes of their own, or 64 and the overflow's: at least 65.
letw_wait_field "$pidl" last_dcstart_pass_id -ge 65 ||
	letw_fail "the late process ran $(letw_ctl_field "$pidl" last_dcstart_pass_id) passes for $nq sessions"
settled "$pidl" || letw_fail "the late process's passes never ended"
for s in "${late_sessions[@]}"; do
	lttng stop "$s" >/dev/null || letw_fail "stop $s"
done
for s in "${late_sessions[@]}"; do
	json=$(report_json "$s") || exit 1
	# Its passes ran as it started, before it published its code: they
	# may hold no record at all.
	got=$(passes_of "$json" "$pidl" 0) || letw_fail "session $s: cannot read $json"
	[ "$got" != none ] || letw_fail "session $s: no pass (the late process adopted too few sessions)"
	for p in $got; do
		[[ "$p" == dcstart:*:complete:ok ]] || letw_fail "session $s: pass $p (all: $got)"
	done
	[[ "$got" == *" dcstart:1:"* ]] &&
		letw_fail "session $s: a first ENABLE after it was served (adopted again): $got"
done
end_runtime "$pidl" late
destroy_all "${late_sessions[@]}"
echo "PASS: one pass per session and statedump, none for a trigger, polling fallback, statedumps coalesced, none for sessions stopped or destroyed in the queue, sessions past the queue served by an all-sessions pass and remembered, a late process serves 66 sessions"
