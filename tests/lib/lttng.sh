# SPDX-License-Identifier: MIT
# Shared helpers for end-to-end tests that drive a real lttng-sessiond.
# Source it from a bash test script:  . "$(dirname "$0")/../lib/lttng.sh"
#
# Every session a test creates goes through letw_session_create, which
# registers it for destruction on exit (success, failure or signal), so a
# failing test never leaks a session. Callers use it as s=$(...), a
# subshell, so the registry is a file, not a shell variable.

set -o pipefail

LETW_TEST_SESSIONS=() # sessions created without letw_session_create
LETW_TEST_PIDS=()
# Under TMPDIR: the launcher's directory, where it finds the sessions and
# triggers files below if this script is killed before its cleanup ends.
LETW_TEST_TMP=$(mktemp -d --tmpdir letw-test.XXXXXX)

# letw_running PID : the process exists and has not exited (a zombie, an
# exited child not reaped yet, answers kill -0 but is done).
letw_running() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st%% *}" != Z ]
}

# lttng destroy NAME, again while the session is still listed. On Ctrl-C,
# or when a test launcher tears a test down (tests/lib/launch.c), every
# process of the tree gets SIGINT or SIGTERM at about the same moment, and
# the `lttng destroy` this cleanup has just started can be one of them:
# the client installs its own SIGTERM handler, so the signal disposition
# set in letw_cleanup does not protect it. A launcher signals once (then
# SIGKILLs after its grace), so a second try outlives the burst.
# letw_destroy_session [--no-wait] NAME
# --no-wait: return once sessiond has taken the session off its list,
# without waiting for the end of its destruction. That end is a last
# rotation (to a null chunk when the session never rotated) whose
# completion sessiond's rotation thread checks on a timer: ~0.5 s a
# session, 60 s of each test command. Only for a session whose trace the
# test is done with, that never rotated (its last rotation would rename a
# chunk after the call: rotation_e2e reads those archives) and that no
# trigger of the test acts on (sessiond 2.13 crashes at a later rotation
# of a session whose rotation trigger was removed: letw_cleanup).
letw_destroy_session() {
	local try nowait=()
	[ "$1" = --no-wait ] && { nowait=(--no-wait); shift; }
	for try in 1 2 3; do
		lttng destroy "${nowait[@]}" "$1" >/dev/null 2>&1
		lttng list "$1" >/dev/null 2>&1 || return 0
	done
}

letw_cleanup() {
	local s p deadline
	# The same burst would otherwise cut this cleanup short: the INT/TERM
	# trap's `exit` ends the script from inside the EXIT trap, leaking
	# the sessions not yet destroyed (1 run in 6 when a test run got
	# Ctrl-C). A launcher still SIGKILLs whatever hangs past its grace.
	trap '' INT TERM HUP
	# First: what a session needs to end may be stopped (a consumer).
	letw_resume_processes
	for p in "${LETW_TEST_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for s in "${LETW_TEST_SESSIONS[@]}"; do
		letw_destroy_session "$s"
	done
	if [ -f "$LETW_TEST_TMP/sessions" ]; then
		while read -r s; do
			letw_destroy_session "$s"
		done < "$LETW_TEST_TMP/sessions"
	fi
	# Bounded: a process that ignores SIGTERM (or hangs in its exit) is
	# killed after LETW_TERM_SECONDS (10), so the test still ends.
	deadline=$((SECONDS + ${LETW_TERM_SECONDS:-10}))
	for p in "${LETW_TEST_PIDS[@]}"; do
		while letw_running "$p" && [ "$SECONDS" -lt "$deadline" ]; do
			sleep 0.1
		done
		letw_running "$p" && kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	# Triggers after the sessions (destroy waits for the last rotation):
	# sessiond 2.13 crashes at a later rotation of a session whose rotation
	# trigger was removed (analysis/README.md, watch).
	if [ -f "$LETW_TEST_TMP/triggers" ]; then
		while read -r s; do
			lttng remove-trigger "$s" >/dev/null 2>&1
		done < "$LETW_TEST_TMP/triggers"
	fi
	if [ -z "${LETW_KEEP_TMP:-}" ]; then rm -rf "$LETW_TEST_TMP"; fi
}
trap letw_cleanup EXIT
trap 'exit 130' INT TERM

