# tests/ - every test is registered here, by folder:
#   unit/     Check suites, one per module (check_<module>.c)
#   lib/      the library against the real perf, pkg-config, symbols
#   cmd/      the jitperf command: record, report, dump
#   convert/  jitperf convert and its outputs in real viewers
#   example/  the example JIT end to end
#   man/      man page lint, coverage and their EXAMPLES run for real
#   fuzz/     fuzz harnesses (briefly in make check; libFuzzer with --enable-fuzzers)
#   progs/    helper programs the scripts run (real binaries: perf records them)
# Scripts are *.test (sh, exit 77 = skip) and source tests/test-subr.sh;
# Check suites share tests/check-subr.h.
TEST_EXTENSIONS = .test
TEST_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	PERF='$(PERF)'; MANDOC='$(MANDOC)'; LLVM_CONFIG='$(LLVM_CONFIG)'; \
	SANITIZERS='$(SANITIZERS_ON)'; HOST_CPU='$(host_cpu)'; EMULATED='$(EMULATED)'; \
	CC='$(CC)'; OBJDUMP='$(OBJDUMP)'; \
	export top_srcdir top_builddir PERF MANDOC LLVM_CONFIG SANITIZERS HOST_CPU EMULATED CC OBJDUMP;
if SANITIZERS
# tests that LD_PRELOAD a library into a program not built with ASan skip on this
SANITIZERS_ON = 1
else
SANITIZERS_ON =
endif
EXTRA_DIST += tests/test-subr.sh tests/jitfiles.sh tests/check-subr.h tests/lib/abi.list

# ---- unit/: Check suites
CHECK_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
UNIT_SUITES = tests/unit/check_jitdump tests/unit/check_session tests/unit/check_perfmap \
	tests/unit/check_probe tests/unit/check_trace tests/unit/check_stats tests/unit/check_wrap \
	tests/unit/check_jitdump_read tests/unit/check_stats_read tests/unit/check_perfscript \
	tests/unit/check_symbolize tests/unit/check_filesafety tests/unit/check_perfdata \
	tests/unit/check_perfmap_read tests/unit/check_codebatch tests/unit/check_tiers \
	tests/unit/check_tiers_model
check_PROGRAMS += $(UNIT_SUITES)
TESTS += $(UNIT_SUITES)

tests_unit_check_jitdump_CFLAGS = $(CHECK_TEST_CFLAGS) $(LIBELF_CFLAGS)
tests_unit_check_jitdump_LDADD = lib/libjitperf.la read/libjitperf-read.la $(CHECK_LIBS) $(LIBELF_LIBS)
tests_unit_check_codebatch_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_codebatch_LDADD = lib/libjitperf.la $(CHECK_LIBS)
# frame pointers: the trampolines' test walks them
tests_unit_check_tiers_CFLAGS = $(CHECK_TEST_CFLAGS) -fno-omit-frame-pointer
tests_unit_check_tiers_LDADD = lib/libjitperf.la read/libjitperf-read.la $(CHECK_LIBS) $(PTHREAD_LIBS)
tests_unit_check_tiers_model_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_tiers_model_LDADD = lib/libjitperf.la read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_session_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_session_LDADD = lib/libjitperf.la $(CHECK_LIBS)
tests_unit_check_perfmap_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_perfmap_LDADD = lib/libjitperf.la $(CHECK_LIBS)
INSTR_SUBR = tests/unit/instr-subr.c tests/unit/instr-subr.h
tests_unit_check_probe_SOURCES = tests/unit/check_probe.c $(INSTR_SUBR)
tests_unit_check_probe_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_probe_LDADD = lib/libjitperf.la read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_trace_SOURCES = tests/unit/check_trace.c $(INSTR_SUBR)
tests_unit_check_trace_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_trace_LDADD = lib/libjitperf.la read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_stats_SOURCES = tests/unit/check_stats.c $(INSTR_SUBR)
tests_unit_check_stats_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_stats_LDADD = lib/libjitperf.la read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_wrap_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_wrap_LDADD = lib/libjitperf.la $(CHECK_LIBS) $(PTHREAD_LIBS)
tests_unit_check_jitdump_read_SOURCES = tests/unit/check_jitdump_read.c $(JDBUILD)
tests_unit_check_jitdump_read_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_jitdump_read_LDADD = read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_stats_read_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_stats_read_LDADD = read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_perfscript_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_perfscript_LDADD = read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_symbolize_CFLAGS = $(CHECK_TEST_CFLAGS) -g
tests_unit_check_symbolize_LDADD = read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_filesafety_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_filesafety_LDADD = lib/libjitperf.la $(CHECK_LIBS)
tests_unit_check_perfdata_SOURCES = tests/unit/check_perfdata.c $(PDBUILD)
tests_unit_check_perfdata_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_perfdata_LDADD = read/libjitperf-read.la $(CHECK_LIBS)
tests_unit_check_perfmap_read_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_perfmap_read_LDADD = read/libjitperf-read.la $(CHECK_LIBS)
check_PROGRAMS += tests/unit/check_read_util
TESTS += tests/unit/check_read_util
tests_unit_check_read_util_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_check_read_util_LDADD = read/libjitperf-read.la $(CHECK_LIBS)

