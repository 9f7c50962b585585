# tools/ - the jitperf command.  tools/jitperf.c dispatches to one folder per
# subcommand (record/, report/, dump/, inject/, convert/); what several share
# stays in tools/.  Everything but main() is the convenience library
# tools/libcommand.la, which the fuzzers link too.  Private header: tools/cmds.h.
noinst_LTLIBRARIES += tools/libcommand.la
tools_libcommand_la_SOURCES = tools/cmds.h tools/msg.c tools/perf.c tools/perf.h \
	tools/pathsafe.c tools/pathsafe.h tools/stagedir.c tools/stagedir.h \
	tools/sigcleanup.c tools/sigcleanup.h tools/rundir.c tools/rundir.h \
	tools/jitsym.c tools/jitsym.h tools/nsproc.c tools/nsproc.h \
	tools/record/record.c tools/record/attach.c tools/record/attach.h \
	tools/record/collect.c tools/record/collect.h tools/record/watch.c \
	tools/report/report.c tools/report/report.h tools/report/report_instr.c \
	tools/report/report_tiers.c tools/report/report_tiers_print.c tools/report/report_json.c \
	tools/report/report_tiers_addr.c tools/report/report_tiers_mark.c tools/report/report_tiers_cpu.c \
	tools/report/report_check.c \
	tools/dump/dump.c tools/dump/dump.h tools/dump/check.c tools/dump/elfwrite.c \
	tools/dump/tiers.c tools/dump/names.c \
	tools/inject/inject.h tools/inject/cmd.c tools/inject/inject.c tools/inject/image.c \
	tools/inject/ehframe.c tools/inject/dwline.c tools/inject/ctx.h tools/inject/jitdumps.c \
	tools/inject/perfmaps.c tools/inject/plan.c tools/inject/pending.c \
	tools/inject/pipein.c tools/inject/pipein.h \
	tools/inject/buf.c tools/inject/emit.c tools/inject/procs.c \
	tools/convert/convert.c tools/convert/convert.h \
	tools/convert/cvinput.c tools/convert/cvinput.h tools/convert/cvtrace.c \
	tools/convert/cvperfdata.c tools/convert/cvparallel.c tools/convert/chrome_budget.c \
	tools/convert/cvtiers.c tools/convert/cvtiers.h \
	tools/convert/foldkey.c tools/convert/foldkey.h \
	tools/convert/callpath.c tools/convert/callpath.h \
	tools/convert/idmap.c tools/convert/idmap.h \
	tools/convert/stacks.c tools/convert/stacks.h \
	tools/convert/textesc.c tools/convert/textesc.h \
	tools/convert/outfile.c tools/convert/outfile.h \
	tools/convert/writers/folded.c tools/convert/writers/chrome.c tools/convert/writers/svg.c \
	tools/convert/writers/chrome_tiers.c tools/convert/writers/chrome_tiers.h \
	tools/convert/writers/pprof.c tools/convert/protobuf.c tools/convert/protobuf.h
tools_libcommand_la_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS) $(ZLIB_CFLAGS)
tools_libcommand_la_LIBADD = read/libjitperf-read.la $(LIBELF_LIBS) $(LIBDW_LIBS) $(ZLIB_LIBS) $(PTHREAD_LIBS) -lm

bin_PROGRAMS += tools/jitperf
tools_jitperf_SOURCES = tools/jitperf.c
tools_jitperf_LDADD = tools/libcommand.la
