#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A user's lttng-etw commands and another user's processes. The provider
# serves root and its own user only; the process listing (/proc/net/unix)
# shows everyone's. As `nobody`, against a root process:
#   - `status` / `status --all` and `capture-state --all` skip it with a
#     count on stderr and exit 0 (a machine running root's runtimes must not
#     fail every all-process command of its users);
#   - `status --pid` and `capture-state --pid` (with and without --wait)
#     name it: permission denied, exit 1 (never "capture-state requested",
#     which the provider would refuse unseen).
# As root, the same process answers (so the checks above can fail).
# usage: test_other_user.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
cli=$build/bin/lttng-etw

[ "$(id -u)" = 0 ] || letw_fail "needs root (it runs commands as nobody)"
id nobody >/dev/null 2>&1 || letw_fail "no user nobody"
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}
# The build tree may sit where nobody cannot enter (a clone in /root): the
# CLI (no library of the build tree) is run from a copy nobody can reach.
chmod 711 "$LETW_TEST_TMP"
mkdir -m 755 "$LETW_TEST_TMP/bin" && cp "$cli" "$LETW_TEST_TMP/bin/" ||
	letw_fail "cannot copy $cli"
cli=$LETW_TEST_TMP/bin/lttng-etw
as_nobody test -x "$cli" || letw_fail "nobody cannot run $cli"

live="$LETW_TEST_TMP/live.txt"
"$build/bin/letw-minijit" --functions 100 --seconds 60 --list "$live" \
	>"$LETW_TEST_TMP/jit.log" 2>&1 &
pid=$!
letw_track "$pid"
letw_wait_for test -e "$live.ready" || letw_fail "runtime did not start"
root_status() { "$cli" status --pid "$pid" >/dev/null; }
letw_wait_for root_status || letw_fail "root cannot reach pid $pid"

# run NAME CMD... : stdout, stderr and status of CMD run as nobody.
run() {
	local name=$1; shift
	as_nobody "$cli" "$@" >"$LETW_TEST_TMP/$name.out" 2>"$LETW_TEST_TMP/$name.err"
	echo $? >"$LETW_TEST_TMP/$name.rc"
}
expect() { # NAME RC STDERR-REGEX : and stdout never names our pid
	local name=$1 rc=$2 re=$3 got
	got=$(cat "$LETW_TEST_TMP/$name.rc")
	[ "$got" = "$rc" ] ||
		letw_fail "$name: exit $got, expected $rc: $(cat "$LETW_TEST_TMP/$name.err")"
	grep -Eq -- "$re" "$LETW_TEST_TMP/$name.err" ||
		letw_fail "$name: stderr does not match '$re': $(cat "$LETW_TEST_TMP/$name.err")"
	! grep -q "pid $pid\b" "$LETW_TEST_TMP/$name.out" ||
		letw_fail "$name: printed pid $pid: $(cat "$LETW_TEST_TMP/$name.out")"
}

run status_all status --all
expect status_all 0 'status: [1-9][0-9]* process\(es\) of other users not listed: permission denied'
run status_default status
expect status_default 0 'of other users not listed'
run capture_all capture-state --all
expect capture_all 0 'capture-state: [1-9][0-9]* process\(es\) of other users not asked'
! grep -q "capture-state requested" "$LETW_TEST_TMP/capture_all.out" ||
	letw_fail "capture-state --all claims to have asked: $(cat "$LETW_TEST_TMP/capture_all.out")"
run status_pid status --pid "$pid"
expect status_pid 1 "pid $pid: permission denied"
run capture_pid capture-state --pid "$pid"
expect capture_pid 1 "pid $pid: permission denied"
run capture_pid_wait capture-state --pid "$pid" --wait --timeout 5
expect capture_pid_wait 1 "pid $pid: permission denied"
for n in status_all status_default capture_all status_pid capture_pid capture_pid_wait; do
	! grep -qi "broken pipe" "$LETW_TEST_TMP/$n.err" || letw_fail "$n: broken pipe"
done

# Control: root is served.
"$cli" status --pid "$pid" >"$LETW_TEST_TMP/root.out" 2>&1 ||
	letw_fail "root's status failed: $(cat "$LETW_TEST_TMP/root.out")"
grep -q "^pid $pid: instance" "$LETW_TEST_TMP/root.out" || letw_fail "root's status: $(cat "$LETW_TEST_TMP/root.out")"
kill -TERM "$pid"
wait "$pid" || letw_fail "runtime exited with $?"
letw_untrack "$pid"
echo "PASS: another user's process is skipped by --all commands and refused by name"
