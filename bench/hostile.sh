#!/bin/bash
# Hostile files, in one run (issue 30's figures):
#  - a perf.data of ~1 MB whose 256 attributes all name one id section, and
#    a pipe-mode perf.data of 1.6 MB with 256 attribute records: wall time
#    and peak RSS of jitperf report, inject and convert --folded, beside
#    perf script on the same file;
#  - a FIFO at each name a recording gives (jitdump, stats, trace in a
#    record directory; the jitdump an MMAP2 names, for inject): the time to
#    the one-line error;
#  - a jitdump grown to 1 GiB of zeros (sparse): peak RSS of jitperf dump,
#    report, convert and inject.
# With OLD=path/to/jitperf, the same commands of another build beside.
#
#   bench/hostile.sh            (from the build directory)
#
# Environment: JITPERF (default ./tools/jitperf), OLD, PERF (default perf),
# LIMIT (seconds before a command is killed, default 60).
set -euo pipefail
JITPERF=$(realpath "${JITPERF:-./tools/jitperf}")
progs=$(cd "$(dirname "$JITPERF")/../tests/progs" && pwd)
PERF=${PERF:-$(command -v perf || true)}
OLD=${OLD:+$(realpath "$OLD")}
work=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-bench.XXXXXX")
. "$(dirname "$0")/../tests/jitfiles.sh"
export PERF_CONFIG=$work/perfconfig
printf '[buildid]\n\tdir = %s\n' "$work/buildid" >"$PERF_CONFIG"
trap 'remove_runs "$work"' EXIT
cd "$work"

# "seconds MB exit" of a command, killed after LIMIT (60) s
measure() {
	local a b st=0
	a=$(date +%s%N)
	/usr/bin/time -f %M -o rss.tmp timeout ${LIMIT:-60} "$@" >/dev/null 2>>cmd.err || st=$?
	b=$(date +%s%N)
	awk -v ns=$((b - a)) -v kb="$(tail -1 rss.tmp | grep -o '^[0-9]*$' || echo 0)" -v st=$st \
		'BEGIN { printf "%6.2f s %7.1f MB  exit %d%s", ns / 1e9, kb / 1024, st, st == 124 ? " (killed)" : "" }'
}
row() {
	local what=$1
	shift
	printf '  %-34s %s\n' "$what" "$(measure "$@")"
}

echo "# $(uname -r), $(nproc) cores, $(date -u +%F)"
"$progs/pd-hostile" 256 1000000 shared.data
"$progs/pd-hostile" --pipe 256 1600000 pipe.data
for f in shared.data pipe.data; do
	mkdir -p "dir-$f"
	cp "$f" "dir-$f/perf.data"
	echo
	echo "$f ($(wc -c <"$f") bytes): wall time, peak RSS, exit status"
	for j in "$JITPERF" ${OLD:+"$OLD"}; do
		tag=
		[ "$j" = "$JITPERF" ] || tag=" (OLD)"
		row "jitperf report$tag" "$j" report "dir-$f"
		row "jitperf inject$tag" "$j" inject -i "$f" -o inj.data
		row "jitperf convert --folded$tag" "$j" convert "$f" --folded out.txt
	done
	[ -n "$PERF" ] && row "perf script (reference)" "$PERF" script -i "$f"
	[ -n "$PERF" ] && [ $f = pipe.data ] &&
		row "perf inject (reference, stdin)" sh -c "\"$PERF\" inject -o pinj.data < $f"
	cat "dir-$f/perf.data" >/dev/null
	rm -f inj.data out.txt pinj.data
done

echo
echo "a FIFO at a name a recording gives: time to the one-line error"
"$progs/pd-fixture" fix.data
for name in jit-10.dump jitperf-10.stats jitperf-10.trace; do
	rm -rf fifo && mkdir fifo && cp fix.data fifo/perf.data && mkfifo "fifo/$name"
	row "report, $name" "$JITPERF" report fifo
	row "convert, $name" "$JITPERF" convert fifo --folded out.txt
done
if [ -n "$PERF" ]; then
	mkdir jd
	JITPERF=jitdump JITPERF_DIR="$work/jd" "$PERF" record -q -k 1 -e cpu-clock -o rec.data \
		"$progs/jitrun" 1 2 1000 >/dev/null 2>&1
	dump=$(ls jd/jit-*.dump)
	mv "$dump" saved.dump
	mkfifo "$dump"
	row "inject, the jitdump an MMAP2 names" "$JITPERF" inject -i rec.data -o inj.data
	rm "$dump"
	mv saved.dump "$dump"
fi

echo
echo "a jitdump grown to 1 GiB of zeros (sparse): wall time, peak RSS"
"$progs/jd-fixture" sparse.dump
truncate -s 1G sparse.dump
rm -rf sp && mkdir sp && cp fix.data sp/perf.data && cp --sparse=always sparse.dump sp/jit-4242.dump
for j in "$JITPERF" ${OLD:+"$OLD"}; do
	tag=
	[ "$j" = "$JITPERF" ] || tag=" (OLD)"
	row "jitperf dump$tag" "$j" dump sparse.dump
	row "jitperf report$tag" "$j" report sp
	row "jitperf convert --folded$tag" "$j" convert sp --folded out.txt
	if [ -n "$PERF" ]; then
		truncate -s 1G "$dump"
		row "jitperf inject$tag" "$j" inject -i rec.data -o inj.data
	fi
done
