#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the core and the reliability tests with ASan+UBSan and with TSan
# (sub-builds under BUILD_DIR/reliability-{asan,tsan}) and run their fast
# reliability tests there. Usage: sanitize.sh SOURCE_DIR BUILD_DIR [LABEL]
# LABEL defaults to `reliability`; `long` runs the long versions.
set -e
src=$1 bin=$2 label=${3:-reliability}
[ -d "$src" ] && [ -d "$bin" ] || { echo "usage: $0 SOURCE_DIR BUILD_DIR [LABEL]" >&2; exit 2; }
rc=0
for flavour in asan:address,undefined tsan:thread; do
	name=${flavour%%:*} san=${flavour#*:}
	dir="$bin/reliability-$name"
	echo "# $name: configuring and building $dir" >&2
	cmake -S "$src" -B "$dir" -DLETW_SANITIZE="$san" -DLETW_BUILD_ANALYSIS=OFF \
		-DLETW_BUILD_EXAMPLES=OFF -DLETW_BUILD_BENCH=OFF >"$dir.log" 2>&1 ||
		{ cat "$dir.log" >&2; exit 1; }
	# Only what the reliability tests run: other folders' tests are not
	# ours to build here.
	cmake --build "$dir" -j2 --target letw-test-launch lttng-etw lttng-etw-tp letw-churn letw-hostile letw-ctlclient letw-faultapp \
		>>"$dir.log" 2>&1 ||
		{ tail -50 "$dir.log" >&2; exit 1; }
	echo "# $name: running ctest -L $label" >&2
	# The sub-build's own tests of this folder; never the sanitizers test
	# itself (not defined in sanitizer builds).
	(cd "$dir" && ctest -L "$label" -R '^reliability\.' --output-on-failure) || rc=1
done
exit $rc
