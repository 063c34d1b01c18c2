#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How perfmap, jitdump and report write their files, run as root on traces
# made by output_safety_trace.py (no LTTng session):
# a. in a directory others can write to (a /tmp), links that user `nobody`
#    plants at every temporary name a pid-based scheme would use, and at
#    the final names, are never written through: the victim file stays as
#    it was, the outputs are regular files (mode 0666 less the umask); a
#    pidns-INO directory that is nobody's, or a link, is refused by name;
# b. `report -o FILE` on a trace it cannot report on leaves FILE as it was,
#    even when FILE is the trace's own metadata, and no temporary file;
#    perfmap and jitdump -o DIR leave no directory they made on one they
#    write nothing from, nor when their reader crashes (the supervisor
#    takes back DIR and DIR/pidns-INO, not a pidns-INO that was there);
#    `-o -` is standard output; a trace `nobody` may not read is named as
#    given by report, perfmap and jitdump (before: as TRACE/archives);
# c. a full disk is said as "No space left on device", not "Input/output
#    error" (jitdump's record writers), with no temporary file left, and
#    no pidns-INO directory made for a file it could not hold (the sinks',
#    and the CLI's for a rotated session's merged dumps);
# d. (before c, which needs a tmpfs) a device, a FIFO, or a link of root's
#    to one, as `report -o`, is written in place and stays what it was; a
#    full output is an error;
# e. (before d) each line the CLI writes to stderr is one write(2).
# Before, a) the victim got the map and the dump and perf-100.map stayed a
# link to it, and the pidns directories were used; b) FILE was emptied at
# start; c) jitdump said "Input/output error".
. "$(dirname "$0")/../lib/lttng.sh"

: "${LETW_BIN_DIR:?set by ctest: the bin directory of the build}"
LETW_CLI=$LETW_BIN_DIR/lttng-etw
PY=${LETW_BT2_PYTHON:-/usr/bin/python3}
GEN=$(dirname "$0")/output_safety_trace.py
T=$LETW_TEST_TMP
FULL=$T/full
mounted=

# The tmpfs of part c comes off on every way out, a failure included.
safety_cleanup() {
	if [ -n "$mounted" ]; then
		umount "$FULL" 2>/dev/null || umount -l "$FULL"
	fi
	letw_cleanup
}
trap safety_cleanup EXIT

[ "$(id -u)" = 0 ] || letw_fail "must run as root (the test command does)"
id nobody >/dev/null 2>&1 || letw_fail "no user nobody"
umask 022
chmod 755 "$T" # nobody reaches the shared directories below
as_nobody() {
	setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups -- "$@"
}
for k in one two empty big reuse; do
	"$PY" "$GEN" "$k" "$T/$k" || letw_fail "cannot make the $k trace"
done

# cli ARGS...: the CLI in a pid namespace of its own, so the pids a
# pid-based temporary name could take are the few first ones, all planted.
cli() {
	unshare -p -f --mount-proc "$LETW_CLI" "$@" --no-progress
}
# cli_fails WHAT PATTERN ARGS...: cli ARGS exits 1 saying PATTERN.
cli_fails() {
	local what=$1 pat=$2 rc=0
	shift 2
	cli "$@" 2>"$T/fails.err" || rc=$?
	[ $rc = 1 ] && grep -q "$pat" "$T/fails.err" || letw_fail "$what: exit $rc: $(cat "$T/fails.err")"
}
# regular FILE MODE: a regular file (not a link) of that mode.
regular() {
	[ -f "$1" ] && [ ! -L "$1" ] || letw_fail "$1 is not a regular file: $(ls -la "$1" 2>&1)"
	[ "$(stat -c %a "$1")" = "$2" ] || letw_fail "$1: mode $(stat -c %a "$1"), not $2"
}

# --- a. planted links --------------------------------------------------
echo "the victim's own content" >"$T/victim"
victim_sum=$(sha256sum <"$T/victim")
mkdir -m 1777 "$T/out"
as_nobody "$PY" - "$T/out" "$T/victim" <<'PYEOF' || letw_fail "nobody cannot plant the links"
import os, sys
out, victim = sys.argv[1:]
for pid in range(1, 1001):
    os.symlink(victim, '%s/perf-100.map.tmp.%d' % (out, pid))
    os.symlink(victim, '%s/.jit-100.dump.tmp.%d' % (out, pid))
