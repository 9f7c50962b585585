#!/bin/sh
# Added time per call of a full entry/exit trace, uftrace vs libjitperf-cyg,
# on the same -finstrument-functions binary (bench/recurse: naive fib(32),
# about 7 million calls).  Both record every call to a trace file:
#   baseline  bench/recurse                       (glibc's empty hooks)
#   uftrace   uftrace record -d DIR bench/recurse  (libmcount's hooks)
#   jitperf   LD_PRELOAD=libjitperf-cyg.so JITPERF=trace JITPERF_SAMPLE=1 bench/recurse
#             (every call timed and traced, as uftrace records them; no size limit)
# Each is run RUNS times (default 5), interleaved, after a sync; the median
# wall time is used.
#
# usage: bench/uftrace-compare.sh [BUILDDIR] [N]   (run it from anywhere;
#        BUILDDIR defaults to the current directory; RUNS=n in the environment)
set -eu
build=$(cd "${1:-.}" && pwd)
n=${2:-32}
runs=${RUNS:-5}
prog="$build/bench/recurse"
cyg="$build/cyg/.libs/libjitperf-cyg.so"
[ -x "$prog" ] || { echo "uftrace-compare: $prog not built (run make)" >&2; exit 1; }
[ -f "$cyg" ] || { echo "uftrace-compare: $cyg not built (run make)" >&2; exit 1; }
command -v uftrace >/dev/null || { echo "uftrace-compare: uftrace not installed (apt-get install uftrace)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/uftrace-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

calls=$("$prog" "$n" | sed -n 's/.*calls=\([0-9]*\).*/\1/p')
[ -n "$calls" ] || { echo "uftrace-compare: $prog printed no call count" >&2; exit 1; }

now_ns() { date +%s%N; }

# time_run NAME COMMAND...: one timed run, its wall time in ns appended to
# $tmp/NAME.times.  Trace output goes to $tmp/out, emptied and synced before
# the run (not timed), so no run pays for writing back the previous one's
# hundreds of megabytes.
time_run() {
	name=$1
	shift
	rm -rf "$tmp/out"
	mkdir "$tmp/out"
	sync
	t0=$(now_ns)
	"$@" > /dev/null 2>&1 || { echo "uftrace-compare: $name run failed: $*" >&2; exit 1; }
	t1=$(now_ns)
	echo $((t1 - t0)) >> "$tmp/$name.times"
}

median() {
	sort -n "$tmp/$1.times" | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'
}

# rounds interleave the three, so a slow spell of a busy machine hits all alike
i=0
while [ "$i" -lt "$runs" ]; do
	time_run baseline nice "$prog" "$n"
	time_run uftrace nice uftrace record -d "$tmp/out/uftrace.data" "$prog" "$n"
	time_run jitperf env LD_PRELOAD="$cyg" JITPERF=trace JITPERF_SAMPLE=1 JITPERF_TRACE_MAX=0 \
		JITPERF_DIR="$tmp/out" nice "$prog" "$n"
	i=$((i + 1))
done
base=$(median baseline)
uft=$(median uftrace)
jp=$(median jitperf)

# keep the last jitperf trace size for bytes/event
rm -rf "$tmp/out"; mkdir "$tmp/out"
env LD_PRELOAD="$cyg" JITPERF=trace JITPERF_SAMPLE=1 JITPERF_TRACE_MAX=0 JITPERF_DIR="$tmp/out" "$prog" "$n" > /dev/null
bytes=$(cat "$tmp"/out/jitperf-*.trace | wc -c)

awk -v calls="$calls" -v base="$base" -v uft="$uft" -v jp="$jp" -v runs="$runs" \
    -v bytes="$bytes" 'BEGIN {
	u = (uft - base) / calls; j = (jp - base) / calls
	printf "recurse: %d calls, medians of %d runs\n", calls, runs
	printf "  baseline           %8.1f ms\n", base / 1e6
	printf "  uftrace record     %8.1f ms   %6.1f ns/call added\n", uft / 1e6, u
	printf "  libjitperf-cyg     %8.1f ms   %6.1f ns/call added   (trace %.1f bytes/event)\n", \
		jp / 1e6, j, bytes / (2 * calls)
	printf "  ratio jitperf/uftrace: %.2f (goal <= 0.35)\n", (u > 0 ? j / u : 0)
}'
