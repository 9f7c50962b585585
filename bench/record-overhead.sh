#!/bin/bash
# jitperf record against perf by hand: the profiled run's own time, and the
# whole command (record + inject + summary), medians of RUNS alternating runs.
#
#   bench/record-overhead.sh
#
# Environment: JITPERF (default ./tools/jitperf), RUNS (default 5), WORK
# (jitcalc arguments, default: its demo workload, about 1.5 s).  By hand,
# the same run is `perf record -k 1 -e cpu-clock` with JITPERF=perfmap,jitdump
# and JITPERF_DIR set, then `perf inject --jit`.
set -euo pipefail
JITPERF=$(realpath "${JITPERF:-./tools/jitperf}")   # absolute: the runs cd away
RUNS=${RUNS:-5}
jitcalc=$(cd "$(dirname "$JITPERF")/../examples" && pwd)/jitcalc
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$work"' EXIT
cd "$work"
# the profiled command times itself (ns) into a file
cat >timed <<EOT
#!/bin/sh
a=\$(date +%s%N); "$jitcalc" ${WORK:-} >/dev/null; b=\$(date +%s%N)
echo \$((b - a)) >>"\$1"
EOT
chmod +x timed
event=cpu-clock
perf stat -e cycles:u -x, true 2>&1 | grep -q 'not supported' || event=cycles

now() { date +%s%N; }
for _ in $(seq "$RUNS"); do
	remove_runs byhand && mkdir byhand
	a=$(now)
	JITPERF=perfmap,jitdump JITPERF_DIR=$work/byhand nice perf record -q -k 1 -e $event \
		-o byhand/perf.data -- ./timed "$work/run-perf" 2>/dev/null
	nice perf inject --jit -i byhand/perf.data -o byhand/perf.jit.data
	echo $(($(now) - a)) >>total-perf
	# jitperf record replaces jp.old with jp: the maps of jp.old's runs go first
	remove_jit_tmp $(jit_pids jp.old)
	a=$(now)
	nice "$JITPERF" record -q -o jp -e $event -- ./timed "$work/run-jitperf" 2>/dev/null
	echo $(($(now) - a)) >>total-jitperf
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1e6 }'; }
echo "profiled run, median of $RUNS: perf by hand $(median run-perf) ms, jitperf record $(median run-jitperf) ms"
echo "whole command, median of $RUNS: perf record + inject $(median total-perf) ms, jitperf record $(median total-jitperf) ms"
