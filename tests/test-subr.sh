# Shared set-up for tests/*.test (sourced).  Each test gets its own
# temporary directory, removed on exit; exit 77 means "skipped".
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
JITPERF="$top_builddir/tools/jitperf"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-test.XXXXXX")
# The perf maps of this test's JIT processes (those whose jitdump landed
# under $tmp) go too; never a map another test running in parallel uses.
cleanup() {
	for d in $(find "$tmp" -name 'jit-*.dump' 2>/dev/null); do
		p=${d##*/jit-}
		rm -f "/tmp/perf-${p%.dump}.map"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
unset JITPERF_DIR JITPERF_SAMPLE JITPERF_COUNTERS JITPERF_CLOCK JITPERF_DEBUG JITPERF_IO

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# need_perf: skip unless perf can record here (CI installs it, so there it runs)
need_perf() {
	[ -n "${PERF:-}" ] || PERF=$(command -v perf || true)
	[ -n "$PERF" ] || skip "perf not installed (apt-get install linux-perf)"
	"$PERF" record -q -k 1 -e cpu-clock -o "$tmp/probe.data" true >/dev/null 2>&1 ||
		skip "perf record does not work here (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	rm -f "$tmp/probe.data"
}

# need_llvm_orc: skip unless configure found LLVM and built examples/llvm-orc
need_llvm_orc() {
	orc="$top_builddir/examples/llvm-orc"
	[ -x "$orc" ] || skip "examples/llvm-orc not built: configure found no LLVM 14-19 (--with-llvm)"
}
