#!/bin/sh
# The JIT shape of bench/jitshape: generated code around a 1-2 ns recursive
# function, one root call, 29860703 calls.  Prints, per call, what each way
# of emitting the probes adds to the probe-free code, medians and worst of
# RUNS runs, interleaved: the CPU time of every thread of the process from
# the root call to the end of jitperf_close (what the library's threads
# and its close cost counts), and for jitperf record the wall time of the
# root call as the JIT's client sees it:
#
#   1. nothing records (JITPERF unset): the inline inactive check, the
#      count inline with a flag in the frame (inline), jitperf.h's counting
#      path with the stack (stack), the exported probes called by address;
#   2. JITPERF=stats with the defaults, and counting only (JITPERF_SAMPLE=0);
#   3. under `jitperf record --instrument` with its defaults, against the
#      same recording of the probe-free code: ns per call (wall and CPU) of
#      the exported probes and of jitperf.h's counting path inline,
#      the calls jitperf report shows, the size of the record directory and
#      of its Chrome trace.
#
# usage: bench/jitshape.sh [BUILDDIR]   (RUNS=n, default 5; N=35;
#        PART=record: only the runs under jitperf record)
set -eu
build=$(cd "${1:-.}" && pwd)
runs=${RUNS:-5}
n=${N:-35}
prog="$build/bench/jitshape"
jitperf="$build/tools/jitperf"
[ -x "$prog" ] || { echo "jitshape.sh: $prog not built (x86-64 only; run make)" >&2; exit 1; }
load0=$(cut -d" " -f1 /proc/loadavg)   # figures beside other work are higher
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jitshape.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$tmp"' EXIT

# one NAME VARIANT [ENV...]: one run; its cpu and wall ns/call appended to $tmp/NAME
one() {
	name=$1 variant=$2
	shift 2
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	env JITPERF_DIR="$tmp/d" "$@" nice "$prog" "$variant" "$n" > "$tmp/out" ||
		{ echo "jitshape.sh: $variant failed" >&2; exit 1; }
	sed -n 's/.* calls=\([0-9]*\) ns=\([0-9]*\) cpu_ns=[0-9]* proc_ns=\([0-9]*\) .*/\1 \2 \3/p' \
		"$tmp/out" | awk '{ printf "%.4f %.4f\n", $3 / $1, $2 / $1 }' >> "$tmp/$name"
}

