#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's quick start, `bash scripts/demo.sh`, as a new user meets it
# (the build and package steps stubbed: this build is the one it uses):
#  - run through: exit 0, perf's report names minijit's JIT'd frames
#    from the trace's map, the last line names the directory it kept,
#    which holds the trace, perf.data and the map; the runtime, the
#    session and /tmp/perf-PID.map are gone;
#  - Ctrl-C (SIGINT to its process group, as a terminal sends it) while
#    perf samples: exit 130, the demo says it was interrupted and what it
#    cleaned up, and leaves no runtime, session or directory.
# usage: test_demo.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$(cd "$1" && pwd)
src=$(cd "$here/../.." && pwd)
T=$LETW_TEST_TMP

letw_ensure_sessiond
command -v perf >/dev/null || letw_fail "perf is not installed"
# A root like the checkout's: demo.sh finds deps.sh and build/ from its
# own path. Installing packages and building are this build's business.
mkdir -p "$T/root/scripts" || letw_fail "mkdir"
ln -s "$src/scripts/demo.sh" "$T/root/scripts/demo.sh"
ln -s "$build" "$T/root/build"
cat >"$T/root/scripts/deps.sh" <<EOS
. "$src/scripts/deps.sh"
letw_install_deps() { :; }
letw_build() { :; }
EOS

# run_demo NAME [SIGINT_AFTER_LINE]: the demo in its own process group (a
# terminal's foreground job: SIGINT not ignored), from another directory
# than the checkout; sets demo_rc, demo_pid, demo_out.
run_demo() {
	local name=$1 line=${2:-}
	demo_out="$T/demo-$name.out"
	set -m
	(cd / && exec bash "$T/root/scripts/demo.sh") >"$demo_out" 2>&1 &
	demo_pid=$!
	set +m
	letw_track "$demo_pid"
	# The demo's own session: the launcher destroys it should the test be
	# killed before the demo's cleanup.
	echo "letw-demo-$demo_pid" >>"$T/sessions"
	if [ -n "$line" ]; then
		letw_wait_for grep -q -- "$line" "$demo_out" ||
			letw_fail "$name: the demo never printed '$line': $(cat "$demo_out")"
		sleep 1
		kill -INT -- "-$demo_pid" || letw_fail "$name: kill -INT"
	fi
	LETW_WAIT_SECONDS=120 letw_wait_for eval '! letw_running '"$demo_pid" ||
		letw_fail "$name: the demo still runs after 120 s: $(cat "$demo_out")"
	wait "$demo_pid"
	demo_rc=$?
	letw_untrack "$demo_pid"
}

# left NAME: the demo's runtime, session and perf map are gone.
left() {
	local runtime
	runtime=$(sed -n 's/^runtime pid \([0-9]*\):.*/\1/p' "$demo_out")
	[ -n "$runtime" ] || letw_fail "$1: the demo named no runtime pid: $(cat "$demo_out")"
	! letw_running "$runtime" || { kill "$runtime"; letw_fail "$1: the runtime $runtime is left running"; }
	! lttng list "letw-demo-$demo_pid" >/dev/null 2>&1 ||
		letw_fail "$1: session letw-demo-$demo_pid left"
	[ ! -e "/tmp/perf-$runtime.map" ] || letw_fail "$1: /tmp/perf-$runtime.map left"
}

run_demo full
kept=$(sed -n 's/^(kept: rm -rf \(.*\) when done)$/\1/p' "$demo_out")
[ -n "$kept" ] || letw_fail "full: exit $demo_rc, the demo does not say what it kept: $(cat "$demo_out")"
fail_full() {
	rm -rf "$kept"
	letw_fail "full: $*"
}
[ "$demo_rc" = 0 ] || fail_full "exit $demo_rc: $(cat "$demo_out")"
tail -n 1 "$demo_out" | grep -q '^(kept: ' ||
	fail_full "the last line does not say what was kept: $(tail -n 3 "$demo_out")"
runtime=$(sed -n 's/^runtime pid \([0-9]*\):.*/\1/p' "$demo_out")
for f in trace perf.data "maps/perf-$runtime.map"; do
	[ -e "$kept/$f" ] || fail_full "$kept/$f is missing"
done
rm -rf "$kept"
left full
grep -Eq '^ +[0-9.]+% +\[\.\] minijit\.Module[0-9]+::fn_[0-9]+' "$demo_out" ||
	letw_fail "full: perf report names no JIT'd frame: $(cat "$demo_out")"
letw_log "full: $(grep -Ec '^ +[0-9.]+% +\[\.\] minijit\.' "$demo_out") minijit frame(s) in the top 12"

run_demo sigint '== 2\.'
left sigint
[ "$demo_rc" = 130 ] || letw_fail "sigint: exit $demo_rc: $(cat "$demo_out")"
grep -q 'demo: interrupted' "$demo_out" ||
	letw_fail "sigint: the demo does not say it was interrupted: $(cat "$demo_out")"
dir=$(sed -n 's/.*(its own list: \(.*\)\/live\.txt)$/\1/p' "$demo_out")
[ -n "$dir" ] && [ ! -e "$dir" ] || letw_fail "sigint: its directory '$dir' is left"
echo "PASS: the demo runs through, and stops clean on Ctrl-C"
