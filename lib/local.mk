# lib/ - libjitperf: sessions, perf map, jitdump, unwind tables (code
# registration).  The instrumentation runtime in lib/instr/ joins the same
# library.  Private header: lib/core.h; lib/session.h is shared with lib/instr/.
lib_LTLIBRARIES += lib/libjitperf.la
include_HEADERS += lib/jitperf.h
lib_libjitperf_la_SOURCES = lib/jitperf.h lib/compiler.h lib/session.h lib/core.h lib/log.h lib/codebatch.h \
	lib/session.c lib/env.c lib/log.c lib/clock.c lib/fileio.c lib/bgthread.c lib/elfinfo.c lib/perfmap.c \
	lib/ehframe.c lib/jitdump.c lib/codetab.c lib/codereg.c lib/strerror.c lib/twins.c \
	lib/standby.c lib/livecode.c lib/tiers.c lib/trampoline.c
lib_libjitperf_la_CPPFLAGS = $(AM_CPPFLAGS) -DJITPERF_BUILDING_LIBRARY
# frame pointers: perf -g samples that land in a probe unwind to the JIT code.
# -fno-plt: a call into libc goes through its GOT entry, not a PLT stub
# too; registering from a JIT callback runs with cold caches, where each
# stub is one more instruction cache miss.
lib_libjitperf_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -fno-omit-frame-pointer -fno-plt \
	$(LIBELF_CFLAGS)
lib_libjitperf_la_LIBADD = $(LIBELF_LIBS) $(PTHREAD_LIBS)
lib_libjitperf_la_LDFLAGS = -version-info $(LT_VERSION_INFO) -no-undefined \
	-Wl,--version-script=$(srcdir)/lib/libjitperf.map
EXTRA_lib_libjitperf_la_DEPENDENCIES = lib/libjitperf.map
EXTRA_DIST += lib/libjitperf.map
# the design of the write path (one write() per record)
# JITPERF=standby and jitperf record -p: the trigger, the order with perf
EXTRA_DIST += doc/attach.md
