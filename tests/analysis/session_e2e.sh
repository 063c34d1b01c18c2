#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The control commands against real sessions: capture-state (--pid, --all,
# --wait); `start` into a second session while a first one already enabled
# the rundown (no tracepoint flips, but the session's own statedump reaches
# the process: no capture-state is needed, and B still holds its pass);
# `stop` when the DCEnd events were enabled from the start (the regenerated
# statedump then captures both flavours into the session).
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
f=$T/scen
"$LETW_SCENARIO" load 0x10000 0x100 a load 0x10100 0x80 b load 0x10200 0x40 c \
	stub 0x20000 0x10 3 0x10000 touch "$f.ready" wait "$f.exit" &
pid=$!
letw_track "$pid"
anl_wait_file "$f.ready"
published=4

# passes_of JSON [VPID]: "flavour:status:seen" of every pass of our process
# (or of VPID).
passes_of() {
	anl_json "$1" "' '.join('%s:%s:%d' % (p['flavour'], p['status'], p['seen']) for x in r['processes'] if x['vpid']==${2:-$pid} for p in x['passes'])"
}

# complete_pass SESSION VPID FLAVOUR: the session's report holds a complete
# FLAVOUR pass of VPID listing the scenario's 2 records. Sets `got` (every
# pass of VPID, as passes_of) and `report_rc` (the report's exit status)
# for the caller's message.
complete_pass() {
	report_rc=0
	"$LETW_CLI" report "$(anl_trace "$1")" --json -o "$T/$1.json" --no-progress || report_rc=$?
	got=$(passes_of "$T/$1.json" "$2")
	echo "$got" | tr ' ' '\n' | grep -q "^$3:complete:2\$"
}

# 1. Session A starts first: the process notices and runs its DCStart.
a=$(anl_session sess-a "$pid" "" 'letw_rundown:*dcstart*') || exit 1
"$LETW_CLI" start "$a" --pid "$pid" >"$T/a.out" || letw_fail "start A"
grep -q "capture-state" "$T/a.out" && letw_log "another session already enabled the rundown for A"
# Read while A still traces: its metadata is not on disk yet (the consumer
# writes it at stop or rotation), and the error says that may be why.
am=$(find "$(anl_trace "$a")" -name metadata | head -1)
if [ -n "$am" ] && [ ! -s "$am" ]; then
	rc=0
	"$LETW_CLI" report "$(anl_trace "$a")" --no-progress >/dev/null 2>"$T/active.err" || rc=$?
	[ "$rc" = 1 ] && grep -q "session is still active" "$T/active.err" ||
		letw_fail "report of an active session's trace: exit $rc: $(cat "$T/active.err")"
else
	letw_log "session A's metadata is on disk already: the active-session message not checked"
fi

# 2. Session B starts while A is active: nothing flips, but B's statedump
# reaches the process, which writes B's pass into B: start asks nothing.
b=$(anl_session sess-b "$pid" "" 'letw_rundown:*dcstart*') || exit 1
"$LETW_CLI" start "$b" --pid "$pid" >"$T/b.out" || letw_fail "start B"
grep -q "capture-state" "$T/b.out" &&
	letw_fail "start B sent a capture-state: $(cat "$T/b.out")"

# 3. capture-state by pid, waiting: figures of the pass it ran.
# An explicit mask (DCStart of every kind): with the live mask, a session
# of someone else on this machine enabling DCEnd would add a flavour.
"$LETW_CLI" capture-state --pid "$pid" --wait --mask 0x1000000000058 >"$T/cap.out" ||
	letw_fail "capture-state --wait"
grep -Eq "^pid $pid: pass [0-9]+ \(dcstart\): $published records emitted, 0 skipped" "$T/cap.out" ||
	letw_fail "capture-state --wait printed: $(cat "$T/cap.out")"
# Without --wait the request is only sent; the pass still runs, as the
# process's last DCStart pass id (lttng-etw status) shows.
last_dcstart() {
	"$LETW_CLI" status --pid "$pid" | sed -n 's/.*last dcstart pass \([0-9]*\),.*/\1/p'
}
before=$(last_dcstart)
[ -n "$before" ] || letw_fail "lttng-etw status printed no pass id"
"$LETW_CLI" status --pid "$pid" | grep -q ", statedump hook$" ||
	letw_fail "lttng-etw status does not say the statedump hook serves $pid: $("$LETW_CLI" status --pid "$pid")"
"$LETW_CLI" capture-state --all >"$T/all.out" || letw_fail "capture-state --all"
grep -q "^pid $pid: capture-state requested" "$T/all.out" ||
	letw_fail "capture-state --all did not find pid $pid"
