#!/bin/bash
# jitperf inject when a JIT's addresses do not grow with its loads
# (bench/manyjit ORDER), against perf inject --jit on the same perf.data
# in the same run:
#  - N functions (20,000) placed in a shuffled order: wall time and peak
#    memory of each injector, medians and worst of RUNS; the bytes of
#    jitperf's images and of perf inject's .so files, apparent and on disk;
#  - D functions (1,100) registered at descending addresses, each injector
#    under ulimit -n NOFILE (1024): whether it succeeds, and its files.
#
#   bench/inject-order.sh      (from the build directory)
#
# Environment: JITPERF (default ./tools/jitperf), PERF (perf), N (20000),
# D (1100), NOFILE (1024), SECONDS_RUN (1), RUNS (3).
set -euo pipefail
JITPERF=$(realpath "${JITPERF:-./tools/jitperf}")
PERF=${PERF:-perf}
manyjit=$(cd "$(dirname "$JITPERF")/../bench" && pwd)/manyjit
N=${N:-20000} D=${D:-1100} NOFILE=${NOFILE:-1024} RUNS=${RUNS:-3} SECS=${SECONDS_RUN:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"
export PERF_CONFIG=$work/perfconfig      # perf's build-id cache beside the runs
printf '[buildid]\n\tdir = %s\n' "$work/buildid" >"$PERF_CONFIG"
trap 'remove_runs "$work"' EXIT
cd "$work"

now() { date +%s%N; }
ms() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1e6 }'; }
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.0f %.0f\n", v[int((NR + 1) / 2)], v[NR] }'; }
# wall ns, peak RSS (KiB) and exit status of a command: "ns kib status"
measure() {
	local a b st=0
	a=$(now)
	/usr/bin/time -f %M -o rss.tmp "$@" >/dev/null 2>>cmd.err || st=$?
	b=$(now)
	echo "$((b - a)) $(tail -1 rss.tmp) $st"
}
# "apparent-KiB disk-KiB count" of the files given
bytes() {
	[ -e "$1" ] || { echo "0 0 0"; return; }
	echo "$(du -ck --apparent-size "$@" | tail -1 | cut -f1) $(du -ck "$@" | tail -1 | cut -f1) $#"
}
# record DIR ORDER COUNT: manyjit's jitdump alone (no perf map in /tmp)
record() {
	mkdir "$1"
	JITPERF=jitdump JITPERF_DIR="$work/$1" "$PERF" record -q -k 1 -e cpu-clock -o "$1/perf.data" \
		"$manyjit" "$3" "$SECS" "$2" >/dev/null 2>"$1/record.err" ||
		{ cat "$1/record.err" >&2; exit 1; }
}

# ---- shuffled
record shuf shuffle "$N"
for i in $(seq "$RUNS"); do
	rm -rf shuf/j shuf/jitted-*.so shuf/pi.data
	mkdir shuf/j
	set -- $(measure "$JITPERF" inject -i shuf/perf.data -o shuf/j/perf.jit.data)
	[ "$3" = 0 ] || { tail -3 cmd.err >&2; exit 1; }
	echo "$1" >>ji.ns; echo "$2" >>ji.kib
	set -- $(measure "$PERF" inject --jit -i shuf/perf.data -o shuf/pi.data)
	[ "$3" = 0 ] || { tail -3 cmd.err >&2; exit 1; }
	echo "$1" >>pi.ns; echo "$2" >>pi.kib
done
read -r ji_med ji_max < <(stats ji.ns)
read -r pi_med pi_max < <(stats pi.ns)
read -r jk_med jk_max < <(stats ji.kib)
read -r pk_med pk_max < <(stats pi.kib)
read -r ja jd jn < <(bytes shuf/j/jitimage-*.so)
read -r pa pd pn < <(bytes shuf/jitted-*.so)
echo "# $N functions in shuffled order, run ${SECS} s; inject $RUNS times (median / worst)"
printf "perf inject --jit:  %7s / %7s ms  %8s / %8s KiB peak\n" "$(ms "$pi_med")" "$(ms "$pi_max")" "$pk_med" "$pk_max"
printf "jitperf inject:     %7s / %7s ms  %8s / %8s KiB peak  (%.3f of perf inject's time: %.1fx faster)\n" \
	"$(ms "$ji_med")" "$(ms "$ji_max")" "$jk_med" "$jk_max" "$(awk -v a="$ji_med" -v b="$pi_med" 'BEGIN { print a / b }')" \
	"$(awk -v a="$ji_med" -v b="$pi_med" 'BEGIN { print b / a }')"
printf "perf inject's .so:  %6s files  %9s KiB apparent  %9s KiB on disk\n" "$pn" "$pa" "$pd"
printf "jitperf's images:   %6s files  %9s KiB apparent  %9s KiB on disk  (%.2fx / %.2fx)\n" \
	"$jn" "$ja" "$jd" "$(awk -v a="$ja" -v b="$pa" 'BEGIN { print a / b }')" \
	"$(awk -v a="$jd" -v b="$pd" 'BEGIN { print a / b }')"
for f in pi ji; do
	printf "  %s runs (ms): %s\n" "$f" "$(while read -r v; do printf '%s ' "$(ms "$v")"; done <$f.ns)"
done

# ---- descending
record down down "$D"
mkdir down/j
set -- $(ulimit -n "$NOFILE"; measure "$PERF" inject --jit -i down/perf.data -o down/pi.data)
pi_ns=$1 pi_st=$3
: >cmd.err
set -- $(ulimit -n "$NOFILE"; measure "$JITPERF" inject -i down/perf.data -o down/j/perf.jit.data)
ji_ns=$1 ji_st=$3
echo "# $D functions at descending addresses, ulimit -n $NOFILE"
printf "perf inject --jit:  %7s ms  status %s  %s .so files\n" "$(ms "$pi_ns")" "$pi_st" "$(ls down | grep -c '^jitted-' || true)"
printf "jitperf inject:     %7s ms  status %s  %s images%s\n" "$(ms "$ji_ns")" "$ji_st" \
	"$(ls down/j | grep -c '^jitimage-' || true)" "$([ "$ji_st" = 0 ] || echo ": $(head -1 cmd.err)")"
