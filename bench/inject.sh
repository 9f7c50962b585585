#!/bin/bash
# jitperf inject at scale: a JIT registering N small functions (bench/manyjit)
# runs SECONDS under jitperf record.  Prints, as medians and worst of RUNS:
#  - jitperf's work after the program ends (jitperf record's end minus the
#    program's), and perf inject --jit on the same perf.data in the same run,
#    with the ratio; jitperf inject alone beside it;
#  - the files in the record directory;
#  - jitperf report's time.
# With BIG=1 (or BIG=COUNT) also record, inject and report of BIG functions
# (default 1,000,000): wall time and peak memory of each step.
#
#   bench/inject.sh            (from the build directory)
#
# Environment: JITPERF (default ./tools/jitperf), N (20000), SECONDS_RUN (2),
# RUNS (3), BIG.
set -euo pipefail
JITPERF=$(realpath "${JITPERF:-./tools/jitperf}")
manyjit=$(cd "$(dirname "$JITPERF")/../bench" && pwd)/manyjit
N=${N:-20000} RUNS=${RUNS:-3} SECS=${SECONDS_RUN:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"
export PERF_CONFIG=$work/perfconfig      # perf's build-id cache beside the runs
printf '[buildid]\n\tdir = %s\n' "$work/buildid" >"$PERF_CONFIG"
trap 'remove_runs "$work"' EXIT
cd "$work"

now() { date +%s%N; }
ms() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1e6 }'; }
# median and worst of the numbers in file $1
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.0f %.0f\n", v[int((NR + 1) / 2)], v[NR] }'; }
# wall ns and peak RSS (KiB) of a command, into "ns kib"
measure() {
	local a b
	a=$(now)
	/usr/bin/time -f %M -o rss.tmp "$@" >/dev/null 2>>cmd.err
	b=$(now)
	echo "$((b - a)) $(tail -1 rss.tmp)"
}

for i in $(seq "$RUNS"); do
	rm -rf rec rec.old
	"$JITPERF" record -q -o rec -e cpu-clock -- "$manyjit" "$N" "$SECS" >prog.out 2>rec.err
	end=$(now)
	echo $((end - $(tail -1 prog.out))) >>after
	ls rec | wc -l >>files
	nimages=$(ls rec | grep -c '^jitimage-' || true)
	set -- $(measure "$JITPERF" report rec)
	echo "$1" >>report
	# the same perf.data through both injections (perf inject writes its
	# images beside the jitdump the recording names: in rec/)
	mkdir -p again
	set -- $(measure "$JITPERF" inject -i rec/perf.data -o again/perf.jit.data)
	echo "$1" >>jpinject
	set -- $(measure perf inject --jit -i rec/perf.data -o again/perf.jit.data)
	echo "$1" >>perfinject
done
read -r after_med after_max < <(stats after)
read -r pi_med pi_max < <(stats perfinject)
read -r ji_med ji_max < <(stats jpinject)
read -r rep_med rep_max < <(stats report)
read -r files_med files_max < <(stats files)
echo "# $N functions run ${SECS} s under jitperf record, $RUNS runs (median / worst)"
printf "jitperf record after the program ends: %6s / %6s ms\n" "$(ms "$after_med")" "$(ms "$after_max")"
printf "perf inject --jit, same perf.data:     %6s / %6s ms  (%.1fx jitperf's work after the end)\n" \
	"$(ms "$pi_med")" "$(ms "$pi_max")" "$(awk -v a="$pi_med" -v b="$after_med" 'BEGIN { print a / b }')"
printf "jitperf inject alone:                  %6s / %6s ms  (%.1fx less than perf inject)\n" \
	"$(ms "$ji_med")" "$(ms "$ji_max")" "$(awk -v a="$pi_med" -v b="$ji_med" 'BEGIN { print a / b }')"
printf "files in the record directory:         %6s / %6s     (%s code images)\n" "$files_med" "$files_max" "$nimages"
printf "jitperf report:                        %6s / %6s ms\n" "$(ms "$rep_med")" "$(ms "$rep_max")"
for f in after perfinject jpinject report; do
	printf "  %-11s runs (ms): %s\n" "$f" "$(while read -r v; do printf '%s ' "$(ms "$v")"; done <"$f")"
done

if [ -n "${BIG:-}" ]; then
	[ "$BIG" = 1 ] && BIG=1000000
	rm -rf big
	set -- $(measure "$JITPERF" record -q -o big -e cpu-clock -- "$manyjit" "$BIG" "$SECS")
	rec_ns=$1 rec_kib=$2
	set -- $(measure "$JITPERF" inject -i big/perf.data -o big/again.jit.data)
	inj_ns=$1 inj_kib=$2
	set -- $(measure "$JITPERF" report big)
	rep_ns=$1 rep_kib=$2
	echo "# $BIG functions, ${SECS} s run: wall time, peak RSS"
	printf "jitperf record (run included): %7s ms %8s KiB\n" "$(ms "$rec_ns")" "$rec_kib"
	printf "jitperf inject:                %7s ms %8s KiB\n" "$(ms "$inj_ns")" "$inj_kib"
	printf "jitperf report:                %7s ms %8s KiB\n" "$(ms "$rep_ns")" "$rep_kib"
	printf "jitdump %s, images %s\n" "$(du -sh big/jit-*.dump | cut -f1)" "$(du -ch big/jitimage-* | tail -1 | cut -f1)"
fi
