#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# LuaJIT hands chunk names over as they came: a loadstring'd chunk's name
# is its whole code, a file name may be Latin-1, load() takes any name.
# lttng-etw refuses names over 4096 bytes and invalid UTF-8, and the host
# passed them on unchanged: those traces were never published (`errors N`
# under --stats, the hot code unnamed in perf). The host now cleans them
# (runtimes/luajit/chunkname.h): every trace of names.lua is published, and
# the perf map names each one.
# usage: test_chunk_names.sh BUILD_DIR PLUGIN_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
host="$build/bin/letw-luajit"
cli="$build/bin/lttng-etw"
T=$LETW_TEST_TMP

letw_ensure_sessiond
latin1=$T/$(printf 'caf\xe9.lua')
printf 'local s = 0 for i = 1, 3e6 do s = s + 3 * i end return s\n' >"$latin1"
s=$(letw_session_create luajit-names) || exit 1
lttng enable-channel -u -s "$s" --blocking-timeout=inf chan >/dev/null || letw_fail "enable-channel"
# shellcheck disable=SC2016 # $ctx is lttng's, not the shell's
lttng enable-event -u -s "$s" -c chan 'letw_runtime:*' \
	--filter '$ctx.procname == "letw-luajit"' >/dev/null || letw_fail "enable-event"
lttng add-context -u -s "$s" -c chan -t vpid -t procname >/dev/null || letw_fail "add-context"
lttng start "$s" >/dev/null || letw_fail "start"
LTTNG_UST_ALLOW_BLOCKING=1 "$host" --stats "$here/names.lua" "$latin1" >"$T/host.out" 2>&1 ||
	letw_fail "letw-luajit failed: $(cat "$T/host.out")"
lttng stop "$s" >/dev/null || letw_fail "stop"
grep -q "errors 0$" "$T/host.out" || letw_fail "traces refused: $(grep -a 'traces published' "$T/host.out")"
"$cli" perfmap "$LETW_TEST_TMP/$s" -o "$T/maps" --no-progress 2>"$T/pm.err" ||
	letw_fail "perfmap: exit $?: $(cat "$T/pm.err")"
map=$(ls "$T"/maps/perf-*.map) || letw_fail "no map written"
for want in '\[string "-- pad x*\.\.\."\]::trace#' 'my?chunk?name::trace#' 'caf?\.lua::trace#'; do
	grep -aq "$want" "$map" || letw_fail "no symbol /$want/ in the map: $(cat "$map")"
done
# Valid UTF-8, bounded: names as the library takes them.
python3 - "$map" <<'PY' || letw_fail "the map holds invalid UTF-8 or an overlong name"
import sys
for line in open(sys.argv[1], 'rb'):
    name = line.rstrip(b'\n').split(b' ', 2)[2]
    name.decode('utf-8')
    assert len(name) < 1000, len(name)
PY
echo "test_chunk_names: ok"
