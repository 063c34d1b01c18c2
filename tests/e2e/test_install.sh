#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install into a scratch prefix; a runtime built against the installed
# header and lttng-etw.pc links only liblttng-etw (never liblttng-ust),
# finds its probe object next to the library, and runs with the probe
# missing, with LETW_DISABLE=1, and with tracing on. The same runtime
# built by a CMake project with find_package(lttng-etw CONFIG) runs too.
# Every installed executable and shared object resolves its libraries
# without LD_LIBRARY_PATH, and the installed programs start; the libraries
# carry no RUNPATH, and the probe no link to link it by. The licence text
# goes to share/doc/lttng-etw.
# usage: test_install.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
prefix="$LETW_TEST_TMP/prefix"

cmake --install "$build" --prefix "$prefix" >/dev/null || letw_fail "cmake --install"
libdir=$(dirname "$(find "$prefix" -name 'liblttng-etw.so' | head -n1)")
[ -f "$prefix/include/lttng-etw/lttng-etw.h" ] || letw_fail "header not installed"
grep -q "^MIT License" "$prefix/share/doc/lttng-etw/LICENSE" 2>/dev/null ||
	letw_fail "the licence text is not installed in share/doc/lttng-etw"
[ -e "$libdir/liblttng-etw-tp.so.0" ] || letw_fail "probe object not installed next to the library"
# The probe is loaded by its SONAME, never linked: no link to link it by
# (-llttng-etw-tp would pull liblttng-ust into a runtime).
[ ! -e "$libdir/liblttng-etw-tp.so" ] || letw_fail "liblttng-etw-tp.so installed: the probe can be linked"
# The library exports the API and nothing else (lttng-ust's tracepoint
# definitions and the section's __start_/__stop_ symbols were exported),
# each function at a version of liblttng-etw.map (the absolute symbols
# named for the versions themselves aside).
exported=$(nm -D --defined-only "$libdir/liblttng-etw.so.0" | awk '$2 != "A" {print $3}')
extra=$(echo "$exported" | grep -v '^letw_')
[ -z "$extra" ] || letw_fail "liblttng-etw exports more than the letw_ API: $(echo "$extra" | tr "\n" " " | head -c 300)"
unversioned=$(echo "$exported" | grep -v '@@*LETW_[0-9.]*$')
[ -z "$unversioned" ] || letw_fail "liblttng-etw exports functions without a LETW_ version: $(echo "$unversioned" | tr "\n" " " | head -c 300)"
# ... and every function the header declares: a LETW_API function left
# out of the map is local, and a program calling it fails to link.
declared=$(grep '^LETW_API' "$prefix/include/lttng-etw/lttng-etw.h" | grep -o 'letw_[a-z0-9_]*(' | tr -d '(' | sort)
[ -n "$declared" ] || letw_fail "no LETW_API function found in the installed header"
got=$(echo "$exported" | sed 's/@.*//' | sort)
[ "$declared" = "$got" ] ||
	letw_fail "the header's LETW_API functions and liblttng-etw's exports differ: $(diff <(echo "$declared") <(echo "$got") | grep '^[<>]' | tr "\n" " ")"
# One version everywhere: the header's, the library's, the .pc's, the CLI's.
hv=$(awk '/#define LETW_VERSION_MAJOR/ {a=$3} /#define LETW_VERSION_MINOR/ {b=$3} END {print a "." b}' \
	"$prefix/include/lttng-etw/lttng-etw.h")
ls "$libdir"/liblttng-etw.so."$hv".* >/dev/null 2>&1 || letw_fail "no liblttng-etw.so.$hv.* for header version $hv"
pc=$(find "$prefix" -name lttng-etw.pc | head -n1)
[ -n "$pc" ] || letw_fail "lttng-etw.pc not installed"
grep -q "^Version: $hv\." "$pc" || letw_fail "lttng-etw.pc: $(grep ^Version "$pc"), header $hv"
env -u LD_LIBRARY_PATH "$prefix/bin/lttng-etw" --version | grep -q "^lttng-etw $hv\." ||
	letw_fail "lttng-etw --version: $(env -u LD_LIBRARY_PATH "$prefix/bin/lttng-etw" --version), header $hv"

cat > "$LETW_TEST_TMP/rt.c" <<'C'
#include <lttng-etw/lttng-etw.h>
#include <stdio.h>
int main(void)
{
	static const unsigned char code[64];
	struct letw_method m = { .code_start = (uint64_t)(uintptr_t)code,
				 .code_size = sizeof(code), .name = "f" };
	int ret = letw_init(NULL);

	if (ret || (ret = letw_method_publish(&m)) || (ret = letw_method_unpublish(m.code_start)))
		return 1;
	printf("tracing=%d\n", letw_tracing_available());
	return letw_shutdown() ? 1 : 0;
}
C
PKG_CONFIG_PATH=$(dirname "$pc") cc -std=c11 -Wall -Werror "$LETW_TEST_TMP/rt.c" -o "$LETW_TEST_TMP/rt" \
	$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs lttng-etw) -Wl,-rpath,"$libdir" ||
	letw_fail "cannot build against the installed lttng-etw.pc"
if ldd "$LETW_TEST_TMP/rt" | grep -q lttng-ust; then
	letw_fail "a runtime linked with lttng-etw depends on lttng-ust"
