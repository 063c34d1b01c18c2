#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two processes with the same vpid in two pid namespaces (containers that
# share the host's network namespace, `--network host`), traced into one
# session with the pid_ns context:
# - each has its own control socket, and the CLI reaches each by the pid it
#   sees (start, stop, status --pid, status --all);
# - report, perfmap and jitdump tell them apart: two processes, each with
#   its own complete passes, maps and dumps under DIR/pidns-INO/.
# Before, the second process could not bind the control socket (both were
# "lttng-etw/2"), `status --pid HOSTPID` found nothing, and the analysis
# merged both into one "process 2" whose pass ids repeat.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP
# The test command runs as root: a failure here is one, not a skip.
unshare -p -f --mount-proc true || letw_fail "unshare -p -f --mount-proc fails here"

# ns_scenario TAG ARGS...: a letw-scenario as pid 2 of a new pid namespace
# (sh is its pid 1). Sets host_pid to the scenario's pid as we see it and
# adds the unshare's to unshares.
unshares=()
ns_scenario() {
	local tag=$1 u sh
	shift
	unshare -p -f --mount-proc sh -c '"$@" & wait' sh "$LETW_SCENARIO" "$@" \
		touch "$T/$tag.ready" wait "$T/$tag.exit" &
	u=$!
	letw_track "$u"
	unshares+=("$u")
	anl_wait_file "$T/$tag.ready"
	# unshare forks sh (pid 1 there), which forks the scenario.
	sh=$(pgrep -P "$u") && host_pid=$(pgrep -P "$sh") ||
		letw_fail "$tag: no scenario process under unshare $u"
	letw_track "$host_pid"
	[ "$(awk '/^NSpid:/ {print $NF}' "/proc/$host_pid/status")" = 2 ] ||
		letw_fail "$tag: expected vpid 2: $(grep NSpid "/proc/$host_pid/status")"
}

ns_scenario a load 0x10000 0x100 alpha_a load 0x10100 0x80 alpha_b load 0x10200 0x40 alpha_c
pa=$host_pid
ns_scenario b load 0x40000 0x100 beta_a load 0x40100 0x80 beta_b
pb=$host_pid
na=$(stat -L -c %i "/proc/$pa/ns/pid")
nb=$(stat -L -c %i "/proc/$pb/ns/pid")
[ "$na" != "$nb" ] || letw_fail "both scenarios in pid namespace $na"

# 1. Both control sockets, each reached by its host pid.
for p in "$pa" "$pb"; do
	"$LETW_CLI" status --pid "$p" >"$T/st.out" 2>&1 ||
		letw_fail "status --pid $p (vpid 2): $(cat "$T/st.out")"
	grep -q "^pid $p: " "$T/st.out" || letw_fail "status --pid $p printed: $(cat "$T/st.out")"
done
"$LETW_CLI" status --all >"$T/all.out" 2>&1 || letw_fail "status --all: $(cat "$T/all.out")"
# Both --pid and --all: refused, as capture-state refuses them (--all was
# silently ignored).
rc=0
"$LETW_CLI" status --pid "$p" --all >"$T/both.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "give either --pid PID or --all" "$T/both.out" ||
	letw_fail "status --pid --all: exit $rc: $(cat "$T/both.out")"
grep -q "^pid $pa: " "$T/all.out" && grep -q "^pid $pb: " "$T/all.out" ||
	letw_fail "status --all did not list $pa and $pb: $(cat "$T/all.out")"
# From a pid namespace of its own, the CLI sees neither process: it says
# so rather than ask a pid that means another process there.
unshare -p -f --mount-proc "$LETW_CLI" status --all >"$T/inner.out" 2>&1 ||
	letw_fail "status --all in a new pid namespace: $(cat "$T/inner.out")"
grep -q "control socket(s) belong to processes not visible here" "$T/inner.out" &&
	! grep -q "^pid " "$T/inner.out" ||
	letw_fail "status --all in a new pid namespace printed: $(cat "$T/inner.out")"

