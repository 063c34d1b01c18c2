#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build lttng-etw and run every test: Criterion unit tests and end-to-end
# tests against a real lttng-sessiond, babeltrace2 and perf.
#   scripts/test.sh            all tests except the long ones
#   scripts/test.sh -L e2e     extra arguments go to ctest
#   LETW_LONG=1 scripts/test.sh   include the long reliability runs
# ctest runs under letw-test-launch --run (tests/lib/launch.c): when it
# ends, any process this run started that is still alive is named
# (LEFTOVER: pid, command line, test), killed, and fails the command.
set -euo pipefail
t0=$SECONDS
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/deps.sh"

letw_install_deps $LETW_DEPS_TEST
letw_build "$root" "$root/build" -DLETW_BUILD_TESTS=ON
# The shared root lttng-sessiond (and its consumerd) is infrastructure, not
# a leftover: started here, outside the launcher, when none runs, and
# exempt from its check by design (see launch.c).
letw_start_sessiond || { echo "cannot start lttng-sessiond" >&2; exit 1; }
cd "$root/build"
filter=(-LE long)
[ -n "${LETW_LONG:-}" ] && filter=()
mkdir -p Testing
log=Testing/test-command.log
t1=$SECONDS
set +e
bin/letw-test-launch --run -- ctest --output-on-failure "${filter[@]}" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

# Short summary, from what ctest and the launcher printed.
counts=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
total=${counts##*out of }
failed=$(sed -E -n 's/^[0-9]+% tests passed, ([0-9]+) tests? failed.*/\1/p' <<<"$counts")
echo "==== lttng-etw test command ===="
if [ -n "$counts" ]; then
	echo "tests: $total run, $((total - failed)) passed, $failed failed"
	# The last list is ctest's own (a test's output may hold a sub-run's).
	awk '/^The following tests FAILED:/ { list = "" } /^[[:space:]]+[0-9]+ - / { list = list $0 "\n" }
	     END { printf "%s", list }' "$log"
else
	echo "tests: ctest printed no result (exit status $rc)"
fi
if grep -q '^LEFTOVER: ' "$log"; then
	echo "leftover processes (killed):"
	grep '^LEFTOVER: ' "$log"
else
	echo "leftover processes: none"
fi
if grep -Eq '^LEFTOVER (SESSION|TRIGGER): ' "$log"; then
	echo "leftover sessions and triggers (destroyed):"
	grep -E '^LEFTOVER (SESSION|TRIGGER): ' "$log"
else
	echo "leftover sessions and triggers: none"
fi
echo "time: ctest $((SECONDS - t1)) s, whole command $((SECONDS - t0)) s (install check and build included)"
echo "result: $([ "$rc" -eq 0 ] && echo PASS || echo "FAIL (exit status $rc)")"
exit "$rc"
