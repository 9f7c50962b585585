#!/bin/bash
# jitperf record against perf by hand (the reference, in the same rounds):
# the profiled run as its own process sees it, and the whole command
# (record + inject + summary), medians and worst of RUNS alternating runs.
# Each figure is wall time and the CPU time of every thread and process
# involved up to its exit (bench/cpurun: user + system, waited-for
# children included).
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
build=$(cd "$(dirname "$JITPERF")/.." && pwd)
jitcalc=$build/examples/jitcalc
cpurun=$build/bench/cpurun
[ -x "$cpurun" ] || { echo "record-overhead.sh: $cpurun not built (run make)" >&2; exit 1; }
load0=$(cut -d" " -f1 /proc/loadavg)   # figures beside other work are higher
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"    # remove_runs: the runs and their files in /tmp
trap 'remove_runs "$work"' EXIT
cd "$work"
# the profiled command measures itself (wall and CPU ns) into a file
cat >timed <<EOT
#!/bin/sh
exec "$cpurun" "\$1" "$jitcalc" ${WORK:-}
EOT
chmod +x timed
event=cpu-clock
perf stat -e cycles:u -x, true 2>&1 | grep -q 'not supported' || event=cycles

for _ in $(seq "$RUNS"); do
	remove_runs byhand && mkdir byhand
	JITPERF=perfmap,jitdump JITPERF_DIR=$work/byhand "$cpurun" total-perf sh -c "
		nice perf record -q -k 1 -e $event -o byhand/perf.data -- ./timed '$work/run-perf' \
			>/dev/null 2>&1 &&
		nice perf inject --jit -i byhand/perf.data -o byhand/perf.jit.data"
	# jitperf record replaces jp.old with jp: the maps of jp.old's runs go first
	remove_jit_tmp $(jit_pids jp.old)
	"$cpurun" total-jitperf nice "$JITPERF" record -q -o jp -e $event -- ./timed "$work/run-jitperf" \
		>/dev/null 2>&1
done
# fig FILE COLUMN: "median (worst)" in ms
fig() { sort -n -k "$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
	printf "%.1f (%.1f)", v[int((NR + 1) / 2)] / 1e6, v[NR] / 1e6 }'; }
echo "ms, medians (worst) of $RUNS runs; CPU of all threads and processes"
echo "profiled run, wall: perf by hand $(fig run-perf 1), jitperf record $(fig run-jitperf 1)"
echo "profiled run, CPU:  perf by hand $(fig run-perf 2), jitperf record $(fig run-jitperf 2)"
echo "whole command, wall: perf record + inject $(fig total-perf 1), jitperf record $(fig total-jitperf 1)"
echo "whole command, CPU:  perf record + inject $(fig total-perf 2), jitperf record $(fig total-jitperf 2)"
echo "(load average $load0 at start, $(cut -d" " -f1 /proc/loadavg) at end)"