letw_wait_for bash -c "[ \"\$('$LETW_CLI' status --pid $pid | sed -n 's/.*last dcstart pass \([0-9]*\),.*/\1/p')\" -gt $before ]" ||
	letw_fail "capture-state --all ran no pass in $pid"
"$LETW_CLI" capture-state --pid 999999999 2>"$T/bad.err" && letw_fail "capture-state of a bad pid succeeded"
"$LETW_CLI" capture-state 2>/dev/null; [ $? = 2 ] || letw_fail "capture-state without target: expected usage error"

"$LETW_CLI" stop "$b" --pid "$pid" >&2 || letw_fail "stop B"
"$LETW_CLI" report "$(anl_trace "$b")" --json -o "$T/b.json" --no-progress ||
	letw_fail "report B: exit $?"
got=$(passes_of "$T/b.json")
# B saw its own start pass and the explicit capture-state, then the DCEnd
# (other sessions on this machine may add passes: count, do not match).
count() { echo "$got" | tr ' ' '\n' | grep -c "^$1:complete:$published$"; }
all_complete() { ! echo "$got" | tr ' ' '\n' | grep -vq ":complete:$published$"; }
all_complete || letw_fail "session B: a pass is not complete: $got"
[ "$(count dcstart)" -ge 2 ] && [ "$(count dcend)" -ge 1 ] ||
	letw_fail "session B: expected 2 DCStart passes and a DCEnd: $got"

# 4. Session C enables DCStart and DCEnd from its start: one walk emits
# both; at stop, enabling dcend flips nothing, so stop asks for a DCEnd.
# A --pid that is not an lttng-etw process (here a sleep) is said and
# ignored, the others are served, and the exit status is 1: `stop` with a
# mistyped pid used to exit 0 with a DCEnd filter that kept the real
# process's pass out.
"$LETW_CLI" stop "$a" --pid "$pid" >&2 || letw_fail "stop A"
sleep 300 &
other=$!
letw_track "$other"
c=$(anl_session sess-c "$pid" "" 'letw_rundown:*') || exit 1
for cmd in start stop; do
	rc=0
	"$LETW_CLI" $cmd "$c" --pid "$pid" --pid "$other" >"$T/$cmd-c.out" 2>&1 || rc=$?
	[ "$rc" = 1 ] && grep -q "pid $other: no lttng-etw control socket (not an lttng-etw process, or it exited); ignored" "$T/$cmd-c.out" ||
		letw_fail "$cmd C with a non-lttng-etw --pid: exit $rc: $(cat "$T/$cmd-c.out")"
done
"$LETW_CLI" report "$(anl_trace "$c")" --json -o "$T/c.json" --no-progress ||
	letw_fail "report C: exit $?"
got=$(passes_of "$T/c.json")
all_complete || letw_fail "session C: a pass is not complete: $got"
[ "$(count dcend)" -ge 2 ] ||
	letw_fail "session C: expected the start pass's DCEnd and the stop's DCEnd: $got"
# The session's own rules decide what it records: one recording every
# DCEnd event through a filter that keeps the process out gets no DCEnd
# pass of it from `stop --pid` (stop added a rule of its own beside it,
# filtered to the --pid process, and LTTng records what any rule lets
# through: the whole pass, against the session's filter). The unfiltered
# dcstart_init proves the process was traced into this session.
e=$(letw_session_create sess-e) || exit 1
letw_session_track "$e" "$pid"
lttng enable-event -u -s "$e" 'letw_rundown:*' --filter '$ctx.vpid == 1' >/dev/null ||
	letw_fail "enable-event, session E"
lttng enable-event -u -s "$e" 'letw_rundown:dcstart_init' >/dev/null || letw_fail "enable-event dcstart_init, session E"
"$LETW_CLI" start "$e" --pid "$pid" >"$T/start-e.out" 2>&1 || letw_fail "start E: $(cat "$T/start-e.out")"
"$LETW_CLI" stop "$e" --pid "$pid" >"$T/stop-e.out" 2>&1 || letw_fail "stop E: $(cat "$T/stop-e.out")"
babeltrace2 "$(anl_trace "$e")" >"$T/e.txt" 2>"$T/e.err" || letw_fail "babeltrace2, session E: $(cat "$T/e.err")"
grep -q 'letw_rundown:dcstart_init' "$T/e.txt" || letw_fail "session E recorded no dcstart_init: not traced?"
! grep -q 'dcend' "$T/e.txt" ||
	letw_fail "session E's filter keeps the process out, yet stop recorded its DCEnd pass: $(grep -c dcend "$T/e.txt") event(s)"
