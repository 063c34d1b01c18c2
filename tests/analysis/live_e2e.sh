#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Live: sessions streamed through lttng-relayd on 127.0.0.1 and read while
# they run (src.ctf.lttng-live). `lttng-etw perfmap net://...` must yield
# the same map as relayd's on-disk trace; babeltrace2 with the loadable
# plugin must report the live session's passes complete. relayd is our
# own, on free ports, so other tests on this machine are not disturbed.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
C=$(free_port) D=$(free_port) L=$(free_port)
# -vvv: the late join (3.) waits for the reader's requests in its log.
lttng-relayd -vvv -C "tcp://127.0.0.1:$C" -D "tcp://127.0.0.1:$D" -L "tcp://127.0.0.1:$L" \
	-o "$T/relayd" >"$T/relayd.log" 2>&1 &
letw_track $!
letw_wait_for python3 -c "import socket; socket.create_connection(('127.0.0.1', $L), 1)" ||
	{ cat "$T/relayd.log" >&2; letw_fail "lttng-relayd does not listen"; }

# live_session NAME: a live session through our relayd recording process
# $PID's runtime events and DCStart passes. Sets SESSION.
live_session() {
	SESSION=$(letw_unique "live-$1")
	# Registered before it exists, as letw_session_create does (a kill
	# between the two would leak it unseen).
	echo "$SESSION" >>"$LETW_TEST_TMP/sessions"
	lttng create "$SESSION" --live=100000 --ctrl-url="tcp://127.0.0.1:$C" \
		--data-url="tcp://127.0.0.1:$D" >/dev/null || letw_fail "lttng create --live"
	letw_session_track "$SESSION" "$PID"
	for ev in 'letw_runtime:*' 'letw_rundown:*dcstart*'; do
		lttng enable-event -u -s "$SESSION" "$ev" --filter "\$ctx.vpid == $PID" \
			>/dev/null || letw_fail "enable-event $ev"
	done
	lttng add-context -u -s "$SESSION" -t vpid -t vtid >/dev/null || letw_fail "add-context"
}

# live_round NAME READER...: a scenario process traced by a live session;
# READER (given the live URL as its last argument) runs from the start to
# the end of the session. Sets PID, SESSION, READER_RC.
live_round() {
	local name=$1 f=$T/$1 reader
	shift
	"$LETW_SCENARIO" load 0x10000 0x100 before_start mj "(i64)" \
		stub 0x20000 0x10 1 0x10000 pre touch "$f.ready" wait "$f.go" \
		load 0x30000 0x40 while_live unload 0x10000 load 0x10000 0x20 reused \
		touch "$f.done" wait "$f.exit" &
	PID=$!
	letw_track "$PID"
	anl_wait_file "$f.ready"
	live_session "$name"

	# The reader attaches before tracing starts: babeltrace2's live source
	# starts existing streams at their last packet, so a viewer attaching
	# late sees only what follows (a late viewer runs capture-state).
	"$@" "net://127.0.0.1:$L/host/$(hostname)/$SESSION" >"$f.out" 2>"$f.err" &
	reader=$!
	letw_track "$reader"
	# lttng-etw reads in a child process: any viewer connection to our
	# relayd's live port is the reader's.
	letw_wait_for bash -c "ss -Htn state established '( dport = :$L )' | grep -q ." ||
		letw_fail "$name: the live reader did not connect"
	"$LETW_CLI" start "$SESSION" --pid "$PID" >&2 || letw_fail "lttng-etw start"
	touch "$f.go"
	anl_wait_file "$f.done"
	"$LETW_CLI" stop "$SESSION" --pid "$PID" >&2 || letw_fail "lttng-etw stop"
	touch "$f.exit"
	wait "$PID" || letw_fail "letw-scenario failed"
	# Destroying the session ends the live stream, and with it the reader.
	lttng destroy "$SESSION" >/dev/null || letw_fail "lttng destroy"
	LETW_WAIT_SECONDS=60 letw_wait_for bash -c "! kill -0 $reader" ||
		letw_fail "$name: the live reader did not finish after the session ended"
	wait "$reader"
	READER_RC=$?
	cat "$f.err" >&2
}

# 1. perfmap over live = perfmap of the on-disk trace = what was published.
live_round map "$LETW_CLI" perfmap -o "$T/live" --no-progress
[ "$READER_RC" = 0 ] || letw_fail "live perfmap exit $READER_RC"
"$LETW_CLI" perfmap "$T/relayd" -o "$T/disk" --no-progress >&2 ||
	letw_fail "perfmap of relayd's on-disk trace"
[ -s "$T/disk/perf-$PID.map" ] || letw_fail "no on-disk map for $PID"
diff "$T/disk/perf-$PID.map" "$T/live/perf-$PID.map" >&2 ||
	letw_fail "live map differs from the on-disk map"
