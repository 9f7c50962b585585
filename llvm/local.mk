# llvm/ - libjitperf-llvm: the LLVM JIT event listener and instrumentation
# pass (C++ against LLVM, C API in jitperf-llvm.h), built when configure
# found an llvm-config of LLVM 14 to 19.  The object reading (ELF, DWARF
# line tables, .eh_frame) is C and knows nothing of LLVM, nor of libdw.
# Private header: llvm/llvm.h.
EXTRA_DIST += llvm/libjitperf-llvm.map jitperf-llvm.pc.in
DISTCLEANFILES += jitperf-llvm.pc
if HAVE_LLVM
lib_LTLIBRARIES += llvm/libjitperf-llvm.la
include_HEADERS += llvm/jitperf-llvm.h
pkgconfig_DATA += jitperf-llvm.pc
endif
# The C part is a convenience library of its own, so that the unit tests
# reach its (hidden) functions.
if HAVE_LLVM
noinst_LTLIBRARIES += llvm/libjplobj.la
endif
llvm_libjplobj_la_SOURCES = llvm/llvm.h llvm/arena.c llvm/leb128.h llvm/object.c llvm/reloc.c \
	llvm/lines.c llvm/debugline.c llvm/unwind.c llvm/keys.c llvm/debug.c
llvm_libjplobj_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -fno-plt     # see lib/local.mk
llvm_libjplobj_la_LIBADD = lib/libjitperf.la

llvm_libjitperf_llvm_la_SOURCES = llvm/jitperf-llvm.h llvm/llvm.h \
	llvm/listener.cpp llvm/instrument.cpp
llvm_libjitperf_llvm_la_CXXFLAGS = $(WARN_CXXFLAGS) $(SAN_CFLAGS) $(PTHREAD_CFLAGS) \
	$(LLVM_CXXFLAGS) -fvisibility=hidden -fvisibility-inlines-hidden -fno-plt
llvm_libjitperf_llvm_la_LIBADD = llvm/libjplobj.la lib/libjitperf.la $(LLVM_LIBS) $(PTHREAD_LIBS)
llvm_libjitperf_llvm_la_LDFLAGS = -version-info $(LT_VERSION_INFO_LLVM) -no-undefined \
	$(LLVM_LDFLAGS) -Wl,--version-script=$(srcdir)/llvm/libjitperf-llvm.map
EXTRA_llvm_libjitperf_llvm_la_DEPENDENCIES = llvm/libjitperf-llvm.map
