#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# start/stop/snapshot and a signal inside their last liblttng-ctl call,
# which liblttng-ctl does not cut short (the ctl_signal.c shim makes the
# timing deterministic):
#  - a signal during `lttng stop` / `lttng snapshot record`: the work is
#    done, and the command says so and exits 130, as every command does on
#    an interrupt (it used to exit 0, the signal swallowed);
#  - a second signal while the call hangs (a hung sessiond): the command
#    dies of it, as designed, but first says what may be left: the session
#    possibly still active, and the `lttng` command to stop it (it used to
#    die without a word, the session left active);
#  - snapshot's note for that second signal gives the command to run
#    again with the user's --pid (they were dropped);
#  - a session name with a control character is printed escaped on stdout
#    (snapshot's "recorded" line), as on stderr.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
SO=${LETW_CTL_SIGNAL_SO:-}
[ -f "$SO" ] || letw_fail "LETW_CTL_SIGNAL_SO is not set to the shim"
f=$T/scen
"$LETW_SCENARIO" load 0x10000 0x100 a touch "$f.ready" wait "$f.exit" &
pid=$!
letw_track "$pid"
anl_wait_file "$f.ready"

active() { lttng list "$1" 2>/dev/null | grep -q "\[active\]"; }
# hang_killed CMD SESSION SIG: CMD of SESSION with the shim hanging in
# its lttng call after a first SIGINT (a hung sessiond), then SIG, the
# second signal, which must end it; sets rc, its output in $T/CMD.err. A
# second signal that does not end it (the old code, for one of another
# kind) fails the test rather than hang it. Started with SIGINT's default
# disposition: bash starts a background command with SIGINT ignored,
# which the command keeps (main.c).
hang_killed() {
	local p
	LD_PRELOAD=$SO LETW_CTL_SIGNAL=$1:hang LETW_CTL_SIGNAL_READY=$T/$1.ready \
		env --default-signal=INT "$LETW_CLI" "$1" "$2" --pid "$pid" >"$T/$1.out" 2>"$T/$1.err" &
	p=$!
	letw_track "$p"
	anl_wait_file "$T/$1.ready"
	kill "-$3" "$p"
	LETW_WAIT_SECONDS=10 letw_wait_for eval '! letw_running '"$p" || {
		kill -KILL "$p"
		wait "$p"
		letw_untrack "$p"
		letw_fail "$1 hung: still running 10 s after a second signal ($3)"
	}
	rc=0
	wait "$p" || rc=$?
	letw_untrack "$p"
}

# interrupted_during CMD SESSION [ARGS...]: CMD of SESSION, a SIGINT
# raised inside its last lttng call; must exit 130 (rc), its output in
# $T/CMD.out/err.
interrupted_during() {
	local cmd=$1 sess=$2
	shift 2
	rc=0
	LD_PRELOAD=$SO LETW_CTL_SIGNAL=$cmd:during "$LETW_CLI" "$cmd" "$sess" --pid "$pid" "$@" \
		>"$T/$cmd.out" 2>"$T/$cmd.err" || rc=$?
	set -- "$cmd"
	[ "$rc" = 130 ] || letw_fail "$1 interrupted during its last call: exit $rc (expected 130): $(cat "$T/$1.err")"
}

# 1. stop, SIGINT during `lttng stop`: stopped, said, 130.
a=$(anl_session sig-a "$pid" "" 'letw_rundown:*dcstart*') || exit 1
lttng start "$a" >/dev/null || letw_fail "lttng start $a"
interrupted_during stop "$a"
grep -q "stop: interrupted after session \`$a\` was stopped (its DCEnd passes done): nothing left to do" "$T/stop.err" ||
	letw_fail "stop interrupted during lttng stop did not say the session was stopped: $(cat "$T/stop.err")"
! active "$a" || letw_fail "stop interrupted during lttng stop: $a still active"
# 1b. The same with a --pid that ran no pass (not an lttng-etw process):
# the work was not all done, and the message must not say it was.
sleep 300 &
other=$!
letw_track "$other"
a2=$(anl_session sig-a2 "$pid" "" 'letw_rundown:*dcstart*') || exit 1
lttng start "$a2" >/dev/null || letw_fail "lttng start $a2"
interrupted_during stop "$a2" --pid "$other"
grep -q "stop: interrupted after session \`$a2\` was stopped, but not every process's DCEnd pass was done" "$T/stop.err" &&
	! grep -q "nothing left to do" "$T/stop.err" ||
	letw_fail "stop interrupted during lttng stop, a --pid without a pass: $(cat "$T/stop.err")"