letw_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

letw_log() {
	echo "# $*" >&2
}

# Start a root lttng-sessiond if none answers.
letw_ensure_sessiond() {
	if ! lttng list >/dev/null 2>&1; then
		# Shared, outliving this test: nothing of the test's environment
		# (its TMPDIR is the launcher's directory, removed at its end).
		# Ours may lose a race: on a machine where systemd runs Debian's
		# lttng-sessiond.service (Restart=on-failure), a daemon a test
		# killed is started again by systemd too, and the second one to
		# start fails ("already running"). Either one answering will do.
		local rc=0 i
		env -i PATH="$PATH" lttng-sessiond --daemonize >/dev/null 2>&1 || rc=$?
		for i in $(seq 1 50); do
			lttng list >/dev/null 2>&1 && return 0
			sleep 0.1
		done
		[ "$rc" = 0 ] || letw_fail "cannot start lttng-sessiond (exit $rc), and none answers"
		letw_fail "lttng-sessiond does not answer"
	fi
}

# letw_pid_gone PID: no process PID, or only its zombie (its parent has
# not reaped it: in a container whose init reaps nothing, a killed daemon
# stays one, and `kill -0` still finds it).
letw_pid_gone() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 0
	[ -z "$st" ] || [ "$st" = Z ]
}

# letw_unique PREFIX: a session or trigger name no other live one has.
# $$ is the test's pid even inside $(...); $BASHPID the caller's
# own; $SRANDOM 32 bits from the kernel. $RANDOM alone (15 bits, reseeded
# in each subshell from the time and pid) once gave two of cleanup_signal's
# eight sessions the same name ("Session name already exists").
letw_unique() {
	echo "$1-$$-${BASHPID}-${SRANDOM:-$RANDOM$RANDOM}"
}

# letw_session_create NAME_PREFIX [extra lttng create args...]
# Prints the unique session name; its output dir is $LETW_TEST_TMP/<name>.
letw_session_create() {
	local prefix=$1; shift
	local name
	name=$(letw_unique "$prefix")
	# Registered first: killed between the two, the name is still known.
	echo "$name" >> "$LETW_TEST_TMP/sessions"
	lttng create "$name" --output="$LETW_TEST_TMP/$name" "$@" >/dev/null ||
		letw_fail "lttng create $name"
	echo "$name"
}

# letw_trigger_add NAME_PREFIX [lttng add-trigger args...] : add a trigger
# removed on exit; prints its unique name.
letw_trigger_add() {
	local prefix=$1; shift
	local name
	name=$(letw_unique "$prefix")
	echo "$name" >> "$LETW_TEST_TMP/triggers"
	lttng add-trigger --name="$name" "$@" >/dev/null || letw_fail "lttng add-trigger $name"
	echo "$name"
}

# letw_start_time PID: the process's start (field 22 of /proc/PID/stat,
# clock ticks since boot); with the pid, it names one process, not
# whichever later gets its pid. Empty when PID is gone.
letw_start_time() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	# "pid (comm) state ...": comm may hold spaces; starttime is the 20th
	# field after it.
	st=${st##*) }
	set -- $st
	echo "${20}"
}

# letw_stop_process PID... : SIGSTOP processes that are not the test's own
# (shared infrastructure, e.g. lttng-consumerd to stall a channel), each
# registered first with its start time in the launcher's `stopped` file:
# letw_cleanup resumes them, and so does the launcher (launch_state.c) when
# the test died before its cleanup could. A daemon left stopped would stall
# every later session on the machine.
letw_stop_process() {
	local p
	for p in "$@"; do
		echo "$p $(letw_start_time "$p")" >>"$LETW_TEST_TMP/stopped"
		kill -STOP "$p" || letw_fail "cannot stop pid $p"
	done
}

# letw_resume_processes: SIGCONT what letw_stop_process stopped (the same
# processes: pid and start time), and forget them.
letw_resume_processes() {
	local p t
	[ -f "$LETW_TEST_TMP/stopped" ] || return 0
	while read -r p t; do
		[ -n "$t" ] && [ "$(letw_start_time "$p")" = "$t" ] && kill -CONT "$p" 2>/dev/null
	done <"$LETW_TEST_TMP/stopped"
	rm -f "$LETW_TEST_TMP/stopped"
}

