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
defined=$(grep -oE '^\s*[a-z_]*dcend[a-z_]*, LTTNG_UST_TP_ARGS' "$SRC/tracepoints/letw_rundown_tp.h" |
	sed -E 's/^\s*//; s/, .*//' | sort)
listed=$(grep -oE '"letw_rundown:[a-z_]*dcend[a-z_]*"' "$SRC/analysis/cli/lttngctl.c" |
	tr -d '"' | sed 's/^letw_rundown://' | sort)
[ -n "$defined" ] || { echo "FAIL: no DCEnd event found in letw_rundown_tp.h" >&2; exit 1; }
[ "$defined" = "$listed" ] || {
	echo "FAIL: DCEnd events defined:" $defined "; listed by lttngctl.c:" $listed >&2
	exit 1
}
echo "dcend_events: ok ($(wc -w <<<"$defined") events)"