letw_destroy_session --no-wait "$e"
# no_pass_said TAG ENV ADDR TRACKED PATTERN WHAT: a letw-scenario run with
# ENV (VAR=VALUE), named by --pid to start and stop of a session tracking
# TRACKED (the scenario itself when empty): it answers but runs no pass;
# both must exit 1 saying PATTERN about it.
no_pass_said() {
	local tag=$1 envv=$2 addr=$3 tracked=$4 pattern=$5 what=$6 p s cmd rc
	env $envv "$LETW_SCENARIO" load "$addr" 0x100 z touch "$f.$tag.ready" wait "$f.$tag.exit" &
	p=$!
	letw_track "$p"
	anl_wait_file "$f.$tag.ready"
	s=$(anl_session "sess-$tag" "${tracked:-$p}" "") || exit 1
	for cmd in start stop; do
		rc=0
		"$LETW_CLI" $cmd "$s" --pid "$p" >"$T/$cmd-$tag.out" 2>&1 || rc=$?
		[ "$rc" = 1 ] && grep -q "pid $p: $pattern" "$T/$cmd-$tag.out" ||
			letw_fail "$cmd --pid of $what: exit $rc: $(cat "$T/$cmd-$tag.out")"
	done
	touch "$f.$tag.exit"
	wait "$p" || letw_fail "the letw-scenario of $what failed"
	letw_untrack "$p"
}
# A --pid that is an lttng-etw process the session does not trace (it
# tracks $pid only): it answers, but runs no pass into it. Said, exit 1;
# start and stop used to exit 0 (and stop's filter then kept the traced
# process's DCEnd out).
no_pass_said d LETW_UNUSED= 0x30000 "$pid" "ran no D.* pass: is it traced by the session" \
	"an untraced process"
# A --pid with tracing off (LETW_DISABLE=1): it answers and runs no pass.
# start and stop say why (stop used to ask whether the session traces it).
no_pass_said g LETW_DISABLE=1 0x40000 "" ".*tracing is unavailable in that process (LETW_DISABLE" \
	"a process with tracing off"

# 6. A session recording only runtime events, in a channel of its own:
# `stop` enables the DCEnd events there. It used to pick channel0, which
# a started session cannot add: stop failed and ran no DCEnd.
e=$(letw_session_create sess-e) || exit 1
letw_session_track "$e" "$pid"
lttng enable-channel -u -s "$e" rt >/dev/null || letw_fail "enable-channel rt"
lttng enable-event -u -s "$e" -c rt 'letw_runtime:*' --filter "\$ctx.vpid == $pid" >/dev/null ||
	letw_fail "enable-event letw_runtime:* in rt"
lttng add-context -u -s "$e" -c rt -t vpid -t vtid >/dev/null || letw_fail "add-context rt"
# Refused before anything changes: `stop` of a session not started (it
# used to enable the DCEnd events first, which the session then ran at its
# start), `snapshot` of a session not in snapshot mode.
rc=0
"$LETW_CLI" stop "$e" --pid "$pid" >"$T/stop-e0.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "is not started: no DCEnd pass to run; nothing changed" "$T/stop-e0.out" ||
	letw_fail "stop of a session not started: exit $rc: $(cat "$T/stop-e0.out")"
lttng list "$e" | grep -q dcend && letw_fail "stop of a session not started enabled: $(lttng list "$e")"
rc=0
"$LETW_CLI" snapshot "$e" --pid "$pid" >"$T/snap-e.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "is not a snapshot session" "$T/snap-e.out" ||
	letw_fail "snapshot of a session not in snapshot mode: exit $rc: $(cat "$T/snap-e.out")"
# refused WHAT STATE PATTERN ARGS...: `lttng-etw ARGS` fails (exit 1)
# saying PATTERN, and session E is still STATE (active, inactive).
refused() {
	local what=$1 state=$2 pattern=$3 rc=0
	shift 3
	"$LETW_CLI" "$@" >"$T/refused.out" 2>&1 || rc=$?
	[ "$rc" = 1 ] && grep -q "$pattern" "$T/refused.out" ||
		letw_fail "$what: exit $rc: $(cat "$T/refused.out")"
	lttng list "$e" | head -1 | grep -q "\[$state\]" ||
		letw_fail "$what changed the session: $(lttng list "$e" | head -1)"
}
# `start` with a mistyped --pid (this shell): refused, the session not
# started. It used to start it, say the pid was ignored, and exit 1.
refused "start --pid of no lttng-etw process" inactive \
	"none of the --pid processes answered: nothing changed" start "$e" --pid $$
# A session recording no rundown events gets no DCStart pass: started, no
# wait, exit 0. It used to wait for one and exit 1 ("ran no DCStart pass").
rc=0
"$LETW_CLI" start "$e" --pid "$pid" >"$T/start-e.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "records no DCStart rundown .*: started, no pass to wait for" "$T/start-e.out" ||
	letw_fail "start of a session recording no DCStart: exit $rc: $(cat "$T/start-e.out")"
