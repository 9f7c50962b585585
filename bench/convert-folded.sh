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
# The tools run in turns, RUNS times each.  Prints the median wall time,
# the median and worst CPU time (user + sys, all threads) of each tool,
# MiB/s of both, and the speed-ups.
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
	grep -Eq 'jitimage-|jitted-' "$work/one.txt" || { echo "no JIT frames in the recording" >&2; exit 1; }
	size=$(wc -c < "$work/one.txt")
	copies=$(( (64 * 1048576 + size - 1) / size ))
	# vary the process so that copies are different stacks under --pid
	for k in $(seq 0 $((copies - 1))); do
		sed -E "s#^([^ ]+) ([0-9]+)/([0-9]+) #\\1 $((100000 + k))/$((100000 + k)) #" "$work/one.txt"
	done > "$work/profile.txt"
	input=$work/profile.txt
fi
mib=$(awk -v b="$(wc -c < "$input")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "input: $input, $mib MiB, $(grep -c 'jitimage-\|jitted-\|perf-[0-9]*\.map' "$input") JIT frames, $(nproc) cores"

# Each run's wall time and CPU time (user + sys of the command and all its
# threads, as the shell's time counts a waited child).  The two tools run
# in turns, so both meet the same machine.
stat_of() {     # stat_of FILE wall|cpu median|worst, of "real user sys" lines
	awk -v c="$2" '{ print (c == "cpu") ? $2 + $3 : $1 }' "$1" | sort -n |
		awk -v w="$3" '{ v[NR] = $1 } END {
			if (w == "worst") printf "%.3f", v[NR]
			else printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
timed() {      # timed TIMES OUT CMD...: one run, "real user sys" appended to TIMES
	local times=$1 out=$2 TIMEFORMAT='%R %U %S'
	shift 2
	{ time "$@" > "$out" 2> /dev/null; } 2>> "$times"
}
report() {     # report NAME TIMES
	local wall cpu
	wall=$(stat_of "$2" wall median)
	cpu=$(stat_of "$2" cpu median)
	printf "%-22s wall %7.3f s (%7.1f MiB/s)   cpu %7.3f s (%7.1f MiB/s), worst %7.3f s\n" "$1" \
		"$wall" "$(awk -v m="$mib" -v t="$wall" 'BEGIN { print m / t }')" "$cpu" \
		"$(awk -v m="$mib" -v t="$cpu" 'BEGIN { print m / t }')" "$(stat_of "$2" cpu worst)"
}

: > "$work/jitperf.times"
: > "$work/perl.times"
for _ in $(seq "$RUNS"); do
	timed "$work/jitperf.times" "$work/jitperf.folded" "$JITPERF" convert "$input" --folded -
	[ -z "${STACKCOLLAPSE:-}" ] ||
		timed "$work/perl.times" "$work/perl.folded" perl "$STACKCOLLAPSE" "$input"
done
report "jitperf convert" "$work/jitperf.times"
if [ -n "${STACKCOLLAPSE:-}" ]; then
	report "stackcollapse-perf.pl" "$work/perl.times"
	# the one documented difference (jitperf-convert(1)): a run of
	# [unknown] frames is one frame; the script's output with that applied
	sed -E 's/;\[unknown\](;\[unknown\])+([; ])/;[unknown]\2/g' "$work/perl.folded" |
		awk '{ n = $NF; sub(/ [^ ]*$/, ""); c[$0] += n } END { for (k in c) printf "%s\t%.0f\n", k, c[k] }' |
		LC_ALL=C sort -t "$(printf '\t')" -k1,1 | tr '\t' ' ' > "$work/perl.cmp"
	cmp -s "$work/jitperf.folded" "$work/perl.cmp" &&
		echo "output: identical ($(wc -l < "$work/perl.folded") stacks; runs of [unknown] as one frame)" ||
		{ echo "output: DIFFERENT"; exit 1; }
	awk -v a="$(stat_of "$work/perl.times" wall median)" -v b="$(stat_of "$work/jitperf.times" wall median)" \
	    -v c="$(stat_of "$work/perl.times" cpu median)" -v d="$(stat_of "$work/jitperf.times" cpu median)" \
	    -v e="$(stat_of "$work/perl.times" cpu worst)" -v f="$(stat_of "$work/jitperf.times" cpu worst)" \
		'BEGIN { printf "speed-up: %.1fx wall, %.1fx cpu (medians), %.1fx cpu (worst runs)\n", a / b, c / d, e / f }'
fi