os.symlink(victim, out + '/perf-100.map')
os.symlink(victim, out + '/jit-100.dump')
PYEOF
cli perfmap "$T/one" -o "$T/out" 2>"$T/pm.err" || letw_fail "perfmap: exit $?: $(cat "$T/pm.err")"
cli jitdump "$T/one" -o "$T/out" 2>"$T/jd.err" || letw_fail "jitdump: exit $?: $(cat "$T/jd.err")"
[ "$(sha256sum <"$T/victim")" = "$victim_sum" ] ||
	letw_fail "the victim was written through a planted link: $(head -c 300 "$T/victim" | tr -c '[:print:]\n' .)"
regular "$T/out/perf-100.map" 644
regular "$T/out/jit-100.dump" 644
grep -q alpha "$T/out/perf-100.map" || letw_fail "perf-100.map: $(cat "$T/out/perf-100.map")"
[ "$(head -c 4 "$T/out/jit-100.dump")" = DTiJ ] || letw_fail "jit-100.dump has no jitdump header"
left=$(find "$T/out" -user root -name '*.tmp.*')
[ -z "$left" ] || letw_fail "temporary files left: $left"
letw_log "a: links at the temporary and final names not followed"

# -o naming a regular file: refused before the trace is read, the file
# untouched (perfmap's own mkdir -p took EEXIST for success and failed
# only after reading the whole trace, blaming the trace).
echo "not a directory" >"$T/plainfile"
for cmd in perfmap jitdump; do
	rc=0
	cli $cmd "$T/one" -o "$T/plainfile" 2>"$T/nd.err" || rc=$?
	[ $rc = 1 ] || letw_fail "$cmd -o FILE: exit $rc, not 1"
	grep -q "output directory .*plainfile.*Not a directory" "$T/nd.err" ||
		letw_fail "$cmd -o FILE: $(cat "$T/nd.err")"
done
[ "$(cat "$T/plainfile")" = "not a directory" ] || letw_fail "-o FILE changed the file"
# -o naming the trace's own directory (where its metadata is): refused; its
# outputs were then read as damaged streams by every later command.
tdir=$(dirname "$(find "$T/one" -name metadata | head -1)")
for cmd in perfmap jitdump; do
	rc=0
	cli $cmd "$T/one" -o "$tdir" 2>"$T/td.err" || rc=$?
	[ $rc = 1 ] && grep -q "is a CTF trace's" "$T/td.err" ||
		letw_fail "$cmd -o the trace's directory: exit $rc: $(cat "$T/td.err")"
done
[ "$(find "$tdir" -newer "$T/plainfile" -type f | wc -l)" = 0 ] ||
	letw_fail "-o the trace's directory wrote into it: $(find "$tdir" -newer "$T/plainfile" -type f)"
cli report "$T/one" >/dev/null 2>"$T/td2.err" || letw_fail "the trace broke: $(cat "$T/td2.err")"
letw_log "a: -o naming a file or a trace's directory refused before reading"

# pidns-INO: a directory of nobody's, or a link to one of root's, refused.
mkdir "$T/target"
for cmd in perfmap jitdump; do
	for bad in foreign link; do
		o=$T/ns-$cmd-$bad
		mkdir -m 1777 "$o"
		if [ $bad = foreign ]; then
			as_nobody mkdir "$o/pidns-4026532001"
			why="belongs to another user"
		else
			as_nobody ln -s "$T/target" "$o/pidns-4026532001"
			why="is a symbolic link"
		fi
		rc=0
		cli $cmd "$T/two" -o "$o" 2>"$T/ns.err" || rc=$?
		[ $rc = 1 ] || letw_fail "$cmd with a $bad pidns dir: exit $rc: $(cat "$T/ns.err")"
		grep -q "refusing to use \`$o/pidns-4026532001\`: it $why" "$T/ns.err" ||
			letw_fail "$cmd with a $bad pidns dir said: $(cat "$T/ns.err")"
		[ -z "$(find "$T/target" "$o/pidns-4026532001/" -mindepth 1)" ] ||
			letw_fail "$cmd wrote into the $bad pidns dir: $(ls -la "$T/target" "$o/pidns-4026532001/")"
	done
