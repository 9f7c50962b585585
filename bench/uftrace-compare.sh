#!/bin/sh
# Added cost per call of a full entry/exit trace, uftrace vs libjitperf-cyg,
# on the same -finstrument-functions binary (bench/recurse: naive fib(32),
# about 7 million calls).  Both record every call to a trace file:
#   baseline  bench/recurse                       (glibc's empty hooks)
#   uftrace   uftrace record -d DIR bench/recurse  (libmcount's hooks, and
#             uftrace's recorder threads and processes)
#   jitperf   LD_PRELOAD=libjitperf-cyg.so JITPERF=trace JITPERF_SAMPLE=1 bench/recurse
#             (every call timed and traced, as uftrace records them; no size
#             limit; its trace filler thread and its close count)
# The cost of a run is the CPU time of all its threads and processes, up to
# their exit (bench/cpurun); wall time is printed too.  Each is run RUNS
# times (default 5), interleaved, after a sync; medians and the worst run.
#
# usage: bench/uftrace-compare.sh [BUILDDIR] [N]   (run it from anywhere;
#        BUILDDIR defaults to the current directory; RUNS=n in the environment)
set -eu
build=$(cd "${1:-.}" && pwd)
n=${2:-32}
runs=${RUNS:-5}
prog="$build/bench/recurse"
cpurun="$build/bench/cpurun"
cyg="$build/cyg/.libs/libjitperf-cyg.so"
[ -x "$prog" ] && [ -x "$cpurun" ] || { echo "uftrace-compare: bench/ not built (run make)" >&2; exit 1; }
[ -f "$cyg" ] || { echo "uftrace-compare: $cyg not built (run make)" >&2; exit 1; }
command -v uftrace >/dev/null || { echo "uftrace-compare: uftrace not installed (apt-get install uftrace)" >&2; exit 1; }

load0=$(cut -d" " -f1 /proc/loadavg)   # figures beside other work are higher
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uftrace-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

calls=$("$prog" "$n" | sed -n 's/.*calls=\([0-9]*\).*/\1/p')
[ -n "$calls" ] || { echo "uftrace-compare: $prog printed no call count" >&2; exit 1; }

# time_run NAME COMMAND...: one run; its wall and CPU ns appended to
# $tmp/NAME.  Trace output goes to $tmp/out, emptied and synced before the
# run (not counted), so no run pays for writing back the previous one's
# hundreds of megabytes.
time_run() {
	name=$1
	shift
	rm -rf "$tmp/out"
	mkdir "$tmp/out"
	sync
	"$cpurun" "$tmp/$name" "$@" > /dev/null 2>&1 ||
		{ echo "uftrace-compare: $name run failed: $*" >&2; exit 1; }
}

# stat NAME COLUMN median|worst
stat() {
	sort -n -k "$2" "$tmp/$1" | awk -v c="$2" -v w="$3" '{ t[NR] = $c }
		END { print w == "worst" ? t[NR] : t[int((NR + 1) / 2)] }'
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

# keep the last jitperf trace size for bytes/event
rm -rf "$tmp/out"; mkdir "$tmp/out"
env LD_PRELOAD="$cyg" JITPERF=trace JITPERF_SAMPLE=1 JITPERF_TRACE_MAX=0 JITPERF_DIR="$tmp/out" "$prog" "$n" > /dev/null
bytes=$(cat "$tmp"/out/jitperf-*.trace | wc -c)

awk -v calls="$calls" -v runs="$runs" -v bytes="$bytes" \
    -v bc="$(stat baseline 2 median)" -v bw="$(stat baseline 1 median)" \
    -v uc="$(stat uftrace 2 median)" -v uw="$(stat uftrace 1 median)" \
    -v jc="$(stat jitperf 2 median)" -v jw="$(stat jitperf 1 median)" \
    -v ux="$(stat uftrace 2 worst)" -v jx="$(stat jitperf 2 worst)" 'BEGIN {
	u = (uc - bc) / calls; j = (jc - bc) / calls
	printf "recurse: %d calls; CPU of all threads and processes, medians of %d runs\n", calls, runs
	printf "  %-16s %8.1f ms CPU  %8.1f ms wall\n", "baseline", bc / 1e6, bw / 1e6
	printf "  %-16s %8.1f ms CPU  %8.1f ms wall  %6.1f ns/call added (worst run %.1f)\n", \
		"uftrace record", uc / 1e6, uw / 1e6, u, (ux - bc) / calls
	printf "  %-16s %8.1f ms CPU  %8.1f ms wall  %6.1f ns/call added (worst run %.1f)\n", \
		"libjitperf-cyg", jc / 1e6, jw / 1e6, j, (jx - bc) / calls
	printf "  trace %.1f bytes/event\n", bytes / (2 * calls)
	printf "  ratio jitperf/uftrace, CPU: %.2f (goal <= 0.35); wall: %.2f\n", \
		(u > 0 ? j / u : 0), (uw > bw ? (jw - bw) / (uw - bw) : 0)
}'
echo "(load average $load0 at start, $(cut -d" " -f1 /proc/loadavg) at end)"