kill "$other"
wait "$other" 2>/dev/null
letw_untrack "$other"

# 2. snapshot, SIGINT during `lttng snapshot record`: recorded, said, 130;
# the session's name (with an ESC) escaped on stdout.
b=$(letw_session_create $'sig\x1b[31mb' --snapshot) || exit 1
letw_session_track "$b" "$pid"
lttng enable-event -u -s "$b" 'letw_rundown:*' --filter "\$ctx.vpid == $pid" >/dev/null ||
	letw_fail "enable-event (snapshot session)"
lttng add-context -u -s "$b" -t vpid -t vtid >/dev/null || letw_fail "add-context (snapshot session)"
lttng start "$b" >/dev/null || letw_fail "lttng start (snapshot session)"
interrupted_during snapshot "$b"
grep -q "snapshot: interrupted after the snapshot of .* was recorded" "$T/snapshot.err" ||
	letw_fail "snapshot interrupted during the record did not say it was recorded: $(cat "$T/snapshot.err")"
! grep -q $'\x1b' "$T/snapshot.out" "$T/snapshot.err" ||
	letw_fail "snapshot printed a raw control character: $(od -c "$T/snapshot.out" "$T/snapshot.err" | head -5)"
grep -q '^snapshot of `sig\\x1b\[31mb-.*` recorded$' "$T/snapshot.out" ||
	letw_fail "snapshot's stdout: $(cat "$T/snapshot.out")"

# 3. stop, a first SIGINT then a hang in `lttng stop`: the second signal
# (SIGTERM) kills it, after the note.
c=$(anl_session sig-c "$pid" "" 'letw_rundown:*dcstart*') || exit 1
lttng start "$c" >/dev/null || letw_fail "lttng start $c"
hang_killed stop "$c" TERM
[ "$rc" = 143 ] || letw_fail "stop hung, second signal SIGTERM: exit $rc (expected death by SIGTERM): $(cat "$T/stop.err")"
grep -q "stop: killed by a second signal: session \`$c\` may still be active, with DCEnd events enabled (\`lttng list $c\` says); to stop it: \`lttng stop $c\`" "$T/stop.err" ||
	letw_fail "stop killed by a second signal said: $(cat "$T/stop.err")"
active "$c" || letw_fail "the shim's hang did not leave $c active (the test proves nothing)"

# 4. start, the same hang in `lttng start`, a second SIGINT.
d=$(anl_session sig-d "$pid" "" 'letw_rundown:*dcstart*') || exit 1
hang_killed start "$d" INT
[ "$rc" = 130 ] || letw_fail "start hung, second signal SIGINT: exit $rc: $(cat "$T/start.err")"
grep -q "start: killed by a second signal: session \`$d\` may be started, its DCStart passes not waited for (\`lttng list $d\` says); to undo: \`lttng stop $d\`" "$T/start.err" ||
	letw_fail "start killed by a second signal said: $(cat "$T/start.err")"

# 5. snapshot, the same hang in `lttng snapshot record`, a second SIGHUP:
# the note's rerun keeps the user's --pid (it dropped them: the rerun then
# waited for every lttng-etw process), the session as a shell word.
e=$(letw_session_create 'sig e' --snapshot) || exit 1
letw_session_track "$e" "$pid"
lttng enable-event -u -s "$e" 'letw_rundown:*' --filter "\$ctx.vpid == $pid" >/dev/null ||
	letw_fail "enable-event (snapshot session $e)"
lttng start "$e" >/dev/null || letw_fail "lttng start $e"
hang_killed snapshot "$e" HUP
[ "$rc" = 129 ] || letw_fail "snapshot hung, second signal SIGHUP: exit $rc: $(cat "$T/snapshot.err")"
grep -qF "snapshot: killed by a second signal: the snapshot of \`$e\` may be missing or cut (its statedump may have been regenerated); run \`lttng-etw snapshot '$e' --pid $pid\` again" "$T/snapshot.err" ||
	letw_fail "snapshot killed by a second signal said: $(cat "$T/snapshot.err")"

touch "$f.exit"
wait "$pid" || letw_fail "letw-scenario failed"
letw_untrack "$pid"
echo "session_signal_e2e: ok"
