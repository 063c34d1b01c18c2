#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installing the analysis: `cmake --install --prefix /usr` (staged with
# DESTDIR, so the machine's own plugin directory is left alone) puts the
# plugin where babeltrace2 looks with no option; any other prefix keeps it
# under that prefix, where --plugin-path and BABELTRACE_PLUGIN_PATH (what
# the install message and the README say to set) find it. The installed
# CLI runs from the prefix without LD_LIBRARY_PATH, and nothing installed
# names the source or build tree.
# usage: install_check.sh BUILD_DIR SYSTEM_PLUGIN_DIR
set -u
build=$1 sysdir=$2
stage=$(mktemp -d /tmp/letw-install.XXXXXX)
trap 'rm -rf "$stage"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
btprefix=$(pkg-config --variable=prefix babeltrace2)

# 1. Into babeltrace2's prefix: its system plugin directory.
DESTDIR=$stage/sys cmake --install "$build" --prefix "$btprefix" >/dev/null ||
	fail "cmake --install --prefix $btprefix"
so=$stage/sys$sysdir/babeltrace-plugin-etw.so
[ -f "$so" ] || fail "plugin not installed in $sysdir for a $btprefix install"
out=$(babeltrace2 --omit-system-plugin-path --plugin-path="$stage/sys$sysdir" list-plugins 2>&1) ||
	fail "babeltrace2 cannot load the installed plugin"
echo "$out" | grep -q "sink.etw.perfmap" && echo "$out" | grep -q "sink.etw.report" &&
	echo "$out" | grep -q "sink.etw.jitdump" ||
	fail "installed plugin lacks its sinks: $out"

# 2. Any other prefix: under it, and the install says what to set.
p=$stage/prefix
msg=$(cmake --install "$build" --prefix "$p" 2>&1) || fail "cmake --install --prefix $p"
pdir=$(dirname "$(find "$p" -name babeltrace-plugin-etw.so | head -1)")
case $pdir in "$p"/*/babeltrace2/plugins) ;; *) fail "plugin not under the prefix: '$pdir'";; esac
echo "$msg" | grep -qF "BABELTRACE_PLUGIN_PATH='$pdir'" ||
	fail "the install does not tell how to reach the plugin: $msg"
BABELTRACE_PLUGIN_PATH=$pdir babeltrace2 list-plugins 2>&1 | grep -q "sink.etw.report" ||
	fail "BABELTRACE_PLUGIN_PATH=$pdir does not find the plugin"
babeltrace2 --plugin-path="$pdir" list-plugins 2>&1 | grep -q "sink.etw.perfmap" ||
	fail "--plugin-path=$pdir does not find the plugin"
ldd "$pdir/babeltrace-plugin-etw.so" | grep -q "not found" && fail "plugin has unresolved libraries"
# --strip strips the plugin as it does the libraries and programs.
cmake --install "$build" --prefix "$stage/stripped" --strip >/dev/null || fail "cmake --install --strip"
for f in "$stage"/stripped/*/babeltrace2/plugins/babeltrace-plugin-etw.so "$stage"/stripped/bin/lttng-etw; do
	# A file not there (a glob that matched nothing) has no .debug_info
	# either: it must be there first, or the check passes on nothing.
	[ -f "$f" ] || fail "cmake --install --strip installed no $f"
	! readelf -S "$f" | grep -q '\.debug_info' || fail "cmake --install --strip left ${f#"$stage"/stripped/} unstripped"
done

# 3. The installed CLI, as a user would start it.
cli=$p/bin/lttng-etw
[ -x "$cli" ] || fail "lttng-etw not installed in bin/"
env -u LD_LIBRARY_PATH "$cli" --help | grep -q "capture-state" || fail "installed lttng-etw --help"
for c in perfmap report jitdump capture-state status start stop snapshot watch; do
	# Every command's help says its exit statuses (start, stop, snapshot
	# and watch said none).
	env -u LD_LIBRARY_PATH "$cli" "$c" --help | grep -q "^Exit status: 0 " ||
		fail "lttng-etw $c --help: exit 1 or no \"Exit status:\" paragraph"
done
out=$(env -u LD_LIBRARY_PATH "$cli" report "$stage/none" 2>&1)
[ $? = 1 ] && echo "$out" | grep -q "No such file" || fail "installed lttng-etw report on a missing trace: $out"

# 4. Nothing installed names the source or build tree: the plugin's error
# causes, which babeltrace2 prints, carried its sources' absolute paths.
# Debug info names the sources by design (packagers map it with
# -ffile-prefix-map), so it is stripped before looking.
src=$(cd "$(dirname "$0")/../.." && pwd)
bdir=$(cd "$build" && pwd)
while read -r f; do
	g=$f
	if head -c4 "$f" | grep -q ELF; then
		g=$stage/nodebug
		objcopy --strip-debug "$f" "$g" || fail "objcopy --strip-debug $f"
	fi
	hit=$(strings -a "$g" | grep -F -e "$src/" -e "$bdir/" | head -n1)
	[ -z "$hit" ] || fail "installed ${f#"$p"/} names the source or build tree: $hit"
done < <(find "$p" -type f)
echo "install_check: ok"
