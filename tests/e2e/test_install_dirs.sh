#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installing with the directories GNUInstallDirs lets a packager choose:
# an absolute CMAKE_INSTALL_LIBDIR, an INCLUDEDIR other than `include`, a
# relative LETW_BT_PLUGIN_INSTALL_DIR (under the prefix, as GNUInstallDirs'
# are; it was under the directory cmake ran in).
# A runtime built against the installed lttng-etw.pc, and one built by a
# CMake project with find_package(lttng-etw CONFIG), compile, link and run
# (the .pc named PREFIX/PREFIX/lib, the imported target PREFIX/include).
# usage: test_install_dirs.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
src=$(cd "$here/../.." && pwd)
t=$LETW_TEST_TMP
p=$t/prefix

# The library and the analysis alone: all this test needs.
cd "$t" || letw_fail "cd $t"
cmake -S "$src" -B "$t/build" -DCMAKE_INSTALL_PREFIX="$p" -DCMAKE_INSTALL_LIBDIR="$p/lib" \
	-DCMAKE_INSTALL_INCLUDEDIR=include/letw -DLETW_BT_PLUGIN_INSTALL_DIR=lib/bt-plugins \
	-DLETW_BUILD_TESTS=OFF -DLETW_BUILD_EXAMPLES=OFF -DLETW_BUILD_RUNTIMES=OFF -DLETW_BUILD_BENCH=OFF \
	-DLETW_BUILD_GLOBAL_LOCK=OFF >"$t/build.log" 2>&1 &&
	cmake --build "$t/build" -j2 >>"$t/build.log" 2>&1 &&
	cmake --install "$t/build" >>"$t/build.log" 2>&1 ||
	{ cat "$t/build.log" >&2; letw_fail "cannot build and install with LIBDIR=$p/lib, INCLUDEDIR=include/letw"; }
[ -f "$p/include/letw/lttng-etw/lttng-etw.h" ] || letw_fail "header not in INCLUDEDIR"
[ -f "$p/lib/pkgconfig/lttng-etw.pc" ] || letw_fail "lttng-etw.pc not in LIBDIR/pkgconfig"
[ -f "$p/lib/bt-plugins/babeltrace-plugin-etw.so" ] ||
	letw_fail "LETW_BT_PLUGIN_INSTALL_DIR=lib/bt-plugins: the plugin is at" \
		"$(find "$t" -name babeltrace-plugin-etw.so -not -path "$t/build/*"), not under the prefix"

cat >"$t/rt.c" <<'C'
#include <lttng-etw/lttng-etw.h>
int main(void)
{
	if (letw_init(NULL))
		return 1;
	return letw_tracing_available() && !letw_shutdown() ? 0 : 2;
}
C
export PKG_CONFIG_PATH=$p/lib/pkgconfig
# shellcheck disable=SC2046 # the flags are words
cc -std=c11 -Wall -Werror "$t/rt.c" -o "$t/rt" $(pkg-config --cflags --libs lttng-etw) 2>"$t/cc.log" ||
	letw_fail "cannot build against lttng-etw.pc ($(pkg-config --cflags --libs lttng-etw)): $(head -c 300 "$t/cc.log")"
LD_LIBRARY_PATH=$p/lib "$t/rt" || letw_fail "the runtime built with lttng-etw.pc failed: $?"

mkdir -p "$t/consumer"
cp "$t/rt.c" "$t/consumer/"
cat >"$t/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(letw_consumer C)
find_package(lttng-etw CONFIG REQUIRED)
add_executable(rt rt.c)
target_link_libraries(rt PRIVATE lttng-etw::lttng-etw)
CM
cmake -S "$t/consumer" -B "$t/consumer/build" -DCMAKE_PREFIX_PATH="$p" >"$t/consumer.log" 2>&1 &&
	cmake --build "$t/consumer/build" >>"$t/consumer.log" 2>&1 ||
	{ cat "$t/consumer.log" >&2; letw_fail "a CMake project cannot build with find_package(lttng-etw)"; }
"$t/consumer/build/rt" || letw_fail "the CMake-built runtime failed: $?"
echo "PASS: an absolute LIBDIR and INCLUDEDIR=include/letw serve pkg-config and CMake consumers; a relative plugin directory is under the prefix"