done
# The output directory itself a link of nobody's in a shared directory
# (DIR/<chunk> of a chunked trace is made so): not followed, said.
for cmd in perfmap jitdump; do
	o=$T/od-$cmd
	mkdir -m 1777 "$o"
	as_nobody ln -s "$T/target" "$o/chunk"
	rc=0
	cli $cmd "$T/one" -o "$o/chunk" 2>"$T/od.err" || rc=$?
	[ $rc = 1 ] && grep -q "is a link of another user's" "$T/od.err" ||
		letw_fail "$cmd -o a link of nobody's: exit $rc: $(cat "$T/od.err")"
	[ -z "$(find "$T/target" -mindepth 1)" ] ||
		letw_fail "$cmd wrote through nobody's link: $(ls -la "$T/target")"
done
# One of root's, as an earlier run leaves it, is used again.
for cmd in perfmap jitdump perfmap; do
	cli $cmd "$T/two" -o "$T/ns-ok" 2>"$T/ns.err" || letw_fail "$cmd into $T/ns-ok: exit $?: $(cat "$T/ns.err")"
done
regular "$T/ns-ok/pidns-4026532002/perf-2.map" 644
regular "$T/ns-ok/pidns-4026532001/jit-2.dump" 644
letw_log "a: foreign or linked pidns-INO directories refused"

# --- b. report -o FILE on a trace the report fails on --------------------
mkdir "$T/rep"
echo "the previous report" >"$T/rep/r.txt"
meta_sum=$(sha256sum <"$T/empty/metadata")
rc=0
cli report "$T/empty" -o "$T/rep/r.txt" 2>"$T/rep.err" || rc=$?
[ $rc = 1 ] && grep -q "no lttng-etw events in the trace" "$T/rep.err" ||
	letw_fail "report -o FILE on a trace without events: exit $rc: $(cat "$T/rep.err")"
rc=0
cli report "$T/empty" -o "$T/empty/metadata" 2>"$T/rep.err" || rc=$?
[ $rc = 1 ] && grep -q "will not write the report to .*metadata" "$T/rep.err" ||
	letw_fail "report -o TRACE/metadata: exit $rc: $(cat "$T/rep.err")"
[ "$(cat "$T/rep/r.txt")" = "the previous report" ] ||
	letw_fail "a failed report changed FILE: '$(cat "$T/rep/r.txt")'"
[ "$(sha256sum <"$T/empty/metadata")" = "$meta_sum" ] ||
	letw_fail "report -o TRACE/metadata destroyed the trace's metadata"
[ "$(ls -A "$T/rep")" = r.txt ] || letw_fail "left in $T/rep: $(ls -A "$T/rep")"
[ "$(ls -A "$T/empty" | tr '\n' ' ')" = "metadata stream " ] ||
	letw_fail "left in the trace: $(ls -A "$T/empty")"
# A report that is written replaces FILE, mode 0666 less the umask.
cli report "$T/one" --json -o "$T/rep/r.txt" 2>"$T/rep.err" || letw_fail "report: exit $?: $(cat "$T/rep.err")"
regular "$T/rep/r.txt" 644
[ "$(PYTHONPATH= python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["complete"])' "$T/rep/r.txt")" = 1 ] ||
	letw_fail "report: $(cat "$T/rep/r.txt")"
[ "$(ls -A "$T/rep")" = r.txt ] || letw_fail "left in $T/rep: $(ls -A "$T/rep")"
# A mode the new file cannot be given (a filesystem without modes; the
# shim fails fchmod): the report is written and says so, once. It said
# it twice: for the file made and removed when the sink is made, too.
[ -f "${LETW_CHMOD_FAIL_SO:-}" ] || letw_fail "LETW_CHMOD_FAIL_SO is not set to the shim"
LD_PRELOAD=$LETW_CHMOD_FAIL_SO cli report "$T/one" --json -o "$T/rep/r.txt" 2>"$T/rep.err" ||
	letw_fail "report, fchmod failing: exit $?: $(cat "$T/rep.err")"
n=$(grep -c "does not keep the old one's mode or owner" "$T/rep.err")
[ "$n" = 1 ] || letw_fail "report, fchmod failing: said $n times, not once: $(cat "$T/rep.err")"
[ "$(ls -A "$T/rep")" = r.txt ] || letw_fail "left in $T/rep: $(ls -A "$T/rep")"
# `-o -` is standard output, not a file named `-`.
(cd "$T/rep" && cli report "$T/one" --json -o - >"$T/dash.out" 2>"$T/rep.err") ||
	letw_fail "report -o -: exit $?: $(cat "$T/rep.err")"
