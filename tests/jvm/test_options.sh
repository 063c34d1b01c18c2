#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent's log= and options never stall or mislead the JVM (a real
# OpenJDK, no tracing session needed):
#  - log=FIFO that nobody reads: refused at once with a message (opening it
#    used to wait for a reader: the JVM hung before main);
#  - log=FIFO, or log=stderr on a pipe, whose reader holds it full and
#    never reads: the JVM runs and exits 0, its lines are dropped (a
#    blocking write used to hang the JVM on its first line);
#  - a log path longer than 512 bytes is taken;
#  - a second load by jcmd with bad options or `help` answers
#    `return code: -1` (it used to answer 0 without reading them), a
#    second load with good options answers 0 and is said to be ignored,
#    and the unload counters are logged once, not once per load.
# usage: test_options.sh BUILD_DIR JAVA_HOME
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
. "$here/jvm.sh" "$1" "$2"

jvm_compile "$here/java/Workload.java"
done_file="$LETW_TEST_TMP/stop-now"
touch "$done_file" # Workload with its stop file present: starts and exits 0

# run_quick NAME AGENT_OPTIONS [REDIRECT_FILE_FOR_STDERR] : a JVM that
# exits at once; bounded, so a hang fails instead of stalling the test.
run_quick() {
	local name=$1 opts=$2 errto=${3:-$LETW_TEST_TMP/$1.err}
	timeout -s KILL 60 "$java" "-agentpath:$agent=$opts" "${JVM_FLAGS[@]}" -cp "$classes" \
		letw.test.Workload "$done_file" >"$LETW_TEST_TMP/$name.out" 2>"$errto"
}

# 1. A FIFO nobody reads.
fifo="$LETW_TEST_TMP/log.fifo"
mkfifo "$fifo" || letw_fail "mkfifo"
run_quick nofifo "log=$fifo"
rc=$?
[ "$rc" != 137 ] || letw_fail "log=FIFO without a reader: the JVM hung (killed after 60 s)"
[ "$rc" != 0 ] || letw_fail "log=FIFO without a reader was accepted"
grep -q "cannot open log.*FIFO nobody reads" "$LETW_TEST_TMP/nofifo.err" ||
	letw_fail "log=FIFO without a reader: no clear message: $(cat "$LETW_TEST_TMP/nofifo.err")"

# 2. A reader that holds the FIFO full and never reads (a one-page pipe,
# filled before the JVM starts). Python keeps its end open until told.
hold="$LETW_TEST_TMP/hold"
$LETW_PY - "$fifo" "$hold" <<'PY' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)    # a reader (and a writer: no wait)
fcntl.fcntl(fd, 1031, 4096)              # F_SETPIPE_SZ: one page
os.set_blocking(fd, False)
try:
    while True:
        os.write(fd, b"x" * 512)
except BlockingIOError:
    pass
open(sys.argv[2], "w").close()           # full: the JVM may start
for _ in range(1200):                    # at most 120 s, never reading
    if not os.path.exists(sys.argv[2]):
        break
    time.sleep(0.1)
PY
holder=$!
letw_track "$holder"
letw_wait_for test -e "$hold" || letw_fail "the FIFO holder did not start"
run_quick fullfifo "log=$fifo,loglevel=debug"
rc=$?
[ "$rc" = 0 ] || letw_fail "log=FIFO held full: the JVM exited with $rc (137: hung): $(cat "$LETW_TEST_TMP/fullfifo.err")"
# 3. The same pipe as the JVM's stderr, log=stderr.
run_quick fullstderr "log=stderr,loglevel=debug" "$fifo"
rc=$?
[ "$rc" = 0 ] || letw_fail "log=stderr on a pipe held full: the JVM exited with $rc (137: hung)"
rm -f "$hold"
wait "$holder"
letw_untrack "$holder"

# 4. A log path longer than the agent's old 512-byte limit.
long="$LETW_TEST_TMP"
while [ ${#long} -lt 600 ]; do long="$long/a-directory-of-some-length"; done
mkdir -p "$long" || letw_fail "mkdir"
run_quick longpath "log=$long/agent.log" ||
	letw_fail "a ${#long}-byte log directory: exit $?: $(cat "$LETW_TEST_TMP/longpath.err")"
grep -q 'loaded (startup)' "$long/agent.log" || letw_fail "nothing logged under the long path"

# 5. Second loads by jcmd.
log="$LETW_TEST_TMP/agent.log"
stop="$LETW_TEST_TMP/stop"
"$java" "-agentpath:$agent=log=$log" "${JVM_FLAGS[@]}" -cp "$classes" letw.test.Workload "$stop" \
	>"$LETW_TEST_TMP/jvm.out" 2>"$LETW_TEST_TMP/jvm.err" &
pid=$!
letw_track "$pid"
letw_wait_for grep -q 'loaded (startup)' "$log" || letw_fail "the agent did not load: $(cat "$LETW_TEST_TMP/jvm.err")"
for bad in bogus help 'poll:0'; do
	out=$(jvm_jcmd "$pid" JVMTI.agent_load "$agent" "$bad" 2>&1)
	echo "$out" | grep -q 'return code: -1' ||
		letw_fail "a second load with '$bad' was not refused: $out"
done
out=$(jvm_jcmd "$pid" JVMTI.agent_load "$agent" 'sig:simple' 2>&1)
echo "$out" | grep -q 'return code: 0' || letw_fail "a second load with good options: $out"
grep -q "already loaded in this JVM; options 'sig:simple' ignored" "$log" ||
	letw_fail "the ignored second load is not logged: $(cat "$log")"
jvm_stop "$pid" "$stop"
grep -q 'bad options: unknown option' "$LETW_TEST_TMP/jvm.err" ||
	letw_fail "no message for the bad second load: $(cat "$LETW_TEST_TMP/jvm.err")"
n=$(grep -c ' unload: ' "$log")
[ "$n" = 1 ] || letw_fail "$n unload lines in the log (want 1): $(grep ' unload: ' "$log")"
jvm_no_crash
echo "PASS: FIFO logs refused or never waited on, long log paths taken, second loads checked"
