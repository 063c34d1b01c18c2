#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end, real lttng-sessiond: a session's DCStart pass that could not
# begin (the walker's 8 MiB copy buffer refused, as when the process is out
# of memory: refuse_walkbuf.c) is run again by the control thread, without
# any new request, once memory allows:
#  1. `lttng start`: the statedump's pass fails; while memory stays short it
#     is tried again (said once, however many tries), STATUS counts it as
#     pending; memory back, one DCStart pass lists every live method, an
#     ENABLE_PROVIDER (no capture-state);
#  2. `lttng-etw start --pid`: waits through the failed pass for the one
#     tried again, then exits 0;
#  3. `lttng-etw stop --pid` of a session whose DCEnd is the process's first
#     pass: the same, with one DCEnd pass (an ENABLE of the gained keyword);
#  4. a process without the statedump hook (LETW_STATEDUMP=0: polling, the
#     fallback): its ENABLE pass that could not begin is tried again too;
#  5. the retry runs no pass nobody asked for: a session whose DCStart
#     events were enabled while it ran (no regenerate) gets none from it,
#     and its regenerate is then its first ENABLE;
#  6. polling: a failed pass whose keywords are gone again (its session
#     stopped, another's still recorded) is owed no more, and the next
#     failure is a new streak, logged;
#  7. the retry runs the pass that failed (a DCStart ENABLE), not a new
#     decision taken with the DCEnd events the session enabled meanwhile.
# The control thread used to remember the session as served before its
# pass ran: no pass came again (a later statedump of it would have been a
# capture-state), and `lttng-etw start` and `stop` took the failed pass
# for the end ("ran no DCStart pass", exit 1). Polling took the keywords
# for reported once the pass was asked for, run or not.
# usage: test_retry.sh BUILD_DIR REFUSE_SHIM
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
shim=$2
jit="$build/bin/letw-minijit"
[ -f "$shim" ] || letw_fail "no shim at '$shim'"

letw_ensure_sessiond

# run_jit NAME [VAR=VALUE...]: a runtime whose walker buffer is refused
# while $refuse exists (created here), with the environment given and the
# options in jit_opts; sets pid, live, refuse, err.
jit_opts=()
run_jit() {
	refuse="$LETW_TEST_TMP/refuse.$1"
	live="$LETW_TEST_TMP/live.$1"
	err="$LETW_TEST_TMP/err.$1"
	shift
	touch "$refuse"
	env "$@" LD_PRELOAD="$shim" LETW_REFUSE_MMAP="$refuse" "$jit" --functions 300 --seconds 300 \
		--list "$live" "${jit_opts[@]}" 2>"$err" &
	pid=$!
	letw_track "$pid"
	letw_wait_for test -e "$live.ready" || letw_fail "runtime did not publish its list"
}

# refused_at_least N: the buffer was refused N times or more.
refused_at_least() {
	[ -f "$refuse.refused" ] && [ "$(wc -l < "$refuse.refused")" -ge "$1" ]
}

# end_jit: the runtime exits cleanly.
end_jit() {
	kill -TERM "$pid"
	wait "$pid" || letw_fail "runtime exited with $?: $(cat "$err")"
	letw_untrack "$pid"
}

# refused_no_pass WHAT TRIES: session $s's DCStart pass was tried TRIES
# times or more, and none ran.
refused_no_pass() {
	letw_wait_for refused_at_least 1 || letw_fail "$1: no pass was tried: the buffer was never refused"
	letw_wait_for refused_at_least "$2" ||
		letw_fail "$1: the failed pass was not tried again ($(wc -l < "$refuse.refused") tries)"
	[ "$(letw_ctl_field "$pid" last_dcstart_pass_id)" = 0 ] ||
		letw_fail "$1: a DCStart pass ran while the buffer was refused"
}

# served_once WHAT: memory back, one complete DCStart ENABLE pass of the
# live code reaches session $s, and nothing is pending; the failure was
# logged once, however many tries.
served_once() {
	rm -f "$refuse"
	letw_wait_field "$pid" last_dcstart_pass_id -gt 0 ||
		letw_fail "$1: no DCStart pass once memory was back"
	letw_wait_field "$pid" pending_statedumps = 0 || letw_fail "$1: a pass is still pending"
	lttng stop "$s" >/dev/null || letw_fail "stop"
	$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$pid" "$live" dcstart:1 ||
		letw_fail "$1: the trace holds no single complete DCStart ENABLE pass of the live code"
	n=$(grep -c 'not run' "$err")
	[ "$n" = 1 ] || letw_fail "$1: the failed pass was logged $n times over $(wc -l < "$refuse.refused") tries: $(cat "$err")"
}