# A mistyped --channel: refused, the session left running. It used to fail
# the enable and stop the session anyway: its DCEnd lost for good.
refused "stop --channel of a missing channel" active \
	"has no user-space channel \`no-such-channel\`" stop "$e" --pid "$pid" --channel no-such-channel
# A mistyped --pid (this shell: no lttng-etw process): refused, the session
# left running with no DCEnd event enabled. It used to stop the session
# with no DCEnd, and the rerun with the right pid found it "not started".
refused "stop --pid of no lttng-etw process" active \
	"none of the --pid processes answered: nothing changed" stop "$e" --pid $$
lttng list "$e" | grep -q dcend && letw_fail "stop --pid of no lttng-etw process enabled: $(lttng list "$e")"
"$LETW_CLI" stop "$e" --pid "$pid" >"$T/stop-e.out" 2>&1 ||
	letw_fail "stop of a runtime-only session: exit $?: $(cat "$T/stop-e.out")"
"$LETW_CLI" report "$(anl_trace "$e")" --json -o "$T/e.json" --no-progress ||
	letw_fail "report E: exit $?"
# The session started again: its trace is read, said to be still recording,
# and not called complete (it said "trace complete", exit 0).
lttng start "$e" >/dev/null || letw_fail "start E again"
rc=0
"$LETW_CLI" report "$(anl_trace "$e")" --no-progress >"$T/e-active.out" 2>&1 || rc=$?
lttng stop "$e" >/dev/null || letw_fail "stop E again"
[ "$rc" = 3 ] && grep -q "session \`$e\` is still recording into" "$T/e-active.out" ||
	letw_fail "report of a session still recording: exit $rc: $(cat "$T/e-active.out")"
got=$(passes_of "$T/e.json")
[ "$(count dcend)" -ge 1 ] || letw_fail "session E: no complete DCEnd pass: '$got'"
[ -n "$(find "$(anl_trace "$e")" -name 'rt_*' -size +0)" ] ||
	letw_fail "session E: no stream of channel rt"

touch "$f.exit"
wait "$pid" || letw_fail "letw-scenario failed"
letw_untrack "$pid"

# 5. A process that polls (LETW_STATEDUMP=0) and two `start`s of two
# sessions at the same moment: each session holds a DCStart pass. Each
# start used to decide from the mask it read before `lttng start`; the
# second session to start then saw no switch, took the first's pass for
# its own, and held none (3 of 8 rounds). Five rounds, fresh sessions.
LETW_STATEDUMP=0 "$LETW_SCENARIO" load 0x40000 0x100 p load 0x40100 0x80 q \
	touch "$f.pollready" wait "$f.pollexit" &
pp=$!
letw_track "$pp"
anl_wait_file "$f.pollready"
"$LETW_CLI" status --pid "$pp" | grep -q ", polls$" ||
	letw_fail "lttng-etw status does not say $pp polls: $("$LETW_CLI" status --pid "$pp")"
for round in 1 2 3 4 5; do
	s1=$(anl_session "poll$round-a" "$pp" "" 'letw_rundown:*dcstart*') || exit 1
	s2=$(anl_session "poll$round-b" "$pp" "" 'letw_rundown:*dcstart*') || exit 1
	"$LETW_CLI" start "$s1" --pid "$pp" >"$T/poll-a.out" 2>&1 &
	j1=$!
	"$LETW_CLI" start "$s2" --pid "$pp" >"$T/poll-b.out" 2>&1 &
	j2=$!
	wait "$j1" || letw_fail "round $round: start A: $(cat "$T/poll-a.out")"
	wait "$j2" || letw_fail "round $round: start B: $(cat "$T/poll-b.out")"
	for s in "$s1" "$s2"; do
		lttng stop "$s" >/dev/null || letw_fail "lttng stop $s"
		complete_pass "$s" "$pp" dcstart ||
			letw_fail "round $round: session $s holds no complete DCStart pass (report exit $report_rc): '$got'"
		# A polling process's passes go to every session enabling
		# their events: one that starts during the other's pass
		# records its rest (exit 3): without its Init (begun before
		# the trace, or after the session's buffers but before its
		# events reached the process), or, its events switched on one
		# by one while the pass began, without its first records.
		# Nothing else may be incomplete.
		odd=$(anl_json "$T/$s.json" "' '.join('%s:%s' % (p['status'], p['cause']) for x in r['processes'] if x['vpid']==$pp for p in x['passes'] if p['status'] != 'complete' and p['cause'] not in ('trace_begins', 'init_missing', 'records_missing'))")
		[ "$report_rc" = 0 ] || { [ "$report_rc" = 3 ] && [ -z "$odd" ]; } ||
			letw_fail "round $round: report $s: exit $report_rc, passes '$got', not complete: '$odd'"
		letw_destroy_session --no-wait "$s"
	done
	# The next round starts from rundown events switched off.
	letw_wait_for bash -c "'$LETW_CLI' status --pid $pp | grep -q 'rundown mask 0x0,'" ||
		letw_log "round $round: the rundown mask did not return to 0"
