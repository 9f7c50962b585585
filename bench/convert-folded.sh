#!/bin/bash
# Folded stacks from perf script text: jitperf convert against FlameGraph's
# stackcollapse-perf.pl on the same ~64 MiB JIT profile, with identical output.
#
#   bench/convert-folded.sh [PERF_SCRIPT_TEXT | --java]
#
# Environment: JITPERF (the built command, default ./tools/jitperf),
# STACKCOLLAPSE (path of stackcollapse-perf.pl; without it only jitperf is
# timed), RUNS (default 5).  Without an input, the example JIT is recorded
# with call graphs (jitperf record -g) and its perf script text repeated,
# one process id per copy, to 64 MiB.  --java does the same with
# FlameGraph's Java test profile perf-java-faults-01.txt (long Java frame
# names; STACKCOLLAPSE_DATA, default ../shared/testdata/stackcollapse).
# Prints the median wall time and the median CPU time (user + sys, all
# cores) of each tool, MiB/s of both, and the speed-up.
set -euo pipefail
JITPERF=${JITPERF:-./tools/jitperf}
RUNS=${RUNS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$work"' EXIT

input=${1:-}
if [ "$input" = --java ]; then
	data=${STACKCOLLAPSE_DATA:-$(dirname "$0")/../../shared/testdata/stackcollapse}
	one=$data/perf-java-faults-01.txt
	[ -f "$one" ] || { echo "no $one (set STACKCOLLAPSE_DATA)" >&2; exit 1; }
	size=$(wc -c < "$one")
	copies=$(( (64 * 1048576 + size - 1) / size ))
	# one process id per copy, so copies are different stacks under --pid
	awk -v n="$copies" '{ a[NR] = $0 } END {
		for (k = 0; k < n; k++)
			for (i = 1; i <= NR; i++) {
				l = a[i]
				if (l ~ /^[^ \t]+ [0-9]+ /)
					sub(/ /, " " (100000 + k) "/", l)
				print l
			}
	}' "$one" > "$work/profile.txt"
	input=$work/profile.txt
elif [ -z "$input" ]; then
	jitcalc=$(dirname "$JITPERF")/../examples/jitcalc
	nice "$JITPERF" record -o "$work/rec" -g -- "$jitcalc" > /dev/null 2>&1
	perf script -i "$work/rec/perf.jit.data" -F comm,pid,tid,time,period,event,ip,sym,dso \
		> "$work/one.txt" 2> /dev/null
	grep -q 'jitted-' "$work/one.txt" || { echo "no JIT frames in the recording" >&2; exit 1; }
	size=$(wc -c < "$work/one.txt")
	copies=$(( (64 * 1048576 + size - 1) / size ))
	# vary the process so that copies are different stacks under --pid
	for k in $(seq 0 $((copies - 1))); do
		sed -E "s#^([^ ]+) ([0-9]+)/([0-9]+) #\\1 $((100000 + k))/$((100000 + k)) #" "$work/one.txt"
	done > "$work/profile.txt"
	input=$work/profile.txt
fi
mib=$(awk -v b="$(wc -c < "$input")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "input: $input, $mib MiB, $(grep -c 'jitted-\|perf-[0-9]*\.map' "$input") JIT frames, $(nproc) cores"

# median of column $1 of a file of "real user sys" lines (cpu = user + sys)
median() {
	awk -v c="$1" '{ print (c == "cpu") ? $2 + $3 : $1 }' "$2" | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
timeit() {     # timeit RUNS OUT TIMES CMD...
	local runs=$1 out=$2 times=$3; shift 3
	local TIMEFORMAT='%R %U %S'
	: > "$times"
	for _ in $(seq "$runs"); do
		{ time "$@" > "$out" 2> /dev/null; } 2>> "$times"
	done
}
report() {     # report NAME TIMES
	local wall cpu
	wall=$(median wall "$2")
	cpu=$(median cpu "$2")
	printf "%-22s wall %7.3f s (%7.1f MiB/s)   cpu %7.3f s (%7.1f MiB/s)\n" "$1" "$wall" \
		"$(awk -v m="$mib" -v t="$wall" 'BEGIN { print m / t }')" "$cpu" \
		"$(awk -v m="$mib" -v t="$cpu" 'BEGIN { print m / t }')"
}

timeit "$RUNS" "$work/jitperf.folded" "$work/jitperf.times" \
	"$JITPERF" convert "$input" --folded -
report "jitperf convert" "$work/jitperf.times"
if [ -n "${STACKCOLLAPSE:-}" ]; then
	timeit "$RUNS" "$work/perl.folded" "$work/perl.times" perl "$STACKCOLLAPSE" "$input"
	report "stackcollapse-perf.pl" "$work/perl.times"
	cmp -s "$work/jitperf.folded" "$work/perl.folded" && echo "output: identical ($(wc -l < "$work/perl.folded") stacks)" ||
		{ echo "output: DIFFERENT"; exit 1; }
	awk -v a="$(median wall "$work/perl.times")" -v b="$(median wall "$work/jitperf.times")" \
	    -v c="$(median cpu "$work/perl.times")" -v d="$(median cpu "$work/jitperf.times")" \
		'BEGIN { printf "speed-up: %.1fx wall, %.1fx cpu\n", a / b, c / d }'
fi