# cli_waits_through VERB: `lttng-etw VERB $s --pid $pid` is still waiting
# once the failed pass was tried again; memory back, it exits 0.
cli_waits_through() {
	local out="$LETW_TEST_TMP/$1.out"
	"$build/bin/lttng-etw" "$1" "$s" --pid "$pid" --timeout 120 >"$out" 2>&1 &
	cli=$!
	letw_track "$cli"
	letw_wait_for refused_at_least 2 || letw_fail "lttng-etw $1: the failed pass was not tried again"
	letw_running "$cli" ||
		letw_fail "lttng-etw $1 ended while the session's pass was owed: $(cat "$out")"
	rm -f "$refuse"
	wait "$cli" || letw_fail "lttng-etw $1 failed: $(cat "$out")"
	letw_untrack "$cli"
}

# 1. lttng start
run_jit start
s=$(letw_session_dcstart retry "$pid" "\$ctx.vpid == $pid") || exit 1
lttng start "$s" >/dev/null || letw_fail "start"
refused_no_pass "lttng start" 3
letw_field_is "$pid" pending_statedumps -ge 1 ||
	letw_fail "STATUS says no pass is pending while the session's is owed"
served_once "lttng start"
end_jit

# 2. lttng-etw start --pid
run_jit cli
s=$(letw_session_dcstart retrycli "$pid" "\$ctx.vpid == $pid") || exit 1
cli_waits_through start
lttng stop "$s" >/dev/null || letw_fail "stop"
$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$pid" "$live" dcstart:1 ||
	letw_fail "lttng-etw start: no single complete DCStart ENABLE pass"
end_jit
# 3. lttng-etw stop --pid: the DCEnd pass its regenerate asks for is the
# process's first (the session recorded no rundown event until then).
run_jit stop
s=$(letw_session_create retrystop) || exit 1
letw_session_track "$s" "$pid"
lttng enable-event -u -s "$s" 'letw_runtime:*load' >/dev/null || letw_fail "enable-event"
lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context"
lttng start "$s" >/dev/null || letw_fail "start"
cli_waits_through stop
$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$pid" "$live" dcend:1 ||
	letw_fail "lttng-etw stop: no single complete DCEnd ENABLE pass"
end_jit

# 4. Polling: no statedump hook, the pass goes into every session.
run_jit poll LETW_STATEDUMP=0
s=$(letw_session_dcstart retrypoll "$pid" "\$ctx.vpid == $pid") || exit 1
lttng start "$s" >/dev/null || letw_fail "start"
refused_no_pass polling 2
served_once polling
end_jit

# 5. The retry runs the passes that could not begin, and no other: a
# session that began recording the DCStart events without a statedump
# (enabled in the started session, no regenerate) is owed none, and its
# regenerate is its first ENABLE. The retry used to serve every live
# session it did not know, and this one got an ENABLE from the retry, its
# regenerate then a capture-state (and a session met by the retry between
# its start and its statedump: an ENABLE of a partial event set).
run_jit unasked
s=$(letw_session_dcstart retryowed "$pid" "\$ctx.vpid == $pid") || exit 1
o=$(letw_session_create retryunasked) || exit 1
letw_session_track "$o" "$pid"
lttng enable-event -u -s "$o" 'letw_runtime:*load' >/dev/null || letw_fail "enable-event"
lttng add-context -u -s "$o" -t vpid >/dev/null || letw_fail "add-context"
lttng start "$o" >/dev/null || letw_fail "start $o"
lttng start "$s" >/dev/null || letw_fail "start $s"
letw_wait_for refused_at_least 1 || letw_fail "no pass was tried: the buffer was never refused"
lttng enable-event -u -s "$o" 'letw_rundown:*dcstart*' >/dev/null || letw_fail "enable-event in $o"
rm -f "$refuse"
letw_wait_field "$pid" last_dcstart_pass_id -gt 0 ||
	letw_fail "no DCStart pass once memory was back"
letw_wait_field "$pid" pending_statedumps = 0 || letw_fail "a pass is still pending"
first=$(letw_ctl_field "$pid" last_dcstart_pass_id)
lttng regenerate statedump -s "$o" >/dev/null || letw_fail "regenerate $o"
letw_wait_field "$pid" last_dcstart_pass_id -gt "$first" ||
	letw_fail "no DCStart pass for the regenerate of $o"
letw_wait_field "$pid" pending_statedumps = 0 || letw_fail "a pass is still pending"
lttng stop "$s" >/dev/null || letw_fail "stop $s"
lttng stop "$o" >/dev/null || letw_fail "stop $o"
$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$pid" "$live" dcstart:1 ||
	letw_fail "the owed session holds no single complete DCStart ENABLE pass"
$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$o" "$pid" "$live" dcstart:1 ||
	letw_fail "a session owed no pass got one from the retry: $($LETW_PY "$here/check_rundown.py" --list "$LETW_TEST_TMP/$o" "$pid" | tr '\n' ' ')"
end_jit

