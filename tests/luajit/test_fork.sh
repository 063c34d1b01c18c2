#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A Lua script that forks (LuaJIT's FFI: ffi.C.fork) gets a child that
# runs Lua and compiles traces on its own. lttng-etw and lttng-ust need
# their fork hooks for that child to be traceable: the host's own fork()
# (runtimes/luajit/fork.c, exported for the FFI) runs letw_fork_prepare/
# parent/child around the next fork(). Without them the child has no
# control socket (`lttng-etw start --pid CHILD` refuses it) and is not
# registered with lttng-sessiond. Here a session that tracks the child
# only is started late with `lttng-etw start --pid CHILD`: it must
# succeed, and the child's DCStart pass must name the trace it compiled
# after the fork. Run twice: plain, and with liblttng-ust-fork.so
# preloaded (as LTTng asks of programs that fork), whose fork() wrapper
# then runs inside the host's, after lttng-etw's prepare hook.
# usage: test_fork.sh BUILD_DIR PLUGIN_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
host="$1/bin/letw-luajit"
cli="$1/bin/lttng-etw"

letw_ensure_sessiond

# one_run NAME [PRELOAD]: the scenario, the host started with PRELOAD
# in LD_PRELOAD (liblttng-ust-fork.so: its fork() wrapper then runs
# inside ours, after lttng-etw's prepare hook, fork.c).
one_run() {
	local name=$1 preload=${2:-} go pidfile out parent child s rc line
	go="$LETW_TEST_TMP/go-$name" pidfile="$LETW_TEST_TMP/child-$name.pid" out="$LETW_TEST_TMP/host-$name.out"
	mkfifo "$go" || letw_fail "$name: mkfifo"
	LD_PRELOAD=$preload "$host" "$here/forks.lua" "$pidfile" "$go" >"$out" 2>&1 &
	parent=$!
	letw_track "$parent"
	letw_wait_for test -s "$pidfile" || letw_fail "$name: the child never wrote its pid: $(cat "$out")"
	child=$(cat "$pidfile")
	letw_track "$child"
	s=$(letw_session_dcstart "luajit-fork-$name" "$child" "\$ctx.vpid == $child") || exit 1
	timeout 60 "$cli" start "$s" --pid "$child" >"$LETW_TEST_TMP/start-$name.log" 2>&1 ||
		letw_fail "$name: lttng-etw start --pid $child (the forked child): $(cat "$LETW_TEST_TMP/start-$name.log")"
	timeout 30 sh -c 'echo go >"$1"' sh "$go" || letw_fail "$name: the child never opened $go"
	wait "$parent"
	rc=$?
	letw_untrack "$parent"
	letw_untrack "$child" # reaped by the parent
	[ "$rc" = 0 ] || letw_fail "$name: letw-luajit exited with $rc: $(cat "$out")"
	lttng stop "$s" >/dev/null || letw_fail "$name: stop"
	line=$(grep -n 'CHILD LOOP' "$here/forks.lua" | cut -d: -f1)
	letw_trace_has "$LETW_TEST_TMP/$s" "method_dcstart:.*vpid = $child\\b.*name = \"trace#[0-9]+ @forks\\.lua:$line\"" ||
		letw_fail "$name: the child's DCStart pass does not name its trace at forks.lua:$line: $(letw_trace_text "$LETW_TEST_TMP/$s" | grep -c letw_rundown) rundown event(s)"
}

one_run plain
ust_fork=$(ldconfig -p | awk '/liblttng-ust-fork\.so\.1 /{print $NF; exit}')
[ -n "$ust_fork" ] || letw_fail "liblttng-ust-fork.so.1 is not installed (liblttng-ust1)"
one_run ust-fork-preloaded "$ust_fork"
echo "PASS: a child forked from Lua answers lttng-etw start and its DCStart names its trace"
