#!/bin/bash
# perf.data to folded stacks: jitperf convert, which reads perf.data itself,
# against `perf script` alone (only printing the text that a folding tool
# would then read), on a small and a large -g recording of the example JIT
# (perf.jit.data: perf maps and perf inject's jitted-*.so).
#
#   bench/convert-perfdata.sh [PERF.DATA...]
#
# Environment: JITPERF (the built command, default ./tools/jitperf), PERF
# (default perf), RUNS (default 11), SMALL (calls of jitcalc's run() in the
# small recording, about 0.2 s; default 700), SAMPLES (the large recording
# has at least this many; default 100000).
#
# The two commands run in turns, RUNS times each, so both meet the same
# machine.  Each run's cost is the CPU time of the process and of all its
# threads (perf stat's task-clock, which counts every task the command
# starts, to the microsecond); the median and the worst run of each are
# printed, and the ratios perf script / jitperf convert of the medians and
# of the worst runs.  The folded output must be the same as folding perf
# script's text.
set -euo pipefail
JITPERF=${JITPERF:-./tools/jitperf}
PERF=${PERF:-perf}
RUNS=${RUNS:-11}
SMALL=${SMALL:-700}
SAMPLES=${SAMPLES:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$work"' EXIT
jitcalc=$(dirname "$JITPERF")/../examples/jitcalc

samples_of() {
	"$PERF" report -i "$1" --stdio --sort comm -F sample -q 2>/dev/null |
		awk '{ s += $1 } END { print s + 0 }'
}

# record_small DIR: one thread, the default frequency, about 0.2 s
record_small() {
	nice "$JITPERF" record -o "$1" -g -- "$jitcalc" -n "$SMALL" > /dev/null 2>&1
}

# record_large DIR: two threads, 40 kHz, until SAMPLES samples
record_large() {
	local n=$(( SAMPLES / 16 + 1000 )) got
	while :; do
		remove_runs "$1"
		# cpu-clock every 25 us of each of 2 threads: about 80k samples a second
		nice "$JITPERF" record -o "$1" -g -F 40000 -- "$jitcalc" -t 2 -n "$n" \
			> /dev/null 2>&1
		got=$(samples_of "$1/perf.jit.data")
		[ "$got" -ge "$SAMPLES" ] && break
		n=$(( n * 2 * SAMPLES / (got + 1) + 1000 ))
	done
}

# cpu_stat FILE median|worst: of the CPU times (ms, one a line)
cpu_stat() {
	sort -n "$1" | awk -v w="$2" '{ v[NR] = $1 } END {
		if (w == "worst") printf "%.2f", v[NR]
		else printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}

# timed TIMES OUT CMD...: one run, the CPU time of all its threads (ms) appended to TIMES
timed() {
	local times=$1 out=$2
	shift 2
	"$PERF" stat -x, -e task-clock -o "$work/stat.csv" -- "$@" > "$out" 2> /dev/null
	awk -F, '$3 ~ /^task-clock/ { print $1 }' "$work/stat.csv" >> "$times"
}

compare() {     # compare PERF.DATA
	local data=$1 i
	echo "input: $data, $(du -h "$data" | cut -f1), $(samples_of "$data") samples"
	: > "$work/jitperf.times"
	: > "$work/perf.times"
	for i in $(seq "$RUNS"); do
		timed "$work/jitperf.times" "$work/jitperf.folded" \
			"$JITPERF" convert "$data" --folded -
		timed "$work/perf.times" "$work/perf.txt" \
			"$PERF" script -i "$data" -F comm,pid,tid,time,period,event,ip,sym,dso
	done
	# the same stacks as folding perf's text
	"$JITPERF" convert "$work/perf.txt" --folded "$work/text.folded"
	cmp -s "$work/jitperf.folded" "$work/text.folded" ||
		{ echo "output: DIFFERENT from folding perf script's text"; exit 1; }
	printf "  %-36s cpu median %9.2f ms   worst %9.2f ms\n" \
		"jitperf convert --folded" "$(cpu_stat "$work/jitperf.times" median)" \
		"$(cpu_stat "$work/jitperf.times" worst)" \
		"perf script (text only, no folding)" "$(cpu_stat "$work/perf.times" median)" \
		"$(cpu_stat "$work/perf.times" worst)"
	awk -v a="$(cpu_stat "$work/perf.times" median)" -v b="$(cpu_stat "$work/jitperf.times" median)" \
	    -v c="$(cpu_stat "$work/perf.times" worst)" -v d="$(cpu_stat "$work/jitperf.times" worst)" \
	    -v n="$(wc -l < "$work/text.folded")" -v r="$RUNS" 'BEGIN {
		printf "  output identical to folding perf script (%d stacks); %d runs each\n", n, r
		printf "  jitperf convert is %.1fx faster than perf script (cpu, medians), %.1fx (worst runs)\n", a / b, c / d
	}'
}

if [ $# -gt 0 ]; then
	for d in "$@"; do compare "$d"; done
else
	record_small "$work/small"
	compare "$work/small/perf.jit.data"
	record_large "$work/large"
	compare "$work/large/perf.jit.data"
fi
