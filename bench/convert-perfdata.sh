#!/bin/bash
# perf.data to folded stacks: jitperf convert, which reads perf.data itself,
# against `perf script` alone (only printing the text that a folding tool
# would then read) on the same -g recording of 100k+ samples of the example
# JIT (perf.jit.data: perf maps and perf inject's jitted-*.so).
#
#   bench/convert-perfdata.sh [PERF.DATA]
#
# Environment: JITPERF (the built command, default ./tools/jitperf), PERF
# (default perf), RUNS (default 5), SAMPLES (at least this many; default
# 100000).  Prints the median wall and CPU time of each (jitperf's CPU time
# counts both its threads: a second one reads kallsyms on large recordings),
# and the ratios.
set -euo pipefail
JITPERF=${JITPERF:-./tools/jitperf}
PERF=${PERF:-perf}
RUNS=${RUNS:-5}
SAMPLES=${SAMPLES:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$work"' EXIT

data=${1:-}
if [ -z "$data" ]; then
	jitcalc=$(dirname "$JITPERF")/../examples/jitcalc
	# cpu-clock every 25 us of each of 2 threads: about 80k samples a second
	n=$(( SAMPLES / 16 + 1000 ))
	while :; do
		remove_runs "$work/rec"
		nice "$JITPERF" record -o "$work/rec" -g -F 40000 -- "$jitcalc" -t 2 -n "$n" \
			> /dev/null 2>&1
		data=$work/rec/perf.jit.data
		got=$("$PERF" report -i "$data" --stdio --sort comm -F sample -q 2>/dev/null |
			awk '{ s += $1 } END { print s + 0 }')
		[ "$got" -ge "$SAMPLES" ] && break
		n=$(( n * 2 * SAMPLES / (got + 1) + 1000 ))
	done
fi
samples=$("$PERF" report -i "$data" --stdio --sort comm -F sample -q 2>/dev/null |
	awk '{ s += $1 } END { print s + 0 }')
echo "input: $data, $(du -h "$data" | cut -f1), $samples samples"

median() {     # median wall|cpu FILE of "real user sys" lines
	awk -v c="$1" '{ print (c == "cpu") ? $2 + $3 : $1 }' "$2" | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
timeit() {     # timeit OUT TIMES CMD...
	local out=$1 times=$2; shift 2
	local TIMEFORMAT='%R %U %S'
	: > "$times"
	for _ in $(seq "$RUNS"); do
		{ time "$@" > "$out" 2> /dev/null; } 2>> "$times"
	done
}
report() {     # report NAME TIMES
	printf "%-40s wall %7.3f s   cpu %7.3f s\n" "$1" "$(median wall "$2")" "$(median cpu "$2")"
}

timeit "$work/jitperf.folded" "$work/jitperf.times" \
	"$JITPERF" convert "$data" --folded -
report "jitperf convert perf.data --folded -" "$work/jitperf.times"
timeit "$work/perf.txt" "$work/perf.times" \
	"$PERF" script -i "$data" -F comm,pid,tid,time,period,event,ip,sym,dso
report "perf script (text only, nothing folded)" "$work/perf.times"
# the same stacks as folding perf's text
"$JITPERF" convert "$work/perf.txt" --folded "$work/text.folded"
cmp -s "$work/jitperf.folded" "$work/text.folded" &&
	echo "output: identical to folding perf script's text ($(wc -l < "$work/text.folded") stacks)" ||
	{ echo "output: DIFFERENT from folding perf script's text"; exit 1; }
awk -v a="$(median wall "$work/perf.times")" -v b="$(median wall "$work/jitperf.times")" \
    -v c="$(median cpu "$work/perf.times")" -v d="$(median cpu "$work/jitperf.times")" \
	'BEGIN { printf "jitperf convert is %.1fx faster than perf script alone (wall), %.1fx (cpu)\n", a / b, c / d }'
