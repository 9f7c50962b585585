# Shared set-up for tests/*.test (sourced).  Each test gets its own
# temporary directory, removed on exit; exit 77 means "skipped".
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
JITPERF="$top_builddir/tools/jitperf"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-test.XXXXXX")

# What the test's JIT processes leave in /tmp (tests/jitfiles.sh) goes at
# exit, however the test ends: the processes with files under $tmp or a
# directory given to own_dir, and those named with own_pid; never a file
# of another test running in parallel.
#   own_pid PID...   a process of this test that left nothing under $tmp
#   own_dir DIR      a directory of this test outside $tmp, removed too
#   at_exit CMD      a command run first (kill a server the test started)
. "$top_srcdir/tests/jitfiles.sh"
own_pids= own_dirs= exit_cmds=
own_pid() { own_pids="$own_pids $*"; }
own_dir() { own_dirs="$own_dirs $1"; }
at_exit() { exit_cmds="$exit_cmds
$1"; }
cleanup() {
	trap - EXIT
	eval "$exit_cmds" || true
	remove_jit_tmp $own_pids
	remove_runs "$tmp" $own_dirs
}
trap cleanup EXIT

# killed (a harness timeout, Ctrl-C): the same cleanup, then the usual status
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# perf's build-id cache goes beside the test's directory and with it:
# perf record copies there every binary it sampled (node, libjvm, libLLVM:
# a hundred MB each) and perf inject every image it wrote, which in
# ~/.debug add up to gigabytes over a run of the suite.  No user's
# ~/.perfconfig applies either.  (Not in $tmp: tests list what is there.)
perfdir=$(mktemp -d "${TMPDIR:-/tmp}/jitperf-perf.XXXXXX")
own_dir "$perfdir"
printf '[buildid]\n\tdir = %s\n' "$perfdir/buildid" > "$perfdir/config"
export PERF_CONFIG="$perfdir/config"

# the machine the tests are built for (configure's $host), which a cross
# build runs under emulation (EMULATED set)
: "${HOST_CPU:=$(uname -m)}"
: "${EMULATED:=}"

unset JITPERF_DIR JITPERF_SAMPLE JITPERF_COUNTERS JITPERF_CLOCK JITPERF_DEBUG

# perl -e "$default_signals" CMD...: CMD with the signals that end it at
# their default action.  A command started asynchronously by a shell
# without job control starts with SIGINT and SIGQUIT ignored, under nohup
# SIGHUP too, and jitperf leaves an ignored signal ignored; the shell
# cannot reset a signal ignored on entry, perl can.  (Code, not a
# function: "$!" of an asynchronous CMD must be CMD's own pid.)
default_signals='$SIG{$_} = "DEFAULT" for qw(INT TERM HUP QUIT); exec @ARGV or die "$ARGV[0]: $!\n"'
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# no_nul FILE: FILE holds no NUL byte (a perf map's zeros are the tail a
# killed writer left, or a line cut short)
no_nul() { [ "$(tr -d '\000' < "$1" | wc -c)" -eq "$(wc -c < "$1")" ]; }

# need_perf: skip unless perf can record here (CI installs it, so there it runs)
need_perf() {
	[ -z "$EMULATED" ] || skip "no perf events under emulation (a $HOST_CPU build run by qemu-user)"
	[ -n "${PERF:-}" ] || PERF=$(command -v perf || true)
	[ -n "$PERF" ] || skip "perf not installed (apt-get install linux-perf)"
	"$PERF" record -q -k 1 -e cpu-clock -o "$tmp/probe.data" true >/dev/null 2>&1 ||
		skip "perf record does not work here (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	rm -f "$tmp/probe.data"
}

# need_llvm_orc: skip unless configure found LLVM and built examples/llvm-orc
need_llvm_orc() {
	orc="$top_builddir/examples/llvm-orc"
	[ -x "$orc" ] || skip "examples/llvm-orc not built: configure found no LLVM 14-19 (--with-llvm)"
}
