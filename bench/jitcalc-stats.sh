#!/bin/sh
# The example JIT's demo workload (about 222 million calls) with its
# probes, against the same run without them (the reference, in the same
# rounds): CPU time of all the process's threads to its exit (bench/cpurun:
# user + system, the library's threads and its close included), medians
# and worst of RUNS interleaved runs.
#
#   plain      JITPERF unset, no probes emitted (--no-instrument)
#   inactive   probes emitted (--instrument), nothing records: the inline check
#   stats      JITPERF=stats with the defaults (every call counted, adaptive
#              timing), probes as jitcalc emits them (--probes=inline)
#   stats/call the same with the exported probes called (--probes=call)
#   count      JITPERF=stats JITPERF_SAMPLE=0 (counted only)
#
# usage: bench/jitcalc-stats.sh [BUILDDIR]   (RUNS=n, default 5; WORK: jitcalc arguments)
set -eu
build=$(cd "${1:-.}" && pwd)
runs=${RUNS:-5}
jitcalc="$build/examples/jitcalc"
cpurun="$build/bench/cpurun"
[ -x "$jitcalc" ] || { echo "jitcalc-stats.sh: $jitcalc not built (x86-64 only)" >&2; exit 1; }
[ -x "$cpurun" ] || { echo "jitcalc-stats.sh: $cpurun not built (run make)" >&2; exit 1; }
load0=$(cut -d" " -f1 /proc/loadavg)   # figures beside other work are higher
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jitcalc-stats.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

one() {         # one NAME ENV... -- ARGS...: wall and CPU ns appended to $tmp/NAME
	name=$1
	shift
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	JITPERF_DIR="$tmp/d" "$cpurun" "$tmp/$name" env "$@" ${WORK:-} > /dev/null ||
		{ echo "jitcalc-stats.sh: $name failed" >&2; exit 1; }
}
median() {      # CPU seconds
	sort -n -k 2 "$tmp/$1" | awk '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)] / 1e9 }'
}
worst() {
	sort -n -k 2 "$tmp/$1" | awk '{ v = $2 } END { print v / 1e9 }'
}
i=0
while [ "$i" -lt "$runs" ]; do
	one plain nice "$jitcalc" --no-instrument
	one inactive nice "$jitcalc" --instrument
	one stats env JITPERF=stats nice "$jitcalc"
	one stats_call env JITPERF=stats nice "$jitcalc" --probes=call
	one count env JITPERF=stats JITPERF_SAMPLE=0 nice "$jitcalc"
	i=$((i + 1))
done
p=$(median plain)
echo "jitcalc ${WORK:-(demo workload)}: CPU seconds of all threads, medians (worst) of $runs runs"
for m in plain inactive stats stats_call count; do
	awk -v v="$(median $m)" -v w="$(worst $m)" -v p="$p" -v m="$m" 'BEGIN {
		printf "  %-12s %6.3f s (%6.3f)  %5.2fx%s\n", m, v, w, v / p,
			m == "stats" ? "  (goal <= 1.3x)" : "" }'
done
echo "(load average $load0 at start, $(cut -d" " -f1 /proc/loadavg) at end)"
