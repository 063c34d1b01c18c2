#!/bin/bash
# SPDX-License-Identifier: MIT
# Churn stress with a real LTTng session, checked from the trace.
# usage: churn.sh CHURN_BIN [letw-churn options...]
# Env: LETW_CHURN_CHECK (checker path, default: check_churn.py next to this).
# A blocking channel plus LTTNG_UST_ALLOW_BLOCKING=1 makes the session
# lossless; the checker still fails if babeltrace2 reports any discarded
# event or packet, rather than claiming a result from a partial trace.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
bin=$1; shift
[ -x "$bin" ] || letw_fail "no churn binary: $bin"
letw_ensure_sessiond

go="$LETW_TEST_TMP/go"
out="$LETW_TEST_TMP/churn.out"
LTTNG_UST_ALLOW_BLOCKING=1 "$bin" --go-file "$go" "$@" >"$out" 2>"$LETW_TEST_TMP/churn.err" &
pid=$!
letw_track "$pid"
# Stop waiting as soon as the program is gone (a sanitizer report at
# startup), and show why: its stderr used to be dropped on this path.
churn_ready() { grep -q '^ready' "$out" || ! kill -0 "$pid"; }
if ! letw_wait_for churn_ready || ! grep -q '^ready' "$out"; then
	tail -n 60 "$LETW_TEST_TMP/churn.err" >&2
	letw_fail "churn program did not get ready"
fi

s=$(letw_session_create letw-churn)
letw_session_track "$s" "$pid"
lttng enable-channel -u -s "$s" --subbuf-size=4M --num-subbuf=8 \
	--blocking-timeout=inf chan >/dev/null || letw_fail "enable-channel"
lttng add-context -u -s "$s" -c chan -t vpid -t vtid >/dev/null || letw_fail "add-context"
lttng enable-event -u -s "$s" -c chan 'letw_runtime:*,letw_rundown:*,letw_churn:*' \
	--filter "\$ctx.vpid == $pid" >/dev/null || letw_fail "enable-event"
lttng start "$s" >/dev/null || letw_fail "start"
touch "$go"
wait "$pid"; rc=$?
cat "$out" >&2
cat "$LETW_TEST_TMP/churn.err" >&2
lttng stop "$s" >/dev/null || letw_fail "stop"
[ "$rc" -eq 0 ] || letw_fail "churn program exited with $rc"
check="${LETW_CHURN_CHECK:-$here/check_churn.py}"
# --self-test: the checker must be able to fail; a dropped and a
# duplicated rundown record and code bytes of a record not emitted,
# injected into this very trace after reading it, must all be caught.
# letw-churn backs some of thread 0's code with readable memory: then the
# passes must carry code-bytes events (and each must belong to a record
# the pass emitted), so the attachment path is exercised in every build.
extras=0
grep -q '^code-readable 1' "$out" && extras=1
/usr/bin/python3 "$check" --vpid "$pid" --min-passes 3 --min-extras "$extras" --self-test \
	$LETW_CHURN_CHECK_ARGS "$LETW_TEST_TMP/$s" || letw_fail "trace check"
echo "PASS: churn $*"