median() {      # median FILE COLUMN
	sort -n -k "$2" "$tmp/$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

worst() {       # worst FILE COLUMN
	sort -n -k "$2" "$tmp/$1" | awk -v c="$2" '{ v = $c } END { print v }'
}

row() {         # row NAME LABEL: ns/call and what it adds to plain, median and worst
	awk -v v="$(median "$1" 1)" -v p="$(median plain 1)" -v w="$(worst "$1" 1)" -v l="$2" \
		'BEGIN { printf "  %-44s %6.2f ns/call  %+6.2f  (worst %.2f)\n", l, v, v - p, w }'
}

if [ "${PART:-all}" != record ]; then
i=0
while [ "$i" -lt "$runs" ]; do
	one plain plain
	one check check
	one inline inline
	one stack stack
	one call call
	one stats_call call JITPERF=stats
	one stats_stack stack JITPERF=stats
	one stats_inline inline JITPERF=stats
	one count_call call JITPERF=stats JITPERF_SAMPLE=0
	one count_stack stack JITPERF=stats JITPERF_SAMPLE=0
	one count_inline inline JITPERF=stats JITPERF_SAMPLE=0
	i=$((i + 1))
done
calls=$("$prog" plain "$n" | sed -n 's/.* calls=\([0-9]*\) .*/\1/p')
echo "jitshape: f($n), $calls calls from one root; CPU time of the process up to jitperf_close, medians of $runs runs"
row plain "probe-free code"
echo " nothing records:"
row check "inactive check inline, call out of line"
row inline "count + frame flag inline"
row stack "count + stack inline (jitperf.h's path)"
row call "exported probes called by address"
echo " JITPERF=stats, defaults (counted, adaptive timing):"
row stats_call "exported probes"
row stats_stack "count + stack inline"
row stats_inline "count + frame flag inline"
echo " JITPERF=stats JITPERF_SAMPLE=0 (counted only):"
row count_call "exported probes"
row count_stack "count + stack inline"
row count_inline "count + frame flag inline"

fi

# ---- under jitperf record --instrument, defaults
[ -x "$jitperf" ] || { echo "jitshape.sh: $jitperf not built" >&2; exit 1; }
command -v perf > /dev/null || { echo "(perf not installed: jitperf record not measured)"; exit 0; }
rec() {         # rec NAME VARIANT: record it; ns/call appended to $tmp/rec_NAME
	remove_runs "$tmp/rec"
	(cd "$tmp" && nice "$jitperf" record -q -o rec --instrument -- "$prog" "$2" "$n") \
		> "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	sed -n 's/.* calls=\([0-9]*\) ns=\([0-9]*\) cpu_ns=[0-9]* proc_ns=\([0-9]*\) .*/\1 \2 \3/p' \
		"$tmp/out" | awk '{ printf "%.4f %.4f\n", $3 / $1, $2 / $1 }' >> "$tmp/rec_$1"
}
i=0
while [ "$i" -lt "$runs" ]; do
	rec plain plain
	rec call call
	rec stack stack
	i=$((i + 1))
done
dir_mib=$(du -sk "$tmp/rec" | awk '{ printf "%.1f", $1 / 1024 }')
report_calls=$("$jitperf" report "$tmp/rec" 2> /dev/null | awk '$1 == "f" { print $5 }')
"$jitperf" convert "$tmp/rec" --chrome "$tmp/trace.json" > /dev/null 2>&1 || true
json_mib=$(du -sk "$tmp/trace.json" 2> /dev/null | awk '{ printf "%.1f", $1 / 1024 }')
calls=${calls:-$("$prog" plain "$n" | sed -n 's/.* calls=\([0-9]*\) .*/\1/p')}
awk -v c="$(median rec_call 1)" -v p="$(median rec_plain 1)" \
    -v cw="$(median rec_call 2)" -v pw="$(median rec_plain 2)" \
    -v xc="$(worst rec_call 1)" -v xp="$(worst rec_plain 1)" \
    -v xcw="$(worst rec_call 2)" -v xpw="$(worst rec_plain 2)" -v runs="$runs" 'BEGIN {
	printf " jitperf record --instrument (defaults), probe-free code (reference, same run)\n"
	printf " vs exported probes, medians of %d runs (worst):\n", runs
	printf "  %-30s probe-free %5.2f (%5.2f)  probes %5.2f (%5.2f) ns/call  %+5.2f  (goal <= +5)\n",
		"wall time of the root call", pw, xpw, cw, xcw, cw - pw
	printf "  %-30s probe-free %5.2f (%5.2f)  probes %5.2f (%5.2f) ns/call  %+5.2f\n",
		"CPU, all threads, to close", p, xp, c, xc, c - p }'
awk -v c="$(median rec_stack 1)" -v p="$(median rec_plain 1)" \
    -v cw="$(median rec_stack 2)" -v pw="$(median rec_plain 2)" \
    -v xc="$(worst rec_stack 1)" -v xcw="$(worst rec_stack 2)" 'BEGIN {
	printf " the same with jitperf.h\047s counting path inline (count + stack):\n"
	printf "  %-30s %5.2f (%5.2f) ns/call  %+5.2f\n", "wall time of the root call", cw, xcw, cw - pw
	printf "  %-30s %5.2f (%5.2f) ns/call  %+5.2f\n", "CPU, all threads, to close", c, xc, c - p }'
echo "  jitperf report: f called ${report_calls:-?} times (exact: $calls)"
echo "  record directory ${dir_mib} MiB (goal <= 100), Chrome trace ${json_mib:-?} MiB (goal <= 256)"
echo "(load average $load0 at start, $(cut -d" " -f1 /proc/loadavg) at end)"
