#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A Lua script that forks (LuaJIT's FFI: ffi.C.fork) gets a child that
# runs Lua and compiles traces on its own. lttng-etw and lttng-ust need
# their fork hooks for that child to be traceable: the host registers
# letw_fork_prepare/parent/child with pthread_atfork. Without them the
# child has no control socket (`lttng-etw start --pid CHILD` refuses it)
# and is not registered with lttng-sessiond. Here a session that tracks
# the child only is started late with `lttng-etw start --pid CHILD`: it
# must succeed, and the child's DCStart pass must name the trace it
# compiled after the fork.
# usage: test_fork.sh BUILD_DIR PLUGIN_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
host="$1/bin/letw-luajit"
cli="$1/bin/lttng-etw"

letw_ensure_sessiond

go="$LETW_TEST_TMP/go" pidfile="$LETW_TEST_TMP/child.pid" out="$LETW_TEST_TMP/host.out"
mkfifo "$go" || letw_fail "mkfifo"
"$host" "$here/forks.lua" "$pidfile" "$go" >"$out" 2>&1 &
parent=$!
letw_track "$parent"
letw_wait_for test -s "$pidfile" || letw_fail "the child never wrote its pid: $(cat "$out")"
child=$(cat "$pidfile")
letw_track "$child"
s=$(letw_session_dcstart luajit-fork "$child" "\$ctx.vpid == $child") || exit 1
timeout 60 "$cli" start "$s" --pid "$child" >"$LETW_TEST_TMP/start.log" 2>&1 ||
	letw_fail "lttng-etw start --pid $child (the forked child): $(cat "$LETW_TEST_TMP/start.log")"
timeout 30 sh -c 'echo go >"$1"' sh "$go" || letw_fail "the child never opened $go"
wait "$parent"
rc=$?
letw_untrack "$parent"
letw_untrack "$child" # reaped by the parent
[ "$rc" = 0 ] || letw_fail "letw-luajit exited with $rc: $(cat "$out")"
lttng stop "$s" >/dev/null || letw_fail "stop"
line=$(grep -n 'CHILD LOOP' "$here/forks.lua" | cut -d: -f1)
letw_trace_has "$LETW_TEST_TMP/$s" "method_dcstart:.*vpid = $child\\b.*name = \"trace#[0-9]+ @forks\\.lua:$line\"" ||
	letw_fail "the child's DCStart pass does not name its trace at forks.lua:$line: $(letw_trace_text "$LETW_TEST_TMP/$s" | grep -c letw_rundown) rundown event(s)"
echo "PASS: a child forked from Lua answers lttng-etw start and its DCStart names its trace"
