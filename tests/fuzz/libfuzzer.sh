#!/bin/sh
# Time-bounded libFuzzer runs of the readers, for CI and by hand:
#
#   tests/fuzz/libfuzzer.sh [-t SECONDS] [TARGET...]
#
# TARGET is perfdata, jitdump, trace or perfscript (default: perfdata and
# jitdump), each run for SECONDS (default 60) with 2 jobs at most.  The
# harnesses are built with clang, libFuzzer, ASan and UBSan in build-fuzz/
# (configured the first time); the corpus grows in build-fuzz/corpus/TARGET,
# seeded with the fixtures of tests/progs and the inputs of
# tests/fuzz/regress/TARGET.  A crash, a leak, more than 512 MB of memory or
# an input that takes more than 5 s stops the run of its target: its input
# is left in build-fuzz/crashes/TARGET/ and the script exits 1.  Fix the
# reader, then keep the input as tests/fuzz/regress/TARGET/NAME: `make
# check` replays it (tests/fuzz/TARGET.test).
set -eu
cd "$(dirname "$0")/../.."
secs=60
while getopts t: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	*) echo "usage: tests/fuzz/libfuzzer.sh [-t SECONDS] [TARGET...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- perfdata jitdump
command -v clang >/dev/null || { echo "libfuzzer.sh: clang not found" >&2; exit 77; }

b=build-fuzz
mkdir -p $b
if [ ! -f $b/Makefile ]; then
	[ -x configure ] || autoreconf -fi
	(cd $b && ../configure --quiet CC=clang CXX=clang++ --enable-fuzzers --enable-sanitizers \
		--without-llvm >configure.log 2>&1) || { tail -20 $b/configure.log; exit 1; }
fi
progs="tests/progs/pd-fixture tests/progs/jd-fixture"
for t in "$@"; do
	progs="$progs tests/fuzz/fuzz_$t"
done
make -C $b -j2 $progs >$b/make.log 2>&1 || { tail -20 $b/make.log; exit 1; }

status=0
for t in "$@"; do
	corpus=$b/corpus/$t crashes=$b/crashes/$t
	mkdir -p "$corpus" "$crashes"
	case $t in
	perfdata)
		# the harness takes its flags from the first byte
		$b/tests/progs/pd-fixture $b/fixture.data
		$b/tests/progs/pd-fixture --pipe $b/pipe.data
		{ printf '\000'; cat $b/fixture.data; } > "$corpus/fixture"
		{ printf '\037'; cat $b/pipe.data; } > "$corpus/pipe" ;;
	jitdump)
		$b/tests/progs/jd-fixture "$corpus/fixture"
		$b/tests/progs/jd-fixture --swapped "$corpus/swapped" ;;
	perfscript)
		cp tests/fuzz/seeds/perfscript-*.txt "$corpus/" ;;
	esac
	[ -d tests/fuzz/regress/$t ] && find tests/fuzz/regress/$t -type f -exec cp {} "$corpus/" \;
	echo "fuzz_$t: $secs s"
	if ! $b/tests/fuzz/fuzz_$t -max_total_time="$secs" -timeout=5 -rss_limit_mb=512 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$crashes/" \
		"$corpus" >$b/fuzz_$t.log 2>&1; then
		status=1
		grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' $b/fuzz_$t.log | head -5
		echo "fuzz_$t: failed; log: $b/fuzz_$t.log; inputs: $(ls "$crashes")"
	else
		grep -E '^stat::number_of_executed_units' $b/fuzz_$t.log || true
		echo "fuzz_$t: no crash, leak, OOM or timeout in $secs s"
	fi
done
exit $status
