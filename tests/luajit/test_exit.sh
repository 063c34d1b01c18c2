#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A Lua script that leaves through os.exit does not return to the host's
# main, where the host retires its traces before lua_close. The host wraps
# os.exit so that its teardown runs first:
#  - os.exit(7, true): LuaJIT closes the lua_State, unmapping the code;
#    every trace must be unpublished before (each load pairs with an
#    unload in the trace, check_pairs.py), the exit status is the script's
#    and --stats still reports the counters;
#  - os.exit(9): the same, without the close.
# usage: test_exit.sh BUILD_DIR PLUGIN_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
host="$build/bin/letw-luajit"
cli="$build/bin/lttng-etw"

letw_ensure_sessiond

# run_case NAME CODE [close]
run_case() {
	local name=$1 code=$2 close=${3:-}
	local go="$LETW_TEST_TMP/go-$name" out="$LETW_TEST_TMP/host-$name.out"
	local pid s rc stats published unpublished
	mkfifo "$go" || letw_fail "mkfifo"
	LTTNG_UST_ALLOW_BLOCKING=1 "$host" --stats "$here/exits.lua" "$go" "$code" $close \
		>"$out" 2>&1 &
	pid=$!
	letw_track "$pid"
	# `lttng-etw start --pid` ignores a process without a control socket
	# yet: it used to run when the lttng commands below were done, and a
	# host slower to start (under TSan) had none then.
	letw_wait_for letw_ctl "$pid" ping >/dev/null ||
		letw_fail "$name: the host never answered on its control socket: $(cat "$out")"
	s=$(letw_session_create "luajit-exit-$name") || exit 1
	letw_session_track "$s" "$pid"
	lttng enable-channel -u -s "$s" --blocking-timeout=inf chan >/dev/null ||
		letw_fail "enable-channel"
	for ev in 'letw_runtime:*' 'letw_rundown:*'; do
		lttng enable-event -u -s "$s" -c chan "$ev" >/dev/null || letw_fail "enable $ev"
	done
	lttng add-context -u -s "$s" -c chan -t vpid >/dev/null || letw_fail "add-context"
	"$cli" start "$s" --pid "$pid" >"$LETW_TEST_TMP/start-$name.log" 2>&1 ||
		letw_fail "lttng-etw start: $(cat "$LETW_TEST_TMP/start-$name.log")"
	timeout 30 sh -c 'echo go >"$1"' sh "$go" || letw_fail "$name: the script never opened $go"
	wait "$pid"
	rc=$?
	[ "$rc" = "$code" ] || letw_fail "$name: letw-luajit exited with $rc, the script asked for $code: $(cat "$out")"
	lttng stop "$s" >/dev/null || letw_fail "stop"
	stats=$(grep 'traces published' "$out") ||
		letw_fail "$name: no host statistics: the teardown did not run: $(cat "$out")"
	published=$(echo "$stats" | sed -n 's/.*traces published \([0-9]*\),.*/\1/p')
	unpublished=$(echo "$stats" | sed -n 's/.*unpublished \([0-9]*\),.*/\1/p')
	[ "${published:-0}" -ge 3 ] || letw_fail "$name: only ${published:-0} traces published: $stats"
	[ "$published" = "$unpublished" ] || letw_fail "$name: $stats"
	echo "$stats" | grep -q 'errors 0$' || letw_fail "$name: the host saw lttng-etw errors: $stats"
	$LETW_PY "$here/check_pairs.py" "$LETW_TEST_TMP/$s" "$pid" "$published" ||
		letw_fail "$name: loads and unloads do not pair"
	letw_log "$name: exit $rc, $stats"
}

run_case close 7 close
run_case plain 9
echo "PASS: os.exit with and without close: every trace unpublished before the exit, status kept"
