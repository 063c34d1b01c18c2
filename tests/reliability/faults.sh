#!/bin/bash
# SPDX-License-Identifier: MIT
# Fault injection around a running runtime (letw-faultapp, driven on its
# stdin). usage: faults.sh BIN_DIR SCENARIO...
# Scenarios: socket probe_missing ust_missing disable session_destroy
#            sessiond_kill exit_in_pass exit_stuck_pass fork (= fork_hooks +
#            fork_preload)
#            fork_in_resize (plain builds: needs LETW_FAULT_STALL_SO)
# In every one the runtime must keep running (its API calls keep
# succeeding), exit cleanly with no leak, and the next session must work.
# Env: LETW_FAULT_WRAP (e.g. "valgrind --leak-check=full ...") wraps the
# runtime in the scenarios that need no session (valgrind is too slow for
# the big-table ones; those get LSan in the ASan sub-build).
# LETW_FAULT_FORK_QUIESCE=1: the fork scenarios park the runtime's churn
# thread around fork() (faultapp.c --fork-quiesce).
# sessiond_kill kills the shared root lttng-sessiond on purpose (issue 5
# asks for it) and restarts it; the EXIT trap restarts it on any failure.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
bin=$1; shift
app_bin="$bin/letw-faultapp"
[ -x "$app_bin" ] || letw_fail "no $app_bin"
PY=${LETW_PY:-/usr/bin/python3}
BIG=${LETW_FAULT_RECORDS:-100000}
# Under TSan an unbounded churn thread makes every (suppressed) report cost
# a symbolization and grows TSan's state without bound: cap it there.
CHURN="--churn${LETW_FAULT_CHURN_MAX:+ --churn-max $LETW_FAULT_CHURN_MAX}"

# --- a runtime on FIFOs -----------------------------------------------
app_start() { # NAME [env...] -- [args...]
	local name=$1; shift
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	rm -f "$LETW_TEST_TMP/$name.in" "$LETW_TEST_TMP/$name.out"
	mkfifo "$LETW_TEST_TMP/$name.in" "$LETW_TEST_TMP/$name.out"
	# Blocking channels only block for processes that allow it.
	env LTTNG_UST_ALLOW_BLOCKING=1 "${envs[@]}" $LETW_FAULT_WRAP_NOW "$app_bin" "$@" \
		<"$LETW_TEST_TMP/$name.in" >"$LETW_TEST_TMP/$name.out" \
		2>"$LETW_TEST_TMP/$name.err" &
	local pid=$!
	letw_track "$pid"
	eval "exec {${name}_w}>\"$LETW_TEST_TMP/$name.in\" {${name}_r}<\"$LETW_TEST_TMP/$name.out\""
	eval "${name}_pid=$pid"
	app_expect "$name" '^ready ' 60 || app_fail "$name" "$name did not start"
	eval "${name}_vpid=\${REPLY#ready }"
}
# app_fail NAME MESSAGE: fail, showing why the runtime is not answering.
# (A sanitizer build's runtime that died of a report at startup used to
# leave only "a did not start" in the log: its stderr was never shown.)
app_fail() {
	local pid st
	eval "pid=\$${1}_pid"
	if kill -0 "$pid" 2>/dev/null; then
		echo "# $1 (pid $pid) is still running" >&2
	else
		wait "$pid"; st=$?
		letw_untrack "$pid"
		echo "# $1 (pid $pid) exited with status $st" >&2
	fi
	echo "# $1's stderr (last 60 lines):" >&2
	tail -n 60 "$LETW_TEST_TMP/$1.err" >&2
	letw_fail "$2"
}
app_cmd() { local fd; eval "fd=\$${1}_w"; echo "$2" >&"$fd"; }
# app_expect NAME REGEX [SECONDS]: next line matching; it is left in REPLY.
app_expect() {
	local fd deadline=$((SECONDS + ${3:-60}))
	eval "fd=\$${1}_r"
	local rc
	while [ "$SECONDS" -lt "$deadline" ]; do
		IFS= read -r -t 5 -u "$fd" REPLY
		rc=$?
		# >128: the 5 s read timed out, keep waiting. 1..128: end of
		# file, the runtime closed its stdout (it died): nothing more
		# will come, so stop now rather than spin until the deadline.
		if [ "$rc" -gt 128 ]; then continue; fi
		[ -n "$REPLY" ] || [ "$rc" -eq 0 ] || return 1
		echo "  [$1] $REPLY" >&2
		[[ $REPLY =~ $2 ]] && return 0
		[ "$rc" -eq 0 ] || return 1
	done
	return 1
}
# app_quit NAME: the runtime shuts down cleanly with no API error.
app_quit() {
	local pid
	eval "pid=\$${1}_pid"
	app_cmd "$1" quit
	app_expect "$1" '^quit errors=0 shutdown=0' 120 ||
		{ cat "$LETW_TEST_TMP/$1.err" >&2; letw_fail "$1 did not quit cleanly"; }
	local rc=0
	wait "$pid" || rc=$?
	# The status kept before anything else runs: it was read after `cat`,
	# and said "exited with 0" of a runtime that exited with 66.
	[ "$rc" = 0 ] || { cat "$LETW_TEST_TMP/$1.err" >&2; letw_fail "$1 exited with $rc"; }
	eval "exec {${1}_w}>&- {${1}_r}<&-"
}
app_alive_and_working() {
	app_cmd "$1" check
	app_expect "$1" '^check ok' 60 || app_fail "$1" "$1: publish/unpublish broken"
}