if JITCALC
check_PROGRAMS += tests/unit/check_example
TESTS += tests/unit/check_example
tests_unit_check_example_CFLAGS = $(CHECK_TEST_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_check_example_LDADD = examples/libjitcalc.la lib/libjitperf.la $(CHECK_LIBS) \
	$(LIBDW_LIBS) $(LIBELF_LIBS)
endif

# libjitperf-llvm: listener, pass, and its C part (llvm/libjplobj.la)
if HAVE_LLVM
check_PROGRAMS += tests/unit/check_llvm
TESTS += tests/unit/check_llvm
tests_unit_check_llvm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/llvm
tests_unit_check_llvm_CFLAGS = $(CHECK_TEST_CFLAGS) $(LLVM_CFLAGS)
tests_unit_check_llvm_LDADD = examples/libjcllvm.la llvm/libjitperf-llvm.la llvm/libjplobj.la \
	read/libjitperf-read.la lib/libjitperf.la $(CHECK_LIBS) $(LLVM_LIBS)
tests_unit_check_llvm_LDFLAGS = $(AM_LDFLAGS) $(LLVM_LDFLAGS)
# its DWARF line table reader, against libdw
check_PROGRAMS += tests/unit/check_llvm_lines
TESTS += tests/unit/check_llvm_lines
tests_unit_check_llvm_lines_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/llvm
tests_unit_check_llvm_lines_CFLAGS = $(CHECK_TEST_CFLAGS) $(LLVM_CFLAGS) $(LIBDW_CFLAGS) \
	$(LIBELF_CFLAGS)
tests_unit_check_llvm_lines_LDADD = examples/libjcllvm.la llvm/libjplobj.la lib/libjitperf.la \
	$(CHECK_LIBS) $(LLVM_LIBS) $(LIBDW_LIBS) $(LIBELF_LIBS)
tests_unit_check_llvm_lines_LDFLAGS = $(AM_LDFLAGS) $(LLVM_LDFLAGS)
endif

# ---- progs/: helper programs of the scripts
JDBUILD = tests/progs/jdbuild.c tests/progs/jdbuild.h
# the perf.data of known content of the perf.data reader's suite and fuzzer
PDBUILD = tests/progs/pdbuild.c tests/progs/pdbuild.h
check_PROGRAMS += tests/progs/jitload tests/progs/jdverify tests/progs/jitrun \
	tests/progs/jd-fixture tests/progs/instr-prog tests/progs/instr-dump \
	tests/progs/cyg_prog tests/progs/cyg_prog_linked tests/progs/cyg_read \
	tests/progs/setid-prog tests/progs/pdprog tests/progs/pd-fixture \
	tests/progs/inlprog tests/progs/pltprog tests/progs/standby tests/progs/jitreuse \
	tests/progs/seccomp-exec tests/progs/pmoverlap tests/progs/pmcheck tests/progs/pd-hostile \
	tests/progs/tiers-fixture tests/progs/tiers-prog \
	tests/progs/eh-crowded tests/progs/jitleaf
# a JIT that registers N functions (and can be killed halfway)
tests_progs_jitload_LDADD = lib/libjitperf.la $(PTHREAD_LIBS)
tests_progs_jitload_LDFLAGS = -no-install
# an independent jitdump validator, the library tests' oracle
tests_progs_jdverify_SOURCES = tests/progs/jdverify.c
# a JIT of known behaviour (exact names and call counts) for tests/cmd/
tests_progs_jitrun_LDADD = lib/libjitperf.la
# both ends of JITPERF=standby: a JIT in standby that forks, a recorder's knock
tests_progs_standby_LDADD = lib/libjitperf.la
tests_progs_standby_LDFLAGS = -no-install
# a program run with system calls refused, as a container's seccomp profile refuses them
tests_progs_seccomp_exec_SOURCES = tests/progs/seccomp-exec.c
# code reused at one address, and moved (tests/cmd/inject.test)
tests_progs_jitreuse_LDADD = lib/libjitperf.la
# a perf map of overlapping entries over code that runs through them, and
# its samples' names from perf script against the perf map reader's
# (tests/cmd/perfmap-overlap.test)
tests_progs_pmcheck_LDADD = read/libjitperf-read.la
# the tiers file of known layout that tests/cmd/dump-tiers.test takes apart,
# and a JIT whose tier and compile calls come in a known order; with --bg a
# background compile of known cost (tests/cmd/report-tiers.test,
# tests/convert/tiers.test), frame pointers so that perf walks from its
# interpreter through the trampoline; no libtool wrapper: perf sees its
# own name
tests_progs_tiers_prog_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
tests_progs_tiers_prog_LDADD = lib/libjitperf.la $(PTHREAD_LIBS)
tests_progs_tiers_prog_LDFLAGS = -no-install
# a JIT's short leaf called in a loop, probes in its machine code, and the
# same code without probes timed in the same run (tests/lib/timing.test)
tests_progs_jitleaf_LDADD = lib/libjitperf.la
# JIT code followed by anonymous data only (tests/cmd/eh-crowded.test)
tests_progs_eh_crowded_LDADD = lib/libjitperf.la
# the jitdump of known layout that tests/cmd/dump.test takes apart
tests_progs_jd_fixture_SOURCES = tests/progs/jd-fixture.c $(JDBUILD)
tests_progs_instr_prog_LDADD = lib/libjitperf.la
tests_progs_instr_dump_LDADD = read/libjitperf-read.la
# -finstrument-functions programs: preloaded and linked with libjitperf-cyg
tests_progs_cyg_prog_CFLAGS = $(AM_CFLAGS) -finstrument-functions -g -O2
tests_progs_cyg_prog_LDADD = $(PTHREAD_LIBS)
tests_progs_cyg_prog_linked_SOURCES = tests/progs/cyg_prog.c
tests_progs_cyg_prog_linked_CFLAGS = $(tests_progs_cyg_prog_CFLAGS)
tests_progs_cyg_prog_linked_LDADD = cyg/libjitperf-cyg.la $(PTHREAD_LIBS)
tests_progs_cyg_read_LDADD = read/libjitperf-read.la
# a program that reports what the JITPERF* environment made of its session,
# run set-ID by tests/lib/setid-env.test
tests_progs_setid_prog_LDADD = lib/libjitperf.la
tests_progs_setid_prog_LDFLAGS = -no-install
# the perf.data fixture as a file (a fuzzer seed)
tests_progs_pd_fixture_SOURCES = tests/progs/pd-fixture.c $(PDBUILD)
# the same with many attributes: one shared id section, or pipe mode (hostile.test)
tests_progs_pd_hostile_SOURCES = tests/progs/pd-hostile.c $(PDBUILD)
# known call stacks in threads and a forked child, with frame pointers (perfdata.test)
tests_progs_pdprog_CFLAGS = $(AM_CFLAGS) -O1 -fno-omit-frame-pointer
tests_progs_pdprog_LDADD = $(PTHREAD_LIBS)
# samples in each of its PLT entries (perfdata.test)
tests_progs_pltprog_CFLAGS = $(AM_CFLAGS) -O1
# a function inlined into another, with DWARF (srcline.test)
tests_progs_inlprog_CFLAGS = $(AM_CFLAGS) -O2 -g -fno-omit-frame-pointer
# JITs for jitperf inject against perf inject --jit (tests/inject-diff.sh):
# code in threads, forks, moved, reused, at descending and shuffled
# addresses, overlapping in a perf map
check_PROGRAMS += tests/progs/jitdiff
tests_progs_jitdiff_LDADD = lib/libjitperf.la $(PTHREAD_LIBS)
tests_progs_jitdiff_LDFLAGS = -no-install
# and libgccjit's shared object per function (when configure found it)
if HAVE_LIBGCCJIT
check_PROGRAMS += tests/progs/jitgcc
endif
tests_progs_jitgcc_LDADD = lib/libjitperf.la $(GCCJIT_LIBS)
tests_progs_jitgcc_LDFLAGS = -no-install

# ---- scripts
SCRIPT_TESTS = \
	tests/lib/symbols.test tests/lib/abi.test tests/lib/pkgconfig.test tests/lib/strerror-coverage.test \
	tests/lib/crash.test tests/lib/crash-perf.test tests/lib/exit-open.test tests/lib/paced.test tests/lib/fork.test tests/lib/threads.test tests/lib/twins.test \
	tests/lib/jitdump-perf.test tests/lib/perf-attach.test tests/lib/standby.test \
	tests/lib/instr-env.test tests/lib/instr-sigkill.test tests/lib/layers.test \
	tests/lib/cyg-preload.test tests/lib/cyg-linked.test tests/lib/setid-env.test \
	tests/lib/perfmap-taken.test tests/lib/standby-seccomp.test tests/lib/timing.test \
	tests/cmd/dump.test tests/cmd/dump-tiers.test tests/cmd/eh-crowded.test tests/cmd/record.test tests/cmd/report.test tests/cmd/report-native.test tests/cmd/report-tiers.test \
	tests/cmd/filesafety.test tests/cmd/inject.test tests/cmd/node.test tests/cmd/jvm.test tests/cmd/erlang.test \
	tests/cmd/attach.test tests/cmd/messages.test tests/cmd/container.test \
	tests/cmd/perfmap-overlap.test tests/cmd/hostile.test tests/cmd/report-fallback.test \
	tests/convert/stackcollapse.test tests/convert/fold-own.test tests/convert/fold-parallel.test tests/convert/chrome.test tests/convert/svg.test \
	tests/convert/errors.test tests/convert/jitdump.test tests/convert/record.test tests/convert/viewer.test \
	tests/convert/outfile.test tests/convert/chrome-max.test tests/convert/perfdata.test \
	tests/convert/pprof.test tests/convert/srcline.test tests/convert/speedscope.test \
	tests/convert/calls-folded.test tests/convert/tiers.test tests/convert/tiers-fixture.test \
	tests/convert/calls-estimated.test \
	tests/man/lint.test tests/man/coverage.test tests/man/core-examples.test \
	tests/man/instr-examples.test tests/man/wrap-example.test tests/man/cmd-examples.test \
	tests/man/convert-examples.test tests/man/synopsis.test tests/man/names.test \
	tests/man/tiers-examples.test \
	tests/fuzz/jitdump.test tests/fuzz/perfscript.test tests/fuzz/perfdata.test
TESTS += $(SCRIPT_TESTS)
EXTRA_DIST += $(SCRIPT_TESTS) tests/convert/speedscope-pprof.js
# recordings of another machine, read on every host (tests/data/aarch64/README)
AARCH64_DATA_TESTS = tests/cmd/aarch64-dump.test tests/cmd/aarch64-cfi.test
TESTS += $(AARCH64_DATA_TESTS)
EXTRA_DIST += $(AARCH64_DATA_TESTS) tests/data/aarch64/README tests/data/aarch64/jitcalc.dump \
	tests/data/aarch64/small.jc

# jitperf inject against perf inject --jit, symbol by symbol, on JITs of
# every kind (tests/inject-diff.sh)
INJECT_DIFF_TESTS = tests/cmd/inject-diff-examples.test tests/cmd/inject-diff-gccjit.test \
	tests/cmd/inject-diff-node.test tests/cmd/inject-diff-jvm.test \
	tests/cmd/inject-diff-beam.test tests/cmd/inject-diff-procs.test \
	tests/cmd/inject-diff-move.test tests/cmd/inject-diff-reuse.test \
	tests/cmd/inject-diff-smallbuf.test tests/cmd/inject-diff-descend.test \
	tests/cmd/inject-diff-shuffle.test tests/cmd/inject-diff-perfmap.test
TESTS += $(INJECT_DIFF_TESTS)
EXTRA_DIST += $(INJECT_DIFF_TESTS) tests/inject-diff.sh
# libjitperf-llvm and examples/llvm-orc (each skips when LLVM was not configured)
LLVM_TESTS = tests/lib/llvm-symbols.test tests/lib/llvm-pkgconfig.test \
	tests/example/llvm-perf.test tests/example/llvm-callgraph.test \
	tests/example/llvm-counts.test tests/example/llvm-lines.test tests/man/llvm-examples.test \
	tests/fuzz/debugline.test
TESTS += $(LLVM_TESTS)
EXTRA_DIST += $(LLVM_TESTS)
EXAMPLE_TESTS = tests/example/cli.test tests/example/perf.test tests/example/callgraph.test \
	tests/example/counts.test tests/example/tiered.test tests/example/tiered-callgraph.test
EXTRA_DIST += $(EXAMPLE_TESTS)
if ARCH_X86_64
TESTS += $(EXAMPLE_TESTS)
endif
# jitcalc's AArch64 backend: the tests that need no perf
if ARCH_AARCH64
TESTS += tests/example/cli.test tests/example/counts.test
endif

# ---- fuzz/: the harnesses, driven by fuzz-main.c without libFuzzer
check_PROGRAMS += tests/fuzz/fuzz-jitdump-run tests/fuzz/fuzz-perfscript-run tests/fuzz/fuzz-trace-run \
	tests/fuzz/fuzz-perfdata-run
tests_fuzz_fuzz_jitdump_run_SOURCES = tests/fuzz/fuzz-main.c tests/fuzz/fuzz_jitdump.c
tests_fuzz_fuzz_jitdump_run_LDADD = tools/libcommand.la
tests_fuzz_fuzz_perfscript_run_SOURCES = tests/fuzz/fuzz-main.c tests/fuzz/fuzz_perfscript.c
tests_fuzz_fuzz_perfscript_run_LDADD = tools/libcommand.la
tests_fuzz_fuzz_trace_run_SOURCES = tests/fuzz/fuzz-main.c tests/fuzz/fuzz_trace.c
tests_fuzz_fuzz_trace_run_LDADD = read/libjitperf-read.la
tests_fuzz_fuzz_perfdata_run_SOURCES = tests/fuzz/fuzz-main.c tests/fuzz/fuzz_perfdata.c
tests_fuzz_fuzz_perfdata_run_LDADD = tools/libcommand.la
EXTRA_DIST += tests/fuzz/seeds/perfscript-callchain.txt tests/fuzz/seeds/perfscript-perfdata.txt
# libFuzzer runs with a time bound, and the inputs they found trouble with
EXTRA_DIST += tests/fuzz/libfuzzer.sh tests/fuzz/regress
# libjitperf-llvm's line table reader (its hidden functions: the convenience library)
if HAVE_LLVM
check_PROGRAMS += tests/fuzz/fuzz-debugline-run
endif
tests_fuzz_fuzz_debugline_run_SOURCES = tests/fuzz/fuzz-main.c tests/fuzz/fuzz_debugline.c
tests_fuzz_fuzz_debugline_run_LDADD = llvm/libjplobj.la
if FUZZERS
# configure adds -fsanitize=fuzzer-no-link everywhere, so the libraries the
# harnesses link are instrumented too
noinst_PROGRAMS += tests/fuzz/fuzz_jitdump tests/fuzz/fuzz_perfscript tests/fuzz/fuzz_trace \
	tests/fuzz/fuzz_perfdata
tests_fuzz_fuzz_jitdump_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_jitdump_LDADD = tools/libcommand.la
tests_fuzz_fuzz_perfscript_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_perfscript_LDADD = tools/libcommand.la
tests_fuzz_fuzz_trace_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_perfdata_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_perfdata_LDADD = tools/libcommand.la
tests_fuzz_fuzz_trace_LDADD = read/libjitperf-read.la
if HAVE_LLVM
noinst_PROGRAMS += tests/fuzz/fuzz_debugline
endif
tests_fuzz_fuzz_debugline_LDFLAGS = -fsanitize=fuzzer
tests_fuzz_fuzz_debugline_LDADD = llvm/libjplobj.la
endif

# Run every Check suite under valgrind's memcheck.
valgrind: $(check_PROGRAMS)
	@test -n "$(VALGRIND)" || { echo "make valgrind: valgrind not found (apt-get install valgrind)" >&2; exit 1; }
	@for t in $(UNIT_SUITES); do \
		echo "valgrind $$t"; \
		CK_FORK=no $(LIBTOOL) --mode=execute $(VALGRIND) --error-exitcode=1 \
			--leak-check=full -q ./$$t || exit 1; \
	done
.PHONY: valgrind


# `make install` relinks in place (libtool, in the build tree's .libs) every
# installed library that links lib/libjitperf.la: the test that installs
# runs after all the others, none of which may load a half-written one.
tests/lib/llvm-pkgconfig.log: $(TEST_LOGS:tests/lib/llvm-pkgconfig.log=)
