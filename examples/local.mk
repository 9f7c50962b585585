# examples/ - the example JIT (examples/jitcalc, x86-64): a tiny language
# compiled to machine code, registered with libjitperf, with an
# instrumentation pass.  The compiler proper is a convenience library that
# jitcalc and its Check suite share.
EXTRA_DIST += examples/demo.jc
if ARCH_X86_64
noinst_LTLIBRARIES += examples/libjitcalc.la
examples_libjitcalc_la_SOURCES = examples/jit.h examples/parse.c examples/probes.c \
	examples/prog.c examples/codegen_x86_64.c examples/ehframe.c examples/jit.c
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