done
# A polling process's capture-state answers for the flavour waited for
# only: `stop` of a session that does not trace it, and `start` of one that
# does not trace it while a DCEnd-only session does, say so and exit 1, as
# for a process the statedump hook serves. The first capture-states
# (f90d06e) counted any pass: exit 0.
u=$(anl_session poll-untraced "$other" "" 'letw_rundown:*dcstart*') || exit 1
"$LETW_CLI" start "$u" >/dev/null 2>&1 || true
rc=0
"$LETW_CLI" stop "$u" --pid "$pp" >"$T/poll-stop.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "pid $pp: ran no DCEnd pass" "$T/poll-stop.out" ||
	letw_fail "stop, polling process the session does not trace: exit $rc: $(cat "$T/poll-stop.out")"
letw_destroy_session --no-wait "$u"
# A session recording DCEnd only gets no DCStart pass: `start` starts it,
# says so, sends no capture-state and exits 0 (it used to wait for a
# DCStart pass and exit 1).
v=$(anl_session poll-dcend "$pp" "" 'letw_rundown:*dcend*') || exit 1
rc=0
"$LETW_CLI" start "$v" --pid "$pp" >"$T/poll-start.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "records no DCStart rundown" "$T/poll-start.out" &&
	! grep -q "capture-state" "$T/poll-start.out" ||
	letw_fail "start, a session recording DCEnd only: exit $rc: $(cat "$T/poll-start.out")"
lttng list "$v" | head -1 | grep -q "\[active\]" ||
	letw_fail "start, a session recording DCEnd only, left it $(lttng list "$v" | head -1)"
# Now the process's only rundown keyword is DCEnd (from that session): the
# capture-state `start` sends it for a session recording DCStart but not
# tracing it runs a DCEnd pass, which is not the DCStart pass waited for.
w=$(anl_session poll-dcstart-untraced "$other" "" 'letw_rundown:*dcstart*') || exit 1
rc=0
"$LETW_CLI" start "$w" --pid "$pp" >"$T/poll-start-w.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "pid $pp: ran no DCStart pass" "$T/poll-start-w.out" ||
	letw_fail "start, polling process whose live mask is DCEnd only: exit $rc: $(cat "$T/poll-start-w.out")"
letw_destroy_session --no-wait "$w"
# The same session stopped with lttng-etw: the polling process's DCEnd
# capture-state reaches it.
"$LETW_CLI" stop "$v" --pid "$pp" >"$T/poll-stop2.out" 2>&1 ||
	letw_fail "stop, polling process: exit $?: $(cat "$T/poll-stop2.out")"
complete_pass "$v" "$pp" dcend ||
	letw_fail "the DCEnd-only session holds no complete DCEnd pass (report exit $report_rc): '$got'"
letw_destroy_session --no-wait "$v"
touch "$f.pollexit"
wait "$pp" || letw_fail "the polling letw-scenario failed"
letw_untrack "$pp"

# A control socket name bound by another user for a process without one
# (abstract names are first come, first served): the CLI checks the
# server's credentials and says so, instead of taking its answers for
# that process's.
setpriv --reuid=nobody --regid=nogroup --clear-groups $LETW_PY - "$other" <<'PY' >"$T/fake.log" 2>&1 &
import os, socket, sys, time
ns = os.stat("/proc/self/ns/pid").st_ino
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(("\0lttng-etw/%d/%s" % (ns, sys.argv[1])).encode())
s.listen(4)
print("ready", flush=True)
s.settimeout(0.2)
end = time.time() + 60    # the test kills it long before
while time.time() < end:
    try:
        c, _ = s.accept()
        c.recv(256)
        c.send(b"\0" * 64)   # a reply no lttng-etw process would send
        c.close()
    except socket.timeout:
        pass
PY
fake=$!
letw_track "$fake"
letw_wait_for grep -q ready "$T/fake.log" || letw_fail "the fake socket server: $(cat "$T/fake.log")"
rc=0
"$LETW_CLI" status --pid "$other" >"$T/fake.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "held by another process" "$T/fake.out" ||
	letw_fail "status of a pid whose socket name another user holds: exit $rc: $(cat "$T/fake.out")"
kill "$fake" 2>/dev/null
wait "$fake" 2>/dev/null
letw_untrack "$fake"

