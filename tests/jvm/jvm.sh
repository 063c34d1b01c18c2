# SPDX-License-Identifier: MIT
# Helpers of the JVM tests; source after ../lib/lttng.sh.
#   . "$here/jvm.sh" BUILD_DIR JAVA_HOME
# Sets $agent, $java, $javac, $jcmd, $cli, $classes (the test Java sources
# compiled into the test's temp dir).

jvm_build=$1
jvm_home=$2
agent="$jvm_build/lib/liblttng-etw-jvmti.so"
cli="$jvm_build/bin/lttng-etw"
java="$jvm_home/bin/java"
javac="$jvm_home/bin/javac"
jcmd="$jvm_home/bin/jcmd"
classes="$LETW_TEST_TMP/classes"
[ -f "$agent" ] || letw_fail "no agent at $agent"
for t in "$java" "$javac" "$jcmd"; do
	[ -x "$t" ] || letw_fail "$t missing (openjdk-17-jdk-headless)"
done

# JVM flags every test uses: frame pointers for perf's stacks, synchronous
# compilation (reach C2 quickly and deterministically), and the hot
# methods kept out of their caller so each has compiled code of its own.
# A crash report goes to the test's directory (jvm_no_crash looks there).
JVM_FLAGS=(-XX:+PreserveFramePointer -Xbatch -XX:CompileCommand=quiet
	"-XX:CompileCommand=dontinline,letw.test.Workload::hot*"
	"-XX:ErrorFile=$LETW_TEST_TMP/hs_err_pid%p.log")

jvm_compile() { # SOURCE.java...
	mkdir -p "$classes"
	"$javac" -d "$classes" "$@" 2>"$LETW_TEST_TMP/javac.log" ||
		letw_fail "javac: $(cat "$LETW_TEST_TMP/javac.log")"
}

# jvm_jcmd ARGS... : jcmd, bounded (an attach to a JVM that hangs would
# hang the test).
jvm_jcmd() {
	timeout 60 "$jcmd" "$@"
}

# jvm_codelist PID : `jcmd PID Compiler.codelist` lines, "ID LEVEL STATE
# NAME(SIG) [blob, code_begin - code_end]".
jvm_codelist() {
	jvm_jcmd "$1" Compiler.codelist 2>/dev/null | grep -E '^[0-9]+ [0-9] [0-9] '
}

# jvm_hot_c2 PID : true once all six Workload.hot* have C2 (level 4) code.
jvm_hot_c2() {
	local n
	n=$(jvm_codelist "$1" | awk '$2 == 4 && $4 ~ /^letw\.test\.Workload\.hot/ { sub(/\(.*/, "", $4); print $4 }' |
		sort -u | wc -l)
	[ "$n" -ge 6 ]
}

jvm_wait_hot() { # PID
	LETW_WAIT_SECONDS=${LETW_WAIT_SECONDS:-60} letw_wait_for jvm_hot_c2 "$1" ||
		letw_fail "the hot methods never got C2 code: $(jvm_codelist "$1" | grep Workload)"
}

# jvm_stop PID STOPFILE : ask the workload to finish and check it exits 0.
jvm_stop() {
	touch "$2"
	wait "$1"
	local rc=$?
	letw_untrack "$1"
	[ "$rc" = 0 ] || letw_fail "the JVM exited with $rc"
}

# No crash report from a JVM of ours.
jvm_no_crash() {
	! ls "$LETW_TEST_TMP"/hs_err_pid*.log >/dev/null 2>&1 ||
		letw_fail "the JVM crashed: $(head -40 "$LETW_TEST_TMP"/hs_err_pid*.log)"
}
