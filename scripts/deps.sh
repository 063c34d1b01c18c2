# SPDX-License-Identifier: MIT
# Debian 12 packages lttng-etw needs; sourced by demo.sh and test.sh.
# Installs only what is missing (we run as root; apt-get update first).

LETW_DEPS_BUILD="build-essential cmake pkg-config liblttng-ust-dev liburcu-dev
libbabeltrace2-dev libglib2.0-dev libcriterion-dev libluajit-5.1-dev liblttng-ctl-dev
openjdk-17-jdk-headless"
LETW_DEPS_RUN="lttng-tools babeltrace2 python3 python3-bt2 linux-perf luajit
procps"
LETW_DEPS_TEST="valgrind clang libclang-rt-14-dev llvm util-linux strace iproute2"
LETW_DEPS_BENCH="gnuplot-nox"

letw_install_deps() { # [extra packages...]
	local want="$LETW_DEPS_BUILD $LETW_DEPS_RUN $*" missing="" p
	for p in $want; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "lttng-etw: installing Debian packages:$missing" >&2
	if [ "$(id -u)" != 0 ]; then
		echo "lttng-etw: need root to install packages; run as root or install:$missing" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 &&
		apt-get install -y -qq --no-install-recommends $missing >&2
}

# A root lttng-sessiond: tests and the demo trace as root.
letw_start_sessiond() {
	lttng list >/dev/null 2>&1 && return 0
	lttng-sessiond --daemonize >/dev/null 2>&1 || return 1
	for _ in $(seq 1 50); do
		lttng list >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

letw_build() { # SRC BUILD_DIR [cmake args...]
	local src=$1 dir=$2; shift 2
	cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null &&
		cmake --build "$dir" -j"$(nproc)"
}
