# lib/instr/ - the instrumentation runtime of libjitperf: probes, trace
# writer, statistics, counters, TSC clock, jitperf_wrap thunks (machine code
# in arch/).  Private header: lib/instr/instr.h; lib/instr/instrument.h is
# what the session calls.
lib_libjitperf_la_SOURCES += lib/instr/instrument.h lib/instr/instr.h lib/instr/timed.h lib/instr/trace_put.h \
	lib/instr/instrument.c lib/instr/settings.c lib/instr/probe.c lib/instr/timed.c \
	lib/instr/calibrate.c lib/instr/tsc.c lib/instr/counters.c lib/instr/stats.c lib/instr/trace_write.c lib/instr/wrap.c lib/instr/wrap.h lib/instr/shadow.c
if ARCH_X86_64
lib_libjitperf_la_SOURCES += lib/instr/arch/x86_64/wrap.c
endif
if ARCH_AARCH64
lib_libjitperf_la_SOURCES += lib/instr/arch/aarch64/wrap.c
endif
