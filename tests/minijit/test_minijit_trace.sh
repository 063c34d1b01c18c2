#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end, real lttng-sessiond: letw-minijit's letw_runtime events
# (loads, re-tier unloads, frees, stubs, modules) replayed from the trace
#  1. without --churn: rebuild exactly the runtime's own list of live code;
#  2. with --churn: stay consistent (no overlapping live ranges, unloads of
#     live records only, new version loaded before the old is unloaded).
# Both processes must also exit 0 (every call returned the reference value);
# usage errors exit 2.
# usage: test_minijit_trace.sh PATH/TO/letw-minijit
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
jit=$1

letw_ensure_sessiond
s=$(letw_session_create minijit)
# Roomy buffers: the check needs every event, and says so if one is lost.
lttng enable-channel -u -s "$s" --subbuf-size=4M --num-subbuf=8 mj >/dev/null ||
	letw_fail "enable-channel"
lttng enable-event -u -s "$s" -c mj 'letw_runtime:*' >/dev/null || letw_fail "enable-event"
lttng add-context -u -s "$s" -c mj -t vpid >/dev/null || letw_fail "add-context"
lttng start "$s" >/dev/null || letw_fail "start"

plain="$LETW_TEST_TMP/plain.txt"
"$jit" --functions 1500 --seconds 0.5 --list "$plain" --list-hot >"$LETW_TEST_TMP/plain.out" &
p1=$!
letw_track "$p1"
wait "$p1" || letw_fail "letw-minijit exited with $?"
grep -q ' 0 wrong results' "$LETW_TEST_TMP/plain.out" || letw_fail "no clean summary line"
test -e "$plain.ready" || letw_fail "no $plain.ready"

churn="$LETW_TEST_TMP/churn.txt"
"$jit" --functions 1500 --seconds 2 --churn --churn-pause-us 0 --list "$churn" \
	>"$LETW_TEST_TMP/churn.out" &
p2=$!
letw_track "$p2"
wait "$p2" || letw_fail "letw-minijit --churn exited with $?"
grep -Eq ' [1-9][0-9]* churn ops' "$LETW_TEST_TMP/churn.out" || letw_fail "churn did nothing"

lttng stop "$s" >/dev/null || letw_fail "stop"
$LETW_PY "$here/check_minijit_trace.py" "$LETW_TEST_TMP/$s" "$p1" "$plain" exact ||
	letw_fail "plain run: trace does not match the runtime's live code"
$LETW_PY "$here/check_minijit_trace.py" "$LETW_TEST_TMP/$s" "$p2" "$churn" churn ||
	letw_fail "churn run: inconsistent trace"
# Usage errors exit 2 before anything is set up (scripts tell them from a
# runtime failure, exit 1).
for args in "--reuse $LETW_TEST_TMP/r --hot 2" "--reuse $LETW_TEST_TMP/r --functions 3" \
	"--reuse $LETW_TEST_TMP/r --churn" "--bogus"; do
	# shellcheck disable=SC2086 # one word per option
	LETW_DISABLE=1 "$jit" $args --seconds 0 >/dev/null 2>"$LETW_TEST_TMP/usage.err"
	rc=$?
	[ "$rc" -eq 2 ] || letw_fail "letw-minijit $args: exit $rc, want 2 (usage)"
	test -s "$LETW_TEST_TMP/usage.err" || letw_fail "letw-minijit $args: no message"
done

echo "PASS: minijit loads/unloads rebuild its live set; churn stays consistent"
