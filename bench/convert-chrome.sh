#!/bin/bash
# Trace to Chrome JSON: events per second of jitperf convert on one core.
#
#   bench/convert-chrome.sh [FILE.trace]
#
# Environment: JITPERF (default ./tools/jitperf), RUNS (default 5), CALLS_N
# (repetitions of fib(25) = 242785 calls each, default 20).  Without a trace,
# the example JIT writes one (JITPERF=trace).  The JSON goes to /dev/null
# (what is measured is reading, formatting and writing through stdio) and
# once to a file, to count its events.  Prints medians of wall and CPU
# (user + sys) time, and complete events (one per call) and trace events
# (entry + exit) per second.
set -euo pipefail
JITPERF=${JITPERF:-./tools/jitperf}
RUNS=${RUNS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

trace=${1:-}
if [ -z "$trace" ]; then
	jitcalc=$(dirname "$JITPERF")/../examples/jitcalc
	JITPERF=trace JITPERF_SAMPLE=1 JITPERF_DIR=$work nice "$jitcalc" -e 'fib(25)' -n "${CALLS_N:-20}" > /dev/null
	trace=$(ls "$work"/jitperf-*.trace)
fi
"$JITPERF" convert "$trace" --chrome "$work/out.json"
calls=$(grep -c '"ph":"X","cat":"call"' "$work/out.json")
rm -f "$work/out.json"
echo "trace: $trace, $(($(wc -c < "$trace") / 1048576)) MiB, $calls calls"

median() {
	awk -v c="$1" '{ print (c == "cpu") ? $2 + $3 : $1 }' "$2" | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
TIMEFORMAT='%R %U %S'
for _ in $(seq "$RUNS"); do
	{ time "$JITPERF" convert "$trace" --chrome - > /dev/null; } 2>> "$work/times"
done
wall=$(median wall "$work/times")
cpu=$(median cpu "$work/times")
awk -v n="$calls" -v w="$wall" -v c="$cpu" 'BEGIN {
	printf "wall %.3f s: %.1f M complete events/s (%.1f M trace events/s)\n", w, n / w / 1e6, 2 * n / w / 1e6
	printf "cpu  %.3f s: %.1f M complete events/s (%.1f M trace events/s)\n", c, n / c / 1e6, 2 * n / c / 1e6 }'