# A process that accepts nothing for a long time (a provider in a long pass
# on a blocking channel: it accepts between passes) with its listen backlog
# full (requests whose replies were given up on stay queued): the commands
# still end within their timeouts. connect() used to wait for the backlog,
# past any timeout.
$LETW_PY - <<'PY' >"$T/stuck.log" 2>&1 &
import os, socket, time
name = ("\0lttng-etw/%d/%d" % (os.stat("/proc/self/ns/pid").st_ino, os.getpid())).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(name)
s.listen(0)
held = []
while True:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.setblocking(False)
    try:
        c.connect(name)
    except BlockingIOError:
        break
    held.append(c)
print("ready", len(held), flush=True)
time.sleep(120)
PY
stuck=$!
letw_track "$stuck"
letw_wait_for grep -q ready "$T/stuck.log" || letw_fail "the stuck server: $(cat "$T/stuck.log")"
rc=0
timeout 60 "$LETW_CLI" status --pid "$stuck" >"$T/stuck.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "no reply before the timeout" "$T/stuck.out" ||
	letw_fail "status of a process whose backlog is full: exit $rc (124: hung): $(cat "$T/stuck.out")"
rc=0
timeout 60 "$LETW_CLI" capture-state --pid "$stuck" --wait --timeout 2 >"$T/stuck.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "no reply before the timeout" "$T/stuck.out" ||
	letw_fail "capture-state --timeout 2 of a process whose backlog is full: exit $rc (124: hung): $(cat "$T/stuck.out")"
kill "$stuck" 2>/dev/null
wait "$stuck" 2>/dev/null
letw_untrack "$stuck"
kill "$other" 2>/dev/null
wait "$other" 2>/dev/null
letw_untrack "$other"

# status --all with no lttng-etw process says so rather than print
# nothing. Abstract sockets are per network namespace: a fresh one holds
# none, whatever else runs on the machine.
if unshare -n true 2>/dev/null; then
	out=$(unshare -n "$LETW_CLI" status --all 2>&1) || letw_fail "status --all with no process: exit $?"
	echo "$out" | grep -q "found no process" || letw_fail "status --all with no process printed: '$out'"
else
	echo "SKIP: status --all with no lttng-etw process not checked (unshare -n fails here)" >&2
fi
# A session that does not exist: exit 1 and a message, for each command
# that drives one (`stop` died of SIGPIPE without a word, exit 141, inside
# liblttng-ctl: sessiond closes the socket after refusing the header).
for cmd in start stop snapshot; do
	rc=0
	"$LETW_CLI" $cmd "letw-no-such-session-$$" --pid "$pid" >/dev/null 2>"$T/nosess.err" || rc=$?
	[ "$rc" = 1 ] && grep -q "no tracing session named" "$T/nosess.err" ||
		letw_fail "$cmd of a missing session: exit $rc: $(cat "$T/nosess.err")"
done
# 7. A busy process: its control thread held in poll(2) (hold_thread.py),
# as in a long pass on a blocking channel: it answers late, not never.
# The commands run without --pid, so in a network namespace of their own
# (control sockets are abstract: they see only this test's process there).
# Held past --timeout, `start` names it and exits 1; it used to take the
# silence for an exit and say nothing, exit 0 (and `stop` then stopped the
# session with no DCEnd). Held for less, `stop` waits for its DCEnd pass.
hold_py=$(dirname "$0")/../e2e/hold_thread.py
hold() { # hold PID: its letw-control thread stopped until release
	rm -f "$T/held" "$T/release"
	$LETW_PY "$hold_py" "$1" letw-control "$T/held" "$T/release" 60 2>"$T/hold.err" &
	holder=$!
	letw_track "$holder"
	letw_wait_for test -s "$T/held" || letw_fail "cannot hold the control thread: $(cat "$T/hold.err")"
}
release() {
	touch "$T/release"
	wait "$holder" || letw_fail "hold_thread: $(cat "$T/hold.err")"
	letw_untrack "$holder"
}
if anl_netns_start; then
	# nsenter forks: the scenario's pid is the one sh wrote before exec.
	# shellcheck disable=SC2016 # $$ is for that sh
	nsenter -t "$ANL_NETNS" -n sh -c 'echo $$ >"$0"; exec "$@"' "$f.hpid" "$LETW_SCENARIO" \
		load 0x50000 0x100 h stub 0x60000 0x10 1 0x50000 \
		touch "$f.hready" wait "$f.hexit" &
	hns=$!
	letw_track "$hns"
	anl_wait_file "$f.hready"
	hp=$(cat "$f.hpid")
	letw_track "$hp"
	h=$(anl_session sess-h "$hp" "" 'letw_rundown:*') || exit 1
	hold "$hp"
	rc=0
	anl_in_netns "$LETW_CLI" start "$h" --timeout 3 >"$T/start-h.out" 2>&1 || rc=$?
	[ "$rc" = 1 ] && grep -q "pid $hp: rundown pass not done within 3 s" "$T/start-h.out" ||
		letw_fail "start with a busy process past --timeout: exit $rc: $(cat "$T/start-h.out")"
	release
	# Its start pass runs now; the stop below is to find none queued.
	settled_h() { ! anl_in_netns "$LETW_CLI" status --pid "$hp" | grep -q "queued or running"; }
	letw_wait_for settled_h || letw_fail "the held process's start pass never ran"
	hold "$hp"
	(sleep 3; touch "$T/release") &
	rc=0
	anl_in_netns "$LETW_CLI" stop "$h" --timeout 20 >"$T/stop-h.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || letw_fail "stop with a process busy for 3 s (--timeout 20): exit $rc: $(cat "$T/stop-h.out")"
	release
	complete_pass "$h" "$hp" dcend ||
		letw_fail "session H: no complete DCEnd pass of the process busy at stop (report exit $report_rc): '$got'"
	letw_destroy_session --no-wait "$h"
	touch "$f.hexit"
	wait "$hns" || letw_fail "the held letw-scenario failed"
	letw_untrack "$hns"
	letw_untrack "$hp"
	anl_netns_stop
