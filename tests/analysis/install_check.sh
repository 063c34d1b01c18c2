#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cmake --install puts the plugin into babeltrace2's plugin directory and
# the CLI into bin/. Staged with DESTDIR, so the machine's own babeltrace2
# plugin directory is left alone; an install-time --prefix relocates it.
# usage: install_check.sh BUILD_DIR PLUGIN_DIR
set -u
build=$1 plugindir=$2
stage=$(mktemp -d /tmp/letw-install.XXXXXX)
trap 'rm -rf "$stage"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR=$stage cmake --install "$build" >/dev/null || fail "cmake --install"
so=$stage$plugindir/babeltrace-plugin-etw.so
[ -f "$so" ] || fail "plugin not installed in $plugindir"
out=$(babeltrace2 --omit-system-plugin-path --plugin-path="$stage$plugindir" list-plugins 2>&1) ||
	fail "babeltrace2 cannot load the installed plugin"
echo "$out" | grep -q "sink.etw.perfmap" && echo "$out" | grep -q "sink.etw.report" &&
	echo "$out" | grep -q "sink.etw.jitdump" ||
	fail "installed plugin lacks its sinks: $out"
cli=$(find "$stage" -path '*/bin/lttng-etw' -type f | head -1)
[ -n "$cli" ] || fail "lttng-etw not installed"
"$cli" --help | grep -q "capture-state" || fail "installed lttng-etw --help"
for c in perfmap report jitdump capture-state status start stop; do
	"$cli" "$c" --help >/dev/null || fail "lttng-etw $c --help"
done
# An install-time --prefix other than the configured one keeps the plugin
# under that prefix (a staging install never writes to the system).
DESTDIR= cmake --install "$build" --prefix "$stage/relocated" >/dev/null ||
	fail "cmake --install --prefix"
find "$stage/relocated" -path '*/babeltrace2/plugins/babeltrace-plugin-etw.so' | grep -q . ||
	fail "--prefix install did not put the plugin under the prefix"
echo "install_check: ok"
