#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Map reconstruction with the demo runtime. (1) letw-minijit publishes its
# code before the session starts, so only the DCStart rundown names it: the
# map must hold every region of the runtime's own list with the right name.
# (2) With --churn the runtime re-tiers, frees and regenerates code while
# recorded: the map gains the new regions and the report still finds both
# rundowns complete. (3)-(4) outputs; (5) rundown records outside any pass.
. "$(dirname "$0")/common.sh"

T=$LETW_TEST_TMP

# record NAME MINIJIT-ARGS...: run minijit, record start..stop, leave the
# trace in $TRACE and the pid in $PID.
record() {
	local name=$1
	shift
	"$LETW_MINIJIT" "$@" --seconds 30 --list "$T/$name.list" >"$T/$name.out" 2>&1 &
	PID=$!
	letw_track "$PID"
	anl_wait_file "$T/$name.list.ready"
	local s
	s=$(anl_session "mapjit-$name" "$PID")
	"$LETW_CLI" start "$s" --pid "$PID" >&2 || letw_fail "$name: lttng-etw start"
	sleep 1
	"$LETW_CLI" stop "$s" --pid "$PID" >&2 || letw_fail "$name: lttng-etw stop"
	kill -TERM "$PID"
	wait "$PID" || { cat "$T/$name.out" >&2; letw_fail "$name: letw-minijit failed"; }
	TRACE=$(anl_trace "$s")
}

record stable --functions 1000
for mode in latest all; do
	"$LETW_CLI" perfmap "$TRACE" -o "$T/stable.$mode" --mode $mode --no-progress >&2 ||
		letw_fail "stable: perfmap --mode $mode"
	python3 "$(dirname "$0")/map_check.py" "$T/stable.list" "$T/stable.$mode/perf-$PID.map" >&2 ||
		letw_fail "stable: the $mode map misses code of the runtime's list"
done

# The list is the state before the churn starts; code it frees before the
# session starts is legitimately absent, so here only growth is checked.
record churn --functions 1000 --churn
"$LETW_CLI" perfmap "$TRACE" -o "$T/churn" --mode all --no-progress >&2 ||
	letw_fail "churn: perfmap"
[ "$(wc -l <"$T/churn/perf-$PID.map")" -gt "$(grep -c '^method\|^stub' "$T/churn.list")" ] ||
	letw_fail "churn: no region beyond the initial list: the churn was not recorded"
"$LETW_CLI" report "$TRACE" --json -o "$T/churn.json" --no-progress ||
	letw_fail "churn: report exit $? (a rundown is not complete)"
