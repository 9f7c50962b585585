#!/bin/bash
# The listener built with GCC's profile feedback, against the default build:
# what bench/README.md's LLVM listener figures report but the build does not do.
#
#   bench/llvm-pgo.sh          (from a configured build directory with LLVM)
#
# In a temporary directory, libjitperf and libjitperf-llvm are built from
# the same source with -fprofile-generate, trained by one run of
# bench/llvm_listener, and built again with -fprofile-use.  Then this
# build's bench/llvm_listener runs RUNS times (default 3) with its own
# libraries and with those, alternately (LD_LIBRARY_PATH), and prints each
# run's line of callback times and ratios.
set -euo pipefail
RUNS=${RUNS:-3}
[ -x bench/llvm_listener ] || { echo "llvm-pgo.sh: run it in a build directory with LLVM (no bench/llvm_listener here)" >&2; exit 1; }
src=$(sed -n 's/^abs_top_srcdir = //p' Makefile)
llvm=$(sed -n 's/^LLVM_CONFIG = //p' Makefile)
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-pgo.XXXXXX")
trap 'rm -rf "$work"' EXIT
libs="lib/libjitperf.la llvm/libjitperf-llvm.la"

echo "building with -fprofile-generate in $work"
gen="-O2 -g -fprofile-generate -fprofile-update=atomic"
(cd "$work" && "$src/configure" --quiet --with-llvm="$llvm" CFLAGS="$gen" CXXFLAGS="$gen" \
	LDFLAGS=-fprofile-generate && make -j"$(nproc)" $libs bench/llvm_listener) >"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log" >&2; exit 1; }
echo "training: bench/llvm_listener 500 3"
(cd "$work" && bench/llvm_listener 500 3 >/dev/null 2>&1)
# the objects go, the profiles (.gcda beside them) stay for the second build
find "$work" \( -name '*.o' -o -name '*.lo' -o -name '*.la' -o -name '*.so*' \) -delete
use="-O2 -g -fprofile-use -fprofile-partial-training -Wno-missing-profile"
echo "building with -fprofile-use"
make -C "$work" -j"$(nproc)" CFLAGS="$use" CXXFLAGS="$use" LDFLAGS= $libs >>"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log" >&2; exit 1; }

for i in $(seq "$RUNS"); do
	for v in default profiled; do
		dirs=
		[ $v = profiled ] && dirs=$work/lib/.libs:$work/llvm/.libs
		LD_LIBRARY_PATH=$dirs nice bench/llvm_listener >"$work/out" 2>&1
		printf '%-9s %s\n' "$v" "$(grep -E 'jitperf_llvm_event_listener' "$work/out" | sed 's/  */ /g')"
		printf '%-9s %s\n' "" "$(grep -E 'LLVM / jitperf' "$work/out" | sed 's/  */ /g')"
	done
done
