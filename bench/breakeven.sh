#!/bin/sh
# Break-even of the tiered example's tier-up, two ways in one run:
#
#   jitperf    what `jitperf report --tiers --json` says of a recording of
#              examples/jitcalc-tiered (jitperf record -g --instrument):
#              ns_per_call in each tier, compile_ms and break_even_calls
#              of the tier-up
#   measured   bench/breakeven: the same function interpreted and compiled,
#              and its compile, timed outside jitperf (medians of rounds),
#              under the same perf record options: perf's own cost (its
#              interrupts, its thread beside ours on a 2-core machine) falls
#              on both sides alike
#
# break-even calls = compile time / (interpreted - native time per call).
#
# Each figure is the median of RUNS interleaved runs of both sides.
#
# usage: bench/breakeven.sh [BUILDDIR]   (FUNC, default hot; PASSES, default
#        1000; FREQ, default 4000 samples/s; ROUNDS, default 2000000; RUNS,
#        default 5)
set -eu
build=$(cd "${1:-.}" && pwd)
func=${FUNC:-hot}
passes=${PASSES:-1000}
freq=${FREQ:-4000}
rounds=${ROUNDS:-2000000}
runs=${RUNS:-5}
tiered="$build/examples/jitcalc-tiered"
jitperf="$build/tools/jitperf"
bench="$build/bench/breakeven"
command -v python3 >/dev/null || { echo "breakeven.sh: needs python3 (reads the report's JSON)" >&2; exit 1; }
for x in "$tiered" "$jitperf" "$bench"; do
	[ -x "$x" ] || { echo "breakeven.sh: $x not built (run make; x86-64 only)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/breakeven.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$work"' EXIT

# one_run: one recording, then bench/breakeven; a line of each side's
# "interp native compile_ms break_even" appended to $work/jitperf, $work/measured
one_run() {
	remove_runs "$work/rec"
	"$jitperf" record -o "$work/rec" -F "$freq" -g --instrument -- "$tiered" -t 100000 \
		-n "$rounds" --passes "$func=$passes" >"$work/out" 2>"$work/err" ||
		{ cat "$work/err" >&2; exit 1; }
	"$jitperf" report "$work/rec" --tiers --json | python3 -c '
import json, sys
f = sys.argv[1]
rows = {r["tier"]: r for r in json.load(sys.stdin)["tiers"] if r["func"] == f}
i, n = rows[0], rows[1]
print(i["ns_per_call"], n["ns_per_call"], n["compile_ms"], n["break_even_calls"])' "$func" \
		>>"$work/jitperf"
	perf record -q -F "$freq" -g -o "$work/bench.data" -- "$bench" "$func" "$passes" 200000 5 |
		awk -F' [|] ' '
		/interpreted/ { i = $2 } /native/ { n = $2 } /compile/ { c = $2 } /break-even/ { b = $2 }
		END { print i, n, c, b }' >>"$work/measured"
}

# interleaved runs: the machine's drift falls on both sides alike
for r in $(seq "$runs"); do
	one_run
done
median() {      # median FILE COLUMN
	sort -g -k "$2" "$1" | awk -v k="$2" '{ v[NR] = $k } END { print v[int((NR + 1) / 2)] }'
}
set -- $(for k in 1 2 3 4; do median "$work/jitperf" "$k"; median "$work/measured" "$k"; done)
awk -v f="$func" -v passes="$passes" -v runs="$runs" -v rounds="$rounds" \
    -v load="$(cut -d' ' -f1 /proc/loadavg)" \
    -v ji="$1" -v mi="$2" -v jn="$3" -v mn="$4" -v jc="$5" -v mc="$6" -v jb="$7" -v mb="$8" 'BEGIN {
	printf "%s, %d + 1 backend passes, %d rounds; medians of %d interleaved runs; load %s\n\n",
		f, passes, rounds, runs, load
	printf "| measure | jitperf report | measured (bench/breakeven) | jitperf / measured |\n"
	printf "|---|---|---|---|\n"
	printf "| interpreted, ns/call | %.1f | %.1f | %.2f |\n", ji, mi, ji / mi
	printf "| native, ns/call | %.1f | %.1f | %.2f |\n", jn, mn, jn / mn
	printf "| compile, ms | %.3f | %.3f | %.2f |\n", jc, mc, jc / mc
	printf "| break-even calls | %.0f | %.0f | %.2f |\n", jb, mb, jb / mb
}'