# (3) Replacing an output whose old file cannot be removed: the new output
# is in place (RENAME_EXCHANGE), so the run succeeds and names the old
# file left under the temporary name (unlink_fail.c makes that unlink()
# fail). The previous output is made different first, so the check sees
# which file ended where.
[ -f "${LETW_UNLINK_FAIL_SO:-}" ] || letw_fail "LETW_UNLINK_FAIL_SO is not set to the shim"
for cmd in perfmap jitdump; do
	dir=$T/swap.$cmd
	case $cmd in
	perfmap) out=perf-$PID.map ;;
	jitdump) out=jit-$PID.dump ;;
	esac
	"$LETW_CLI" $cmd "$TRACE" -o "$dir" --no-progress 2>/dev/null || letw_fail "$cmd"
	cp "$dir/$out" "$T/swap.ref.$cmd"
	echo "the previous $cmd output" >"$dir/$out"
	rc=0
	LD_PRELOAD=$LETW_UNLINK_FAIL_SO "$LETW_CLI" $cmd "$TRACE" -o "$dir" --no-progress \
		>/dev/null 2>"$T/swap.$cmd.err" || rc=$?
	[ "$rc" = 0 ] ||
		{ cat "$T/swap.$cmd.err" >&2; letw_fail "$cmd: exit $rc when only the old output could not be removed"; }
	grep -q "$out is in place, but the file it replaced (now .*\.tmp\..*) cannot be removed: Device or resource busy" \
		"$T/swap.$cmd.err" || { cat "$T/swap.$cmd.err" >&2; letw_fail "$cmd: no warning naming the old file"; }
	cmp -s "$dir/$out" "$T/swap.ref.$cmd" || letw_fail "$cmd: the new output is not in place"
	left=$(grep -l -x "the previous $cmd output" "$dir"/*.tmp.* "$dir"/.*.tmp.* 2>/dev/null | head -1)
	[ -n "$left" ] || letw_fail "$cmd: the old output is not under the temporary name"
	rm -f "$left"
done

# The writer dying before its rename (a crash, or killed as hung while
# writing) left its temporary file in the output directory: the supervisor
# removes it (its name carries the child's pid), says why the run failed,
# and claims no output. tmp_crash.c makes the child die right after it
# creates the temporary file.
[ -f "${LETW_TMP_CRASH_SO:-}" ] || letw_fail "LETW_TMP_CRASH_SO is not set to the shim"
# crashed WHAT HOW NTH STAGE DIR CMD -o OUT: the CLI's CMD with the shim
# making the writer of its NTH temporary file die (HOW: segv, spin) exits
# 1 saying why (STAGE: the stage a hang is said in) and leaves no
# temporary file anywhere under DIR.
crashed() {
	local what=$1 how=$2 nth=$3 stage=$4 dir=$5 cmd=$6 want left rc=0
	shift 6
	LD_PRELOAD=$LETW_TMP_CRASH_SO LETW_TMP_CRASH=$how LETW_TMP_CRASH_NTH=$nth \
		"$LETW_CLI" "$cmd" "$TRACE" "$@" \
		--no-progress --stall-timeout 1 >/dev/null 2>"$T/crash.err" || rc=$?
	[ "$rc" = 1 ] || { cat "$T/crash.err" >&2; letw_fail "$what, writer $how: exit $rc, expected 1"; }
	# Our writer's doing, not the trace's nor the reader's.
	case $how in
	segv) want="analysis crashed on .*SIGSEGV" ;;
	*) want="analysis of .* made no progress .* while $stage its output" ;;
	esac
	grep -q "$want" "$T/crash.err" ||
		{ cat "$T/crash.err" >&2; letw_fail "$what, writer $how: not said as /$want/"; }
	! grep -Ei "wrote|warning: cannot remove|trace is damaged|CTF reader" "$T/crash.err" >&2 ||
		letw_fail "$what, writer $how: a false claim, or blamed on the trace or the reader (above)"
	left=$(find "$dir" -name '*.tmp.*')
	[ -z "$left" ] || letw_fail "$what, writer $how: temporary file(s) left: $left"
}
# report -o FILE too: its temporary file beside FILE is named and removed
# the same way (it was left, named without the writer's pid). Its file is
# opened while the sink is created, before any trace is opened: a crash or
# a spin there is ours, not a damaged trace (it was said as the reader's).
for cmd in perfmap jitdump report; do
	for how in segv spin; do
		dir=$T/crash.$cmd.$how
		out=$dir stage=writing
		if [ $cmd = report ]; then
			mkdir "$dir"
			out=$dir/r.txt stage=opening
		fi
		crashed "$cmd" $how 1 $stage "$dir" $cmd -o "$out"
	done
done
# report -o LINK: the report replaces the file the link names, so its
# temporary file is made beside that file, in the link target's directory;
# the supervisor looked for it beside the link and left it. Both of the
# report's temporary files: the one made when its sink is created (NTH=1)
# and the real one, made after the trace is read (NTH=2).
for nth in 1 2; do
	stage=opening
	[ $nth = 2 ] && stage=writing
	for how in segv spin; do
		dir=$T/crash.link.$nth.$how
		mkdir -p "$dir/at" "$dir/to"
		ln -s ../to/r.txt "$dir/at/r.txt"
		crashed "report -o LINK, temporary file $nth" $how $nth $stage "$dir" report -o "$dir/at/r.txt"
		[ ! -e "$dir/to/r.txt" ] ||
			letw_fail "report -o LINK, temporary file $nth, writer $how: a report was put in place"
	done
done

# A long write is no hang: bytes written while the sink writes its output
# are progress (tmp_crash.c's slow mode spends 2 s of CPU time in the
# dump's first writes, one byte each, under a 1 s stall limit).
dir=$T/slow.jitdump
rc=0
LD_PRELOAD=$LETW_TMP_CRASH_SO LETW_TMP_CRASH=slow "$LETW_CLI" jitdump "$TRACE" -o "$dir" \
	--no-progress --stall-timeout 1 >/dev/null 2>"$T/slow.err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/slow.err" >&2; letw_fail "jitdump, a slow writer: exit $rc, expected 0"; }
ls "$dir"/jit-*.dump >/dev/null 2>&1 || letw_fail "jitdump, a slow writer: no dump in $dir"
left=$(find "$dir" -name '*.tmp.*')
[ -z "$left" ] || letw_fail "jitdump, a slow writer: temporary file(s) left: $left"

# (4) The heap on huge pages (analysis/cli/hugeheap.c): the reader's
# child reserves a part of malloc's heap and advises it MADV_HUGEPAGE, for
# big traces only; LETW_HUGEHEAP=always takes that path on this small one.
# strace counts the advice (and the program's starts: one, no re-exec);
# the outputs must not change.
command -v strace >/dev/null || letw_fail "strace is needed (Debian: strace)"
grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null && want=0 || want=1
advised() { # MODE OUT CMD...: run CMD under strace, print how many MADV_HUGEPAGE advices succeeded
	local mode=$1 out=$2 n
	shift 2
	LETW_HUGEHEAP=$mode strace -f -qq -e trace=execve,madvise -e signal=none -o "$T/hh.$out" \
		"$LETW_CLI" "$@" >/dev/null || letw_fail "LETW_HUGEHEAP=$mode $*: exit $?"
	n=$(grep -c 'execve(.*= 0$' "$T/hh.$out")
	[ "$n" = 1 ] || letw_fail "LETW_HUGEHEAP=$mode $*: $n start(s), want 1"
	grep -c 'madvise(.*MADV_HUGEPAGE) = 0$' "$T/hh.$out" || true
}
bytes=$(find "$TRACE"/ -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
want_auto=0
[ "$bytes" -lt $((2 * 1024 * 1024)) ] || want_auto=$want
for cmd in perfmap jitdump report; do
	case $cmd in
	report) args=(report "$TRACE" --json --no-progress) ;;
	*) args=($cmd "$TRACE" --no-progress) ;;
	esac
	n=$(advised always $cmd.always "${args[@]}" -o "$T/hh.always.$cmd")
	[ "$n" = "$want" ] || letw_fail "$cmd with LETW_HUGEHEAP=always: $n huge-page advice(s), want $want"
	n=$(advised never $cmd.never "${args[@]}" -o "$T/hh.never.$cmd")
	[ "$n" = 0 ] || letw_fail "$cmd with LETW_HUGEHEAP=never: $n huge-page advice(s), want 0"
	# By default only for a trace of LETW_HUGEHEAP_MIN_BYTES (2 MiB) or more.
	n=$(advised auto $cmd.auto "${args[@]}" -o "$T/hh.auto.$cmd")
	[ "$n" = "$want_auto" ] ||
		letw_fail "$cmd on a trace of $bytes bytes: $n huge-page advice(s), want $want_auto"
	diff -r "$T/hh.always.$cmd" "$T/hh.never.$cmd" >&2 ||
		letw_fail "$cmd: the output differs with the heap on huge pages"
done
# (5) An event rule whose --filter names a record field drops the
# rundown's Init and Complete (they have no `name`): the map holds only the
# records that passed, with nothing to check them against. perfmap says so
# and exits 3; it used to write the partial map with exit 0, unsaid.
"$LETW_MINIJIT" --functions 300 --seconds 30 --list "$T/filt.list" >"$T/filt.out" 2>&1 &
PID=$!
letw_track "$PID"
anl_wait_file "$T/filt.list.ready"
s=$(letw_session_dcstart mapjit-filter "$PID" 'name == "fn_1*"') || exit 1
"$LETW_CLI" start "$s" --pid "$PID" >&2 || letw_fail "filter: lttng-etw start"
lttng stop "$s" >/dev/null || letw_fail "filter: stop"
rc=0
"$LETW_CLI" perfmap "$(anl_trace "$s")" -o "$T/filt" --no-progress 2>"$T/filt.err" || rc=$?
[ "$rc" = 3 ] && grep -q "dcstart record(s) outside any pass" "$T/filt.err" ||
	{ cat "$T/filt.err" >&2; letw_fail "filter: perfmap exit $rc, want 3 and the records outside any pass named"; }
[ -s "$T/filt/perf-$PID.map" ] || letw_fail "filter: no map written"
"$LETW_CLI" perfmap "$(anl_trace "$s")" -o "$T/filt" --no-progress --allow-incomplete 2>/dev/null ||
	letw_fail "filter: perfmap --allow-incomplete exit $?"
kill -TERM "$PID"
wait "$PID" || letw_fail "filter: letw-minijit failed"
letw_untrack "$PID"
echo "map_minijit_e2e: ok"
