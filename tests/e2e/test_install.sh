#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install into a scratch prefix; a runtime built against the installed
# header and lttng-etw.pc links only liblttng-etw (never liblttng-ust),
# finds its probe object next to the library, and runs with the probe
# missing, with LETW_DISABLE=1, and with tracing on.
# usage: test_install.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lttng.sh"
build=$1
prefix="$LETW_TEST_TMP/prefix"

cmake --install "$build" --prefix "$prefix" >/dev/null || letw_fail "cmake --install"
libdir=$(dirname "$(find "$prefix" -name 'liblttng-etw.so' | head -n1)")
[ -f "$prefix/include/lttng-etw/lttng-etw.h" ] || letw_fail "header not installed"
[ -e "$libdir/liblttng-etw-tp.so.0" ] || letw_fail "probe object not installed next to the library"
pc=$(find "$prefix" -name lttng-etw.pc | head -n1)
[ -n "$pc" ] || letw_fail "lttng-etw.pc not installed"

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
echo "PASS: installed library, header, probe and pkg-config work; no lttng-ust dependency"