fi
out=$("$LETW_TEST_TMP/rt") || letw_fail "runtime failed with tracing available"
[ "$out" = "tracing=1" ] || letw_fail "probe not found next to the installed library: $out"
out=$(LETW_DISABLE=1 "$LETW_TEST_TMP/rt") || letw_fail "runtime failed with LETW_DISABLE=1"
[ "$out" = "tracing=0" ] || letw_fail "LETW_DISABLE=1 ignored: $out"
out=$(LETW_PROBE_PATH=/nonexistent/liblttng-etw-tp.so "$LETW_TEST_TMP/rt") ||
	letw_fail "runtime failed without its probe object"
[ "$out" = "tracing=0" ] || letw_fail "missing probe not detected: $out"

# Installed into /usr, the .pc names /usr, so that pkg-config leaves its
# system directories out of the flags (spelled from the .pc's own
# directory, -I/usr/lib/pkgconfig/../../include and an -L of the
# system's library directory went into every consumer's command line).
DESTDIR=$LETW_TEST_TMP/stage cmake --install "$build" --prefix /usr >/dev/null || letw_fail "cmake --install --prefix /usr"
upc=$(find "$LETW_TEST_TMP/stage/usr" -name lttng-etw.pc | head -n1)
out=$(PKG_CONFIG_LIBDIR=$(dirname "$upc") pkg-config --cflags --libs lttng-etw | xargs)
[ "$out" = "-llttng-etw" ] || letw_fail "a /usr install's flags are '$out', not -llttng-etw"

# A CMake consumer of the installed package, no LD_LIBRARY_PATH.
mkdir -p "$LETW_TEST_TMP/consumer"
cp "$LETW_TEST_TMP/rt.c" "$LETW_TEST_TMP/consumer/rt.c"
cat > "$LETW_TEST_TMP/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(letw_consumer C)
find_package(lttng-etw 0.2 CONFIG REQUIRED)
add_executable(rt rt.c)
target_link_libraries(rt PRIVATE lttng-etw::lttng-etw)
CM
cmake -S "$LETW_TEST_TMP/consumer" -B "$LETW_TEST_TMP/consumer/build" \
	-DCMAKE_PREFIX_PATH="$prefix" >"$LETW_TEST_TMP/consumer.log" 2>&1 &&
	cmake --build "$LETW_TEST_TMP/consumer/build" >>"$LETW_TEST_TMP/consumer.log" 2>&1 ||
	{ cat "$LETW_TEST_TMP/consumer.log" >&2; letw_fail "a CMake project cannot build with find_package(lttng-etw)"; }
out=$(env -u LD_LIBRARY_PATH "$LETW_TEST_TMP/consumer/build/rt") || letw_fail "the CMake-built runtime failed"
[ "$out" = "tracing=1" ] || letw_fail "CMake-built runtime: $out"
grep -q "lttng-etw::lttng-etw" "$prefix"/lib*/cmake/lttng-etw/lttng-etw-targets.cmake ||
	letw_fail "no imported target lttng-etw::lttng-etw"

# Every installed ELF file resolves its libraries from the install alone;
# executables linked with liblttng-etw carry a RUNPATH relative to
# themselves, so the prefix may move.
n=0
while read -r f; do
	head -c4 "$f" | grep -q ELF || continue
	n=$((n + 1))
	if env -u LD_LIBRARY_PATH ldd "$f" 2>&1 | grep -q "not found"; then
		env -u LD_LIBRARY_PATH ldd "$f" >&2
		letw_fail "$f: unresolved libraries without LD_LIBRARY_PATH"
	fi
	if env -u LD_LIBRARY_PATH ldd "$f" | grep -q "liblttng-etw.so" && [ "${f#"$prefix"/bin/}" != "$f" ]; then
		readelf -d "$f" | grep -q 'R.*PATH.*\$ORIGIN' || letw_fail "$f: no \$ORIGIN-relative RUNPATH"
	fi
	# Shared objects need no RUNPATH (their dependencies are system
	# libraries), but for the JVM agent's $ORIGIN: they had the
	# executables' $ORIGIN/../LIBDIR, a directory that does not exist
	# from a multiarch LIBDIR (lib/x86_64-linux-gnu).
	case $f in
	"$prefix"/bin/* | */liblttng-etw-jvmti.so) ;;
	*) ! readelf -d "$f" | grep -qE '\((RUNPATH|RPATH)\)' ||
		letw_fail "${f#"$prefix"/} has a RUNPATH: $(readelf -d "$f" | grep -E '\((RUNPATH|RPATH)\)' | sed 's/.*: //')" ;;
	esac
done < <(find "$prefix" -type f)
[ "$n" -ge 4 ] || letw_fail "only $n ELF files installed"
for exe in "$prefix"/bin/*; do
	env -u LD_LIBRARY_PATH "$exe" --help >/dev/null 2>&1 ||
		letw_fail "installed $(basename "$exe") does not start: $(env -u LD_LIBRARY_PATH "$exe" --help 2>&1 | head -2)"
done
# The prefix moved elsewhere still runs.
mv "$prefix" "$prefix.moved"
env -u LD_LIBRARY_PATH "$prefix.moved/bin/letw-minijit" --help >/dev/null ||
	letw_fail "letw-minijit does not start from a moved prefix"
mv "$prefix.moved" "$prefix"
echo "PASS: installed library, header, probe, pkg-config and CMake package work; no lttng-ust dependency; every installed program starts without LD_LIBRARY_PATH"
