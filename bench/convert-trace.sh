#!/bin/bash
# A trace converted: calls per second of jitperf convert on one core, for
# each output that reads instrumented calls (Chrome JSON, folded stacks of
# calls, pprof).
#
#   bench/convert-trace.sh [FILE.trace]
#
# Environment: JITPERF (default ./tools/jitperf), RUNS (default 5), CALLS_N
# (repetitions of fib(25) = 242785 calls each, default 20), FORMATS (default
# "chrome folded pprof").  Without a trace, the example JIT writes one
# (JITPERF=trace).  Each output goes to /dev/null (what is measured is
# reading, formatting and writing through stdio; the Chrome JSON once to a
# file, to count its calls).  Prints, per output, medians of wall and CPU
# (user + sys) time, and calls per second (for Chrome: complete events, one
# per call, and trace events, entry + exit).
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
# the calls: the Chrome JSON's, or all of them when its budget left some out
"$JITPERF" convert "$trace" --chrome "$work/out.json" 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
calls=$(sed -n 's/.*left out [0-9]* of \([0-9]*\) calls.*/\1/p' "$work/err")
[ -n "$calls" ] || calls=$(grep -c '"ph":"X","cat":"call"' "$work/out.json")
rm -f "$work/out.json"
echo "trace: $trace, $(($(wc -c < "$trace") / 1048576)) MiB, $calls calls"

median() {
	awk -v c="$1" '{ print (c == "cpu") ? $2 + $3 : $1 }' "$2" | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
TIMEFORMAT='%R %U %S'
for f in ${FORMATS:-chrome folded pprof}; do
	args=(--"$f" -)
	[ "$f" = folded ] && args+=(--source calls)
	: > "$work/times"
	for _ in $(seq "$RUNS"); do
		{ time "$JITPERF" convert "$trace" "${args[@]}" > /dev/null; } 2>> "$work/times"
	done
	wall=$(median wall "$work/times")
	cpu=$(median cpu "$work/times")
	awk -v f="$f" -v n="$calls" -v w="$wall" -v c="$cpu" 'BEGIN {
		printf "--%-6s wall %.3f s: %5.1f M calls/s", f, w, n / w / 1e6
		if (f == "chrome") printf " (%.1f M trace events/s)", 2 * n / w / 1e6
		printf "\n         cpu  %.3f s: %5.1f M calls/s\n", c, n / c / 1e6 }'
done