# 6. Polling: session k records a kind of pass only (no trigger keyword:
# its ENABLE runs no pass, but the keywords polling has seen are now
# non-zero), a's DCStart pass fails and a stops: the keywords are k's
# again, and no pass is owed. The retry used to stay pending, unseen, and
# the next session's failed pass was taken for a retry of it: nothing
# logged, no error, no warning.
jit_opts=(--verbose)
run_jit pollgone LETW_STATEDUMP=0
jit_opts=()
k=$(letw_session_create retrykind) || exit 1
letw_session_track "$k" "$pid"
lttng enable-event -u -s "$k" 'letw_rundown:method_lines_start' >/dev/null || letw_fail "enable-event"
lttng add-context -u -s "$k" -t vpid >/dev/null || letw_fail "add-context"
lttng start "$k" >/dev/null || letw_fail "start $k"
letw_wait_for grep -q 'control request code=1 .*provider=1' "$err" ||
	letw_fail "polling saw no ENABLE of $k's keywords"
a=$(letw_session_dcstart retrygone "$pid" "\$ctx.vpid == $pid") || exit 1
lttng start "$a" >/dev/null || letw_fail "start $a"
letw_wait_for refused_at_least 1 || letw_fail "no pass was tried: the buffer was never refused"
lttng stop "$a" >/dev/null || letw_fail "stop $a"
letw_wait_for grep -q 'polling asked for is owed no more' "$err" ||
	letw_fail "polling: the failed pass still owed once its keywords were gone: $(cat "$err")"
b=$(letw_session_dcstart retrynext "$pid" "\$ctx.vpid == $pid") || exit 1
tries=$(wc -l < "$refuse.refused")
lttng start "$b" >/dev/null || letw_fail "start $b"
letw_wait_for refused_at_least $((tries + 1)) || letw_fail "no pass was tried for $b"
n=$(grep -c 'not run' "$err")
[ "$n" = 2 ] || letw_fail "polling: two streaks of failed passes logged $n errors: $(cat "$err")"
rm -f "$refuse"
letw_wait_field "$pid" last_dcstart_pass_id -gt 0 ||
	letw_fail "polling: no DCStart pass once memory was back"
lttng stop "$b" >/dev/null || letw_fail "stop $b"
lttng stop "$k" >/dev/null || letw_fail "stop $k"
$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$b" "$pid" "$live" dcstart:1 ||
	letw_fail "polling: no single complete DCStart ENABLE pass into $b"
end_jit
# 7. The retry runs the pass that could not begin, not a new decision:
# session s's start asked for a DCStart ENABLE, which fails; s then
# enables its DCEnd events while its pass is owed (no regenerate). The
# retry used to ask the memory again with s's keywords as they were then:
# an ENABLE of DCStart and DCEnd, a DCEnd pass nobody asked for, and DCEnd
# remembered, so the regenerate that asks for it (as `lttng-etw stop`
# does) ran a capture-state, not its DCEnd ENABLE.
run_jit flavour
s=$(letw_session_dcstart retryflavour "$pid" "\$ctx.vpid == $pid") || exit 1
lttng start "$s" >/dev/null || letw_fail "start"
letw_wait_for refused_at_least 1 || letw_fail "no pass was tried: the buffer was never refused"
lttng enable-event -u -s "$s" 'letw_rundown:*dcend*' --filter "\$ctx.vpid == $pid" >/dev/null ||
	letw_fail "enable-event dcend"
# rundown_mask has RUNDOWN_END (0x100): the retry after this sees it.
letw_wait_for eval '(( $(letw_ctl_field "$pid" rundown_mask) & 0x100 ))' ||
	letw_fail "the DCEnd events were never enabled in the runtime"
tries=$(wc -l < "$refuse.refused")
letw_wait_for refused_at_least $((tries + 1)) || letw_fail "the failed pass was not tried again"
rm -f "$refuse"
letw_wait_field "$pid" last_dcstart_pass_id -gt 0 || letw_fail "no DCStart pass once memory was back"
letw_wait_field "$pid" pending_statedumps = 0 || letw_fail "a pass is still pending"
lttng regenerate statedump -s "$s" >/dev/null || letw_fail "regenerate"
letw_wait_field "$pid" last_dcend_pass_id -gt 0 || letw_fail "no DCEnd pass for the regenerate"
letw_wait_field "$pid" pending_statedumps = 0 || letw_fail "a pass is still pending"
lttng stop "$s" >/dev/null || letw_fail "stop"
$LETW_PY "$here/check_rundown.py" "$LETW_TEST_TMP/$s" "$pid" "$live" dcstart:1 dcend:1 ||
	letw_fail "the retry did not run the DCStart ENABLE that failed, then the regenerate its DCEnd ENABLE: $($LETW_PY "$here/check_rundown.py" --list "$LETW_TEST_TMP/$s" "$pid" | tr '\n' ' ')"
end_jit
echo "PASS: DCStart and DCEnd passes that could not begin ran once memory was back, with the statedump hook and without"
