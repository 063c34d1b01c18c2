#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A script's own jit.attach handler that fails is said on stderr, as
# LuaJIT says it ("VM handler failed: MESSAGE"), and the script goes on:
# the host chains such handlers behind its own, each in a pcall, which
# used to drop the error without a word. The luajit command is the
# reference: both must print the same lines for handlers.lua.
# usage: test_handler_errors.sh BUILD_DIR PLUGIN_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
host="$1/bin/letw-luajit"
T=$LETW_TEST_TMP

command -v luajit >/dev/null || letw_fail "luajit is not installed"
# Untraced: only the script's handlers are under test.
LETW_DISABLE=1 "$host" "$here/handlers.lua" >"$T/host.out" 2>"$T/host.err" ||
	letw_fail "letw-luajit exited with $?: $(cat "$T/host.out" "$T/host.err")"
luajit "$here/handlers.lua" >"$T/luajit.out" 2>"$T/luajit.err" ||
	letw_fail "luajit exited with $?: $(cat "$T/luajit.err")"
grep -q 'VM handler failed: trace handler failed on purpose' "$T/luajit.err" &&
	grep -q 'VM handler failed: record handler failed on purpose' "$T/luajit.err" ||
	letw_fail "luajit itself does not say so (the reference changed?): $(cat "$T/luajit.err")"
cmp -s "$T/host.out" "$T/luajit.out" || letw_fail "stdout differs: $(cat "$T/host.out")"
diff <(sort "$T/luajit.err") <(grep '^VM handler failed' "$T/host.err" | sort) >"$T/diff" ||
	letw_fail "letw-luajit does not say what luajit says of the failed handlers: $(cat "$T/diff")"
echo "PASS: a failing handler of the script's is said on stderr, as luajit says it"
