# format/ - the layouts of the files jitperf writes that a writer and a
# reader share: format/trace.h (jitperf-<pid>.trace, jitperf-trace(5)),
# format/jitdump.h (perf's jitdump, jit-<pid>.dump) and format/tiers.h (tier
# and compile events beside it, jit-<pid>.tiers, jitperf-tiers(5)), and the
# standby protocol a recorder speaks to a process (format/standby.h), and
# the grammar of the environment libjitperf reads and `jitperf record` sets
# (format/env.h).  Headers only, no code:
# lib/ includes them to write the files, read/, tools/, the tests and the
# benchmarks to read or check them; nothing here includes anything of
# theirs.  The statistics file is text (jitperf-stats(5)): its writer and
# its reader share no layout.
noinst_HEADERS = format/trace.h format/jitdump.h format/tiers.h format/standby.h \
	format/env.h