cmp -s "$T/dash.out" "$T/rep/r.txt" || letw_fail "report -o - did not write the report on stdout"
[ "$(ls -A "$T/rep")" = r.txt ] || letw_fail "report -o - left in its directory: $(ls -A "$T/rep")"
letw_log "b: a failed report leaves FILE as it was; -o - is stdout"

# perfmap and jitdump -o DIR (and its missing parents) on a trace they write
# nothing from, one that does not open or one without lttng-etw events:
# the directories they made are taken back (both runs left them, empty);
# a directory that was there stays, and a run that writes keeps its own.
mkdir "$T/garbled"
echo "not a trace" >"$T/garbled/metadata"
mkdir "$T/was"
for cmd in perfmap jitdump; do
	for tr in garbled empty; do
		rc=0
		cli $cmd "$T/$tr" -o "$T/made.$cmd.$tr/sub/out" 2>"$T/made.err" || rc=$?
		[ $rc = 1 ] || letw_fail "$cmd on the $tr trace: exit $rc: $(cat "$T/made.err")"
		[ ! -e "$T/made.$cmd.$tr" ] ||
			letw_fail "$cmd on the $tr trace left the directories it made: $(find "$T/made.$cmd.$tr")"
	done
	rc=0
	cli $cmd "$T/garbled" -o "$T/was" 2>"$T/made.err" || rc=$?
	[ $rc = 1 ] && [ -d "$T/was" ] || letw_fail "$cmd, -o an existing directory: exit $rc, $(ls -ld "$T/was" 2>&1)"
	cli $cmd "$T/one" -o "$T/made.$cmd.one/sub" 2>"$T/made.err" ||
		letw_fail "$cmd on the one trace: exit $?: $(cat "$T/made.err")"
	[ -n "$(ls -A "$T/made.$cmd.one/sub")" ] || letw_fail "$cmd wrote nothing into $T/made.$cmd.one/sub"
done
# A reader that dies by a signal while it writes (tmp_crash.c: right after
# making its first temporary file, in DIR/pidns-INO/ of a trace with two
# pid namespaces): no sink's letw_sink_fini() runs, the supervisor takes
# back the directories the reader made, DIR and its parents too, and
# keeps an empty pidns-INO that was there before. Before, DIR/pidns-INO/
# (its temporary file removed) and DIR were left, empty.
[ -f "${LETW_TMP_CRASH_SO:-}" ] || letw_fail "LETW_TMP_CRASH_SO is not set to the shim"
mkdir -p "$T/had/pidns-4026532002"
for cmd in perfmap jitdump; do
	for o in "$T/crash.$cmd/sub" "$T/had"; do
		LD_PRELOAD=$LETW_TMP_CRASH_SO LETW_TMP_CRASH=segv \
			cli_fails "$cmd -o $o, the reader crashing" SIGSEGV $cmd "$T/two" -o "$o"
	done
	[ ! -e "$T/crash.$cmd" ] ||
		letw_fail "$cmd, the reader crashing, left the directories it made: $(find "$T/crash.$cmd")"
	[ "$(find "$T/had" | sort | tr '\n' ' ')" = "$T/had $T/had/pidns-4026532002 " ] ||
		letw_fail "$cmd, the reader crashing, in a directory that was there: $(find "$T/had")"
done
letw_log "b: perfmap and jitdump leave no directory they made when they write nothing"

# report -o naming a file of a trace it can read (its metadata, a stream
# file, an index, a new file beside them, a `metadata` at the top): refused
# before reading, the trace untouched. Before, the report replaced the
# file with exit 0 and the trace could no longer be read.
tsum=$(find "$T/one" -type f -exec sha256sum {} + | sort)
tdir=$(dirname "$(find "$T/one" -name metadata | head -1)")
mkdir -p "$tdir/index"
cp "$T/rep/r.txt" "$tdir/index/stream.idx"
tsum=$(find "$T/one" -type f -exec sha256sum {} + | sort)
for f in "$tdir/metadata" "$tdir/stream" "$tdir/index/stream.idx" "$tdir/new.txt" "$T/one/metadata"; do
	rc=0
	cli report "$T/one" -o "$f" 2>"$T/in.err" || rc=$?
	[ $rc = 1 ] && grep -q "will not write the report to \`$f\`" "$T/in.err" ||
		letw_fail "report -o $f (in the trace): exit $rc: $(cat "$T/in.err")"
