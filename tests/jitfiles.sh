# What JIT processes leave in /tmp, found through the files of theirs a
# run keeps in its own directory (sourced by tests/test-subr.sh and the
# bench/*.sh scripts that run JITs).  /tmp/perf-PID.map stays in /tmp
# whatever JITPERF_DIR says (perf reads maps there and nowhere else), and
# emitters such as Erlang's write /tmp/jit-PID.dump.  pid_max is small: a
# later process given the same pid would find them stale, perhaps root's,
# and perf would name its code with ours.

# jit_pids DIR...: the pids of jit-PID.dump, jitperf-PID.trace/.stats and
# perf-PID.map (the copies jitperf record collects) under the directories
jit_pids() {
	find "$@" \( -name 'jit-*.dump' -o -name 'jitperf-*.trace' -o -name 'jitperf-*.stats' \
		-o -name 'perf-*.map' \) 2>/dev/null |
		sed -En 's,^.*/(jit|jitperf|perf)-([0-9]+)\.(dump|trace|stats|map)$,\2,p' | sort -u
}

# remove_jit_tmp PID...: those processes' files in /tmp
remove_jit_tmp() {
	for p in "$@"; do
		rm -f "/tmp/perf-$p.map" "/tmp/jit-$p.dump"
	done
}

# remove_runs DIR...: the directories, and what their processes left in /tmp
remove_runs() {
	remove_jit_tmp $(jit_pids "$@")
	rm -rf "$@"
}