# --- sessions -----------------------------------------------------------
# After `lttng start`: let the ENABLE pass it causes run first. With the
# statedump hook (HOOK, below) every session's start
# brings the process an ENABLE pass of its own: lttng-ust runs the
# statedump before it answers sessiond, so the request is queued when
# `lttng start` returns (or when the process registers, if it did so only
# after the start), and it comes whatever the machine's speed: waited for.
# A 3 s wait took a later one for none, and the pass then ran after the
# capture below, into what the scenario does next (exit_stuck_pass: the
# ENABLE stuck in the stopped consumer, the capture of `exit-in-pass`
# never began). Polling (no hook):
# LTTng's enabled state is global per tracepoint, so when another session
# on this machine already enables the rundown events nothing flips and no
# ENABLE comes (DESIGN §4): then there is nothing to wait for.
settle() {
	if [ "$HOOK" = 1 ]; then
		app_expect "$1" '^control 1 .* 1$' 120 || app_fail "$1" "$1: no ENABLE pass for the session started"
	else
		app_expect "$1" '^control 1 .* 1$' 3 || letw_log "no ENABLE pass (rundown events already enabled elsewhere)"
	fi
	# An explicit capture completes after any pass already underway.
	app_cmd "$1" "capture 0x40"
	app_expect "$1" '^capture ' 300 || letw_fail "$1: capture after start"
}

