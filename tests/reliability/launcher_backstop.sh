#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test launcher's backstops (tests/lib/launch.c, launch_state.c), on
# tests made to misbehave, each under a launcher of its own:
#  1. a test that creates a session and a trigger, then ignores SIGTERM
#     and hangs: at its timeout the launcher kills it, then destroys the
#     session and removes the trigger it left (reported as LEFTOVER
#     SESSION / TRIGGER), and removes its directory. Sessions used to leak
#     whenever a cleanup was cut short, with "nothing left" said;
#  2. a test that leaves a process whose main thread exited (a 'Z' leader
#     with a live thread): named as a leftover and killed. It was skipped
#     as a zombie and ran on;
#  3. a test that stops a process that is not its own (as faults.sh stops
#     lttng-consumerd), registered with letw_stop_process, then dies by
#     SIGKILL before its cleanup can resume it: the launcher resumes it
#     (LEFTOVER STOPPED) and fails. The consumer stayed stopped, and every
#     later session on the machine stalled.
# usage: launcher_backstop.sh LAUNCHER ZOMBIE_LEADER TRIGGER_LISTER
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
launcher=$1
zleader=$2
triggers=$3
T=$LETW_TEST_TMP

letw_ensure_sessiond
cat >"$T/inner.sh" <<INNER
. "$here/../lib/lttng.sh"
s=\$(letw_session_create backstop) || exit 1
t=\$(letw_trigger_add backstop --condition=event-rule-matches --type=user \
	--name='letw_backstop_none:*' --action=notify) || exit 1
echo "\$s \$t \$LETW_LAUNCH_STATE" >"$T/names"
trap '' TERM
exec sleep 1000
INNER
rc=0
"$launcher" --name backstop.hang --timeout 10 -- bash "$T/inner.sh" 2>"$T/hang.err" || rc=$?
[ "$rc" = 124 ] || letw_fail "1: launcher exit $rc, want 124 (timeout): $(cat "$T/hang.err")"
read -r s t dir <"$T/names" || letw_fail "1: the inner test registered nothing"
grep -q "^LEFTOVER SESSION: $s (backstop.hang): destroying it" "$T/hang.err" ||
	letw_fail "1: session $s not reported: $(cat "$T/hang.err")"
grep -q "^LEFTOVER TRIGGER: $t (backstop.hang): removing it" "$T/hang.err" ||
	letw_fail "1: trigger $t not reported: $(cat "$T/hang.err")"
! lttng list "$s" >/dev/null 2>&1 || letw_fail "1: session $s left"
left=$("$triggers" "$t") || letw_fail "1: cannot list triggers"
[ -z "$left" ] || letw_fail "1: trigger $t left"
[ ! -e "$dir" ] || letw_fail "1: the launcher's directory $dir is left: $(ls -A "$dir")"
letw_log "1: a hung test's session and trigger destroyed by its launcher"

rc=0
"$launcher" --name backstop.zombie -- "$zleader" 2>"$T/z.err" || rc=$?
[ "$rc" = 1 ] && grep -q "^LEFTOVER: pid [0-9]* .*letw-zombie-lea" "$T/z.err" &&
	grep -q "backstop.zombie left 1 process running" "$T/z.err" ||
	letw_fail "2: launcher exit $rc, want 1 with the leftover named: $(cat "$T/z.err")"
! pgrep -x letw-zombie-lea >/dev/null || letw_fail "2: the process with an exited leader runs on"
letw_log "2: a process whose leader exited is named and killed"
# Started here, outside the inner launcher: not the inner test's own, as
# the consumer is not.
sleep 1000 &
other=$!
letw_track "$other"
cat >"$T/stopper.sh" <<INNER
. "$here/../lib/lttng.sh"
letw_stop_process $other
kill -KILL \$\$
INNER
rc=0
"$launcher" --name backstop.stopped -- bash "$T/stopper.sh" 2>"$T/stop.err" || rc=$?
[ "$rc" != 0 ] && grep -q "^LEFTOVER STOPPED: pid $other (backstop.stopped): resuming it" "$T/stop.err" ||
	letw_fail "3: launcher exit $rc, want non-zero with the stopped process named: $(cat "$T/stop.err")"
st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$other/status")
[ "$st" = S ] || letw_fail "3: the process the test stopped is in state '$st', not resumed"
letw_log "3: a process a killed test left stopped is resumed by its launcher"
echo "PASS: launcher_backstop"
