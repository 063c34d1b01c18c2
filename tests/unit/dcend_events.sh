#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `lttng-etw stop` decides whether the session's own rules already record
# every DCEnd event from a list of their names (dcend_covered() in
# analysis/cli/lttngctl.c: the CLI does not build the provider's
# tracepoints). That list must be the DCEnd events the provider defines
# (tracepoints/letw_rundown_tp.h): one added there and not here would be
# taken as covered, and stop would add no rule for it.
set -euo pipefail
SRC=${1:?usage: dcend_events.sh SOURCE_DIR}
# `start` likewise decides from the DCStart events' names whether the
# session gets a DCStart pass at all (letw_lttng_may_record_dcstart): one
# missing there would make start wait for no pass, or skip one.
for flavour in dcend dcstart; do
	defined=$(grep -oE "^\s*[a-z_]*${flavour}[a-z_]*, LTTNG_UST_TP_ARGS" "$SRC/tracepoints/letw_rundown_tp.h" |
		sed -E 's/^\s*//; s/, .*//' | sort)
	listed=$(grep -oE "\"letw_rundown:[a-z_]*${flavour}[a-z_]*\"" "$SRC/analysis/cli/lttngctl.c" |
		tr -d '"' | sed 's/^letw_rundown://' | sort)
	[ -n "$defined" ] || { echo "FAIL: no $flavour event found in letw_rundown_tp.h" >&2; exit 1; }
	[ "$defined" = "$listed" ] || {
		echo "FAIL: $flavour events defined:" $defined "; listed by lttngctl.c:" $listed >&2
		exit 1
	}
	echo "${flavour}_events: ok ($(wc -w <<<"$defined") events)"
done