# session_start PREFIX VPID [blocking]: a session recording one process.
# It tracks only that process (or the processes in $TRACK_VPIDS), so other
# lttng-etw processes on the machine run no pass for it (letw_session_track);
# with neither (fork: the child's vpid is not known yet), every process:
# then BUFFERS=pid gives each process its own buffers and trace directory,
# so that another instrumented process's overflow can neither take the
# child's room nor be read as the child's discard.
session_start() {
	local s track=${TRACK_VPIDS:-$2}
	s=$(letw_session_create "$1") || exit 1
	[ -n "$track" ] && letw_session_track "$s" "$track"
	if [ "${3:-}" = blocking_tiny ]; then
		# Two pages: a pass fills it at once and then waits on the consumer.
		lttng enable-channel -u -s "$s" --subbuf-size=4096 --num-subbuf=2 \
			--blocking-timeout=inf chan >/dev/null || letw_fail "enable-channel"
	elif [ "${3:-}" = blocking ]; then
		# Small sub-buffers make a big pass long: the fault lands inside.
		lttng enable-channel -u -s "$s" --subbuf-size=64k --num-subbuf=2 \
			--blocking-timeout=inf chan >/dev/null || letw_fail "enable-channel"
	else
		lttng enable-channel -u -s "$s" --subbuf-size=8M --num-subbuf=4 \
			${BUFFERS:+--buffers-$BUFFERS} chan >/dev/null || letw_fail "enable-channel"
	fi
	lttng add-context -u -s "$s" -c chan -t vpid -t vtid >/dev/null || letw_fail "add-context"
	lttng enable-event -u -s "$s" -c chan 'letw_runtime:*,letw_rundown:*' \
		${2:+--filter "\$ctx.vpid == $2"} >/dev/null || letw_fail "enable-event"
	lttng start "$s" >/dev/null || letw_fail "lttng start"
	SESSION=$s
}
session_check() { # SESSION VPID checker-args...
	local s=$1 v=$2 t; shift 2
	lttng stop "$s" >/dev/null 2>&1
	t=$LETW_TEST_TMP/$s
	# Per-PID buffers: the process's own trace (procname-VPID-date) only.
	if [ -d "$t/ust/pid" ]; then
		t=$(ls -d "$t"/ust/pid/*-"$v"-* 2>/dev/null | head -1)
		[ -n "$t" ] || letw_fail "$s holds no trace of vpid $v"
	fi
	$PY "$here/check_pass.py" "$t" --vpid "$v" "$@" ||
		letw_fail "trace of $s"
}
# The next session works: a fresh session sees a complete pass that
# enumerates exactly the N records of the (at rest) runtime.
next_session_works() { # NAME N
	local v; eval "v=\$${1}_vpid"
	session_start letw-fault-next "$v"
	settle "$1"
	app_cmd "$1" "capture 0x50"
	app_expect "$1" '^capture 1' 120 || letw_fail "$1: capture in the next session"
	session_check "$SESSION" "$v" --live "$2" --min-passes 1
}

# --- scenarios ----------------------------------------------------------
sc_socket() {
	app_start a -- $CHURN
	"$bin/letw-ctlclient" --pid "$a_vpid" || letw_fail "control socket abuse"
	# A real client process of another user, as an operator would run it.
	if command -v setpriv >/dev/null; then
		# Without TSan's suppressions file: its runtime reads it as uid
		# 65534 and exits when it cannot (a clone in /root, mode 0700, on
		# a fresh Debian 12 root), so the client was never refused. The
		# file names liburcu and lttng-ust only; the client loads neither.
		TSAN_OPTIONS=$(sed -E 's/(^| )suppressions=[^ ]*//' <<<"${TSAN_OPTIONS:-}") \
			setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$bin/letw-ctlclient" --pid "$a_vpid" refused ||
			letw_fail "a client running as uid 65534 was not refused"
	else
		letw_log "no setpriv (util-linux): only the in-process uid drop ran"
	fi
	app_alive_and_working a
	app_quit a
}

sc_probe_missing() {
	LETW_FAULT_WRAP_NOW=$LETW_FAULT_WRAP app_start a LETW_PROBE_PATH=/nonexistent -- $CHURN
	app_cmd a stats; app_expect a 'tracing=0' || letw_fail "probe missing but tracing"
	app_cmd a "capture 0x40"; app_expect a '^capture 0$' || letw_fail "capture without probe"
	app_alive_and_working a
	app_quit a
}

sc_ust_missing() {
	# lttng-ust "not installed": the loader finds unusable files first.
	local d="$LETW_TEST_TMP/no-ust"
	mkdir -p "$d"
	for l in liblttng-ust.so.1 liblttng-ust-tracepoint.so.1 liblttng-ust-common.so.1; do
		echo "not a library" >"$d/$l"
	done
	LETW_FAULT_WRAP_NOW=$LETW_FAULT_WRAP app_start a LD_LIBRARY_PATH="$d" -- $CHURN
	app_cmd a stats; app_expect a 'tracing=0' || letw_fail "lttng-ust unusable but tracing"
	app_cmd a "capture 0x40"; app_expect a '^capture 0$' || letw_fail "capture without ust"
	app_alive_and_working a
	app_quit a
	# Same runtime with lttng-ust reachable does trace: the test can fail.
	app_start b -- ; app_cmd b stats; app_expect b 'tracing=1' || letw_fail "control run"
	app_quit b
}

sc_disable() {
	LETW_FAULT_WRAP_NOW=$LETW_FAULT_WRAP app_start a LETW_DISABLE=1 -- $CHURN
	app_start b -- --records 100
	TRACK_VPIDS="$a_vpid,$b_vpid" session_start letw-fault-disable ""
	settle b
	app_cmd a "capture 0x150"; app_expect a '^capture 0$' || letw_fail "disabled capture ran"
	app_cmd b "capture 0x150"; app_expect b '^capture 3$' || letw_fail "control capture"
	app_alive_and_working a
	app_quit a
	session_check "$SESSION" "$a_vpid" --no-events
	session_check "$SESSION" "$b_vpid" --live 100 --min-passes 2
	app_quit b
}

# Under TSan, the environment fault_mid_pass's runtime runs with: the
# reliability suppressions and one more, for these faults only. Destroying
# the session makes lttng-ust's listener close a stream descriptor it
# received from sessiond (recvmsg; its wakeup pipe, it seems) while the
# control thread's pass is inside a tracepoint whose commit writes to that
# descriptor. Both accesses are lttng-ust's own libc calls (their only
# other frame is an address in the stripped liblttng-ust.so, so no function
# can be named), and their order is lttng-ust's (its grace period, which
# TSan cannot see). A top-frame `close` entry here only: in tsan.supp it
# would also hide races on our own descriptors (the statedump callback
# writing the control thread's wake_fd).
mid_pass_tsan_env() {
	local supp
	supp=$(sed -nE 's/^(.* )?suppressions=([^ ]+).*$/\2/p' <<<"${TSAN_OPTIONS:-}")
	[ -n "$supp" ] || return 0
	# The interceptor's own name (report stacks print it as `close`).
	{ cat "$supp" && echo 'race_top:^__interceptor_close$'; } >"$LETW_TEST_TMP/tsan-mid-pass.supp" ||
		letw_fail "cannot write $LETW_TEST_TMP/tsan-mid-pass.supp"
	echo "TSAN_OPTIONS=$(sed -E "s#(^| )suppressions=[^ ]+#\1suppressions=$LETW_TEST_TMP/tsan-mid-pass.supp#" <<<"$TSAN_OPTIONS")"
}
# A fault while a pass of BIG records is being written to a blocking channel.
fault_mid_pass() { # ACTION
	local tsan_env
	tsan_env=$(mid_pass_tsan_env) || exit 1
	app_start a ${tsan_env:+"$tsan_env"} -- --records "$BIG"
	session_start letw-fault-mid "$a_vpid" blocking
	settle a
	app_cmd a "capture-async 0x150"
	app_expect a '^control 2 ' 60 || letw_fail "capture did not begin"
	"$@"
	# The runtime still works and the control thread comes back.
	app_alive_and_working a
	app_cmd a "capture 0x50"
	app_expect a '^capture ' 300 || letw_fail "control thread stuck after the fault"
	app_alive_and_working a
	next_session_works a "$BIG"
	app_quit a
}
destroy_session() {
	letw_log "destroying $SESSION during the pass"
	lttng destroy "$SESSION" >/dev/null || letw_fail "lttng destroy"
}
sc_session_destroy() {
	fault_mid_pass destroy_session
}

kill_sessiond() {
	local p
	# The root daemon the runtime registered with, by its pid file: not
	# every lttng-sessiond of the machine (other users' per-user daemons).
	# Its first line: a CI run found the file holding "622\n0\n" for
	# daemon 622 (pid_max 32768 here; the tail of a longer pid written
	# before, it seems), and the whole file taken as the pid failed the
	# test ("no root lttng-sessiond to kill").
	p=$(head -n 1 /var/run/lttng/lttng-sessiond.pid 2>/dev/null) &&
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = lttng-sessiond ] ||
		letw_fail "no root lttng-sessiond to kill"
	letw_log "killing lttng-sessiond ($p) during the pass"
	kill -9 "$p"
	SESSIOND_KILLED=1
	letw_wait_for letw_pid_gone "$p" || letw_fail "sessiond survived"
	letw_ensure_sessiond
	# The runtime re-registers with the new sessiond on its own.
	LETW_WAIT_SECONDS=60 letw_wait_for sh -c "lttng list -u | grep -q 'PID: $a_vpid'" ||
		letw_fail "runtime did not re-register with the restarted sessiond"
}
sc_sessiond_kill() {
	trap 'letw_ensure_sessiond; letw_cleanup' EXIT
	fault_mid_pass kill_sessiond
}

