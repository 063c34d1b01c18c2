#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build lttng-etw and run every test: Criterion unit tests and end-to-end
# tests against a real lttng-sessiond, babeltrace2 and perf.
#   scripts/test.sh            all tests except the long ones
#   scripts/test.sh -L e2e     extra arguments go to ctest
#   LETW_LONG=1 scripts/test.sh   include the long reliability runs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/deps.sh"

letw_install_deps $LETW_DEPS_TEST
letw_build "$root" "$root/build" -DLETW_BUILD_TESTS=ON
letw_start_sessiond || { echo "cannot start lttng-sessiond" >&2; exit 1; }
cd "$root/build"
if [ -n "${LETW_LONG:-}" ]; then
	ctest --output-on-failure "$@"
else
	ctest --output-on-failure -LE long "$@"
fi
