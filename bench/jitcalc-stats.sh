#!/bin/sh
# The example JIT's demo workload (about 222 million calls) with its
# probes, against the same run without them: user CPU time, medians of
# RUNS interleaved runs.
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
[ -x "$jitcalc" ] || { echo "jitcalc-stats.sh: $jitcalc not built (x86-64 only)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jitcalc-stats.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

one() {         # one NAME ENV... -- ARGS...: user seconds appended to $tmp/NAME
	name=$1
	shift
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	env JITPERF_DIR="$tmp/d" /usr/bin/time -f %U -o "$tmp/t" "$@" ${WORK:-} > /dev/null ||
		{ echo "jitcalc-stats.sh: $name failed" >&2; exit 1; }
	cat "$tmp/t" >> "$tmp/$name"
}
median() {
	sort -n "$tmp/$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
[ -x /usr/bin/time ] || { echo "jitcalc-stats.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
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
echo "jitcalc ${WORK:-(demo workload)}: user CPU seconds, medians of $runs runs"
for m in plain inactive stats stats_call count; do
	awk -v v="$(median $m)" -v p="$p" -v m="$m" 'BEGIN {
		printf "  %-12s %6.3f s  %5.2fx%s\n", m, v, v / p, m == "stats" ? "  (goal <= 1.3x)" : "" }'
done