sc_exit_in_pass() {
	app_start a -- --records "$BIG"
	session_start letw-fault-exit "$a_vpid" blocking
	settle a
	app_cmd a "exit-in-pass 0x150"
	app_expect a '^exiting' 60 || letw_fail "exit-in-pass"
	local deadline=$((SECONDS + 120))
	while kill -0 "$a_pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
	kill -0 "$a_pid" 2>/dev/null && letw_fail "process did not exit during its pass"
	wait "$a_pid"; local rc=$?
	[ $rc -eq 0 ] || letw_fail "exit during a pass: status $rc"
	lttng stop "$SESSION" >/dev/null 2>&1
	# The trace of the dead process is readable; its last pass may be cut.
	$PY "$here/check_pass.py" "$LETW_TEST_TMP/$SESSION" --vpid "$a_vpid" \
		--allow-truncated --min-passes 1 || letw_fail "trace after exit"
	app_start b -- --records 50
	next_session_works b 50
	app_quit b
}

# The process exits while its pass is stuck in a blocking channel past the
# exit handler's bound (2 s): lttng-consumerd is stopped until the exit
# handler gave up (its warning) and the main thread waits in the ELF
# destructors for the stuck thread. The library's destructors then run
# while the control thread waits inside a tracepoint; once the consumer
# reads again, the thread's next tracepoint call must not go through the
# symbols lttng-ust's destructors cleared (SIGSEGV, exit status 139,
# before letw_tp_keep_at_exit).
sc_exit_stuck_pass() {
	# The exit handler gives up on the stuck control thread by design and
	# the process exits with it still running: under TSan a "thread leak",
	# not what this scenario is about (exit_in_pass joins it).
	# LETW_LOG=stderr: the exit handler's warning is the handshake below.
	app_start a LETW_LOG=stderr \
		TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS }report_thread_leaks=0" -- --records 500
	session_start letw-fault-stuck "$a_vpid" blocking_tiny
	settle a
	# Only the root sessiond's consumers (the session's), registered so
	# that they are resumed however the test ends (letw_stop_process).
	local cds
	cds=$(letw_consumerds) || letw_fail "no lttng-consumerd of the root lttng-sessiond to stop"
	# shellcheck disable=SC2086 # one pid a word
	letw_stop_process $cds
	app_cmd a "exit-in-pass 0x150"
	app_expect a '^exiting' 60 || letw_fail "exit-in-pass"
	# The consumer reads again only once the exit is where this scenario
	# is about: the exit handler gave up on the stuck thread (its warning,
	# printed last before it returns) and the main thread (tid = pid) sits
	# in the ELF destructors, in liburcu's wait for the stuck reader
	# (lttng_ust_urcu_synchronize_rcu: poll(NULL, 0, 10), syscall 7, or
	# ppoll, 271, where glibc makes poll of it; the exit handler's join
	# waits in a futex). A fixed `sleep 4` took that on trust and, on a
	# machine slower than the 2 s bound plus the destructors, let the pass
	# go on before they ran: the test passed without the race. A process
	# that exited ends the wait at once (bash reaps it; before that a
	# zombie, which kill -0 still finds).
	in_destructors() {
		grep -q 'exit: the control thread is stuck in a pass' "$LETW_TEST_TMP/a.err" &&
			[[ $(cat "/proc/$a_pid/task/$a_pid/syscall" 2>/dev/null) =~ ^(7|271)\ 0x0\ 0x0\  ]]
	}
	stuck_or_exited() { in_destructors || letw_pid_gone "$a_pid"; }
	LETW_WAIT_SECONDS=120 letw_wait_for stuck_or_exited
	letw_pid_gone "$a_pid" && letw_fail "the process exited before the consumer read again: the pass was not stuck"
	in_destructors ||
		letw_fail "the exit did not reach the destructors with its pass stuck in 120 s (main thread: $(cat "/proc/$a_pid/task/$a_pid/syscall" 2>&1); stderr: $(tail -3 "$LETW_TEST_TMP/a.err"))"
	letw_resume_processes
	local deadline=$((SECONDS + 120))
	while kill -0 "$a_pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
	kill -0 "$a_pid" 2>/dev/null && letw_fail "process did not finish exiting once the consumer read again"
	wait "$a_pid"; local rc=$?
	letw_untrack "$a_pid"
	[ $rc -eq 0 ] || letw_fail "exit with a pass stuck past the exit handler's bound: status $rc"
	letw_destroy_session "$SESSION"
}