# The code unloaded at 0x10000 keeps the part of its range the code that
# reused the address does not cover (perfmap --mode latest).
printf '%s\n' "10000 20 reused" "10020 e0 mj::before_start(i64)" \
	"20000 10 stub<precode>@0x10000 pre" "30000 40 while_live" |
	diff - "$T/live/perf-$PID.map" >&2 || letw_fail "live map differs from what was published"

# 2. sink.etw.report over live, through babeltrace2 and the plugin.
live_round report babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" \
	-c sink.etw.report -p 'format="json"' -i lttng-live
[ "$READER_RC" = 0 ] || letw_fail "live report exit $READER_RC"
# Every pass complete, both flavours there (sessions of others on this
# machine may add passes).
[ "$(anl_json "$T/report.out" "sorted(set((p['flavour'], p['status']) for x in r['processes'] if x['vpid']==$PID for p in x['passes']))")" = "[('dcend', 'complete'), ('dcstart', 'complete')]" ] ||
	letw_fail "live report: passes not all complete"
# 3. A reader that joins after the pass: lttng-relayd starts a joining
# viewer's streams past the packets it holds (-vvv logs "index_received_seqcount
# 1 index_sent_seqcount 1"), so the pass is not read. perfmap must not call
# that map whole (before: exit 0, a note about --filter). The process runs
# on one CPU, so its events share one stream, and emits an event after the
# live timer closed the pass's packet: the reader's first packet of that
# stream is a later one.
# Each step waits for what the next relies on, seen in relayd's trace (its
# stream files: whole packets, as the consumer sent them; the names are
# the published ones) or log, where fixed sleeps (0.5, 0.5, 1, 0.5 s) took
# them on trust: on a slower machine the reader could join before the
# pass's packet reached relayd, read the pass, and leave nothing to check.
f=$T/late
taskset -c 0 "$LETW_SCENARIO" load 0x10000 0x100 before_join touch "$f.ready" wait "$f.go" \
	load 0x30000 0x40 after_pass touch "$f.after" wait "$f.joined" \
	load 0x50000 0x40 after_join touch "$f.done" wait "$f.exit" &
PID=$!
letw_track "$PID"
anl_wait_file "$f.ready"
live_session late
# relayd_has NAME: a packet holding NAME (a method's name, in the pass's
# DCStart record or a load record) reached relayd.
relayd_has() {
	local d
	for d in "$T/relayd/$(hostname)/$SESSION"*; do
		find "$d" -type f -name 'channel*' ! -name '*.idx' -exec grep -aqF "$1" {} + && return 0
	done
	return 1
}
"$LETW_CLI" start "$SESSION" --pid "$PID" >&2 || letw_fail "lttng-etw start"
# The pass is done; the live timer (0.1 s) closes its packet and the
# consumer sends it; the next event opens another.
letw_wait_for relayd_has before_join || letw_fail "late: the pass's packet never reached relayd"
touch "$f.go"
anl_wait_file "$f.after"
# That event's packet is relayd's latest too: every packet of the pass,
# in the same stream before it, is there.
letw_wait_for relayd_has after_pass || letw_fail "late: the packet after the pass never reached relayd"
viewer_log_from=$(($(wc -l <"$T/relayd.log") + 1))
"$LETW_CLI" perfmap -o "$T/late-maps" --no-progress "net://127.0.0.1:$L/host/$(hostname)/$SESSION" \
	>"$f.out" 2>"$f.err" &
reader=$!
letw_track "$reader"
# Attached, its streams set (after relayd's latest packets), and reading:
# its first request for a packet, logged since it started (-vvv).
reading() { tail -n "+$viewer_log_from" "$T/relayd.log" | grep -q 'Viewer get next index'; }
letw_wait_for reading ||
	letw_fail "late: the live reader never asked relayd for a packet ($(tail -3 "$f.err"))"
touch "$f.joined"
anl_wait_file "$f.done"
# What followed the join reached relayd, to a reader that was attached.
letw_wait_for relayd_has after_join || letw_fail "late: the packet after the join never reached relayd"
touch "$f.exit"
wait "$PID" || letw_fail "letw-scenario failed"
lttng destroy "$SESSION" >/dev/null || letw_fail "lttng destroy"
LETW_WAIT_SECONDS=60 letw_wait_for bash -c "! kill -0 $reader" ||
	letw_fail "late: the live reader did not finish after the session ended"
rc=0
wait "$reader" || rc=$?
cat "$f.err" >&2
grep -q "after_join" "$T/late-maps/perf-$PID.map" ||
	letw_fail "late: the reader did not read what followed its join"
# The handshakes above leave the reader no way to the pass: reading it is
# a failure (it was a pass with nothing checked).
! grep -q "before_join" "$T/late-maps/perf-$PID.map" ||
	letw_fail "late: the reader read the pass that ran before it joined"
[ "$rc" = 3 ] && grep -q "ran before this live reader joined" "$f.err" ||
	letw_fail "late: perfmap of a live session joined after its pass: exit $rc, not 3 naming the late join"
echo "live_e2e: ok"