done
[ "$(find "$T/one" -type f -exec sha256sum {} + | sort)" = "$tsum" ] ||
	letw_fail "report -o into the trace changed it: $(find "$T/one" -type f -newer "$T/rep/r.txt")"
rm "$tdir/index/stream.idx"
cli report "$T/one" >/dev/null 2>"$T/in.err" || letw_fail "the trace broke: $(cat "$T/in.err")"
# Through a link of root's, as a shell's `>`: the file it names is
# replaced (or made, for a dangling link), the link stays; an existing
# file keeps its mode. Before, the link became a regular file and the
# file it named stayed stale.
mkdir "$T/store"
echo old >"$T/store/latest.txt"
chmod 600 "$T/store/latest.txt"
ln -s store/latest.txt "$T/latest"
ln -s store/new.txt "$T/dangling"
for l in latest dangling; do
	cli report "$T/one" --json -o "$T/$l" 2>"$T/ln.err" || letw_fail "report -o $l: exit $?: $(cat "$T/ln.err")"
	[ -L "$T/$l" ] || letw_fail "report -o $l replaced the link: $(ls -la "$T/$l")"
done
cmp -s "$T/store/latest.txt" "$T/rep/r.txt" || letw_fail "report -o LINK did not replace the file it names"
cmp -s "$T/store/new.txt" "$T/rep/r.txt" || letw_fail "report -o DANGLING-LINK did not make the file it names"
regular "$T/store/latest.txt" 600
regular "$T/store/new.txt" 644
# A link of another user's (in a directory others can write to) is not
# followed: replaced, the file it names untouched.
mkdir -m 1777 "$T/shared"
# Nor does what it names lend the new file its owner or mode (it did: root's
# report became nobody's, mode 0777, for nobody to rewrite).
as_nobody bash -c "echo bait >'$T/shared/bait' && chmod 777 '$T/shared/bait' && ln -s '$T/shared/bait' '$T/shared/theirs'"
cli report "$T/one" -o "$T/shared/theirs" 2>"$T/ln.err" || letw_fail "report -o THEIR-LINK: exit $?: $(cat "$T/ln.err")"
[ "$(cat "$T/shared/bait")" = bait ] || letw_fail "report -o wrote through another user's link"
regular "$T/shared/theirs" 644
[ "$(stat -c %U "$T/shared/theirs")" = root ] ||
	letw_fail "report -o THEIR-LINK: the report is $(stat -c %U "$T/shared/theirs")'s"
# A file the user may not write is not replaced (as `>` refuses it).
echo "read only" >"$T/shared/ro.txt"
chmod 444 "$T/shared/ro.txt"
chown nobody "$T/shared/ro.txt"
rc=0
as_nobody "$LETW_CLI" report "$T/one" -o "$T/shared/ro.txt" --no-progress 2>"$T/ro.err" || rc=$?
[ $rc = 1 ] && grep -q "Permission denied" "$T/ro.err" ||
	letw_fail "report -o READ-ONLY-FILE as its owner: exit $rc: $(cat "$T/ro.err")"
[ "$(cat "$T/shared/ro.txt")" = "read only" ] || letw_fail "report -o replaced a read-only file"
# A trace the user may not read is named as given (before: "cannot read
# `TRACE/archives`", a directory the trace does not hold).
cp -r "$T/one" "$T/private" && chmod 700 "$T/private" || letw_fail "cannot copy the trace"
for cmd in report "perfmap -o $T/shared/pm" "jitdump -o $T/shared/jd"; do
	rc=0
	# shellcheck disable=SC2086 # cmd holds the command and its options
	as_nobody "$LETW_CLI" $cmd "$T/private" --no-progress 2>"$T/priv.err" || rc=$?
	[ $rc = 1 ] && grep -qx "lttng-etw: cannot read \`$T/private\`: Permission denied" "$T/priv.err" ||
		letw_fail "$cmd UNREADABLE-TRACE as nobody: exit $rc: $(cat "$T/priv.err")"
done
letw_log "b: -o into a trace refused; through links as \`>\`; modes kept; read-only files kept"

