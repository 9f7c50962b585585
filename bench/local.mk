# bench/ - benchmarks: built by make, run by hand, never by make check.
# Each prints medians beside a reference measured in the same run.
noinst_PROGRAMS += bench/code_load bench/probe bench/wrap bench/recurse bench/cpurun
bench_code_load_SOURCES = bench/code_load.c
bench_code_load_LDADD = lib/libjitperf.la $(PTHREAD_LIBS)
bench_code_load_LDFLAGS = -no-install
bench_probe_SOURCES = bench/probe.c
bench_probe_LDADD = read/libjitperf-read.la lib/libjitperf.la
bench_wrap_SOURCES = bench/wrap.c
bench_wrap_LDADD = lib/libjitperf.la
# a compile's begin + end next to a bare write()
noinst_PROGRAMS += bench/tiers
bench_tiers_SOURCES = bench/tiers.c
bench_tiers_LDADD = lib/libjitperf.la
bench_tiers_LDFLAGS = -no-install
# runs a command, prints its wall time and the CPU of all its threads and children
bench_cpurun_SOURCES = bench/cpurun.c
if ARCH_X86_64
# a JIT's machine code calling the probes (bench/jitshape.sh)
noinst_PROGRAMS += bench/jitshape
bench_jitshape_SOURCES = bench/jitshape.c
bench_jitshape_LDADD = lib/libjitperf.la
endif
# a JIT of N functions run for S seconds, at increasing, decreasing or
# shuffled addresses (bench/inject.sh, bench/inject-order.sh)
noinst_PROGRAMS += bench/manyjit
bench_manyjit_SOURCES = bench/manyjit.c
bench_manyjit_LDADD = lib/libjitperf.la
EXTRA_DIST += bench/inject.sh bench/inject-order.sh bench/hostile.sh bench/bench.h
# the subject of bench/uftrace-compare.sh
bench_recurse_SOURCES = bench/recurse.c
bench_recurse_CFLAGS = $(AM_CFLAGS) -finstrument-functions -g -O2
EXTRA_DIST += bench/uftrace-compare.sh bench/record-overhead.sh bench/jitshape.sh bench/jitcalc-stats.sh \
	bench/convert-folded.sh bench/convert-trace.sh bench/convert-perfdata.sh bench/ranking.sh \
	bench/llvm-pgo.sh
# LLVM's PerfJITEventListener against jitperf_llvm_event_listener, same run
EXTRA_DIST += bench/llvm_timing.h
if HAVE_LLVM
noinst_PROGRAMS += bench/llvm_listener
bench_llvm_listener_SOURCES = bench/llvm_listener.c bench/llvm_timing.cpp bench/llvm_timing.h
bench_llvm_listener_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/llvm
bench_llvm_listener_CFLAGS = $(AM_CFLAGS) $(LLVM_CFLAGS) $(LIBDW_CFLAGS) $(LIBELF_CFLAGS)
bench_llvm_listener_CXXFLAGS = $(WARN_CXXFLAGS) $(SAN_CFLAGS) $(LLVM_CXXFLAGS)
bench_llvm_listener_LDADD = examples/libjcllvm.la llvm/libjitperf-llvm.la lib/libjitperf.la \
	$(LLVM_LIBS) $(LIBDW_LIBS) $(LIBELF_LIBS)
bench_llvm_listener_LDFLAGS = $(AM_LDFLAGS) -no-install $(LLVM_LDFLAGS)
endif
EXTRA_DIST += bench/README.md
# a call through a jitperf_trampoline next to a direct call of its target
noinst_PROGRAMS += bench/trampoline
bench_trampoline_SOURCES = bench/trampoline.c
bench_trampoline_LDADD = lib/libjitperf.la
bench_trampoline_LDFLAGS = -no-install
# break-even of the tiered example's tier-up, measured without jitperf
# (bench/breakeven.sh puts it next to a recording's)
EXTRA_DIST += bench/breakeven.sh
if ARCH_X86_64
noinst_PROGRAMS += bench/breakeven
bench_breakeven_SOURCES = bench/breakeven.c
bench_breakeven_CPPFLAGS = $(AM_CPPFLAGS) -DJITCALC_TIERED="\"$(abs_top_srcdir)/examples/tiered.jc\""
bench_breakeven_LDADD = examples/libjctiered.la examples/libjitcalc.la lib/libjitperf.la $(PTHREAD_LIBS)
bench_breakeven_LDFLAGS = -no-install
endif