# letw_sessiond_pid: the pid of the root lttng-sessiond, the one the tests
# use (its pid file), if it runs; not another user's sessiond, which
# `pgrep lttng-sessiond` may find first.
letw_sessiond_pid() {
	local sd
	sd=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null) || return 1
	[ -n "$sd" ] && ! letw_pid_gone "$sd" && echo "$sd"
}

# letw_consumerds: the pids of the root lttng-sessiond's consumer daemons
# (its children named lttng-consumerd), not those of another user's
# sessiond.
letw_consumerds() {
	local sd
	sd=$(letw_sessiond_pid) || return 1
	pgrep -x -P "$sd" lttng-consumerd
}

# letw_track PID : remember a background process to kill on exit.
letw_track() {
	LETW_TEST_PIDS+=("$1")
}

# letw_untrack PID : forget a process the test has reaped itself (its pid
# may be reused by an unrelated process before the test ends).
letw_untrack() {
	local p keep=()
	for p in "${LETW_TEST_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	LETW_TEST_PIDS=("${keep[@]}")
}

# letw_perf_record PID SECONDS : `perf record -e cpu-clock -g` of PID for
# SECONDS into $LETW_TEST_TMP/perf.data, in the background (tracked);
# letw_perf_wait then waits for it and fails the test with perf's output
# if it failed.
letw_perf_record() {
	perf record -q -e cpu-clock -g -p "$1" -o "$LETW_TEST_TMP/perf.data" -- sleep "$2" \
		>"$LETW_TEST_TMP/perf.log" 2>&1 &
	LETW_PERF_PID=$!
	letw_track "$LETW_PERF_PID"
}

letw_perf_wait() {
	wait "$LETW_PERF_PID" || letw_fail "perf record failed: $(cat "$LETW_TEST_TMP/perf.log")"
	letw_untrack "$LETW_PERF_PID"
}

# letw_wait_for CMD... : poll a condition for up to LETW_WAIT_SECONDS (30).
letw_wait_for() {
	local deadline=$((SECONDS + ${LETW_WAIT_SECONDS:-30}))
	while ! "$@" 2>/dev/null; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
	return 0
}

# letw_cpu_ticks PID : the CPU time PID has used, all its threads, in clock
# ticks (utime + stime of /proc/PID/stat; after the last ") ", as the
# command name may hold one).
letw_cpu_ticks() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] || return 1
	echo "$st" | awk '{ print $12 + $13 }'
}

# letw_wait_cpu PID SECONDS : wait until PID has run SECONDS (a whole
# number) more of CPU time, for up to LETW_WAIT_SECONDS (60 here); fails
# the test otherwise. For a profile of PID by perf's cpu-clock: its samples
# come with PID's CPU time, which a fixed sleep does not give it on a
# loaded machine (a sleep of 1 s gave one function 168 samples on an idle
# machine, a test needed 20).
letw_wait_cpu() {
	local want t
	t=$(letw_cpu_ticks "$1") || letw_fail "no process $1"
	want=$((t + $2 * $(getconf CLK_TCK)))
	letw_cpu_reached() { t=$(letw_cpu_ticks "$1") && [ "$t" -ge "$2" ]; }
	LETW_WAIT_SECONDS=${LETW_WAIT_SECONDS:-60} letw_wait_for letw_cpu_reached "$1" "$want" ||
		letw_fail "process $1 did not run $2 s of CPU time within ${LETW_WAIT_SECONDS:-60} s"
}

# letw_trace_text DIR : the trace as babeltrace2 text, one event a line.
letw_trace_text() {
	babeltrace2 "$1" 2>/dev/null
}

# letw_trace_has DIR REGEX : does the (stopped) trace hold a matching line?
# (grep -c reads all its input: grep -q would SIGPIPE babeltrace2 and, under
# pipefail, turn a match into a failure.)
letw_trace_has() {
	[ "$(babeltrace2 "$1" 2>/dev/null | grep -Ec "$2")" -gt 0 ]
}