else
	echo "SKIP: busy processes not checked (unshare -n or nsenter fails here)" >&2
fi
# 8. An interrupt (SIGINT) while `stop` waits for a busy process's DCEnd
# pass (its control thread held): stop stops waiting, says in one line what
# it leaves (the session active, the DCEnd events enabled) and how to go
# on, and exits 130; the rerun then stops the session with its DCEnd. The
# signal used to kill it without a word (exit 130, the same state left).
# SIGHUP during `snapshot`'s wait: no snapshot recorded, said, exit 130.
"$LETW_SCENARIO" load 0x70000 0x100 i load 0x70100 0x80 j touch "$f.iready" wait "$f.iexit" &
ip=$!
letw_track "$ip"
anl_wait_file "$f.iready"
# queued PID: how many connections wait in the accept queue of PID's
# control socket. Its control thread held, PID accepts none: each request
# of the command under test stays there, and the count says how far the
# command got. The handshake before a signal: a fixed sleep (1 s, 2 s)
# took "it got that far" on trust, and on a loaded machine the signal
# could come before the command's handlers or its regenerate.
command -v ss >/dev/null || letw_fail "ss is needed (Debian: iproute2; scripts/deps.sh installs it)"
queued() {
	local name
	name=$(letw_ctl "$1" address) || return 1
	ss -xlH | awk -v n="$name" '$5 == n { q = $3 } END { print q + 0 }'
}
# asked PID BASE N: at least N requests queued at PID since it held BASE.
asked() { [ "$(queued "$1")" -ge $(($2 + $3)) ]; }
# signal_ends SIG PID WHAT: SIG the lttng-etw PID started; it must end
# within 10 s; sets rc to its exit status, lets the held process go. The
# bound only tells "stops at once" from "waits on": a command that let the
# signal go by would wait for the held process until its --timeout (30 s),
# and its exit status and message are checked besides. It was 3 s, a thin
# margin for an exit that talks to lttng-sessiond on a loaded machine.
signal_ends() {
	local sig=$1 c=$2 t0=$EPOCHREALTIME
	kill -"$sig" "$c"
	c_ended() { ! letw_running "$c"; }
	LETW_WAIT_SECONDS=10 letw_wait_for c_ended || letw_fail "$3 still runs 10 s after SIG$sig"
	letw_log "$3: ended $(awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $t0 }") s after SIG$sig"
	rc=0
	wait "$c" || rc=$?
	letw_untrack "$c"
	release
}
# interrupt SIG SESSION READY CMD...: run `lttng-etw CMD...` with the
# process busy, SIG it once `lttng list SESSION` shows READY and the
# command asked the held process twice: its listing, then, its regenerate
# done, the wait for the process's pass, queued behind the held thread.
# It must end within 10 s. Sets rc.
interrupt() {
	local sig=$1 sess=$2 ready=$3 c base
	shift 3
	hold "$ip"
	base=$(queued "$ip")
	# As from a terminal: bash starts a background command with SIGINT
	# ignored, which lttng-etw then keeps ignoring (as under nohup).
	env --default-signal=INT "$LETW_CLI" "$@" --timeout 30 >"$T/int.out" 2>&1 &
	c=$!
	letw_track "$c"
	# A function, not `bash -c`: the session's name holds a quote.
	listed() { lttng list "$sess" | grep -q "$ready"; }
	letw_wait_for listed ||
		letw_fail "$*: never got to '$ready': $(cat "$T/int.out")"
	letw_wait_for asked "$ip" "$base" 2 ||
		letw_fail "$*: never waited for the held process: $(cat "$T/int.out")"
	signal_ends "$sig" "$c" "$*"
}
# Session I's name holds a blank and a quote: the command printed to run
# again is pasted into a shell, and must stop that session (printed bare,
# `lttng-etw stop sess i's-...` was an unterminated quote).
i=$(anl_session "sess i's" "$ip" "" 'letw_rundown:*dcstart*') || exit 1
qi="'${i//\'/\'\\\'\'}'"
"$LETW_CLI" start "$i" --pid "$ip" >/dev/null || letw_fail "start I"
interrupt INT "$i" dcend stop "$i" --pid "$ip"
[ "$rc" = 130 ] &&
	grep -qF "stop: interrupted: session \`$i\` left active with DCEnd events enabled, its DCEnd passes not waited for; run \`lttng-etw stop $qi --pid $ip\` again, or \`lttng stop $qi\`" "$T/int.out" ||
	letw_fail "stop interrupted while it waits: exit $rc: $(cat "$T/int.out")"
