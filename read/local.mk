# read/ - libjitperf-read (not installed): every reader of what jitperf and
# perf write (jitdump, tiers, trace, stats, perf maps, perf script text, perf.data)
# and the symbolizers.
# The command, the tests and the fuzzers link it.
noinst_LTLIBRARIES += read/libjitperf-read.la
read_libjitperf_read_la_SOURCES = \
	read/jitdump_read.c read/jitdump_read.h \
	read/trace_read.c read/trace_read.h \
	read/tiers_read.c read/tiers_read.h read/tiers_model.c read/tiers_model.h \
	read/stats_read.c read/stats_read.h \
	read/perfmap_read.c read/perfmap_read.h \
	read/util.c read/util.h \
	read/perfscript.c read/perfscript.h read/stackframe.c read/stackframe.h \
	read/symbolize.c read/symbolize.h \
	read/perfdata.c read/perfdata.h read/pdfile.h read/pdrecords.c read/pdopen.c \
	read/pdsym.c read/pdsym.h read/pdkallsyms.c read/pdsymtree.c read/pdsymtree.h \
	read/pdline.c read/pdline.h \
	read/pdsession.c read/pdsession.h read/pdscript.c read/pdscript.h
read_libjitperf_read_la_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS)
read_libjitperf_read_la_LIBADD = $(LIBELF_LIBS) $(LIBDW_LIBS) $(DEMANGLE_LIBS) $(PTHREAD_LIBS)