# Debian's python3 carries the bt2 (libbabeltrace2) bindings; a pyenv or
# venv python3 earlier in PATH does not.
LETW_PY=${LETW_PY:-/usr/bin/python3}

# The control socket's client (provider/ctlproto.h), written apart from
# the C code so the tests check the wire protocol itself.
# letw_ctl PID {ping|status|capture} [MASK] prints the reply's fields;
# letw_ctl PID address, the control socket's name as ss(8) prints it.
LETW_CTL_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../e2e" && pwd)/letw_ctl.py
letw_ctl() {
	"$LETW_PY" "$LETW_CTL_PY" "$@"
}

# letw_reply_field REPLY FIELD : one field of a letw_ctl.py reply line
# ("magic=... passes=3 pass_id=7 ..."); fails if the reply has none.
letw_reply_field() {
	local kv
	for kv in $1; do
		[ "${kv%%=*}" = "$2" ] && { echo "${kv#*=}"; return 0; }
	done
	return 1
}

# letw_ctl_field PID FIELD : one field of the process's STATUS reply, read
# now; fails if the process does not answer.
letw_ctl_field() {
	local reply
	reply=$(letw_ctl "$1" status 2>/dev/null) || return 1
	letw_reply_field "$reply" "$2"
}

# letw_field_is PID FIELD OP VALUE : test(1) a STATUS field, read now.
letw_field_is() {
	local v
	v=$(letw_ctl_field "$1" "$2") && test "$v" "$3" "$4"
}

# letw_wait_field PID FIELD OP VALUE : wait (letw_wait_for) until the
# STATUS field passes `test FIELD OP VALUE`, re-reading it at every poll
# (a `letw_wait_for test "$(...)"` would compare one value read once).
letw_wait_field() {
	letw_wait_for letw_field_is "$@"
}

# letw_session_track SESSION PID : restrict SESSION's user-space recording
# to one process. A `--filter '$ctx.vpid == PID'` alone is not enough: it is
# evaluated per event, after the session has already switched the
# tracepoints on in *every* traced process, which makes every lttng-etw
# process on the machine run rundown passes for our session. The process
# attribute tracker keeps the other processes' tracepoints off.
letw_session_track() {
	lttng track -u -s "$1" --vpid="$2" >/dev/null || letw_fail "lttng track --vpid=$2"
}

# letw_session_dcstart NAME_PREFIX PID FILTER : a session (not started)
# tracking PID and recording the DCStart events FILTER lets through, with
# the vpid context; prints its unique name.
letw_session_dcstart() {
	local s
	s=$(letw_session_create "$1") || return 1
	letw_session_track "$s" "$2"
	lttng enable-event -u -s "$s" 'letw_rundown:*dcstart*' --filter "$3" >/dev/null ||
		letw_fail "enable-event in $s"
	lttng add-context -u -s "$s" -t vpid >/dev/null || letw_fail "add-context in $s"
	echo "$s"
}

# letw_perfmap_reuse PLUGIN_DIR TRACE PID : run sink.etw.perfmap straight
# from babeltrace2 (as a user of the plugin would) into $LETW_TEST_TMP/maps,
# check it wrote PID's map and reported address ranges that held different
# code over time; prints how many. Fails the test otherwise.
letw_perfmap_reuse() {
	local plugins=$1 trace=$2 pid=$3 log="$LETW_TEST_TMP/perfmap.log" reuse
	babeltrace2 --plugin-path="$plugins" "$trace" \
		-c sink.etw.perfmap -p "output-dir=\"$LETW_TEST_TMP/maps\"" \
		>"$log" 2>&1 || letw_fail "sink.etw.perfmap: $(cat "$log")"
	[ -s "$LETW_TEST_TMP/maps/perf-$pid.map" ] || letw_fail "no perf map for process $pid"
	reuse=$(sed -n "s/^perfmap: process $pid: \([0-9]*\) address range(s) held different code.*/\1/p" "$log")
	letw_log "$(grep "^perfmap: process $pid:" "$log")"
	[ "${reuse:-0}" -ge 1 ] || letw_fail "sink.etw.perfmap reported no address reuse: $(cat "$log")"
	echo "$reuse"
}