# One fork under a recording session; the child's own trace is checked.
# The child's lttng-ust re-registers from lttng_ust_after_fork_child, which
# waits for the sessiond like a constructor, but only LTTNG_UST_REGISTER_TIMEOUT
# (3 s by default): slower than that (valgrind, a loaded machine) and the
# child runs on before its session is set up, so its passes go nowhere
# (seen under valgrind: "vpid N: 0 events"). Wait up to 60 s instead.
fork_traced() { # [env for the runtime...]
	LETW_FAULT_WRAP_NOW=$LETW_FAULT_WRAP app_start a LTTNG_UST_REGISTER_TIMEOUT=60000 "$@" -- \
		$CHURN --records 1000 ${LETW_FAULT_FORK_QUIESCE:+--fork-quiesce}
	BUFFERS=pid session_start letw-fault-fork ""
	app_cmd a fork
	app_expect a '^fork child=[0-9]+ status=' 120 || letw_fail "no answer to fork"
	[[ $REPLY =~ status=0$ ]] ||
		{ cat "$LETW_TEST_TMP/a.err" >&2; letw_fail "forked child failed ($REPLY)"; }
	local child=${REPLY#fork child=}; child=${child%% *}
	app_alive_and_working a
	app_quit a
	# The child traced under its own vpid: its passes (the ENABLE its new
	# control thread sees, and its capture) enumerate the inherited table
	# (1000 records, plus the parent's churn record if one was live at
	# the fork) and, once published, its own 10.
	session_check "$SESSION" "$child" --min-passes 2 --min-emitted 1000
	lttng destroy "$SESSION" >/dev/null 2>&1
}
# letw_fork_* tell lttng-ust about the fork themselves (fork_hooks), and
# step aside when the runtime preloads liblttng-ust-fork.so, lttng-ust's own
# answer (fork_preload): the child must be traced either way.
sc_fork_hooks() {
	fork_traced
}
sc_fork_preload() {
	local pre
	pre=$(ls /usr/lib/*/liblttng-ust-fork.so.1 2>/dev/null | head -1)
	[ -n "$pre" ] || letw_fail "liblttng-ust-fork.so.1 not found"
	fork_traced LD_PRELOAD="$pre"
}
sc_fork() {
	sc_fork_hooks
	sc_fork_preload
}

# A fork while the control thread is inside a table resize: cds_lfht_resize
# (letw_table_maintain) holds the table's resize mutex across allocations
# and grace periods. stall_resize.c holds the control thread in the resize's
# first allocation until told to go; letw_fork_prepare must wait for the
# resize (pass_lock) instead of giving the child that mutex locked, on which
# the child's control thread hung at its first resize (status=hung).
sc_fork_in_resize() {
	[ -n "${LETW_FAULT_STALL_SO:-}" ] || letw_fail "LETW_FAULT_STALL_SO is not set"
	local d="$LETW_TEST_TMP/stall"
	mkdir -p "$d"
	# 20000 records: maintain resizes once the table passes 4096.
	app_start a LD_PRELOAD="$LETW_FAULT_STALL_SO" LETW_STALL_DIR="$d" -- --records 20000
	letw_wait_for test -e "$d/stalled" || letw_fail "the control thread never resized"
	app_cmd a fork
	# The resize released only once the fork waits for it in
	# letw_fork_prepare: the runtime's main thread (tid = pid, which runs
	# the command) blocked in a futex wait. A fixed `sleep 1` took that on
	# trust, and on a slow machine could release the resize before the
	# fork got there, passing without the race. Code that forked without
	# waiting never blocks: the wait fails.
	fork_waits() {
		local w
		w=$(cat "/proc/$a_pid/task/$a_pid/wchan" 2>/dev/null) && [[ $w == *futex* ]]
	}
	letw_wait_for fork_waits ||
		letw_fail "the fork never waited for the held resize (main thread in $(cat "/proc/$a_pid/task/$a_pid/wchan" 2>&1))"
	touch "$d/go"
	app_expect a '^fork child=[0-9]+ status=' 120 || letw_fail "no answer to fork"
	[[ $REPLY =~ status=0$ ]] || letw_fail "fork during a table resize: child failed ($REPLY)"
	app_alive_and_working a
	app_quit a
}

letw_ensure_sessiond
# HOOK=1: a runtime here serves sessions through the statedump hook (its
# STATUS says so: lttng-ust has the probe registration, LETW_STATEDUMP is
# not 0), as every traced runtime the scenarios start does. Asked once of
# a runtime started for it alone, whose control thread is idle: one of a
# scenario's may be held (fork_in_resize), and STATUS waits for it.
app_start hookq --
# shellcheck disable=SC2154 # hookq_vpid: set by app_start
passes=$(letw_ctl_field "$hookq_vpid" passes) || app_fail hookq "no STATUS from the runtime"
HOOK=$((passes & 1))
app_quit hookq
letw_log "statedump hook: $HOOK"
for sc in "$@"; do
	letw_log "scenario $sc"
	"sc_$sc"
	for v in a_pid b_pid; do [ -n "${!v:-}" ] && wait "${!v}" 2>/dev/null; done
	unset a_pid b_pid
	echo "PASS: fault $sc"
done