# 2. One session, both processes, with the pid_ns context; start and stop
# wait for each. The tracker wants the pids sessiond sees (it takes an
# application's pid from its socket's credentials): the host's.
s=$(letw_session_create pidns) || exit 1
letw_session_track "$s" "$pa"
letw_session_track "$s" "$pb"
# DCStart only: stop enables the DCEnd events itself, filtered on the
# processes' vpids (the filter once held the host pids: no DCEnd recorded).
lttng enable-event -u -s "$s" 'letw_runtime:*,letw_rundown:*dcstart*' >/dev/null || letw_fail "enable-event"
lttng add-context -u -s "$s" -t vpid -t vtid -t pid_ns >/dev/null || letw_fail "add-context"
"$LETW_CLI" start "$s" --pid "$pa" --pid "$pb" >&2 || letw_fail "start"
"$LETW_CLI" stop "$s" --pid "$pa" --pid "$pb" >&2 || letw_fail "stop"
trace=$(anl_trace "$s")

# 3. The report: two processes, each its own complete passes.
rc=0
"$LETW_CLI" report "$trace" --json -o "$T/r.json" --no-progress 2>"$T/r.err" || rc=$?
[ "$rc" = 0 ] || letw_fail "report: exit $rc: $(cat "$T/r.err")"
# proc NS: "seen of each pass" of the process of pid namespace NS.
proc() {
	anl_json "$T/r.json" "' '.join('%s:%s:%d' % (p['flavour'], p['status'], p['seen']) for x in r['processes'] if x['vpid']==2 and x.get('pid_ns')==$1 for p in x['passes'])"
}
got_a=$(proc "$na") got_b=$(proc "$nb")
for want in "dcstart:complete:3" "dcend:complete:3"; do
	echo " $got_a " | grep -q " $want " || letw_fail "pid_ns $na: no $want: '$got_a'"
done
for want in "dcstart:complete:2" "dcend:complete:2"; do
	echo " $got_b " | grep -q " $want " || letw_fail "pid_ns $nb: no $want: '$got_b'"
done
[ "$(anl_json "$T/r.json" "sum(x['pass_id_repeats'] for x in r['processes'])")" = 0 ] ||
	letw_fail "pass ids repeat: the processes were merged"
"$LETW_CLI" report "$trace" --no-progress >"$T/r.txt" 2>&1 || letw_fail "text report: exit $?"
grep -q "^process 2 (pid_ns $na)$" "$T/r.txt" && grep -q "^process 2 (pid_ns $nb)$" "$T/r.txt" ||
	letw_fail "text report does not name both processes: $(cat "$T/r.txt")"

# 4. perfmap and jitdump: one file each, per namespace, with its own code.
"$LETW_CLI" perfmap "$trace" -o "$T/maps" --no-progress 2>"$T/pm.err" ||
	letw_fail "perfmap: exit $?: $(cat "$T/pm.err")"
for n in "$na" "$nb"; do
	[ -s "$T/maps/pidns-$n/perf-2.map" ] || letw_fail "no $T/maps/pidns-$n/perf-2.map: $(ls -R "$T/maps")"
done
[ "$(grep -c alpha_ "$T/maps/pidns-$na/perf-2.map")" = 3 ] &&
	! grep -q beta_ "$T/maps/pidns-$na/perf-2.map" ||
	letw_fail "map of pid_ns $na: $(cat "$T/maps/pidns-$na/perf-2.map")"
[ "$(grep -c beta_ "$T/maps/pidns-$nb/perf-2.map")" = 2 ] &&
	! grep -q alpha_ "$T/maps/pidns-$nb/perf-2.map" ||
	letw_fail "map of pid_ns $nb: $(cat "$T/maps/pidns-$nb/perf-2.map")"
[ ! -e "$T/maps/perf-2.map" ] || letw_fail "a merged perf-2.map was written too"
"$LETW_CLI" jitdump "$trace" -o "$T/dumps" --no-progress 2>"$T/jd.err" ||
	letw_fail "jitdump: exit $?: $(cat "$T/jd.err")"
for n in "$na" "$nb"; do
	[ -s "$T/dumps/pidns-$n/jit-2.dump" ] || letw_fail "no $T/dumps/pidns-$n/jit-2.dump: $(ls -R "$T/dumps")"
done
grep -q alpha_a "$T/dumps/pidns-$na/jit-2.dump" && ! grep -q beta_a "$T/dumps/pidns-$na/jit-2.dump" ||
	letw_fail "jitdump of pid_ns $na does not hold its own code only"

touch "$T/a.exit" "$T/b.exit"
for u in "${unshares[@]}"; do
	wait "$u" || letw_fail "unshare $u: exit $?"
done
echo "pidns_e2e: ok"
