#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Malformed input: a truncated stream file, a corrupted packet header,
# corrupted metadata, a trace without lttng-etw events and a directory
# without a trace must each give a clear error and exit status 1 from
# lttng-etw (and a failure from babeltrace2 with the plugin), never a
# crash; one case also runs under valgrind.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP

# A small valid trace to damage.
f=$T/scen
"$LETW_SCENARIO" load 0x10000 0x100 a load 0x10100 0x100 b touch "$f.ready" wait "$f.go" \
	load 0x20000 0x40 c touch "$f.done" wait "$f.exit" &
pid=$!
letw_track "$pid"
anl_wait_file "$f.ready"
s=$(anl_session bad "$pid")
"$LETW_CLI" start "$s" --pid "$pid" >&2 || letw_fail "lttng-etw start"
touch "$f.go"
anl_wait_file "$f.done"
"$LETW_CLI" stop "$s" --pid "$pid" >&2 || letw_fail "lttng-etw stop"
touch "$f.exit"
wait "$pid" || letw_fail "letw-scenario failed"
good=$(anl_trace "$s")
"$LETW_CLI" report "$good" --no-progress >/dev/null || letw_fail "the undamaged trace does not pass"

# damaged NAME: a copy of the good trace; prints its path.
damaged() {
	cp -r "$good" "$T/$1"
	echo "$T/$1"
}
# stream_file DIR: the largest data stream file of the trace.
stream_file() {
	find "$1" -type f ! -name metadata ! -path '*/index/*' -printf '%s %p\n' |
		sort -n | tail -1 | cut -d' ' -f2-
}

# expect_error CASE WHAT TRACE: every analysis entry point fails cleanly.
expect_error() {
	local name=$1 what=$2 trace=$3 rc cmd
	for cmd in perfmap report; do
		if [ "$cmd" = perfmap ]; then
			"$LETW_CLI" perfmap "$trace" -o "$T/$name.maps" --no-progress >/dev/null 2>"$T/$name.err"
		else
			"$LETW_CLI" report "$trace" --no-progress >/dev/null 2>"$T/$name.err"
		fi
		rc=$?
		[ "$rc" = 1 ] || { cat "$T/$name.err" >&2; letw_fail "$name: lttng-etw $cmd exit $rc, expected 1"; }
		grep -Eqi "$what" "$T/$name.err" ||
			{ cat "$T/$name.err" >&2; letw_fail "$name: lttng-etw $cmd error does not say /$what/"; }
		letw_log "$name/$cmd: $(head -1 "$T/$name.err")"
	done
	babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" "$trace" -c sink.etw.report >/dev/null 2>&1
	rc=$?
	[ "$rc" = 1 ] || letw_fail "$name: babeltrace2 -c sink.etw.report exit $rc, expected 1"
}

# 1. A stream file cut in the middle of a packet.
t=$(damaged truncated)
sf=$(stream_file "$t")
[ -n "$sf" ] || letw_fail "no stream file in the trace"
truncate -s $(( $(stat -c %s "$sf") / 2 + 7 )) "$sf"
expect_error truncated "cannot (process|open) the trace" "$t"

# 2. A packet header with a wrong magic number.
t=$(damaged badmagic)
sf=$(stream_file "$t")
printf '\xde\xad\xbe\xef' | dd of="$sf" bs=1 seek=0 conv=notrunc status=none
expect_error badmagic "cannot (process|open) the trace" "$t"

# 3. Metadata that does not parse.
t=$(damaged badmeta)
md=$(find "$t" -name metadata | head -1)
python3 - "$md" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
# Packetized metadata: keep the first header, garble the TSDL text.
mid = len(b) // 2
b[mid:mid + 64] = b'}}}} struct ;;;; { event typealias @@@@ ' + b'#' * 23
open(p, 'wb').write(bytes(b))
PY
expect_error badmeta "cannot (process|open) the trace" "$t"

# 4. A valid trace with no lttng-etw event (only LTTng-UST statedump).
"$LETW_SCENARIO" touch "$f.r2" wait "$f.go2" &
pid=$!
letw_track "$pid"
anl_wait_file "$f.r2"
s2=$(anl_session noetw "$pid" "" 'lttng_ust_statedump:*')
lttng start "$s2" >/dev/null || letw_fail "lttng start"
letw_wait_for bash -c "lttng stop '$s2' >/dev/null && babeltrace2 '$(anl_trace "$s2")' 2>/dev/null | grep -q statedump || { lttng start '$s2' >/dev/null; false; }" ||
	letw_fail "no statedump events recorded"
touch "$f.go2"
wait "$pid"
expect_error noetw "no lttng-etw" "$(anl_trace "$s2")"

# 5. Not a trace at all.
mkdir -p "$T/empty"
expect_error empty "no CTF trace" "$T/empty"

# 6. Event payloads overwritten inside a packet: the headers still
# index, so the garbage decodes into absurd figures. It must not crash,
# and the pass cannot be called complete.
# Every data stream file: which per-CPU file holds the pass's events
# depends on where the control thread ran, and overwriting only the
# largest file sometimes hit nothing but padding.
t=$(damaged badevents)
find "$t" -type f ! -name metadata ! -path '*/index/*' | while read -r sf; do
	python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); n=min(len(b),400); b[150:n]=b"\xff"*max(0,n-150); open(p,"wb").write(bytes(b))' "$sf"
done
"$LETW_CLI" report "$t" --no-progress >"$T/badevents.out" 2>&1
rc=$?
case $rc in 1|3) ;; *) cat "$T/badevents.out" >&2; letw_fail "badevents: report exit $rc, expected 1 or 3";; esac

# No memory errors on damaged inputs either.
if command -v valgrind >/dev/null; then
	for t in truncated badevents; do
		valgrind -q --error-exitcode=99 "$LETW_CLI" report "$T/$t" --no-progress \
			>/dev/null 2>"$T/vg.err"
		rc=$?
		case $rc in 1|3) ;; *) cat "$T/vg.err" >&2; letw_fail "valgrind on $t: exit $rc";; esac
	done
fi
echo "malformed_e2e: ok"
