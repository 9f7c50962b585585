#!/bin/sh
# Does instrumentation change the picture?  The example JIT's demo workload
# recorded with `jitperf record -g` without probes, and with
# `jitperf record -g --instrument` and its defaults (every call counted,
# adaptive timing): each function's share of the JIT functions' self
# samples (samples summed over RUNS interleaved runs of each), the two
# rankings, and the probes' share of all samples in the instrumented runs.
#
#   usage: bench/ranking.sh [BUILDDIR]   (RUNS=n, default 3)
set -eu
build=$(cd "${1:-.}" && pwd)
runs=${RUNS:-3}
jitperf="$build/tools/jitperf"
jitcalc="$build/examples/jitcalc"
[ -x "$jitcalc" ] || { echo "ranking.sh: $jitcalc not built (x86-64 only)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ranking.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$tmp"' EXIT

one() {         # one NAME [--instrument]: the report's rows appended to $tmp/NAME
	name=$1
	shift
	remove_runs "$tmp/rec" "$tmp/rec.old"
	"$jitperf" record -q -o "$tmp/rec" -g "$@" -- "$jitcalc" > /dev/null 2>&1 ||
		{ echo "ranking.sh: jitperf record $* failed" >&2; exit 1; }
	"$jitperf" report "$tmp/rec" | awk 'NR > 2 && $1 !~ /^#/ { print $1, $1 ~ /^\(/ ? $5 : $4 }' >> "$tmp/$name" ||
		{ echo "ranking.sh: jitperf report failed" >&2; exit 1; }
}

# share NAME: "function share%" of the JIT functions with 1% or more,
# most samples first
share() {
	awk '$1 !~ /^\(/ { s[$1] += $2; t += $2 }
	     END { for (f in s) if (s[f] >= t / 100) printf "%s %.1f\n", f, 100 * s[f] / t }' "$tmp/$1" |
		sort -k2,2nr
}

i=0
while [ "$i" -lt "$runs" ]; do
	one plain
	one instr --instrument
	i=$((i + 1))
done
share plain > "$tmp/p"
share instr > "$tmp/i"
echo "share of the JIT functions' self samples, $runs runs each:"
echo "  without probes          with --instrument (defaults)"
paste -d' ' "$tmp/p" "$tmp/i" | awk '{ printf "  %-10s %5.1f%%       %-10s %5.1f%%\n", $1, $2, $3, $4 }'
probes=$(awk '{ t += $2 } /^\(jitperf/ { p += $2 } END { printf "%.1f", t ? 100 * p / t : 0 }' "$tmp/instr")
echo "(jitperf probes): $probes% of all samples with --instrument"
if [ "$(cut -d' ' -f1 "$tmp/p")" = "$(cut -d' ' -f1 "$tmp/i")" ]; then
	echo "ranking: the same"
else
	echo "ranking: differs"
fi
