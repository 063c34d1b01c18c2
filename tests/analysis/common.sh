# SPDX-License-Identifier: MIT
# Helpers for the analysis end-to-end tests. Source after setting nothing:
# the binaries come from LETW_BIN_DIR and the plugin from LETW_BT_PLUGIN_DIR
# (set by ctest), and every session goes through tests/lib/lttng.sh so it
# is destroyed on exit.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lttng.sh"

: "${LETW_BIN_DIR:?set by ctest: the bin directory of the build}"
: "${LETW_BT_PLUGIN_DIR:?set by ctest: the directory holding the etw plugin}"
LETW_CLI=$LETW_BIN_DIR/lttng-etw
LETW_SCENARIO=$LETW_BIN_DIR/letw-scenario
LETW_MINIJIT=$LETW_BIN_DIR/letw-minijit

letw_ensure_sessiond

# anl_session PREFIX PID [CHANNEL] [EVENTS...]: a session recording the
# given events (default: all runtime events and the DCStart rundown) of
# process PID only (tracked and filtered), with the vpid/vtid contexts (unless ANL_NO_CONTEXT is
# set). Prints its name.
anl_session() {
	local prefix=$1 pid=$2 chan=${3:-} s ev
	shift 3 2>/dev/null || shift $#
	local events=("$@")
	[ ${#events[@]} -gt 0 ] || events=('letw_runtime:*' 'letw_rundown:*dcstart*')
	s=$(letw_session_create "$prefix") || exit 1
	# Only PID's tracepoints switch on for it: other lttng-etw processes
	# on the machine (other tests, other developers) run no pass for us.
	letw_session_track "$s" "$pid"
	if [ -n "$chan" ]; then
		lttng enable-channel -u -s "$s" $chan >/dev/null || letw_fail "enable-channel $chan"
		chan=$(echo "$chan" | awk '{print $NF}')
	fi
	for ev in "${events[@]}"; do
		lttng enable-event -u -s "$s" ${chan:+-c "$chan"} "$ev" \
			--filter "\$ctx.vpid == $pid" >/dev/null || letw_fail "enable-event $ev"
	done
	if [ -z "${ANL_NO_CONTEXT:-}" ]; then
		lttng add-context -u -s "$s" ${chan:+-c "$chan"} -t vpid -t vtid >/dev/null ||
			letw_fail "add-context"
	fi
	echo "$s"
}

# anl_trace SESSION: its output directory.
anl_trace() {
	echo "$LETW_TEST_TMP/$1"
}

# anl_watch SESSION OUT [CMD...]: `lttng-etw watch --session SESSION -v`
# (CMD: the lttng-etw to run, by default $LETW_CLI) writing OUT, tracked,
# waited for until it registered; its triggers recorded in
# $LETW_TEST_TMP/triggers for the test's cleanup to remove once the session
# is destroyed (rotation_e2e says why not before). Sets ANL_WATCH (pid).
anl_watch() {
	local s=$1 out=$2
	shift 2
	[ $# -gt 0 ] || set -- "$LETW_CLI"
	"$@" watch --session "$s" -v >"$out" 2>&1 &
	set -- "$s" "$out"
	ANL_WATCH=$!
	letw_track "$ANL_WATCH"
	letw_wait_for grep -q "watching the rotations of \`$1\`" "$2" ||
		letw_fail "watch of $1 did not register: $(cat "$2")"
	"$LETW_BIN_DIR/letw-test-triggers" "lttng-etw-watch.$ANL_WATCH-" >>"$LETW_TEST_TMP/triggers"
}

# anl_watch_refused PID OUT SESSION PEER WHAT: the watch PID (writing OUT)
# must end within 10 s, exit 1, naming the watch PEER of SESSION as the
# reason; WHAT names the case in a failure. One that runs on has its
# triggers recorded for the cleanup.
anl_watch_refused() {
	local rc=0
	LETW_WAIT_SECONDS=10 letw_wait_for eval '! letw_running '"$1" || {
		"$LETW_BIN_DIR/letw-test-triggers" "lttng-etw-watch.$1-" >>"$LETW_TEST_TMP/triggers"
		letw_fail "$5: a second watch of $3 runs beside $4: $(cat "$2")"
	}
	wait "$1" || rc=$?
	letw_untrack "$1"
	[ "$rc" = 1 ] && grep -Eq "another \`lttng-etw watch\` \(pid $4\) (already watches|started watching) session \`$3\`" "$2" ||
		letw_fail "$5: exit $rc: $(cat "$2")"
}

# anl_watch_stop PID OUT WHAT: the watch PID (writing OUT) stopped by
# SIGTERM, its way to stop: it must exit 0 (WHAT names it in a failure).
anl_watch_stop() {
	local rc=0
	kill -TERM "$1"
	wait "$1" || rc=$?
	letw_untrack "$1"
	[ "$rc" = 0 ] || letw_fail "$3 exited $rc on SIGTERM: $(cat "$2")"
}

# The shared root lttng-sessiond stopped (anl_sessiond_stop: found by its
# pid file's first line, faults.sh says why, not any lttng-sessiond of the
# machine; waited for) and started again (anl_sessiond_back: once the
# stopped one is gone, since a new one started while it still shuts down
# would fail on its sockets; a no-op when it answers). A test that stops
# it calls anl_sessiond_back on every way out, for the tests that follow.
ANL_SESSIOND=
anl_sessiond_stop() {
	ANL_SESSIOND=$(head -n 1 /var/run/lttng/lttng-sessiond.pid 2>/dev/null) &&
		[ "$(cat "/proc/$ANL_SESSIOND/comm" 2>/dev/null)" = lttng-sessiond ] ||
		letw_fail "no root lttng-sessiond"
	kill -TERM "$ANL_SESSIOND"
	letw_wait_for letw_pid_gone "$ANL_SESSIOND" ||
		letw_fail "lttng-sessiond $ANL_SESSIOND did not stop"
}
anl_sessiond_back() {
	[ -z "$ANL_SESSIOND" ] || letw_wait_for letw_pid_gone "$ANL_SESSIOND" ||
		letw_fail "lttng-sessiond $ANL_SESSIOND did not stop"
	letw_ensure_sessiond
}

# anl_perf_minijit OUT ARGS...: letw-minijit ARGS, with LETW_JITDUMP_DIR=
# $LETW_TEST_TMP/jit, started by `perf record -q -k mono -e cpu-clock -o
# $LETW_TEST_TMP/perf.data` (so perf sees every mapping, the placeholder's
# included), its output in OUT. It waits on the FIFO $LETW_TEST_TMP/go
# until the caller writes it (once a session traces it). Sets
# ANL_PERF_PID and ANL_PID (the workload), both tracked.
anl_perf_minijit() {
	local out=$1 t=$LETW_TEST_TMP
	shift
	mkdir -p "$t/jit"
	mkfifo "$t/go"
	perf record -q -k mono -e cpu-clock -o "$t/perf.data" -- \
		bash -c 'read x <"$1"; shift; exec "$@"' sh "$t/go" \
		env LETW_JITDUMP_DIR="$t/jit" "$LETW_MINIJIT" "$@" >"$out" 2>&1 &
	ANL_PERF_PID=$!
	letw_track "$ANL_PERF_PID"
	letw_wait_for pgrep -P "$ANL_PERF_PID" >/dev/null || letw_fail "perf did not start the workload"
	ANL_PID=$(pgrep -P "$ANL_PERF_PID")
	letw_track "$ANL_PID"
}

# anl_wait_file FILE: wait for a file the traced program creates.
anl_wait_file() {
	letw_wait_for test -e "$1" || letw_fail "timed out waiting for $1"
}

# anl_json_get FILE EXPR: evaluate a Python expression on the parsed JSON
# report `r` (e.g. "r['summary']['complete']").
anl_json() {
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# A network namespace of the test's own, held by a sleeping process:
# lttng-etw's control sockets are abstract, so commands run in it
# (anl_in_netns) reach only the test's processes started in it, and the
# all-process forms (no --pid) can be tested. anl_netns_start returns 1
# when unshare -n or nsenter cannot work here (the caller skips, saying
# so); anl_netns_stop ends it.
anl_netns_start() {
	unshare -n true 2>/dev/null && nsenter --help >/dev/null 2>&1 || return 1
	unshare -n sleep 600 &
	ANL_NETNS=$!
	letw_track "$ANL_NETNS"
	letw_wait_for anl_netns_own || letw_fail "unshare -n: no network namespace"
}
anl_netns_own() { [ "$(readlink "/proc/$ANL_NETNS/ns/net")" != "$(readlink /proc/self/ns/net)" ]; }
# In the foreground only: started with & it is a subshell, whose pid ($!)
# is not the command's (start a background process with nsenter itself,
# which execs it).
anl_in_netns() { nsenter -t "$ANL_NETNS" -n "$@"; }
anl_netns_stop() {
	kill "$ANL_NETNS" 2>/dev/null
	wait "$ANL_NETNS" 2>/dev/null
	letw_untrack "$ANL_NETNS"
}