lttng list "$i" | head -1 | grep -q "\[active\]" && lttng list "$i" | grep -q dcend ||
	letw_fail "stop interrupted: not left active with the DCEnd events: $(lttng list "$i")"
# The rerun as printed, through a shell (lttng-etw from the build).
again=$(sed -n 's/.*; run `\(lttng-etw [^`]*\)` again.*/\1/p' "$T/int.out")
[ -n "$again" ] || letw_fail "no command to run again in: $(cat "$T/int.out")"
PATH=$(dirname "$LETW_CLI"):$PATH bash -c "$again" >"$T/int-rerun.out" 2>&1 ||
	letw_fail "the printed \`$again\` after the interrupted stop: exit $?: $(cat "$T/int-rerun.out")"
lttng list "$i" | head -1 | grep -q "\[inactive\]" ||
	letw_fail "the rerun stop left $i: $(lttng list "$i" | head -1)"
complete_pass "$i" "$ip" dcend ||
	letw_fail "session I: no complete DCEnd pass after the rerun (report exit $report_rc): '$got'"
letw_destroy_session --no-wait "$i"
j=$(letw_session_create sess-j --snapshot) || exit 1
letw_session_track "$j" "$ip"
lttng enable-event -u -s "$j" 'letw_rundown:*' >/dev/null || letw_fail "enable-event J"
lttng add-context -u -s "$j" -t vpid >/dev/null || letw_fail "add-context J"
lttng start "$j" >/dev/null || letw_fail "start J"
interrupt HUP "$j" active snapshot "$j" --pid "$ip"
[ "$rc" = 130 ] && grep -q "snapshot: interrupted: no snapshot of \`$j\` recorded" "$T/int.out" ||
	letw_fail "snapshot interrupted while it waits: exit $rc: $(cat "$T/int.out")"
[ -z "$(find "$(anl_trace "$j")" -name metadata 2>/dev/null)" ] ||
	letw_fail "snapshot interrupted: a snapshot was recorded: $(find "$(anl_trace "$j")")"
letw_destroy_session --no-wait "$j"
# 9. capture-state --wait and status, interrupted while the process's
# control thread is held (a process in a long pass): each stops at once,
# says what it leaves, exits 130. They died by the signal, unsaid.
# int_ctl SIG CMD...: run `lttng-etw CMD...`, SIG it once it asked the
# held process; it must end within 10 s. Sets rc.
int_ctl() {
	local sig=$1 c base
	shift
	hold "$ip"
	base=$(queued "$ip")
	env --default-signal=INT "$LETW_CLI" "$@" >"$T/int.out" 2>&1 &
	c=$!
	letw_track "$c"
	letw_wait_for asked "$ip" "$base" 1 ||
		letw_fail "$*: never asked the held process: $(cat "$T/int.out")"
	signal_ends "$sig" "$c" "$*"
}
int_ctl INT capture-state --pid "$ip" --wait --timeout 30
[ "$rc" = 130 ] && grep -q "capture-state: interrupted: .*their passes go on" "$T/int.out" ||
	letw_fail "capture-state --wait interrupted: exit $rc: $(cat "$T/int.out")"
int_ctl TERM status --pid "$ip"
[ "$rc" = 130 ] && grep -q "status: interrupted: 0 of 1 process(es) asked" "$T/int.out" ||
	letw_fail "status interrupted: exit $rc: $(cat "$T/int.out")"
touch "$f.iexit"
wait "$ip" || letw_fail "the interrupted commands' letw-scenario failed"
letw_untrack "$ip"
echo "session_e2e: ok"
