#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `bench/run.sh --help` (which bench/README.md sends users to) exits 0,
# describes every option its synopsis names on a line of its own, and ends
# with a whole sentence. Before, it printed a fixed range of the script's
# header: no option was described and the text stopped at "gnuplot and".
set -euo pipefail
RUN=${1:?usage: bench_help.sh PATH/bench/run.sh}
out=$(bash "$RUN" --help) || { echo "FAIL: run.sh --help exited $?" >&2; exit 1; }
synopsis=$(grep -m1 'bench/run.sh \[' <<<"$out") ||
	{ echo "FAIL: no synopsis in: $out" >&2; exit 1; }
opts=$(grep -o -- '--[a-z-]*' <<<"$synopsis")
[ -n "$opts" ] || { echo "FAIL: no option in the synopsis: $synopsis" >&2; exit 1; }
for o in $opts; do
	grep -Eq -- "^ +$o( [A-Z]+)? {2,}[a-z]" <<<"$out" ||
		{ echo "FAIL: option $o is not described in: $out" >&2; exit 1; }
done
last=$(grep . <<<"$out" | tail -n 1)
[[ $last == *. ]] || { echo "FAIL: the help stops mid-sentence: '$last'" >&2; exit 1; }
echo "bench_help: ok ($(wc -w <<<"$opts") options described)"
