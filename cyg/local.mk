# cyg/ - libjitperf-cyg: __cyg_profile_func_enter/exit for code built with
# -finstrument-functions, feeding libjitperf's probes.
lib_LTLIBRARIES += cyg/libjitperf-cyg.la
cyg_libjitperf_cyg_la_SOURCES = cyg/cyg.c
cyg_libjitperf_cyg_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
cyg_libjitperf_cyg_la_LIBADD = lib/libjitperf.la $(PTHREAD_LIBS)
cyg_libjitperf_cyg_la_LDFLAGS = -version-info $(LT_VERSION_INFO_CYG) -no-undefined \
	-Wl,--version-script=$(srcdir)/cyg/libjitperf-cyg.map
EXTRA_DIST += cyg/libjitperf-cyg.map
EXTRA_cyg_libjitperf_cyg_la_DEPENDENCIES = cyg/libjitperf-cyg.map
