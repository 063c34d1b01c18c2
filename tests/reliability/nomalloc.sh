#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Publishing never touches libc's allocator (issue #10) and takes no lock
# of any kind: letw-nomalloc's publishing threads run with malloc/free,
# every pthread/C11/semaphore lock (try forms included), condition waits
# and waiting futex syscalls made fatal (nomalloc_shim.c), inside a started
# session recording every letw event, while rundown passes run back to
# back. First shows the shim aborts a process that does allocate, lock an
# uncontended mutex or make a FUTEX_WAIT syscall (so the check can fail).
# usage: nomalloc.sh APP SHIM [SECONDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
app=$1 shim=$2 secs=${3:-3}

for t in malloc:malloc mutex:pthread_mutex_lock 'futex:syscall(SYS_futex, FUTEX_WAIT)'; do
	LD_PRELOAD=$shim "$app" --self-test="${t%%:*}" 2>"$LETW_TEST_TMP/self.err"
	rc=$?
	[ "$rc" = 134 ] && grep -qF "nomalloc: ${t#*:} called" "$LETW_TEST_TMP/self.err" ||
		letw_fail "the shim did not abort on ${t#*:} (rc=$rc: $(cat "$LETW_TEST_TMP/self.err"))"
done

letw_ensure_sessiond
# Twice: threads started after letw_init, and threads whose first call
# came before it (their per-thread tracing setup is done at a later call,
# before they are armed; before, it never was, and the first event after
# the session started allocated lttng-ust's TLS on the armed thread).
for mode in "" --first-call-before-init; do
	s=$(letw_session_create nomalloc)
	lttng enable-channel -u -s "$s" big --subbuf-size=1M --num-subbuf=4 >/dev/null || letw_fail "channel"
	lttng enable-event -u -s "$s" -c big 'letw_runtime:*' >/dev/null || letw_fail "enable runtime"
	lttng enable-event -u -s "$s" -c big 'letw_rundown:*' >/dev/null || letw_fail "enable rundown"
	rm -f "$LETW_TEST_TMP/armed" "$LETW_TEST_TMP/started"
	# Its SECONDS count from the session's start (the started file), not
	# from the arming: a start slower than SECONDS saw no armed event.
	LD_PRELOAD=$shim "$app" --seconds "$secs" --armed-file "$LETW_TEST_TMP/armed" \
		--started-file "$LETW_TEST_TMP/started" $mode \
		> "$LETW_TEST_TMP/out" 2>"$LETW_TEST_TMP/err" &
	pid=$!
	letw_track "$pid"
	letw_session_track "$s" "$pid"
	# The session starts once every publishing thread is armed: their
	# first events come with malloc and locks fatal. A shim abort during
	# the warm-up-to-armed window ends the wait at once, not at its
	# timeout.
	letw_wait_for eval 'test -e "$LETW_TEST_TMP/armed" || ! kill -0 "$pid"'
	test -e "$LETW_TEST_TMP/armed" || {
		wait "$pid"
		letw_fail "letw-nomalloc $mode did not arm (rc=$?): $(cat "$LETW_TEST_TMP/err")"
	}
	lttng start "$s" >/dev/null || letw_fail "start"
	touch "$LETW_TEST_TMP/started"
	wait "$pid"
	rc=$?
	letw_untrack "$pid"
	cat "$LETW_TEST_TMP/out"
	[ "$rc" = 0 ] || letw_fail "letw-nomalloc $mode exited $rc: $(cat "$LETW_TEST_TMP/err")"
	lttng stop "$s" >/dev/null
	# Proof that tracing was on: the first 1001 loads are enough. grep
	# stops there and babeltrace2 ends on the closed pipe; decoding all
	# 2-3 million events took 55 of the test's 65 s.
	n=$(babeltrace2 "$LETW_TEST_TMP/$s" 2>/dev/null | grep -m 1001 -c 'letw_runtime:method_load')
	[ "$n" -gt 1000 ] || letw_fail "$mode: only $n method_load events recorded: tracing was not on"
	echo "OK${mode:+ ($mode)}: no allocation or lock on publishing threads (over 1000 loads recorded)"
	letw_destroy_session --no-wait "$s"
done