# An output directory where no file can be made though access(2) lets
# root write (/proc): refused when the sink is made, before the trace is
# read. Before, the whole trace was read first (here: "no lttng-etw code
# records", the empty trace's own error, hid the output's).
# An empty -o is a usage error (exit 2), as report's is: there is no
# default directory (it was the plugin's "parameter `output-dir` is an
# empty path (omit it for the default)", exit 1).
# long_path LEN: a path under $T/long of LEN bytes, in 200-byte components.
long_path() {
	local p=$T/long
	while [ ${#p} -lt $(($1 - 220)) ]; do p=$p/$(printf '%0200d' 0); done
	echo "$p/$(printf '%0*d' $(($1 - ${#p} - 1)) 0)"
}
# The report's file, its whole path within PATH_MAX (4096 with the NUL)
# but not with the temporary suffix (.FILE.tmp.PID.XXXXXX): refused when
# the sink is made, naming PATH_MAX.
long=$(long_path 4090)
mkdir -p "$(dirname "$long")"
cli_fails "report -o (a ${#long}-byte path)" "cannot write the report to .*longer than PATH_MAX" \
	report "$T/one" -o "$long"
rm -r "$T/long"
long=$(long_path 4080)
long_len=${#long}
for cmd in perfmap jitdump; do
	rc=0
	cli "$cmd" "$T/empty" -o /proc 2>"$T/proc.err" || rc=$?
	[ $rc = 1 ] && grep -q 'cannot create files in output directory `/proc`' "$T/proc.err" ||
		letw_fail "$cmd -o /proc: exit $rc: $(cat "$T/proc.err")"
	# An -o whose files' paths (DIR/perf-100.map.tmp.PID.XXXXXX) would
	# pass PATH_MAX: refused as well, saying so (it failed with "File
	# name too long" once the trace was read; here the empty trace's
	# own error hid it).
	cli_fails "$cmd -o (a $long_len-byte path)" "output directory .* is too long.*PATH_MAX" \
		"$cmd" "$T/empty" -o "$long"
	[ ! -e "$T/long" ] || letw_fail "$cmd -o (a $long_len-byte path) made $(find "$T/long" | tail -1)"
	rc=0
	cli "$cmd" "$T/one" -o "" 2>"$T/noname.err" || rc=$?
	[ $rc = 2 ] && grep -q -- '-o needs a directory name' "$T/noname.err" ||
		letw_fail "$cmd -o '': exit $rc: $(cat "$T/noname.err")"
done

# --- e. each line on stderr in one write(2) -------------------------------
# stderr is unbuffered: a line written in pieces (a write(2) per byte of
# escaped text before) interleaves with another process's lines in a
# shared terminal or log. For an error (a trace with no lttng-etw event),
# an error with the reader's causes and log (damaged metadata, -v) and
# the notes of perfmap and jitdump: every write of the CLI's own process
# to its stderr ends a line, and there is at least one; and babeltrace2's
# with the plugin's perfmap note.
cp -r "$T/one" "$T/badmeta"
printf '\nevent { name = "letw_broken"; stream_id = 0; id = ; };\n' >>"$T/badmeta/metadata"
# whole_lines NAME CMD...: CMD (the CLI, exec'd by the shell whose pid
# is noted) under strace; its stderr writes checked.
command -v strace >/dev/null || letw_fail "strace is not installed (scripts/deps.sh installs it)"
whole_lines() {
	local name=$1
	shift
	# -ff: a file per process, where no write is split into unfinished
	# and resumed halves (which the pattern below would skip).
	strace -ff -qq -s 1000000 -e trace=write -e signal=none -o "$T/$name.st" \
		sh -c 'echo $$ >"$0"; exec "$@"' "$T/$name.pid" "$@" >/dev/null 2>"$T/$name.err" || true
	"$PY" - "$T/$name.st.$(cat "$T/$name.pid")" "$name" <<'PYEOF' || letw_fail "$name: stderr lines written in pieces (strace: $T/$name.st.*)"
import re, sys
log, name = sys.argv[1], sys.argv[2]
writes = [m.group(1) for m in (re.match(r'^write\(2, "(.*)", \d+\) = \d+$', l.rstrip('\n'))
                             for l in open(log)) if m]
if not writes:
    sys.exit('%s: no write to stderr seen' % name)
bad = [w for w in writes if not w.endswith('\\n')]
if bad:
    sys.exit('%s: %d of %d writes to stderr do not end a line, e.g. "%s"' % (name, len(bad), len(writes), bad[0][:80]))
PYEOF
}
whole_lines empty "$LETW_CLI" report "$T/empty" --no-progress
grep -q "lttng-etw" "$T/empty.err" || letw_fail "report of the empty trace said nothing: $(cat "$T/empty.err")"
whole_lines badmeta "$LETW_CLI" report "$T/badmeta" -v --no-progress
grep -qi "metadata" "$T/badmeta.err" || letw_fail "report -v of damaged metadata: $(head -c 600 "$T/badmeta.err")"
mkdir -p "$T/lines"
whole_lines perfmap "$LETW_CLI" perfmap "$T/one" -o "$T/lines" --no-progress
whole_lines jitdump "$LETW_CLI" jitdump "$T/one" -o "$T/lines" --no-progress
# The plugin's own lines, with no CLI to gather them: perfmap's note of a
# reused address range, in both modes, under babeltrace2 (five writes).
for mode in latest all; do
	whole_lines "reuse-$mode" babeltrace2 --plugin-path="$LETW_BT_PLUGIN_DIR" "$T/reuse" \
		-c sink.etw.perfmap -p "output-dir=\"$T/lines\",mode=\"$mode\""
	grep -q "held different code over time .*mode=$mode" "$T/reuse-$mode.err" ||
		letw_fail "perfmap's reuse note, mode=$mode: $(cat "$T/reuse-$mode.err")"
done
letw_log "e: every line on stderr in one write"

# --- d. devices, FIFOs and links to them as outputs; a full output --------
# `report -o` writes into a device, a FIFO or a link of root's to one, in
# place: the node stays what it was (before, a temporary file was renamed
# over it: `-o /dev/null` as root made /dev/null a regular file). A link
# of another user's is replaced, never followed. A full output (ENOSPC) is
# an error, exit 1: before, the report and the CLI's own output were lost
# with exit 0.
mknod -m 666 "$T/null" c 1 3 && mknod -m 666 "$T/fulldev" c 1 7 || letw_fail "mknod"
cli report "$T/one" -o "$T/null" 2>"$T/dev.err" ||
	letw_fail "report -o a null device: exit $?: $(cat "$T/dev.err")"
[ -c "$T/null" ] || letw_fail "report -o DEVICE replaced the device: $(ls -la "$T/null")"
rc=0
cli report "$T/one" -o "$T/fulldev" 2>"$T/dev.err" || rc=$?
[ $rc = 1 ] && grep -q "cannot write the report to $T/fulldev: No space left on device" "$T/dev.err" ||
	letw_fail "report -o a full device: exit $rc: $(cat "$T/dev.err")"
[ -c "$T/fulldev" ] || letw_fail "report -o DEVICE replaced the device: $(ls -la "$T/fulldev")"
for fmt in --json ""; do
	rc=0
	cli report "$T/one" $fmt >"$T/fulldev" 2>"$T/dev.err" || rc=$?
	[ $rc = 1 ] && grep -q "standard output: No space left on device" "$T/dev.err" ||
		letw_fail "report $fmt into a full standard output: exit $rc: $(cat "$T/dev.err")"
done
rc=0
"$LETW_CLI" --help >"$T/fulldev" 2>"$T/dev.err" || rc=$?
[ $rc = 1 ] && grep -q "cannot write standard output: No space left on device" "$T/dev.err" ||
	letw_fail "--help into a full standard output: exit $rc: $(cat "$T/dev.err")"
# A FIFO: its reader gets the report.
mkfifo "$T/fifo"
timeout 30 cat "$T/fifo" >"$T/fifo.out" &
reader=$!
letw_track "$reader"
cli report "$T/one" --json -o "$T/fifo" 2>"$T/dev.err" ||
	letw_fail "report -o FIFO: exit $?: $(cat "$T/dev.err")"
wait "$reader" || letw_fail "the FIFO's reader got nothing (exit $?)"
letw_untrack "$reader"
[ -p "$T/fifo" ] || letw_fail "report -o FIFO replaced the FIFO: $(ls -la "$T/fifo")"
complete() {
	PYTHONPATH= python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["complete"])'
}
[ "$(complete <"$T/fifo.out")" = 1 ] || letw_fail "report through the FIFO: $(head -c 300 "$T/fifo.out")"
# A link of root's to the standard output (as /dev/stdout is), into a pipe.
ln -s /proc/self/fd/1 "$T/stdout"
[ "$(cli report "$T/one" --json -o "$T/stdout" 2>"$T/dev.err" | complete)" = 1 ] ||
	letw_fail "report -o a link to stdout: $(cat "$T/dev.err")"
[ -L "$T/stdout" ] || letw_fail "report -o LINK-TO-STDOUT replaced the link"
# A link of nobody's to a device, in a directory nobody can write to.
mkdir -m 1777 "$T/shared"
as_nobody ln -s "$T/null" "$T/shared/link" || letw_fail "nobody cannot make a link"
cli report "$T/one" -o "$T/shared/link" 2>"$T/dev.err" ||
	letw_fail "report -o nobody's link: exit $?: $(cat "$T/dev.err")"
regular "$T/shared/link" 644
[ -c "$T/null" ] || letw_fail "nobody's link was followed: $(ls -la "$T/null")"
# A link to /proc/self/fd/1 (what /dev/stdout is) with stdout a regular
# file: the report goes into that file, and the link stays a link. It was
# replaced (the link led to a regular file): `-o /dev/stdout >FILE`
# would have turned /dev/stdout into a file for every program.
ln -s /proc/self/fd/1 "$T/mystdout"
cli report "$T/one" -o "$T/mystdout" >"$T/viafd.txt" 2>"$T/viafd.err" ||
	letw_fail "report -o link to /proc/self/fd/1: exit $?: $(cat "$T/viafd.err")"
[ -L "$T/mystdout" ] || letw_fail "report -o replaced a link to /proc/self/fd/1"
grep -q "^summary:" "$T/viafd.txt" || letw_fail "report -o /proc/self/fd/1 link: $(head -c 300 "$T/viafd.txt")"
letw_log "d: devices, FIFOs and root's links to them written in place; full outputs said"

# --- c. a full disk -----------------------------------------------------
mkdir "$FULL"
if ! mount -t tmpfs -o size=1m letw-full "$FULL" 2>"$T/mount.err"; then
	letw_log "SKIP c (full disk): cannot mount a tmpfs here: $(cat "$T/mount.err")"
	exit 0
fi
mounted=1
rc=0
cli jitdump "$T/big" -o "$FULL" 2>"$T/full.err" || rc=$?
[ $rc = 1 ] && grep -q "No space left on device" "$T/full.err" &&
	! grep -q "Input/output error" "$T/full.err" ||
	letw_fail "jitdump on a full disk: exit $rc: $(cat "$T/full.err")"
[ -z "$(ls -A "$FULL")" ] || letw_fail "left on the full disk: $(ls -A "$FULL")"
# A pidns-INO directory made for a file that cannot be written (mkdir needs
# no block of a tmpfs, the file does) is taken back with DIR: the sinks'
# in the reader, and the CLI's for the chunks' merged dumps (the disk
# holds the chunks' own dumps, one page each, and no more). Before, both
# were left, empty.
dd if=/dev/zero of="$FULL/filler" bs=4096 2>/dev/null
for cmd in perfmap jitdump; do
	cli_fails "$cmd, two pid namespaces, on a full disk" "No space left on device" \
		$cmd "$T/two" -o "$FULL/two.$cmd"
done
[ "$(ls -A "$FULL")" = filler ] || letw_fail "left on the full disk: $(find "$FULL" ! -name filler)"
rm "$FULL/filler"
mkdir -p "$T/rot/archives"
cp -a "$T/two" "$T/rot/archives/c1"
cp -a "$T/two" "$T/rot/archives/c2"
free=$(stat -f -c %a "$FULL")
dd if=/dev/zero of="$FULL/filler" bs="$(stat -f -c %S "$FULL")" count=$((free - 4)) 2>/dev/null
cli_fails "jitdump, chunks of two pid namespaces, merged on a full disk" \
	"cannot write the merged dump .*pidns-4026532002/jit-2.dump.*No space left on device" \
	jitdump "$T/rot" -o "$FULL/rot"
[ "$(cd "$FULL/rot" && find . -name 'pidns-*' | sort | tr '\n' ' ')" = \
	"./c1/pidns-4026532001 ./c1/pidns-4026532002 ./c2/pidns-4026532001 ./c2/pidns-4026532002 " ] ||
	letw_fail "jitdump, merged on a full disk, left: $(find "$FULL/rot")"
letw_log "c: a full disk is said as such; no directory made for what it could not hold is left"
