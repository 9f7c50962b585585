# examples/ - the example JIT (examples/jitcalc, x86-64 and AArch64): a
# tiny language compiled to machine code, registered with libjitperf, with
# an instrumentation pass.  The compiler proper is a convenience library
# that jitcalc and its Check suite share; the backend is the host's.
EXTRA_DIST += examples/demo.jc examples/codegen_x86_64.c examples/codegen_aarch64.c
if JITCALC
noinst_LTLIBRARIES += examples/libjitcalc.la
examples_libjitcalc_la_SOURCES = examples/jit.h examples/cli.c examples/parse.c examples/probes.c \
	examples/prog.c examples/ehframe.c examples/jit.c
if ARCH_X86_64
examples_libjitcalc_la_SOURCES += examples/codegen_x86_64.c
endif
if ARCH_AARCH64
examples_libjitcalc_la_SOURCES += examples/codegen_aarch64.c
endif
examples_libjitcalc_la_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer

noinst_PROGRAMS += examples/jitcalc
examples_jitcalc_SOURCES = examples/jitcalc.c
examples_jitcalc_CPPFLAGS = $(AM_CPPFLAGS) -DJITCALC_DEMO="\"$(abs_top_srcdir)/examples/demo.jc\""
# frame pointers in the C driver too, so perf -g walks from JIT code to main
examples_jitcalc_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
examples_jitcalc_LDADD = examples/libjitcalc.la lib/libjitperf.la $(PTHREAD_LIBS)
# a real binary, not a libtool wrapper script, so perf records jitcalc itself
examples_jitcalc_LDFLAGS = $(AM_LDFLAGS) -no-install
endif

# examples/llvm-orc: jitcalc's language compiled by LLVM ORC (LLJIT), made
# visible to perf by libjitperf-llvm.  The front end (parse.c, prog.c) and
# the LLVM IR generator are a convenience library that bench/llvm_listener
# shares.
EXTRA_DIST += examples/llvm_ir.h
if HAVE_LLVM
noinst_LTLIBRARIES += examples/libjcllvm.la
examples_libjcllvm_la_SOURCES = examples/jit.h examples/cli.c examples/parse.c examples/prog.c \
	examples/llvm_ir.c examples/llvm_ir.h
examples_libjcllvm_la_CFLAGS = $(AM_CFLAGS) $(LLVM_CFLAGS)

noinst_PROGRAMS += examples/llvm-orc
examples_llvm_orc_SOURCES = examples/llvm-orc.c
examples_llvm_orc_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/llvm \
	-DJITCALC_DEMO="\"$(abs_top_srcdir)/examples/demo.jc\""
examples_llvm_orc_CFLAGS = $(AM_CFLAGS) $(LLVM_CFLAGS) -fno-omit-frame-pointer
examples_llvm_orc_LDADD = examples/libjcllvm.la llvm/libjitperf-llvm.la lib/libjitperf.la \
	$(LLVM_LIBS)
# a real binary, so perf records llvm-orc itself
examples_llvm_orc_LDFLAGS = $(AM_LDFLAGS) -no-install $(LLVM_LDFLAGS)
endif

# examples/jitcalc-tiered: jitcalc's language in two tiers, a bytecode
# interpreter behind trampolines and jitcalc's backend on a compiler thread
EXTRA_DIST += examples/tiered.jc
if JITCALC
noinst_LTLIBRARIES += examples/libjctiered.la
examples_libjctiered_la_SOURCES = examples/tiered.h examples/tiered_bytecode.c \
	examples/tiered_interp.c examples/tiered_native.c examples/tiered_tierup.c examples/tiered_rt.c
examples_libjctiered_la_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer

noinst_PROGRAMS += examples/jitcalc-tiered
examples_jitcalc_tiered_SOURCES = examples/tiered.c
examples_jitcalc_tiered_CPPFLAGS = $(AM_CPPFLAGS) \
	-DJITCALC_TIERED="\"$(abs_top_srcdir)/examples/tiered.jc\""
examples_jitcalc_tiered_CFLAGS = $(AM_CFLAGS) -fno-omit-frame-pointer
examples_jitcalc_tiered_LDADD = examples/libjctiered.la examples/libjitcalc.la lib/libjitperf.la \
	$(PTHREAD_LIBS)
examples_jitcalc_tiered_LDFLAGS = $(AM_LDFLAGS) -no-install
endif
